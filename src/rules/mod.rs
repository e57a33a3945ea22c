//! The rules, one module each. `check_expr` / `check_stmt` are called by the checker at every
//! node (after the node's children were visited) and dispatch to the enabled rules; SYNC900
//! ([`unused_noqa`]) runs after the checker, on the file's `# noqa` directives.

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

pub(crate) mod edits;
mod locals;

use ruff_python_ast::{Expr, Stmt};

use crate::checker::Checker;
use crate::registry::Rule;

pub(crate) use dataloader_without_pin_memory::report_unpinned_loaders;
pub(crate) use unused_noqa::unused_noqa;

#[inline(always)]
pub(crate) fn check_expr(checker: &mut Checker, expr: &Expr) {
    // Most nodes are comparisons, tuples and the like, which no rule looks at: leave before
    // asking where the code runs (and before the entry into the dispatch below).
    let checked = matches!(
        expr,
        Expr::Call(_)
            | Expr::Subscript(_)
            | Expr::Attribute(_)
            | Expr::FString(_)
            | Expr::BinOp(_)
            | Expr::BoolOp(_)
            | Expr::UnaryOp(_)
            | Expr::If(_)
    );
    if checked {
        check_flagged_expr(checker, expr);
    }
}

#[inline(never)]
fn check_flagged_expr(checker: &mut Checker, expr: &Expr) {
    if checker.is_cold() {
        return;
    }
    match expr {
        Expr::Call(call) => check_call(checker, call),
        Expr::Subscript(subscript) => {
            boolean_mask_read::subscript(checker, subscript);
            host_index::subscript(checker, subscript);
            tensor_as_number::subscript(checker, subscript);
        }
        Expr::Attribute(attribute) => data_dependent_shape::attribute(checker, attribute),
        Expr::FString(fstring) => tensor_formatting::fstring(checker, fstring),
        Expr::BinOp(binop) => tensor_formatting::percent_format(checker, binop),
        Expr::BoolOp(bool_op) => tensor_truthiness::bool_op(checker, bool_op),
        Expr::UnaryOp(unary) => tensor_truthiness::not(checker, unary),
        Expr::If(if_expr) => tensor_truthiness::test(checker, &if_expr.test),
        _ => {}
    }
}

/// Every call-shaped rule, out of line: the dispatcher above stays small for the nodes that
/// no rule looks at.
#[inline(never)]
fn check_call(checker: &mut Checker, call: &ruff_python_ast::ExprCall) {
    // Resolved once here for every rule (most calls are not reached through an import).
    let callee = checker.callee(call);
    let callee = callee.as_deref();
    item::call(checker, call);
    item::bounded(checker, call);
    tolist::call(checker, call);
    device_to_host_copy::call(checker, call, callee);
    tensor_as_number::call(checker, call, callee);
    tensor_formatting::call(checker, call);
    host_comparison::call(checker, call, callee);
    nonzero::call(checker, call, callee);
    unique::call(checker, call, callee);
    boolean_mask_read::call(checker, call, callee);
    boolean_mask_write::call(checker, call, callee);
    size_from_data::call(checker, call, callee);
    data_dependent_shape::call(checker, call, callee);
    masked_loss::call(checker, call, callee);
    grad_scaler_unfused_optimizer::call(checker, call);
    checked_linalg::call(checker, call, callee);
    distribution_validation::call(checker, call, callee);
    clip_grad_nonfinite_check::call(checker, call, callee);
    ctc_loss::call(checker, call, callee);
    normal_sample::call(checker, call, callee);
    blocking_host_to_device::call(checker, call, callee);
    explicit_synchronize::call(checker, call, callee);
    serial_collectives::call(checker, call, callee);
    barrier_in_step::call(checker, call, callee);
    helper_syncs::call(checker, call);
}

pub(crate) fn check_stmt(checker: &mut Checker, stmt: &Stmt) {
    if checker.is_cold() {
        return;
    }
    match stmt {
        Stmt::If(if_stmt) => tensor_truthiness::if_stmt(checker, if_stmt),
        Stmt::While(while_stmt) => tensor_truthiness::test(checker, &while_stmt.test),
        Stmt::Assert(assert) => tensor_truthiness::assert(checker, assert),
        Stmt::Assign(assign) => {
            boolean_mask_write::assign(checker, assign);
            host_index::assign(checker, assign);
            blocking_host_to_device::assign(checker, assign);
            device_to_host_copy::assign(checker, assign);
            nonzero::assign(checker, assign);
        }
        Stmt::AugAssign(assign) => {
            boolean_mask_write::aug_assign(checker, assign);
            item::aug_assign(checker, assign);
        }
        _ => {}
    }
}

/// An `elif` test is checked like an `if` test.
pub(crate) fn check_elif(checker: &mut Checker, test: &Expr) {
    if !checker.is_cold() {
        tensor_truthiness::test(checker, test);
    }
}

/// `recv.method(...)` -> (`recv`, `method`).
pub(crate) fn method_call(call: &ruff_python_ast::ExprCall) -> Option<(&Expr, &str)> {
    match call.func.as_ref() {
        Expr::Attribute(attribute) => Some((&attribute.value, attribute.attr.as_str())),
        _ => None,
    }
}

/// The value of the keyword argument `name`, or the positional argument at `position`.
pub(crate) fn argument<'e>(call: &'e ruff_python_ast::ExprCall, name: &str, position: usize) -> Option<&'e Expr> {
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
pub(crate) fn may_be_cuda(checker: &Checker, expr: &Expr, unknown_counts: bool) -> bool {
    let model = checker.model();
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
pub(crate) fn torch_input_may_be_cuda(checker: &Checker, expr: Option<&Expr>) -> bool {
    expr.is_some_and(|expr| !checker.model().kind_for_device_test(expr).is_known_host_value())
}

/// The source of `expr` as the receiver of a method in a message: parenthesized unless it is
/// a name, attribute, call or subscript (`(a // b).tolist()`, not `a // b.tolist()`).
pub(crate) fn receiver_text(checker: &Checker, expr: &Expr) -> String {
    let text = checker.slice(expr);
    match expr {
        Expr::Name(_) | Expr::Attribute(_) | Expr::Call(_) | Expr::Subscript(_) => text.to_string(),
        _ => format!("({text})"),
    }
}

/// Report helper: shorthand for the rule's finding at `range`.
pub(crate) fn report(
    checker: &mut Checker,
    rule: Rule,
    range: ruff_text_size::TextRange,
    message: String,
    help: String,
) {
    checker.report(crate::diagnostic::Diagnostic::new(rule, range, message, help));
}
