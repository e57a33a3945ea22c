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
        && checker.model().is_boolean_tensor(&subscript.slice)
        && checker.model().is_maybe_cuda_tensor(&subscript.value))
    .then_some((&*subscript.value, &*subscript.slice))
}

/// The masked read inside dtype casts: `logits[m].float()` -> `logits[m]`.
fn strip_casts(expr: &Expr) -> &Expr {
    match expr {
        Expr::Call(call) if call.arguments.is_empty() => match method_call(call) {
            Some((inner, "float" | "double" | "half" | "bfloat16" | "long" | "contiguous")) => strip_casts(inner),
            _ => expr,
        },
        _ => expr,
    }
}

/// A variable assigned a masked read first (`sel = x[mask]`).
fn masked_variable(checker: &Checker, expr: &Expr) -> bool {
    let Expr::Name(name) = expr else { return false };
    let value = checker
        .model()
        .lookup(name.id.as_str())
        .and_then(|binding| binding.value);
    value.is_some_and(|value| masked(checker, value).is_some())
}

pub(crate) fn call(checker: &mut Checker, call: &ExprCall, callee: Option<&str>) {
    if !checker.enabled(Rule::MaskedLoss) {
        return;
    }
    let is_loss = match callee {
        Some("torch.nn.functional.cross_entropy" | "torch.nn.functional.nll_loss") => true,
        Some(_) => false,
        None => checker.model().calls_module(call, ModuleKind::ClassIndexLoss),
    };
    if !is_loss || call.arguments.find_keyword("ignore_index").is_some() {
        return;
    }
    let args = &call.arguments.args;
    let (Some(input), Some(target)) = (args.first(), args.get(1)) else {
        return;
    };
    let (input_masked, target_masked) = (masked(checker, input), masked(checker, target));
    let (input_read, target_read) = (strip_casts(input), strip_casts(target));
    let masked_somewhere = input_masked.is_some()
        || target_masked.is_some()
        || masked(checker, input_read).is_some()
        || masked(checker, target_read).is_some()
        || masked_variable(checker, input)
        || masked_variable(checker, target);
    if !masked_somewhere {
        return;
    }
    // The mask reads are this finding; SYNC203 does not report them again.
    for read in [input_read, target_read] {
        checker.supersede(Rule::BooleanMaskRead, read.range());
    }
    let loss = checker.slice(&*call.func);
    let mut diagnostic = Diagnostic::new(
        Rule::MaskedLoss,
        call.range(),
        format!("`{loss}` on boolean-masked inputs waits for the GPU to count the mask"),
        "pass the unmasked tensors with `ignore_index=` set to the value the mask drops".to_string(),
    );
    // Module calls take no `ignore_index=` (it is fixed when the module is built): no fix.
    let functional = callee.is_some();
    if let (true, Some((logits, mask)), Some((labels, same_mask))) = (functional, input_masked, target_masked)
        && checker.slice(mask) == checker.slice(same_mask)
    {
        let fix = ignore_index_fix(checker, call, logits, labels, mask)
            .filter(|(_, fix)| !super::edits::drops_comment(checker.source(), &fix.edits));
        if let Some(fix) = fix {
            let title = fix.0;
            diagnostic = diagnostic.with_fix(title, fix.1);
        }
    }
    checker.report(diagnostic);
}

/// `loss(logits[m], target[m])` with `m = target != IGN` ->
/// `loss(logits.flatten(0, -2), target.flatten(), ignore_index=IGN)`; with class-first logits
/// permuted to the end (`logits.permute(0, 2, 3, 1)[m]`) -> `loss(logits, target, ...)`; with
/// any other mask -> `loss(logits.flatten(0, -2), target.masked_fill(~m, -100).flatten(),
/// ignore_index=-100)`. Flattening the leading dimensions makes `(B, T, C)` logits with a
/// `(B, T)` mask the `(B * T, C)` rows the masked call saw, and is a no-op for `(N, C)`.
fn ignore_index_fix(
    checker: &Checker,
    call: &ExprCall,
    logits: &Expr,
    labels: &Expr,
    mask: &Expr,
) -> Option<(String, Fix)> {
    let reduction_none = call
        .arguments
        .find_keyword("reduction")
        .is_some_and(|k| matches!(&k.value, Expr::StringLiteral(s) if s.value.to_str() == "none"));
    // `reduction="none"` would return one loss per position instead of one per kept position;
    // `**kwargs` may hold `ignore_index` already.
    if reduction_none
        || call.arguments.keywords.iter().any(|k| k.arg.is_none())
        || call.arguments.args.iter().any(Expr::is_starred_expr)
    {
        return None;
    }
    let labels_text = checker.slice(labels);
    let mask_definition = match mask {
        Expr::Name(name) => checker
            .model()
            .lookup(name.id.as_str())
            .and_then(|binding| binding.value),
        other => Some(other),
    };
    // `m = target != IGN` with IGN a number or a constant: the mask drops exactly the targets
    // `ignore_index=IGN` ignores.
    let ignored = match mask_definition {
        Some(Expr::Compare(compare)) => match (&*compare.ops, &*compare.comparators) {
            ([CmpOp::NotEq], [ignored])
                if checker.slice(&*compare.left) == labels_text
                    && !matches!(ignored, Expr::Call(_))
                    && !matches!(checker.model().kind_of(ignored), Kind::Tensor(_)) =>
            {
                Some(ignored)
            }
            _ => None,
        },
        _ => None,
    };
    let permuted = match logits {
        Expr::Call(inner) => match method_call(inner) {
            Some((base, "permute")) if checker.slice(&inner.arguments).replace(' ', "") == "(0,2,3,1)" => Some(base),
            _ => None,
        },
        _ => None,
    };
    let labels_atom = super::edits::parenthesized(checker, labels);
    let (new_target, ignore_index) = match ignored {
        Some(ignored) => (labels_atom, checker.slice(ignored).to_string()),
        None => {
            let not_mask = match mask {
                Expr::Name(_) | Expr::Attribute(_) | Expr::Call(_) | Expr::Subscript(_) => {
                    format!("~{}", checker.slice(mask))
                }
                _ => format!("~({})", checker.slice(mask)),
            };
            (
                format!("{labels_atom}.masked_fill({not_mask}, -100)"),
                "-100".to_string(),
            )
        }
    };
    let (new_input, new_target) = match permuted {
        Some(base) => (checker.slice(base).to_string(), new_target),
        None => (
            format!("{}.flatten(0, -2)", super::edits::parenthesized(checker, logits)),
            format!("{new_target}.flatten()"),
        ),
    };
    let args = &call.arguments.args;
    let mut edits = vec![
        Edit::replace(args[0].range(), new_input),
        Edit::replace(args[1].range(), new_target),
    ];
    edits.push(super::edits::add_argument(
        checker,
        call,
        &format!("ignore_index={ignore_index}"),
    )?);
    Some((
        format!("Pass the unmasked tensors with `ignore_index={ignore_index}`"),
        Fix::unsafe_(edits),
    ))
}
