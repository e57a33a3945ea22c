//! SYNC203: boolean-mask reads `x[mask]` and `torch.masked_select`: the result's size is the
//! number of true elements.

use ruff_python_ast::{CmpOp, Expr, ExprCall, ExprContext, ExprSubscript, Operator, UnaryOp};
use ruff_text_size::Ranged;

use super::edits::{parenthesized, torch_name};
use super::{argument, method_call, report, torch_input_may_be_cuda};
use crate::checker::Checker;
use crate::diagnostic::{Edit, Fix};
use crate::registry::Rule;

pub(crate) fn subscript(checker: &mut Checker, subscript: &ExprSubscript) {
    if !checker.enabled(Rule::BooleanMaskRead) || subscript.ctx != ExprContext::Load {
        return;
    }
    // The mask first: few indices are masks, and the file is checked again for what its
    // callers pass only where a question asked could change a verdict.
    if !checker.model().is_boolean_index(&subscript.slice) || !checker.model().is_maybe_cuda_tensor(&subscript.value) {
        return;
    }
    let x = checker.slice(&*subscript.value);
    let index = checker.slice(&*subscript.slice);
    // In `x[:, m]` the mask is `m`.
    let mask = match subscript.slice.as_ref() {
        Expr::Tuple(tuple) => tuple
            .elts
            .iter()
            .find(|elt| checker.model().is_boolean_tensor(elt))
            .map_or(index, |m| checker.slice(m)),
        _ => index,
    };
    let help = if mask == index {
        // `x * (x > 0)`, not `x * x > 0`.
        let factor = if matches!(
            subscript.slice.as_ref(),
            Expr::Name(_) | Expr::Attribute(_) | Expr::Call(_)
        ) {
            mask.to_string()
        } else {
            format!("({mask})")
        };
        format!("keep the shape: `torch.where({mask}, {x}, 0)` or `{x} * {factor}`")
    } else {
        "keep the shape: multiply by the mask (broadcast to `x`) or use `torch.where`".to_string()
    };
    report(
        checker,
        Rule::BooleanMaskRead,
        subscript.range(),
        format!("`{x}[{index}]` has as many elements as `{mask}` has true values, so the host waits for the GPU"),
        help,
    );
}

pub(crate) fn call(checker: &mut Checker, call: &ExprCall, callee: Option<&str>) {
    if !checker.enabled(Rule::BooleanMaskRead) {
        return;
    }
    if callee == Some("torch.masked_select")
        || matches!(method_call(call), Some((receiver, "masked_select")) if checker.model().is_maybe_cuda_tensor(receiver))
    {
        let input = match method_call(call) {
            Some((receiver, "masked_select")) => Some(receiver),
            _ => argument(call, "input", 0),
        };
        if torch_input_may_be_cuda(checker, input) {
            report(
                checker,
                Rule::BooleanMaskRead,
                call.range(),
                "`masked_select` has a data-dependent size, so the host waits for the GPU".to_string(),
                "keep the shape: `torch.where(mask, x, 0)`".to_string(),
            );
        }
        return;
    }
    reduction_of_mask_read(checker, call);
}

/// `x[mask].sum()` -> `torch.where(mask, x, 0).sum()`; `x[mask].mean()` ->
/// `torch.where(mask, x, 0).sum() / mask.sum()`.
fn reduction_of_mask_read(checker: &mut Checker, call: &ExprCall) {
    let Some((Expr::Subscript(read), method @ ("sum" | "mean"))) = method_call(call) else {
        return;
    };
    if !call.arguments.is_empty() || read.ctx != ExprContext::Load {
        return;
    }
    if !checker.model().is_boolean_tensor(&read.slice) || !checker.model().is_maybe_cuda_tensor(&read.value) {
        return;
    }
    // Same shape only when the mask is a test of `x`'s own elements: a row mask of lower rank
    // would broadcast along the wrong axis, and `mask.sum()` would count rows. No fix otherwise.
    let x = checker.slice(&*read.value);
    if !mask_is_elementwise_on(checker, &read.slice, x) {
        return;
    }
    let mask = checker.slice(&*read.slice);
    let (torch, import) = torch_name(checker);
    let replacement = if method == "sum" {
        format!("{torch}.where({mask}, {x}, 0).sum()")
    } else {
        format!(
            "({torch}.where({mask}, {x}, 0).sum() / {}.sum())",
            parenthesized(checker, &read.slice)
        )
    };
    let mut edits = vec![Edit::replace(call.range(), replacement.clone())];
    edits.extend(import);
    // The sum keeps values and dtype; the mean changes rounding and integer behaviour: unsafe.
    if super::edits::drops_comment(checker.source(), &edits) {
        return;
    }
    let fix = if method == "sum" {
        Fix::safe(edits)
    } else {
        Fix::unsafe_(edits)
    };
    checker.attach_fix(
        Rule::BooleanMaskRead,
        read.range(),
        format!("Replace with `{replacement}`"),
        fix,
    );
}

/// Is `mask` an elementwise test of the tensor spelled `x` (`x > 0`, `~torch.isnan(x)`,
/// `(x > 0) & (x < 1)`), either inline or through a variable assigned one? Then it has `x`'s
/// shape.
pub(crate) fn mask_is_elementwise_on(checker: &Checker, mask: &Expr, x: &str) -> bool {
    const TESTS: [&str; 5] = ["isnan", "isinf", "isfinite", "isposinf", "isneginf"];
    match mask {
        Expr::Compare(compare) => {
            let compares_x = checker.slice(&*compare.left) == x
                || (compare.comparators.len() == 1 && checker.slice(&compare.comparators[0]) == x);
            compares_x
                && compare
                    .ops
                    .iter()
                    .all(|op| !matches!(op, CmpOp::In | CmpOp::NotIn | CmpOp::Is | CmpOp::IsNot))
        }
        Expr::UnaryOp(unary) if unary.op == UnaryOp::Invert => mask_is_elementwise_on(checker, &unary.operand, x),
        // Both sides have `x`'s shape, so the result does too.
        Expr::BinOp(binary) if matches!(binary.op, Operator::BitAnd | Operator::BitOr | Operator::BitXor) => {
            mask_is_elementwise_on(checker, &binary.left, x) && mask_is_elementwise_on(checker, &binary.right, x)
        }
        Expr::Call(call) => {
            if let Some((receiver, method)) = method_call(call)
                && TESTS.contains(&method)
                && call.arguments.is_empty()
                && checker.slice(receiver) == x
            {
                return true;
            }
            checker
                .callee(call)
                .as_deref()
                .and_then(|name| name.strip_prefix("torch."))
                .is_some_and(|name| TESTS.contains(&name))
                && call.arguments.len() == 1
                && call.arguments.args.first().is_some_and(|arg| checker.slice(arg) == x)
        }
        Expr::Name(name) => checker
            .model()
            .lookup(name.id.as_str())
            .and_then(|binding| binding.value)
            .is_some_and(|value| !matches!(value, Expr::Name(_)) && mask_is_elementwise_on(checker, value, x)),
        _ => false,
    }
}
