//! SYNC301: `cross_entropy` / `nll_loss` (or their modules) on boolean-masked logits or
//! targets, where `ignore_index=` keeps the shapes fixed.

use ruff_python_ast::{CmpOp, Expr, ExprCall, ExprContext};
use ruff_text_size::Ranged;

use super::method_call;
use crate::checker::Checker;
use crate::diagnostic::{Diagnostic, Edit, Fix};
use crate::registry::Rule;
use crate::semantic::{Kind, ModuleKind};

/// `x[mask]` (inline) on a tensor that may be on the GPU: (`x`, `mask`).
fn masked<'e>(checker: &Checker, expr: &'e Expr) -> Option<(&'e Expr, &'e Expr)> {
    let Expr::Subscript(subscript) = expr else { return None };
    (subscript.ctx == ExprContext::Load
        && checker.model().is_maybe_cuda_tensor(&subscript.value)
        && checker.model().is_boolean_tensor(&subscript.slice))
    .then_some((&*subscript.value, &*subscript.slice))
}

/// A variable assigned a masked read first (`sel = x[mask]`).
fn masked_variable(checker: &Checker, expr: &Expr) -> bool {
    let Expr::Name(name) = expr else { return false };
    let value = checker.model().lookup(name.id.as_str()).and_then(|binding| binding.value);
    value.is_some_and(|value| masked(checker, value).is_some())
}

pub(crate) fn call(checker: &mut Checker, call: &ExprCall) {
    if !checker.enabled(Rule::MaskedLoss) {
        return;
    }
    let is_loss = match checker.model().qualified_name(&call.func).as_deref() {
        Some("torch.nn.functional.cross_entropy" | "torch.nn.functional.nll_loss") => true,
        Some(_) => false,
        None => checker.model().kind_of(&call.func) == Kind::Module(ModuleKind::ClassIndexLoss),
    };
    if !is_loss || call.arguments.find_keyword("ignore_index").is_some() {
        return;
    }
    let args = &call.arguments.args;
    let (Some(input), Some(target)) = (args.first(), args.get(1)) else { return };
    let (input_masked, target_masked) = (masked(checker, input), masked(checker, target));
    if input_masked.is_none() && target_masked.is_none() && !masked_variable(checker, input) && !masked_variable(checker, target) {
        return;
    }
    // The mask reads are this finding; SYNC203 does not report them again.
    for read in [input, target] {
        checker.supersede(Rule::BooleanMaskRead, read.range());
    }
    let loss = checker.slice(&*call.func);
    let mut diagnostic = Diagnostic::new(
        Rule::MaskedLoss,
        call.range(),
        format!("`{loss}` on boolean-masked inputs waits for the GPU to count the mask"),
        "pass the unmasked tensors with `ignore_index=` set to the value the mask drops".to_string(),
    );
    if let (Some((logits, mask)), Some((labels, same_mask))) = (input_masked, target_masked) {
        if checker.slice(mask) == checker.slice(same_mask) {
            if let Some(fix) = ignore_index_fix(checker, call, logits, labels, mask) {
                let title = fix.0;
                diagnostic = diagnostic.with_fix(title, fix.1);
            }
        }
    }
    checker.report(diagnostic);
}

/// `loss(logits[m], target[m])` with `m = target != IGN` ->
/// `loss(logits.flatten(0, -2), target.flatten(), ignore_index=IGN)`; with class-first logits
/// permuted to the end (`logits.permute(0, 2, 3, 1)[m]`) -> `loss(logits, target, ...)`.
fn ignore_index_fix(
    checker: &Checker,
    call: &ExprCall,
    logits: &Expr,
    labels: &Expr,
    mask: &Expr,
) -> Option<(String, Fix)> {
    let labels_text = checker.slice(labels);
    let mask_definition = match mask {
        Expr::Name(name) => checker.model().lookup(name.id.as_str())?.value?,
        other => other,
    };
    let Expr::Compare(compare) = mask_definition else { return None };
    let ([CmpOp::NotEq], [ignored]) = (&*compare.ops, &*compare.comparators) else { return None };
    if checker.slice(&*compare.left) != labels_text || matches!(ignored, Expr::Call(_)) {
        return None;
    }
    let reduction_none = call.arguments.find_keyword("reduction").is_some_and(|k| {
        matches!(&k.value, Expr::StringLiteral(s) if s.value.to_str() == "none")
    });
    if reduction_none {
        return None;
    }
    let permuted = match logits {
        Expr::Call(inner) => match method_call(inner) {
            Some((base, "permute")) if checker.slice(&inner.arguments).replace(' ', "") == "(0,2,3,1)" => Some(base),
            _ => None,
        },
        _ => None,
    };
    let (new_input, new_target) = match permuted {
        Some(base) => (checker.slice(base).to_string(), labels_text.to_string()),
        None => (format!("{}.flatten(0, -2)", checker.slice(logits)), format!("{labels_text}.flatten()")),
    };
    let args = &call.arguments.args;
    let mut edits = vec![
        Edit::replace(args[0].range(), new_input),
        Edit::replace(args[1].range(), new_target),
    ];
    edits.push(super::edits::add_argument(checker, call, &format!("ignore_index={}", checker.slice(ignored))));
    Some((
        format!("Pass the unmasked tensors with `ignore_index={}`", checker.slice(ignored)),
        Fix::unsafe_(edits),
    ))
}
