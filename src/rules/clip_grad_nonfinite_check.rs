//! SYNC305: `clip_grad_norm_(..., error_if_nonfinite=True)` reads the norm on the host.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use super::edits::remove_keyword;
use crate::checker::Checker;
use crate::diagnostic::{Diagnostic, Fix};
use crate::registry::Rule;

pub(crate) fn call(checker: &mut Checker, call: &ExprCall) {
    if !checker.enabled(Rule::ClipGradNonfiniteCheck) {
        return;
    }
    let qualified = checker.model().qualified_name(&call.func);
    if !matches!(qualified.as_deref(), Some("torch.nn.utils.clip_grad_norm_" | "torch.nn.utils.clip_grad.clip_grad_norm_")) {
        return;
    }
    let Some(keyword) = call.arguments.find_keyword("error_if_nonfinite") else { return };
    if !matches!(&keyword.value, Expr::BooleanLiteral(b) if b.value) {
        return;
    }
    let mut diagnostic = Diagnostic::new(
        Rule::ClipGradNonfiniteCheck,
        keyword.range(),
        "`error_if_nonfinite=True` reads the gradient norm on the host and waits for the GPU".to_string(),
        "drop it and check the returned norm on the device (`torch._assert_async(torch.isfinite(norm))`), or let GradScaler skip bad steps".to_string(),
    );
    if let Some(edit) = remove_keyword(call, "error_if_nonfinite") {
        // Drops an error check: unsafe.
        diagnostic = diagnostic.with_fix("Remove `error_if_nonfinite=True`", Fix::unsafe_(vec![edit]));
    }
    checker.report(diagnostic);
}
