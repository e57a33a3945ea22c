//! SYNC204: boolean-mask writes with a tensor value: `x[mask] = v`, `x[mask] += v`,
//! `masked_fill(mask, <CUDA tensor>)`. `x[mask] = <Python scalar>` is fine (measured: no sync).

use ruff_python_ast::{Expr, ExprCall, Operator, StmtAssign, StmtAugAssign};
use ruff_text_size::Ranged;

use super::edits::torch_name;
use super::{method_call, report};
use crate::checker::Checker;
use crate::diagnostic::{Diagnostic, Edit, Fix};
use crate::registry::Rule;
use crate::semantic::Kind;

/// The `x` and `mask` of a boolean-mask subscript target on a maybe-CUDA tensor.
fn mask_target<'e>(checker: &Checker, target: &'e Expr) -> Option<(&'e Expr, &'e Expr)> {
    let Expr::Subscript(subscript) = target else { return None };
    (checker.model().is_maybe_cuda_tensor(&subscript.value) && checker.model().is_boolean_tensor(&subscript.slice))
        .then_some((&*subscript.value, &*subscript.slice))
}

/// Only a plain name or attribute can be repeated in a rewrite without evaluating it twice.
fn is_simple(expr: &Expr) -> bool {
    match expr {
        Expr::Name(_) => true,
        Expr::Attribute(attribute) => is_simple(&attribute.value),
        _ => false,
    }
}

pub(crate) fn assign(checker: &mut Checker, assign: &StmtAssign) {
    if !checker.enabled(Rule::BooleanMaskWrite) {
        return;
    }
    let [target] = assign.targets.as_slice() else { return };
    let Some((x, mask)) = mask_target(checker, target) else { return };
    let Kind::Tensor(value) = checker.model().kind_of(&assign.value) else { return };
    let (x_text, mask_text, v) = (checker.slice(x), checker.slice(mask), checker.slice(&*assign.value));
    let (torch, import) = torch_name(checker);
    let replacement = format!("{x_text}.copy_({torch}.where({mask_text}, {v}, {x_text}))");
    let mut diagnostic = Diagnostic::new(
        Rule::BooleanMaskWrite,
        target.range(),
        format!("`{x_text}[{mask_text}] = {v}` with a tensor value waits for the GPU (a Python scalar would not)"),
        format!("write in place without a sync: `{replacement}` (a broadcastable value), or `{x_text}.masked_scatter_({mask_text}, {v})` (one value per selected element)"),
    );
    if is_simple(x) && value.may_be_cuda() {
        let mut edits = vec![Edit::replace(assign.range(), replacement.clone())];
        edits.extend(import);
        // Right only when `v` broadcasts to `x`; `v` holding one value per selected element
        // needs `masked_scatter_`. The shape is not known statically: unsafe.
        diagnostic = diagnostic.with_fix(format!("Replace with `{replacement}`"), Fix::unsafe_(edits));
    }
    checker.report(diagnostic);
}

pub(crate) fn aug_assign(checker: &mut Checker, assign: &StmtAugAssign) {
    if !checker.enabled(Rule::BooleanMaskWrite) {
        return;
    }
    let Some((x, mask)) = mask_target(checker, &assign.target) else { return };
    let (x_text, mask_text, v) = (checker.slice(x), checker.slice(mask), checker.slice(&*assign.value));
    let op = assign.op.as_str();
    let (torch, import) = torch_name(checker);
    let (method, neutral) = match assign.op {
        Operator::Add => ("add_", "0"),
        Operator::Sub => ("sub_", "0"),
        Operator::Mult => ("mul_", "1"),
        _ => ("", ""),
    };
    let replacement = format!("{x_text}.{method}({torch}.where({mask_text}, {v}, {neutral}))");
    let mut diagnostic = Diagnostic::new(
        Rule::BooleanMaskWrite,
        assign.target.range(),
        format!("`{x_text}[{mask_text}] {op}= ...` gathers the selected elements and waits for the GPU"),
        if method.is_empty() {
            format!("update the whole tensor with `torch.where({mask_text}, ..., {x_text})`")
        } else {
            format!("update in place without a sync: `{replacement}`")
        },
    );
    if !method.is_empty() && is_simple(x) {
        let mut edits = vec![Edit::replace(assign.range(), replacement.clone())];
        edits.extend(import);
        // Right for a broadcastable `v`; dtype promotion of `torch.where` can differ: unsafe.
        diagnostic = diagnostic.with_fix(format!("Replace with `{replacement}`"), Fix::unsafe_(edits));
    }
    checker.report(diagnostic);
}

/// `x.masked_fill(mask, v)` / `torch.masked_fill(x, mask, v)` with a CUDA tensor `v`.
pub(crate) fn call(checker: &mut Checker, call: &ExprCall) {
    if !checker.enabled(Rule::BooleanMaskWrite) {
        return;
    }
    let args = &call.arguments.args;
    let (x, value) = if checker.model().is_call_to(call, "torch.masked_fill") {
        (args.first(), args.get(2))
    } else {
        match method_call(call) {
            Some((receiver, "masked_fill" | "masked_fill_")) if checker.model().is_maybe_cuda_tensor(receiver) => {
                (Some(receiver), args.get(1).or(call.arguments.find_keyword("value").map(|k| &k.value)))
            }
            _ => return,
        }
    };
    let (Some(x), Some(value)) = (x, value) else { return };
    if !checker.model().is_maybe_cuda_tensor(value) || !checker.model().is_maybe_cuda_tensor(x) {
        return;
    }
    let v = checker.slice(value);
    report(
        checker,
        Rule::BooleanMaskWrite,
        call.range(),
        format!("`masked_fill` with the GPU tensor `{v}` as value reads it on the host and waits for the GPU"),
        format!("use `torch.where(mask, {v}, x)`, or pass a Python scalar"),
    );
}
