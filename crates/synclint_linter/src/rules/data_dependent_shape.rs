//! SYNC207: the shape of a data-dependent tensor (from nonzero / unique / masked_select / a
//! boolean mask) used in Python. A plain `.shape` never syncs and is not flagged.

use ruff_python_ast::{Expr, ExprAttribute, ExprCall};
use ruff_text_size::{Ranged, TextRange};

use super::{method_call, report};
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::Question;

/// A data-dependent tensor made in another function (a helper's result, an attribute): the op
/// that made it is reported where it runs; here its size flows into Python.
fn is_data_dependent_value(context: &RuleContext, expr: &Expr) -> bool {
    let model = context.model();
    // A parameter as passed never is: data dependence stays inside the function that made it
    // (asking would only have the project check the file again for nothing).
    if model.is_parameter(expr) {
        return false;
    }
    // One made in this function is not, while the rules on the ops that make them are on: the
    // op's own finding (SYNC201, SYNC202, SYNC203) is the one wait, and reading the size
    // afterwards costs nothing.
    let makers_reported = || {
        [Rule::Nonzero, Rule::Unique, Rule::BooleanMaskRead]
            .into_iter()
            .all(|rule| context.enabled(rule))
    };
    if makers_reported() && model.made_here(expr) {
        return false;
    }
    model
        .asked(expr, Question::DataDependent)
        .tensor()
        .is_some_and(|facts| facts.data_dependent && facts.may_be_cuda())
}

fn flag(context: &mut RuleContext, range: TextRange, tensor: &Expr, what: &str) {
    let text = context.slice(tensor);
    report(
        context,
        Rule::DataDependentShape,
        range,
        format!("{what} of `{text}` depends on its data: the op that made it had to wait for the GPU"),
        "keep the count on the device (`torch.count_nonzero(mask)`, `mask.sum()`) and keep shapes fixed".to_string(),
    );
}

pub fn attribute(context: &mut RuleContext, attribute: &ExprAttribute) {
    if context.enabled(Rule::DataDependentShape)
        && attribute.attr.as_str() == "shape"
        && is_data_dependent_value(context, &attribute.value)
    {
        flag(context, attribute.range(), &attribute.value, "the shape");
    }
}

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::DataDependentShape) {
        return;
    }
    if let Some((receiver, method @ ("size" | "numel" | "nelement"))) = method_call(call) {
        if is_data_dependent_value(context, receiver) {
            flag(context, call.range(), receiver, &format!("`.{method}()`"));
        }
        return;
    }
    let operand = match call.func.as_ref() {
        Expr::Name(name) if name.id.as_str() == "len" && context.model().is_builtin("len") => {
            call.arguments.args.first()
        }
        _ if callee == Some("torch.numel") => call.arguments.args.first(),
        _ => None,
    };
    if let Some(operand) = operand
        && is_data_dependent_value(context, operand)
    {
        let what = format!("`{}()`", context.slice(&*call.func));
        flag(context, call.range(), operand, &what);
    }
}
