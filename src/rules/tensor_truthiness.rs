//! SYNC105: a tensor's truth value read by Python: `if t:`, `while t:`, `assert t`, `t and x`,
//! `t or 1.0`, `not t`, `a if t else b`.

use ruff_python_ast::{BoolOp, Expr, ExprBoolOp, ExprUnaryOp, StmtAssert, UnaryOp};
use ruff_text_size::Ranged;

use super::edits::torch_name;
use super::report;
use crate::checker::Checker;
use crate::diagnostic::{Diagnostic, Edit, Fix};
use crate::registry::Rule;

const HELP: &str = "keep the decision on the device: `torch.where(cond, a, b)`, `torch.nan_to_num`, or `torch._assert_async(cond)` for checks";

fn flag(checker: &mut Checker, expr: &Expr, what: &str) {
    let text = checker.slice(expr);
    report(
        checker,
        Rule::TensorTruthiness,
        expr.range(),
        format!("{what} `{text}` reads a GPU tensor's truth value and waits for the GPU"),
        HELP.to_string(),
    );
}

/// The test of an `if`, `elif`, `while` or conditional expression.
pub(crate) fn test(checker: &mut Checker, test: &Expr) {
    if !checker.enabled(Rule::TensorTruthiness) {
        return;
    }
    match test {
        // `not t` and `a and t` are reported where the truth value is taken.
        Expr::UnaryOp(unary) if unary.op == UnaryOp::Not => {}
        Expr::BoolOp(bool_op) => {
            if let Some(last) = bool_op.values.last()
                && checker.model().is_maybe_cuda_tensor(last)
            {
                flag(checker, last, "testing");
            }
        }
        _ if checker.model().is_maybe_cuda_tensor(test) => flag(checker, test, "testing"),
        _ => {}
    }
}

/// `t and x`, `t or 1.0`: every value but the last is tested.
pub(crate) fn bool_op(checker: &mut Checker, bool_op: &ExprBoolOp) {
    if !checker.enabled(Rule::TensorTruthiness) {
        return;
    }
    let operator = if bool_op.op == BoolOp::And {
        "`and` on"
    } else {
        "`or` on"
    };
    let (_, tested) = bool_op.values.split_last().expect("a BoolOp has at least two values");
    for value in tested {
        if checker.model().is_maybe_cuda_tensor(value) {
            flag(checker, value, operator);
        }
    }
}

/// `not t`.
pub(crate) fn not(checker: &mut Checker, unary: &ExprUnaryOp) {
    if checker.enabled(Rule::TensorTruthiness)
        && unary.op == UnaryOp::Not
        && checker.model().is_maybe_cuda_tensor(&unary.operand)
    {
        let text = checker.slice(&*unary.operand);
        report(
            checker,
            Rule::TensorTruthiness,
            unary.range(),
            format!("`not {text}` reads a GPU tensor's truth value and waits for the GPU"),
            HELP.to_string(),
        );
    }
}

/// `assert t`: fixable to `torch._assert_async(t)` (unsafe: it fails later, asynchronously,
/// and is a private API).
pub(crate) fn assert(checker: &mut Checker, assert: &StmtAssert) {
    if !checker.enabled(Rule::TensorTruthiness) || !checker.model().is_maybe_cuda_tensor(&assert.test) {
        return;
    }
    let condition = checker.slice(&*assert.test);
    let message = format!("`assert {condition}` reads a GPU tensor's truth value and waits for the GPU");
    // `assert` evaluates its message only on failure; the call evaluates it every time. Keep a
    // string literal; a computed message (an f-string of a tensor would sync itself) gets no fix.
    let fixable = assert.msg.as_deref().is_none_or(Expr::is_string_literal_expr);
    let (torch, import) = torch_name(checker);
    let replacement = match &assert.msg {
        Some(msg) => format!("{torch}._assert_async({condition}, {})", checker.slice(&**msg)),
        None => format!("{torch}._assert_async({condition})"),
    };
    let mut diagnostic = Diagnostic::new(
        Rule::TensorTruthiness,
        assert.test.range(),
        message,
        format!("check on the device: `{replacement}`"),
    );
    let mut edits = vec![Edit::replace(assert.range(), replacement.clone())];
    edits.extend(import);
    if fixable && !super::edits::drops_comment(checker.source(), &edits) {
        diagnostic = diagnostic.with_fix(format!("Replace with `{replacement}`"), Fix::unsafe_(edits));
    }
    checker.report(diagnostic);
}
