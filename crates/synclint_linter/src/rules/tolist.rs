//! SYNC102: `t.tolist()` on a hot line.

use ruff_python_ast::ExprCall;
use ruff_text_size::Ranged;

use super::{method_call, report};
use crate::registry::Rule;
use crate::rules::RuleContext;

pub fn call(context: &mut RuleContext, call: &ExprCall) {
    if !context.enabled(Rule::Tolist) {
        return;
    }
    let Some((receiver, "tolist")) = method_call(call) else {
        return;
    };
    if !call.arguments.is_empty() || !context.model().is_maybe_cuda_tensor(receiver) {
        return;
    }
    let receiver_text = super::receiver_text(context, receiver);
    report(
        context,
        Rule::Tolist,
        call.range(),
        format!("`{receiver_text}.tolist()` copies the tensor to Python and waits for the GPU"),
        "keep the values on the device; if the host needs them, copy with `.to(\"cpu\", non_blocking=True)` and read them after the loop"
            .to_string(),
    );
}
