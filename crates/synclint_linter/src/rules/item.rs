//! SYNC101: `t.item()` on a hot line.

use ruff_python_ast::{Expr, ExprCall, Operator, StmtAugAssign};
use ruff_text_size::Ranged;

use super::{may_be_cuda, method_call, report};
use crate::diagnostic::{Edit, Fix};
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::Kind;

pub fn call(context: &mut RuleContext, call: &ExprCall) {
    if !context.enabled(Rule::Item) {
        return;
    }
    let Some((receiver, method)) = method_call(call) else {
        return;
    };
    match method {
        "item" if call.arguments.is_empty() && may_be_cuda(context, receiver, true) => {
            // A metric all-reduced on this step and then read is SYNC602's finding.
            if let Expr::Name(name) = receiver
                && context.enabled(Rule::BarrierInStep)
                && context.model().is_all_reduced(name.id.as_str())
            {
                return;
            }
            let receiver_text = super::receiver_text(context, receiver);
            report(
                context,
                Rule::Item,
                call.range(),
                format!("`{receiver_text}.item()` waits for the GPU to finish all queued work"),
                format!(
                    "keep it on the device (`total += {receiver_text}.detach()`) and read it once per log interval"
                ),
            );
        }
        "get_scale" if call.arguments.is_empty() && context.model().kind_of(receiver) == Kind::GradScaler => {
            let receiver_text = super::receiver_text(context, receiver);
            report(
                context,
                Rule::Item,
                call.range(),
                format!("`{receiver_text}.get_scale()` reads the loss scale with `.item()` and waits for the GPU"),
                "read the scale once per log interval, not every step".to_string(),
            );
        }
        _ => {}
    }
}

/// `total += loss.item()` (also `total += loss.item() * n`): fixable to `total += loss.detach()`,
/// which sums on the device; the total is read when it is logged (unsafe: `total` becomes a
/// 0-dim tensor, and a later Python read of it syncs once there).
pub(crate) fn aug_assign(context: &mut RuleContext, assign: &StmtAugAssign) {
    if !context.enabled(Rule::Item)
        || !matches!(assign.op, Operator::Add | Operator::Sub)
        // A local total; an attribute (`self.state.tokens_seen`) is often saved or serialized
        // as a number.
        || !matches!(&*assign.target, Expr::Name(_))
    {
        return;
    }
    let mut reads = Vec::new();
    summed_item_reads(&assign.value, &mut reads);
    for call in reads {
        let Some((receiver, _)) = method_call(call) else {
            continue;
        };
        let replacement = format!("{}.detach()", context.slice(receiver));
        let edits = vec![Edit::replace(call.range(), replacement.clone())];
        context.attach_fix(
            Rule::Item,
            call.range(),
            format!("Sum on the device: `{replacement}`"),
            Fix::unsafe_(edits),
        );
    }
}

/// The `.item()` calls that are operands of the arithmetic `value` is made of.
fn summed_item_reads<'e>(value: &'e Expr, reads: &mut Vec<&'e ExprCall>) {
    match value {
        Expr::Call(call) if call.arguments.is_empty() && matches!(method_call(call), Some((_, "item"))) => {
            reads.push(call);
        }
        Expr::BinOp(binary)
            if matches!(
                binary.op,
                Operator::Add | Operator::Sub | Operator::Mult | Operator::Div
            ) =>
        {
            summed_item_reads(&binary.left, reads);
            summed_item_reads(&binary.right, reads);
        }
        _ => {}
    }
}

/// `max(n.item(), 1)` / `min(n.item(), c)` with a number: fixable to `n.clamp(min=1)` /
/// `n.clamp(max=c)`, the bound applied on the device (unsafe: a 0-dim tensor instead of a
/// number; dividing by it keeps the division on the device).
pub fn bounded(context: &mut RuleContext, call: &ExprCall) {
    let Expr::Name(function) = &*call.func else {
        return;
    };
    let side = match function.id.as_str() {
        "max" => "min",
        "min" => "max",
        _ => return,
    };
    if !context.enabled(Rule::Item) || !context.model().is_builtin(function.id.as_str()) {
        return;
    }
    let ([first, second], []) = (&*call.arguments.args, &*call.arguments.keywords) else {
        return;
    };
    let ((Expr::Call(read), bound) | (bound, Expr::Call(read))) = (first, second) else {
        return;
    };
    let Some((receiver, "item")) = method_call(read) else {
        return;
    };
    if !read.arguments.is_empty() || context.model().kind_of(bound) != Kind::Number || bound.is_call_expr() {
        return;
    }
    let replacement = format!(
        "{}.clamp({side}={})",
        super::edits::parenthesized(context, receiver),
        context.slice(bound)
    );
    let edits = vec![Edit::replace(call.range(), replacement.clone())];
    context.attach_fix(
        Rule::Item,
        read.range(),
        format!("Bound it on the device: `{replacement}`"),
        Fix::unsafe_(edits),
    );
}
