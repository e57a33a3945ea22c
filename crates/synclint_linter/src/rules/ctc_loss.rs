//! SYNC306: `F.ctc_loss` / `nn.CTCLoss` on the GPU: it reads the lengths on the host
//! (measured: it syncs even with CPU or Python-list lengths).

use ruff_python_ast::ExprCall;
use ruff_text_size::Ranged;

use super::{report, torch_input_may_be_cuda};
use crate::parse::literal_text;
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::{Kind, ModuleKind};

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::CtcLoss) {
        return;
    }
    let is_ctc =
        callee == Some("torch.nn.functional.ctc_loss") || context.model().calls_module(call, ModuleKind::CtcLoss);
    if !is_ctc || !torch_input_may_be_cuda(context, call.arguments.args.first()) || is_cudnn_forward(context, call) {
        return;
    }
    let func = context.slice(&*call.func);
    report(
        context,
        Rule::CtcLoss,
        call.range(),
        format!("`{func}` on the GPU waits for queued work every call, whatever the lengths' device"),
        "no sync-free form exists in PyTorch 2.11: keep CTC steps few (larger batches), or compute it in a side stream you do not wait on per step".to_string(),
    );
}

/// The one measured form that does not wait: cuDNN's forward pass, which needs CPU targets,
/// Python-list lengths and `reduction="sum"` or `"none"` (the default mean still blocks).
fn is_cudnn_forward(context: &RuleContext, call: &ExprCall) -> bool {
    let args = &call.arguments.args;
    let targets_on_cpu = args.get(1).is_some_and(|t| {
        context
            .model()
            .tensor(t)
            .is_some_and(|f| f.device == crate::semantic::Device::Cpu)
    });
    let lengths_are_lists = args.len() >= 4
        && args[2..4]
            .iter()
            .all(|l| matches!(context.model().kind_of(l), Kind::List | Kind::NumberList));
    let reduction = call.arguments.find_keyword("reduction").and_then(|k| match &k.value {
        ruff_python_ast::Expr::StringLiteral(s) => literal_text(&s.value).map(str::to_string),
        _ => None,
    });
    targets_on_cpu && lengths_are_lists && matches!(reduction.as_deref(), Some("sum" | "none"))
}
