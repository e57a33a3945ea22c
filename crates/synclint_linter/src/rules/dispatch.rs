//! Which rules look at which kind of node. The checker calls [`check_expr`] and [`check_stmt`]
//! at every node after the node's children were visited, [`check_elif`] at each `elif` test,
//! and [`end_of_file`] once the whole file was walked; each hands the node to the enabled rules
//! that look at its kind. The cheap exits come first: most nodes are of kinds no rule reads.

use ruff_python_ast::{Expr, Stmt};

use super::*;

#[inline(always)]
pub(crate) fn check_expr(context: &mut RuleContext, expr: &Expr) {
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
        check_flagged_expr(context, expr);
    }
}

#[inline(never)]
fn check_flagged_expr(context: &mut RuleContext, expr: &Expr) {
    if context.is_cold() {
        return;
    }
    match expr {
        Expr::Call(call) => check_call(context, call),
        Expr::Subscript(subscript) => {
            boolean_mask_read::subscript(context, subscript);
            host_index::subscript(context, subscript);
            tensor_as_number::subscript(context, subscript);
        }
        Expr::Attribute(attribute) => data_dependent_shape::attribute(context, attribute),
        Expr::FString(fstring) => tensor_formatting::fstring(context, fstring),
        Expr::BinOp(binop) => tensor_formatting::percent_format(context, binop),
        Expr::BoolOp(bool_op) => tensor_truthiness::bool_op(context, bool_op),
        Expr::UnaryOp(unary) => tensor_truthiness::not(context, unary),
        Expr::If(if_expr) => tensor_truthiness::test(context, &if_expr.test),
        _ => {}
    }
}

/// Every call-shaped rule, out of line: the dispatcher above stays small for the nodes that
/// no rule looks at.
#[inline(never)]
fn check_call(context: &mut RuleContext, call: &ruff_python_ast::ExprCall) {
    // Resolved once here for every rule (most calls are not reached through an import).
    let callee = context.callee(call);
    let callee = callee.as_deref();
    item::call(context, call);
    item::bounded(context, call);
    tolist::call(context, call);
    device_to_host_copy::call(context, call, callee);
    tensor_as_number::call(context, call, callee);
    tensor_formatting::call(context, call);
    host_comparison::call(context, call, callee);
    nonzero::call(context, call, callee);
    unique::call(context, call, callee);
    boolean_mask_read::call(context, call, callee);
    boolean_mask_write::call(context, call, callee);
    size_from_data::call(context, call, callee);
    data_dependent_shape::call(context, call, callee);
    masked_loss::call(context, call, callee);
    grad_scaler_unfused_optimizer::call(context, call);
    checked_linalg::call(context, call, callee);
    distribution_validation::call(context, call, callee);
    clip_grad_nonfinite_check::call(context, call, callee);
    ctc_loss::call(context, call, callee);
    normal_sample::call(context, call, callee);
    blocking_host_to_device::call(context, call, callee);
    explicit_synchronize::call(context, call, callee);
    serial_collectives::call(context, call, callee);
    barrier_in_step::call(context, call, callee);
    helper_syncs::call(context, call);
}

pub(crate) fn check_stmt(context: &mut RuleContext, stmt: &Stmt) {
    if context.is_cold() {
        return;
    }
    match stmt {
        Stmt::If(if_stmt) => tensor_truthiness::if_stmt(context, if_stmt),
        Stmt::While(while_stmt) => tensor_truthiness::test(context, &while_stmt.test),
        Stmt::Assert(assert) => tensor_truthiness::assert(context, assert),
        Stmt::Assign(assign) => {
            boolean_mask_write::assign(context, assign);
            host_index::assign(context, assign);
            blocking_host_to_device::assign(context, assign);
            device_to_host_copy::assign(context, assign);
            nonzero::assign(context, assign);
        }
        Stmt::AugAssign(assign) => {
            boolean_mask_write::aug_assign(context, assign);
            item::aug_assign(context, assign);
        }
        _ => {}
    }
}

/// An `elif` test is checked like an `if` test.
pub(crate) fn check_elif(context: &mut RuleContext, test: &Expr) {
    if !context.is_cold() {
        tensor_truthiness::test(context, test);
    }
}

/// What the rules report once the whole file was walked, added to the file's findings:
/// SYNC402's loaders, whose batches may be copied to the GPU anywhere in the file.
pub(crate) fn end_of_file(rules: &crate::registry::RuleSet, findings: &mut Findings) {
    if rules.contains(Rule::DataloaderWithoutPinMemory) {
        findings.diagnostics.extend(findings.loaders.report());
    }
}
