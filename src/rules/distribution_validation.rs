//! SYNC304: `torch.distributions.*(...)` with argument validation on (the default), which
//! checks constraints on the host.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use super::edits::add_argument;
use crate::checker::Checker;
use crate::diagnostic::{Diagnostic, Fix};
use crate::registry::Rule;
use crate::semantic::torch_api;

pub(crate) fn call(checker: &mut Checker, call: &ExprCall) {
    if !checker.enabled(Rule::DistributionValidation) || checker.model().validation_disabled() {
        return;
    }
    let Some(qualified) = checker.model().qualified_name(&call.func) else { return };
    if !torch_api::is_distribution_class(&qualified) {
        return;
    }
    if let Some(keyword) = call.arguments.find_keyword("validate_args") {
        if !matches!(&keyword.value, Expr::BooleanLiteral(b) if b.value) {
            return;
        }
    }
    let name = checker.slice(&*call.func);
    let mut diagnostic = Diagnostic::new(
        Rule::DistributionValidation,
        call.range(),
        format!("`{name}(...)` validates its arguments on the host and waits for the GPU"),
        "pass `validate_args=False`, or call `torch.distributions.Distribution.set_default_validate_args(False)` once".to_string(),
    );
    if call.arguments.find_keyword("validate_args").is_none() {
        // Invalid parameters are no longer caught: unsafe.
        let edit = add_argument(checker, call, "validate_args=False");
        diagnostic = diagnostic.with_fix("Add `validate_args=False`", Fix::unsafe_(vec![edit]));
    }
    checker.report(diagnostic);
}
