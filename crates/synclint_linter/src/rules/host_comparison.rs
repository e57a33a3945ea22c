//! SYNC107: comparisons whose answer comes back to Python: `torch.equal`, `torch.allclose`,
//! `t.is_nonzero()` / `torch.is_nonzero(t)`, `torch.testing.assert_close`.

use ruff_python_ast::ExprCall;
use ruff_text_size::Ranged;

use super::{method_call, report, torch_input_may_be_cuda};
use crate::registry::Rule;
use crate::rules::RuleContext;

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::HostComparison) {
        return;
    }
    let args = &call.arguments.args;
    let qualified = callee;
    let (what, help) = match qualified {
        Some("torch.equal" | "torch.allclose") => (
            context.slice(&*call.func).to_string(),
            "compare on the device (`torch.isclose(a, b).all()`, `(a == b).all()`) and keep the result as a tensor",
        ),
        Some("torch.is_nonzero") => (
            context.slice(&*call.func).to_string(),
            "keep the test on the device (`torch.where`, `torch._assert_async`)",
        ),
        Some("torch.testing.assert_close" | "torch.testing.assert_allclose") => (
            context.slice(&*call.func).to_string(),
            "check on the device with `torch._assert_async(torch.isclose(a, b).all())`, or test outside the step",
        ),
        Some(_) => return,
        None => match method_call(call) {
            Some((receiver, method @ ("equal" | "allclose" | "is_nonzero")))
                if context.model().is_maybe_cuda_tensor(receiver) =>
            {
                let help = if method == "is_nonzero" {
                    "keep the test on the device (`torch.where`, `torch._assert_async`)"
                } else {
                    "compare on the device (`torch.isclose(a, b).all()`) and keep the result as a tensor"
                };
                let what = format!("{}.{method}", context.slice(receiver));
                report(
                    context,
                    Rule::HostComparison,
                    call.range(),
                    format!("`{what}()` returns a Python bool and waits for the GPU"),
                    help.to_string(),
                );
                return;
            }
            _ => return,
        },
    };
    if args
        .iter()
        .take(2)
        .any(|arg| torch_input_may_be_cuda(context, Some(arg)))
    {
        report(
            context,
            Rule::HostComparison,
            call.range(),
            format!("`{what}()` returns its answer to Python and waits for the GPU"),
            help.to_string(),
        );
    }
}
