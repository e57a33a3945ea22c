//! SYNC201: ops whose output size is the number of true elements: `torch.nonzero`,
//! `t.nonzero()`, `torch.argwhere`, one-argument `torch.where(c)`.

use ruff_python_ast::{Expr, ExprCall, StmtAssign};
use ruff_text_size::Ranged;

use super::{argument, method_call, report, torch_input_may_be_cuda};
use crate::checker::Checker;
use crate::diagnostic::{Edit, Fix};
use crate::registry::Rule;
use crate::semantic::Kind;

/// The condition of a nonzero-like call, if `call` is one.
fn nonzero_condition<'e>(
    checker: &Checker,
    call: &'e ExprCall,
    callee: Option<&str>,
) -> Option<(&'e Expr, &'static str)> {
    match callee {
        Some("torch.nonzero") => Some((argument(call, "input", 0)?, "torch.nonzero")),
        Some("torch.argwhere") => Some((argument(call, "input", 0)?, "torch.argwhere")),
        Some("torch.where") if call.arguments.args.len() == 1 && call.arguments.keywords.is_empty() => {
            Some((&call.arguments.args[0], "torch.where(cond)"))
        }
        Some(_) => None,
        None => match method_call(call) {
            Some((receiver, method @ ("nonzero" | "argwhere"))) if checker.model().is_maybe_cuda_tensor(receiver) => {
                Some((
                    receiver,
                    if method == "nonzero" {
                        ".nonzero()"
                    } else {
                        ".argwhere()"
                    },
                ))
            }
            _ => None,
        },
    }
}

pub(crate) fn call(checker: &mut Checker, call: &ExprCall, callee: Option<&str>) {
    if !checker.enabled(Rule::Nonzero) {
        return;
    }
    let Some((condition, kind)) = nonzero_condition(checker, call, callee) else {
        return;
    };
    // Name the function as the code spells it (`nonzero`, `th.where`), methods by their kind.
    let what = if kind.starts_with('.') {
        kind.to_string()
    } else {
        checker.slice(&*call.func).to_string()
    };
    if !torch_input_may_be_cuda(checker, Some(condition)) {
        return;
    }
    let condition_text = checker.slice(condition);
    report(
        checker,
        Rule::Nonzero,
        call.range(),
        format!(
            "`{what}` returns as many elements as are true in `{condition_text}`, so the host waits for the GPU to count them"
        ),
        format!(
            "keep the shape: `torch.where({condition_text}, a, b)`, `x.masked_fill({condition_text}, v)`, or `torch.nonzero_static({condition_text}, size=N)`"
        ),
    );
}

/// `x[torch.nonzero(c, as_tuple=True)] = s` / `x[torch.where(c)] = s` -> `x.masked_fill_(c, s)`.
pub(crate) fn assign(checker: &mut Checker, assign: &StmtAssign) {
    if !checker.enabled(Rule::Nonzero) {
        return;
    }
    let [Expr::Subscript(target)] = assign.targets.as_slice() else {
        return;
    };
    let Expr::Call(index) = target.slice.as_ref() else {
        return;
    };
    let index_callee = checker.callee(index);
    let Some((condition, _)) = nonzero_condition(checker, index, index_callee.as_deref()) else {
        return;
    };
    let as_tuple = index_callee.as_deref() == Some("torch.where") || super::keyword_is_true(index, "as_tuple");
    let scalar = checker.model().kind_of(&assign.value) == Kind::Number;
    if !as_tuple || !scalar || !matches!(&*target.value, Expr::Name(_) | Expr::Attribute(_)) {
        return;
    }
    let x = checker.slice(&*target.value);
    let c = checker.slice(condition);
    let s = checker.slice(&*assign.value);
    // Same effect only when the mask has the shape of `x` (a row mask would broadcast along the
    // wrong axis): known when it tests `x`'s own elements. No fix otherwise.
    if !super::boolean_mask_read::mask_is_elementwise_on(checker, condition, x) {
        return;
    }
    let replacement = format!("{x}.masked_fill_({c}, {s})");
    let edits = vec![Edit::replace(assign.range(), replacement.clone())];
    if super::edits::drops_comment(checker.source(), &edits) {
        return;
    }
    checker.attach_fix(
        Rule::Nonzero,
        index.range(),
        format!("Replace with `{replacement}`"),
        Fix::safe(edits),
    );
}
