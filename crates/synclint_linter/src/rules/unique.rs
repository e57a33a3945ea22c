//! SYNC202: `torch.unique`, `t.unique()`, `unique_consecutive`, `torch.bincount`: their output
//! size depends on the data.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use super::edits::torch_name;
use super::{argument, method_call, report, torch_input_may_be_cuda};
use crate::diagnostic::{Edit, Fix};
use crate::registry::Rule;
use crate::rules::RuleContext;

/// The input of a unique-like call, if `call` is one.
fn unique_input<'e>(
    context: &RuleContext,
    call: &'e ExprCall,
    callee: Option<&str>,
) -> Option<(&'e Expr, &'static str)> {
    match callee {
        Some("torch.unique") => Some((argument(call, "input", 0)?, "torch.unique")),
        Some("torch.unique_consecutive") => Some((argument(call, "input", 0)?, "torch.unique_consecutive")),
        Some("torch.bincount") => Some((argument(call, "input", 0)?, "torch.bincount")),
        Some(_) => None,
        None => match method_call(call) {
            Some((receiver, method @ ("unique" | "unique_consecutive" | "bincount")))
                if context.model().is_maybe_cuda_tensor(receiver) =>
            {
                Some((
                    receiver,
                    match method {
                        "unique" => ".unique()",
                        "unique_consecutive" => ".unique_consecutive()",
                        _ => ".bincount()",
                    },
                ))
            }
            _ => None,
        },
    }
}

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::Unique) {
        return;
    }
    if let Some((input, what)) = unique_input(context, call, callee) {
        if torch_input_may_be_cuda(context, Some(input)) {
            let help = if what.contains("bincount") {
                "use `torch.histc(x, bins=N, min=0, max=N)` or `scatter_add_` into `torch.zeros(N, device=...)` with a known N (even `minlength=` syncs)".to_string()
            } else {
                "if you only need how many distinct values there are, count them on the device: sort, then `count_nonzero` of the differences".to_string()
            };
            report(
                context,
                Rule::Unique,
                call.range(),
                format!("`{what}` has a data-dependent output size, so the host waits for the GPU"),
                help,
            );
        }
        return;
    }
    count_of_unique(context, call, callee);
}

/// `len(torch.unique(t))`, `torch.unique(t).numel()`, `torch.numel(torch.unique(t))`: the count
/// can stay on the device (unsafe: a 0-dim tensor instead of an int, and 1 for an empty `t`).
fn count_of_unique(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    let inner = match call.func.as_ref() {
        Expr::Name(name) if name.id.as_str() == "len" && context.model().is_builtin("len") => {
            call.arguments.args.first()
        }
        Expr::Attribute(attribute) if attribute.attr.as_str() == "numel" && call.arguments.is_empty() => {
            Some(&*attribute.value)
        }
        _ if callee == Some("torch.numel") => call.arguments.args.first(),
        _ => None,
    };
    let Some(Expr::Call(inner)) = inner else { return };
    let Some((input, what)) = unique_input(context, inner, context.callee(inner).as_deref()) else {
        return;
    };
    // Only the plain form: `sorted=` / `return_inverse=` / `return_counts=` / `dim=` (or the same
    // passed positionally) change what is counted, or make the result a tuple.
    let positional = if what.starts_with('.') { 0 } else { 1 };
    if what.contains("bincount")
        || inner.arguments.args.len() > positional
        || inner.arguments.args.iter().any(Expr::is_starred_expr)
        || inner
            .arguments
            .keywords
            .iter()
            .any(|k| k.arg.as_ref().is_none_or(|a| a.as_str() != "input"))
    {
        return;
    }
    let (torch, import) = torch_name(context);
    let t = context.slice(input);
    let t = if matches!(
        input,
        Expr::Name(_) | Expr::Attribute(_) | Expr::Call(_) | Expr::Subscript(_)
    ) {
        t.to_string()
    } else {
        format!("({t})")
    };
    let replacement = if what.contains("consecutive") {
        format!("({torch}.count_nonzero({t}.flatten().diff()) + 1)")
    } else {
        format!("({torch}.count_nonzero({torch}.sort({t}.flatten()).values.diff()) + 1)")
    };
    let mut edits = vec![Edit::replace(call.range(), replacement.clone())];
    edits.extend(import);
    context.attach_fix(
        Rule::Unique,
        inner.range(),
        format!("Count on the device: `{replacement}`"),
        Fix::unsafe_(edits),
    );
}
