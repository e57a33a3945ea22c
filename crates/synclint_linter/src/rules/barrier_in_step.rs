//! SYNC602: `dist.barrier()` and object collectives in a hot path, and a metric all-reduced
//! and then read with `.item()` on every step.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use super::{method_call, report};
use crate::registry::Rule;
use crate::rules::RuleContext;

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::BarrierInStep) {
        return;
    }
    if let Some(qualified) = callee {
        let (message, help) = match qualified {
            "torch.distributed.barrier" => (
                format!(
                    "`{}()` blocks the host until every rank and the GPU catch up",
                    context.slice(&*call.func)
                ),
                "drop it from the step: collectives already order the ranks; keep barriers for setup and checkpoints"
                    .to_string(),
            ),
            "torch.distributed.broadcast_object_list"
            | "torch.distributed.all_gather_object"
            | "torch.distributed.gather_object"
            | "torch.distributed.scatter_object_list" => (
                format!(
                    "`{}` pickles through the host and waits for the GPU",
                    context.slice(&*call.func)
                ),
                "exchange tensors (`all_gather_into_tensor`) and keep them on the device".to_string(),
            ),
            _ => return,
        };
        report(context, Rule::BarrierInStep, call.range(), message, help);
        return;
    }
    if let Some((Expr::Name(name), "item")) = method_call(call)
        && call.arguments.is_empty()
        && context.model().is_all_reduced(name.id.as_str())
    {
        // Reported where the host waits: the all-reduce itself returns at once.
        let metric = name.id.to_string();
        report(
            context,
            Rule::BarrierInStep,
            call.range(),
            format!(
                "`{metric}.item()` reads `{metric}` after its all-reduce every step: every rank waits for the slowest"
            ),
            format!("accumulate `{metric}` on the device and all-reduce it once per log interval"),
        );
    }
}
