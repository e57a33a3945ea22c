//! SYNC204: boolean-mask writes with a tensor value: `x[mask] = v`, `x[mask] += v`,
//! `masked_fill(mask, <CUDA tensor>)`. `x[mask] = <Python scalar>` is fine (measured: no sync).

use ruff_python_ast::visitor::{Visitor, walk_expr};
use ruff_python_ast::{Expr, ExprCall, Operator, StmtAssign, StmtAugAssign};
use ruff_text_size::Ranged;

use super::edits::torch_name;
use super::{method_call, report};
use crate::diagnostic::{Diagnostic, Edit, Fix};
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::Kind;

/// The `x` and index of a boolean-mask subscript target on a maybe-CUDA tensor: `x[mask]`, or a
/// tuple index holding a mask (`x[:, mask]`, `x[idx, mask]`: measured to sync the same way).
/// `whole`: the index is the mask itself (only then is the `torch.where` rewrite shaped right).
fn mask_target<'e>(context: &RuleContext, target: &'e Expr) -> Option<MaskTarget<'e>> {
    let Expr::Subscript(subscript) = target else {
        return None;
    };
    let model = context.model();
    // A parameter named as a mask counts, as for reads (SYNC203).
    let whole = match &*subscript.slice {
        Expr::Tuple(_) if model.is_boolean_index(&subscript.slice) => false,
        index if model.is_boolean_index(index) => true,
        _ => return None,
    };
    model.is_maybe_cuda_tensor(&subscript.value).then_some(MaskTarget {
        x: &subscript.value,
        index: &subscript.slice,
        whole,
    })
}

struct MaskTarget<'e> {
    x: &'e Expr,
    index: &'e Expr,
    whole: bool,
}

/// Only a plain name or attribute can be repeated in a rewrite without evaluating it twice.
fn is_simple(expr: &Expr) -> bool {
    match expr {
        Expr::Name(_) => true,
        Expr::Attribute(attribute) => is_simple(&attribute.value),
        _ => false,
    }
}

pub fn assign(context: &mut RuleContext, assign: &StmtAssign) {
    if !context.enabled(Rule::BooleanMaskWrite) {
        return;
    }
    let [target] = assign.targets.as_slice() else { return };
    let Some(MaskTarget { x, index: mask, whole }) = mask_target(context, target) else {
        return;
    };
    let Kind::Tensor(value) = context.model().kind_of(&assign.value) else {
        return;
    };
    let (x_text, mask_text, v) = (context.slice(x), context.slice(mask), context.slice(&*assign.value));
    let (torch, import) = torch_name(context);
    let replacement = format!("{x_text}.copy_({torch}.where({mask_text}, {v}, {x_text}))");
    let mut diagnostic = Diagnostic::new(
        Rule::BooleanMaskWrite,
        target.range(),
        format!("`{x_text}[{mask_text}] = {v}` with a tensor value waits for the GPU (a Python scalar would not)"),
        if whole {
            format!(
                "write in place without a sync: `{replacement}` (a broadcastable value), or `{x_text}.masked_scatter_({mask_text}, {v})` (one value per selected element)"
            )
        } else {
            format!(
                "write a Python scalar, or write in place with `{x_text}.copy_({torch}.where(m, {v}, {x_text}))` where `m` is the mask broadcast to `{x_text}`'s shape"
            )
        },
    );
    let fix_value = fixable(context, x, mask, &assign.value).filter(|_| whole && value.may_be_cuda());
    if let Some(v) = fix_value {
        let replacement = format!("{x_text}.copy_({torch}.where({mask_text}, {v}, {x_text}))");
        let mut edits = vec![Edit::replace(assign.range(), replacement.clone())];
        edits.extend(import);
        // Right only when `v` broadcasts to `x` (a 0-dim value, or tensors of `x`'s shape); a
        // value with one element per selected element has no sync-free `where` form here.
        // Shapes are not known statically: unsafe.
        if !super::edits::drops_comment(context.source(), &edits) {
            diagnostic = diagnostic.with_fix(format!("Replace with `{replacement}`"), Fix::unsafe_(edits));
        }
    }
    context.report(diagnostic);
}

pub(crate) fn aug_assign(context: &mut RuleContext, assign: &StmtAugAssign) {
    if !context.enabled(Rule::BooleanMaskWrite) {
        return;
    }
    let Some(MaskTarget { x, index: mask, whole }) = mask_target(context, &assign.target) else {
        return;
    };
    let (x_text, mask_text, v) = (context.slice(x), context.slice(mask), context.slice(&*assign.value));
    let op = assign.op.as_str();
    let (torch, import) = torch_name(context);
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
        match (whole, method.is_empty()) {
            (true, false) => format!("update in place without a sync: `{replacement}`"),
            (true, true) => format!("update the whole tensor with `torch.where({mask_text}, ..., {x_text})`"),
            (false, _) => format!(
                "update the whole tensor with `torch.where(m, ..., {x_text})`, `m` the mask broadcast to `{x_text}`'s shape"
            ),
        },
    );
    let fix_value = fixable(context, x, mask, &assign.value).filter(|_| whole && !method.is_empty());
    if let Some(v) = fix_value {
        let replacement = format!("{x_text}.{method}({torch}.where({mask_text}, {v}, {neutral}))");
        let mut edits = vec![Edit::replace(assign.range(), replacement.clone())];
        edits.extend(import);
        // Right for a broadcastable `v`; dtype promotion of `torch.where` can differ: unsafe.
        if !super::edits::drops_comment(context.source(), &edits) {
            diagnostic = diagnostic.with_fix(format!("Replace with `{replacement}`"), Fix::unsafe_(edits));
        }
    }
    context.report(diagnostic);
}

/// The value to write with `torch.where(mask, v, ...)` for `x[mask] = value` (or `op=`), when
/// the rewrite keeps the meaning for values that broadcast: `x` is a plain name or attribute, the
/// mask tests `x`'s own elements (so it has `x`'s shape: a row mask of lower rank would broadcast
/// along the wrong axis), and every boolean-mask read in `value` is `y[mask]` with the same mask,
/// combined elementwise, and is replaced by `y` (`x[m] = y[m]` -> `torch.where(m, y, x)`). A
/// value read through another mask, or reduced (`y[m].sum()`), has one element per selected
/// element or a different meaning without the mask: no fix.
fn fixable(context: &RuleContext, x: &Expr, mask: &Expr, value: &Expr) -> Option<String> {
    let x_text = context.slice(x);
    if !is_simple(x) || !super::boolean_mask_read::mask_is_elementwise_on(context, mask, x_text) {
        return None;
    }
    let mut replacements = Vec::new();
    if !unmask(context, value, context.slice(mask), &mut replacements) {
        return None;
    }
    let mut text = String::new();
    let mut last = value.start();
    for (range, content) in replacements {
        text.push_str(&context.source()[ruff_text_size::TextRange::new(last, range.start())]);
        text.push_str(&content);
        last = range.end();
    }
    text.push_str(&context.source()[ruff_text_size::TextRange::new(last, value.end())]);
    Some(text)
}

/// Collects the edits turning each `y[mask]` in `expr` into `y`; false when a boolean-mask read
/// sits anywhere but under elementwise operations and shape-keeping methods.
fn unmask(
    context: &RuleContext,
    expr: &Expr,
    mask: &str,
    replacements: &mut Vec<(ruff_text_size::TextRange, String)>,
) -> bool {
    /// Methods that keep the shape, so `y[m].detach()` is `y.detach()[m]`.
    const SHAPE_KEEPING: [&str; 16] = [
        "detach",
        "clone",
        "contiguous",
        "float",
        "half",
        "double",
        "bfloat16",
        "int",
        "long",
        "bool",
        "to",
        "type",
        "abs",
        "neg",
        "sigmoid",
        "exp",
    ];
    if !reads_through_mask(context, expr) {
        return true;
    }
    match expr {
        Expr::Subscript(subscript)
            if context.slice(&*subscript.slice) == mask && !reads_through_mask(context, &subscript.value) =>
        {
            replacements.push((
                subscript.range(),
                super::edits::parenthesized(context, &subscript.value),
            ));
            true
        }
        Expr::BinOp(binary) if binary.op != Operator::MatMult => {
            unmask(context, &binary.left, mask, replacements) && unmask(context, &binary.right, mask, replacements)
        }
        Expr::UnaryOp(unary) => unmask(context, &unary.operand, mask, replacements),
        Expr::Call(call) => match method_call(call) {
            Some((receiver, method)) if SHAPE_KEEPING.contains(&method) => {
                call.arguments
                    .args
                    .iter()
                    .chain(call.arguments.keywords.iter().map(|k| &k.value))
                    .all(|arg| !reads_through_mask(context, arg))
                    && unmask(context, receiver, mask, replacements)
            }
            _ => false,
        },
        _ => false,
    }
}

/// Does `expr` read anything through a boolean mask (`y[m]`)?
fn reads_through_mask(context: &RuleContext, expr: &Expr) -> bool {
    struct Finder<'c, 'a> {
        context: &'c RuleContext<'c, 'a>,
        found: bool,
    }
    impl<'e> Visitor<'e> for Finder<'_, '_> {
        fn visit_expr(&mut self, expr: &'e Expr) {
            if self.found {
                return;
            }
            if let Expr::Subscript(subscript) = expr
                && self.context.model().is_boolean_index(&subscript.slice)
            {
                self.found = true;
                return;
            }
            walk_expr(self, expr);
        }
    }
    let mut finder = Finder { context, found: false };
    finder.visit_expr(expr);
    finder.found
}

/// `x.masked_fill(mask, v)` / `torch.masked_fill(x, mask, v)` with a CUDA tensor `v`.
pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::BooleanMaskWrite) {
        return;
    }
    let args = &call.arguments.args;
    let (x, value) = if callee == Some("torch.masked_fill") {
        (args.first(), args.get(2))
    } else {
        match method_call(call) {
            Some((receiver, "masked_fill" | "masked_fill_")) if context.model().is_maybe_cuda_tensor(receiver) => (
                Some(receiver),
                args.get(1).or(call.arguments.find_keyword("value").map(|k| &k.value)),
            ),
            _ => return,
        }
    };
    let (Some(x), Some(value)) = (x, value) else { return };
    if !context.model().is_maybe_cuda_tensor(value) || !context.model().is_maybe_cuda_tensor(x) {
        return;
    }
    let v = context.slice(value);
    report(
        context,
        Rule::BooleanMaskWrite,
        call.range(),
        format!("`masked_fill` with the GPU tensor `{v}` as value reads it on the host and waits for the GPU"),
        format!("use `torch.where(mask, {v}, x)`, or pass a Python scalar"),
    );
}
