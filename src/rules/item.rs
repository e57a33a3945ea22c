//! SYNC101: `t.item()` on a hot line.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use super::{may_be_cuda, method_call, report};
use crate::checker::Checker;
use crate::registry::Rule;
use crate::semantic::Kind;

pub(crate) fn call(checker: &mut Checker, call: &ExprCall) {
    if !checker.enabled(Rule::Item) {
        return;
    }
    let Some((receiver, method)) = method_call(call) else {
        return;
    };
    match method {
        "item" if call.arguments.is_empty() && may_be_cuda(checker, receiver, true) => {
            // A metric all-reduced on this step and then read is SYNC602's finding.
            if let Expr::Name(name) = receiver
                && checker.enabled(Rule::BarrierInStep)
                && checker.model().all_reduce_of(name.id.as_str()).is_some()
            {
                return;
            }
            let receiver_text = super::receiver_text(checker, receiver);
            report(
                checker,
                Rule::Item,
                call.range(),
                format!("`{receiver_text}.item()` waits for the GPU to finish all queued work"),
                format!(
                    "keep it on the device (`total += {receiver_text}.detach()`) and read it once per log interval"
                ),
            );
        }
        "get_scale" if call.arguments.is_empty() && checker.model().kind_of(receiver) == Kind::GradScaler => {
            let receiver_text = super::receiver_text(checker, receiver);
            report(
                checker,
                Rule::Item,
                call.range(),
                format!("`{receiver_text}.get_scale()` reads the loss scale with `.item()` and waits for the GPU"),
                "read the scale once per log interval, not every step".to_string(),
            );
        }
        _ => {}
    }
}
