//! The rules, one module each. A rule reads the file through a [`RuleContext`] (the model at
//! the node, the source, the settings, the findings so far) and never through the traversal;
//! [`dispatch`] says which rules look at which kind of node. SYNC900 ([`unused_noqa`]) runs
//! after the context, on the file's `# noqa` directives.

mod barrier_in_step;
mod blocking_host_to_device;
mod boolean_mask_read;
mod boolean_mask_write;
mod checked_linalg;
mod clip_grad_nonfinite_check;
mod ctc_loss;
mod data_dependent_shape;
mod dataloader_without_pin_memory;
mod device_to_host_copy;
mod distribution_validation;
mod explicit_synchronize;
mod grad_scaler_unfused_optimizer;
mod helper_syncs;
mod host_comparison;
mod host_index;
mod item;
mod masked_loss;
mod nonzero;
mod normal_sample;
mod serial_collectives;
mod size_from_data;
mod tensor_as_number;
mod tensor_formatting;
mod tensor_truthiness;
mod tolist;
mod unique;
mod unused_noqa;

mod context;
pub mod dispatch;
pub mod edits;
mod locals;

use ruff_python_ast::Expr;

use crate::registry::Rule;

pub(crate) use context::{Findings, RuleContext};
pub use unused_noqa::unused_noqa;

/// `recv.method(...)` -> (`recv`, `method`).
pub(crate) fn method_call(call: &ruff_python_ast::ExprCall) -> Option<(&Expr, &str)> {
    match call.func.as_ref() {
        Expr::Attribute(attribute) => Some((&attribute.value, attribute.attr.as_str())),
        _ => None,
    }
}

/// The value of the keyword argument `name`, or the positional argument at `position`.
pub fn argument<'e>(call: &'e ruff_python_ast::ExprCall, name: &str, position: usize) -> Option<&'e Expr> {
    call.arguments
        .find_keyword(name)
        .map(|keyword| &keyword.value)
        .or_else(|| call.arguments.args.get(position).filter(|arg| !arg.is_starred_expr()))
}

/// `keyword=True` was passed literally.
pub(crate) fn keyword_is_true(call: &ruff_python_ast::ExprCall, name: &str) -> bool {
    call.arguments
        .find_keyword(name)
        .is_some_and(|keyword| matches!(&keyword.value, Expr::BooleanLiteral(b) if b.value))
}

/// `name=` is given and may be true: `True`, or a value chosen at run time
/// (`non_blocking=self.non_blocking`), not the literal `False` or `None`.
pub(crate) fn keyword_may_be_true(call: &ruff_python_ast::ExprCall, name: &str) -> bool {
    call.arguments.find_keyword(name).is_some_and(|keyword| {
        !matches!(&keyword.value, Expr::BooleanLiteral(b) if !b.value) && !keyword.value.is_none_literal_expr()
    })
}

/// Could this value be a CUDA tensor? Known tensors not on the CPU, and, when
/// `unknown_counts`, values the model knows nothing about.
pub fn may_be_cuda(context: &RuleContext, expr: &Expr, unknown_counts: bool) -> bool {
    let model = context.model();
    let kind = if unknown_counts {
        model.kind_for_device_test(expr)
    } else {
        model.kind_of(expr)
    };
    match kind {
        crate::semantic::Kind::Tensor(facts) => facts.may_be_cuda(),
        crate::semantic::Kind::Unknown => unknown_counts,
        _ => false,
    }
}

/// For torch functions (`torch.nonzero(x)`): the input is a tensor by construction, so fire
/// unless the model knows it is on the host.
pub(crate) fn torch_input_may_be_cuda(context: &RuleContext, expr: Option<&Expr>) -> bool {
    expr.is_some_and(|expr| !context.model().kind_for_device_test(expr).is_known_host_value())
}

/// The source of `expr` as the receiver of a method in a message: parenthesized unless it is
/// a name, attribute, call or subscript (`(a // b).tolist()`, not `a // b.tolist()`).
pub(crate) fn receiver_text(context: &RuleContext, expr: &Expr) -> String {
    let text = context.slice(expr);
    match expr {
        Expr::Name(_) | Expr::Attribute(_) | Expr::Call(_) | Expr::Subscript(_) => text.to_string(),
        _ => format!("({text})"),
    }
}

/// Report helper: shorthand for the rule's finding at `range`.
pub fn report(context: &mut RuleContext, rule: Rule, range: ruff_text_size::TextRange, message: String, help: String) {
    context.report(crate::diagnostic::Diagnostic::new(rule, range, message, help));
}
