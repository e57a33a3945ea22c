//! SYNC203: boolean-mask reads `x[mask]` and `torch.masked_select`: the result's size is the
//! number of true elements.

use ruff_python_ast::{CmpOp, Expr, ExprCall, ExprContext, ExprSubscript, Operator, UnaryOp};
use ruff_text_size::{Ranged, TextRange};

use super::edits::{parenthesized, torch_name};
use super::{argument, method_call, report, torch_input_may_be_cuda};
use crate::diagnostic::{Edit, Fix};
use crate::parse::literal_text;
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::Kind;
use crate::semantic::SemanticModel;

pub fn subscript(context: &mut RuleContext, subscript: &ExprSubscript) {
    if !context.enabled(Rule::BooleanMaskRead) || subscript.ctx != ExprContext::Load {
        return;
    }
    // The mask first: few indices are masks, and the file is checked again for what its
    // callers pass only where a question asked could change a verdict.
    let model = context.model();
    if !model.is_boolean_index(&subscript.slice)
        || !(model.is_maybe_cuda_tensor(&subscript.value) || indexed_where_the_mask_is(model, subscript))
    {
        return;
    }
    let x = context.slice(&*subscript.value);
    let index = context.slice(&*subscript.slice);
    // In `x[:, m]` the mask is `m`.
    let mask = match subscript.slice.as_ref() {
        Expr::Tuple(tuple) => tuple
            .elts
            .iter()
            .find(|elt| context.model().is_boolean_tensor(elt))
            .map_or(index, |m| context.slice(m)),
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
        context,
        Rule::BooleanMaskRead,
        subscript.range(),
        format!("`{x}[{index}]` has as many elements as `{mask}` has true values, so the host waits for the GPU"),
        help,
    );
}

/// A mask that may be on a GPU indexing a value nothing is known of (`a[keep]` of an element
/// of a tuple parameter): PyTorch indexes only a tensor on the mask's device (or the CPU mask of
/// a CPU tensor), so the value is a tensor that may be on a GPU too.
fn indexed_where_the_mask_is(model: &SemanticModel, subscript: &ExprSubscript) -> bool {
    model.kind_of(&subscript.value) == Kind::Unknown
        && model
            .tensor(&subscript.slice)
            .is_some_and(|facts| facts.boolean && facts.may_be_cuda())
}

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::BooleanMaskRead) {
        return;
    }
    if callee == Some("torch.masked_select")
        || matches!(method_call(call), Some((receiver, "masked_select")) if context.model().is_maybe_cuda_tensor(receiver))
    {
        let input = match method_call(call) {
            Some((receiver, "masked_select")) => Some(receiver),
            _ => argument(call, "input", 0),
        };
        if torch_input_may_be_cuda(context, input) {
            report(
                context,
                Rule::BooleanMaskRead,
                call.range(),
                "`masked_select` has a data-dependent size, so the host waits for the GPU".to_string(),
                "keep the shape: `torch.where(mask, x, 0)`".to_string(),
            );
        }
        return;
    }
    reduction_of_mask_read(context, call);
    summed_elementwise_loss(context, call, callee);
}

/// `F.l1_loss(x[m], y[m], reduction="sum")` (also `smooth_l1_loss`, `mse_loss`, `huber_loss`,
/// `binary_cross_entropy(_with_logits)`) -> `F.l1_loss(x, y, reduction="none").reshape(*m.shape,
/// -1).sum(-1).mul(m).sum()`: the per-element losses of every position, those of the kept ones
/// summed. The reshape folds whatever dimensions `x` has past the mask's (none, or the 4 of a
/// box) into one (unsafe: the sum runs in another order).
fn summed_elementwise_loss(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    const ELEMENTWISE: [&str; 6] = [
        "l1_loss",
        "smooth_l1_loss",
        "mse_loss",
        "huber_loss",
        "binary_cross_entropy",
        "binary_cross_entropy_with_logits",
    ];
    let is_loss = callee
        .and_then(|callee| callee.strip_prefix("torch.nn.functional."))
        .is_some_and(|name| ELEMENTWISE.contains(&name));
    let arguments = &call.arguments;
    let summed = arguments
        .find_keyword("reduction")
        .is_some_and(|k| matches!(&k.value, Expr::StringLiteral(s) if literal_text(&s.value) == Some("sum")));
    // Weights would need the mask too; `**kwargs` may hold anything.
    let plain = arguments.args.len() == 2
        && arguments.keywords.iter().all(|k| {
            k.arg
                .as_ref()
                .is_some_and(|arg| matches!(arg.as_str(), "reduction" | "beta" | "delta"))
        });
    if !is_loss || !summed || !plain {
        return;
    }
    let (Expr::Subscript(input), Expr::Subscript(target)) = (&arguments.args[0], &arguments.args[1]) else {
        return;
    };
    let model = context.model();
    let mask = context.slice(&*input.slice);
    if input.ctx != ExprContext::Load
        || context.slice(&*target.slice) != mask
        || !model.is_boolean_tensor(&input.slice)
        || !model.is_maybe_cuda_tensor(&input.value)
    {
        return;
    }
    let loss = context.slice(&*call.func);
    let options: Vec<&str> = arguments
        .keywords
        .iter()
        .filter(|k| k.arg.as_ref().is_some_and(|arg| arg.as_str() != "reduction"))
        .map(|k| context.slice(k))
        .collect();
    let options: String = options.iter().map(|option| format!(", {option}")).collect();
    let mask_atom = parenthesized(context, &input.slice);
    let replacement = format!(
        "{loss}({}, {}{options}, reduction=\"none\").reshape(*{mask_atom}.shape, -1).sum(-1).mul({mask}).sum()",
        context.slice(&*input.value),
        context.slice(&*target.value),
    );
    let edits = vec![Edit::replace(call.range(), replacement.clone())];
    context.attach_fix(
        Rule::BooleanMaskRead,
        input.range(),
        format!("Replace with `{replacement}`"),
        Fix::unsafe_(edits),
    );
}

/// `x[mask].sum()` -> `torch.where(mask, x, 0).sum()`; `x[mask].mean()` ->
/// `torch.where(mask, x, 0).sum() / mask.sum()`.
fn reduction_of_mask_read(context: &mut RuleContext, call: &ExprCall) {
    let Some((receiver, method @ ("sum" | "mean"))) = method_call(call) else {
        return;
    };
    if !call.arguments.is_empty() {
        return;
    }
    let Expr::Subscript(read) = receiver else {
        if method == "sum" {
            sum_of_masked_elementwise(context, call, receiver);
        }
        return;
    };
    if !call.arguments.is_empty() || read.ctx != ExprContext::Load {
        return;
    }
    if !context.model().is_boolean_tensor(&read.slice) || !context.model().is_maybe_cuda_tensor(&read.value) {
        return;
    }
    // Same shape only when the mask is a test of `x`'s own elements: a row mask of lower rank
    // would broadcast along the wrong axis, and `mask.sum()` would count rows. No fix otherwise.
    let x = context.slice(&*read.value);
    if !mask_is_elementwise_on(context, &read.slice, x) {
        return;
    }
    let mask = context.slice(&*read.slice);
    let (torch, import) = torch_name(context);
    let replacement = if method == "sum" {
        format!("{torch}.where({mask}, {x}, 0).sum()")
    } else {
        format!(
            "({torch}.where({mask}, {x}, 0).sum() / {}.sum())",
            parenthesized(context, &read.slice)
        )
    };
    let mut edits = vec![Edit::replace(call.range(), replacement.clone())];
    edits.extend(import);
    // The sum keeps values and dtype; the mean changes rounding and integer behaviour: unsafe.
    let fix = if method == "sum" {
        Fix::safe(edits)
    } else {
        Fix::unsafe_(edits)
    };
    context.attach_fix(
        Rule::BooleanMaskRead,
        read.range(),
        format!("Replace with `{replacement}`"),
        fix,
    );
}

/// `(a[m] == b[m]).sum()` (any comparison or arithmetic of reads through one mask, and numbers)
/// -> `torch.where(m, a == b, 0).sum()`: the count or total over the kept positions, with the
/// shapes kept. The mask must test the elements of one of the tensors read (so it has their
/// shape); unsafe: a value read through the mask with trailing dimensions of its own would
/// broadcast differently.
fn sum_of_masked_elementwise(context: &mut RuleContext, call: &ExprCall, value: &Expr) {
    let mut reads = Vec::new();
    if !masked_leaves(value, &mut reads) || reads.is_empty() {
        return;
    }
    let mask = &*reads[0].slice;
    let mask_text = context.slice(mask);
    if reads.iter().any(|read| context.slice(&*read.slice) != mask_text)
        || !reads
            .iter()
            .any(|read| mask_is_elementwise_on(context, mask, context.slice(&*read.value)))
        || !reads.iter().all(|read| {
            context.model().is_boolean_tensor(&read.slice) && context.model().is_maybe_cuda_tensor(&read.value)
        })
    {
        return;
    }
    // The value's text with each `x[m]` read as `x`.
    let source = context.source();
    let mut unmasked = String::new();
    let mut at = value.start();
    for read in &reads {
        unmasked.push_str(&source[TextRange::new(at, read.start())]);
        unmasked.push_str(context.slice(&*read.value));
        at = read.end();
    }
    unmasked.push_str(&source[TextRange::new(at, value.end())]);
    let (torch, import) = torch_name(context);
    let replacement = format!("{torch}.where({mask_text}, {unmasked}, 0).sum()");
    let mut edits = vec![Edit::replace(call.range(), replacement.clone())];
    edits.extend(import);
    // On the first read's finding; the others go with it.
    context.attach_fix(
        Rule::BooleanMaskRead,
        reads[0].range(),
        format!("Replace with `{replacement}`"),
        Fix::unsafe_(edits),
    );
}

/// Collects the masked reads `value` is an elementwise expression of (comparisons, arithmetic,
/// numbers); `false` where it holds anything else.
fn masked_leaves<'e>(value: &'e Expr, reads: &mut Vec<&'e ExprSubscript>) -> bool {
    match value {
        Expr::Subscript(read) if read.ctx == ExprContext::Load => {
            reads.push(read);
            true
        }
        Expr::NumberLiteral(_) => true,
        Expr::Compare(compare) if compare.comparators.len() == 1 => {
            masked_leaves(&compare.left, reads) && masked_leaves(&compare.comparators[0], reads)
        }
        Expr::BinOp(binary) => masked_leaves(&binary.left, reads) && masked_leaves(&binary.right, reads),
        Expr::UnaryOp(unary) => masked_leaves(&unary.operand, reads),
        _ => false,
    }
}

/// Is `mask` an elementwise test of the tensor spelled `x` (`x > 0`, `~torch.isnan(x)`,
/// `(x > 0) & (x < 1)`), either inline or through a variable assigned one? Then it has `x`'s
/// shape.
pub(crate) fn mask_is_elementwise_on(context: &RuleContext, mask: &Expr, x: &str) -> bool {
    const TESTS: [&str; 5] = ["isnan", "isinf", "isfinite", "isposinf", "isneginf"];
    match mask {
        Expr::Compare(compare) => {
            let compares_x = context.slice(&*compare.left) == x
                || (compare.comparators.len() == 1 && context.slice(&compare.comparators[0]) == x);
            compares_x
                && compare
                    .ops
                    .iter()
                    .all(|op| !matches!(op, CmpOp::In | CmpOp::NotIn | CmpOp::Is | CmpOp::IsNot))
        }
        Expr::UnaryOp(unary) if unary.op == UnaryOp::Invert => mask_is_elementwise_on(context, &unary.operand, x),
        // Both sides have `x`'s shape, so the result does too.
        Expr::BinOp(binary) if matches!(binary.op, Operator::BitAnd | Operator::BitOr | Operator::BitXor) => {
            mask_is_elementwise_on(context, &binary.left, x) && mask_is_elementwise_on(context, &binary.right, x)
        }
        Expr::Call(call) => {
            if let Some((receiver, method)) = method_call(call)
                && TESTS.contains(&method)
                && call.arguments.is_empty()
                && context.slice(receiver) == x
            {
                return true;
            }
            context
                .callee(call)
                .as_deref()
                .and_then(|name| name.strip_prefix("torch."))
                .is_some_and(|name| TESTS.contains(&name))
                && call.arguments.len() == 1
                && call.arguments.args.first().is_some_and(|arg| context.slice(arg) == x)
        }
        Expr::Name(name) => context
            .model()
            .lookup(name.id.as_str())
            .and_then(|binding| binding.value)
            .is_some_and(|value| !matches!(value, Expr::Name(_)) && mask_is_elementwise_on(context, value, x)),
        _ => false,
    }
}
