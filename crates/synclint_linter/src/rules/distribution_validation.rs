//! SYNC304: `torch.distributions.*(...)` with argument validation on (the default), which
//! checks constraints on the host.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use super::edits::add_argument;
use crate::diagnostic::{Diagnostic, Fix};
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::torch_api;

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::DistributionValidation) || context.model().validation_disabled() {
        return;
    }
    let Some(qualified) = callee else {
        return sample_check(context, call);
    };
    if !torch_api::is_distribution_class(qualified) {
        return;
    }
    // Parameters that live on the host are validated without waiting for the GPU.
    if !parameters_may_be_cuda(context, call) {
        return;
    }
    if let Some(keyword) = call.arguments.find_keyword("validate_args")
        && !matches!(&keyword.value, Expr::BooleanLiteral(b) if b.value)
    {
        return;
    }
    let name = context.slice(&*call.func);
    let mut diagnostic = Diagnostic::new(
        Rule::DistributionValidation,
        call.range(),
        format!("`{name}(...)` validates its arguments on the host and waits for the GPU"),
        "pass `validate_args=False`, or call `torch.distributions.Distribution.set_default_validate_args(False)` once"
            .to_string(),
    );
    if call.arguments.find_keyword("validate_args").is_none() {
        // Invalid parameters are no longer caught: unsafe.
        // Not when `**kwargs` may pass it already.
        let edit = call
            .arguments
            .keywords
            .iter()
            .all(|k| k.arg.is_some())
            .then(|| add_argument(context, call, "validate_args=False"));
        if let Some(edit) = edit.flatten() {
            diagnostic = diagnostic.with_fix("Add `validate_args=False`", Fix::unsafe_(vec![edit]));
        }
    }
    context.report(diagnostic);
}

/// `d.log_prob(x)` on a validating distribution checks `x` against the support on the host.
fn sample_check(context: &mut RuleContext, call: &ExprCall) {
    let Some((receiver, method @ ("log_prob" | "cdf" | "icdf"))) = super::method_call(call) else {
        return;
    };
    if !matches!(
        context.model().kind_of(receiver),
        crate::semantic::Kind::Distribution { validating: true, .. }
    ) {
        return;
    }
    if !call
        .arguments
        .args
        .first()
        .is_some_and(|value| super::may_be_cuda(context, value, true))
    {
        return;
    }
    let text = context.slice(receiver);
    super::report(
        context,
        Rule::DistributionValidation,
        call.range(),
        format!("`{text}.{method}(...)` validates its input on the host and waits for the GPU"),
        "build the distribution with `validate_args=False`, or call `torch.distributions.Distribution.set_default_validate_args(False)` once".to_string(),
    );
}

/// Whether any argument of a distribution's constructor call may be a tensor on the GPU (a
/// distribution of host values checks and samples without waiting for it).
pub(crate) fn parameters_may_be_cuda(context: &RuleContext, constructor: &ExprCall) -> bool {
    let arguments = &constructor.arguments;
    arguments
        .args
        .iter()
        .chain(arguments.keywords.iter().map(|k| &k.value))
        .any(|value| super::may_be_cuda(context, value, true))
}
