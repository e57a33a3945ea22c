//! SYNC307: `Normal(loc, scale).sample()` and `torch.normal(mean, std)` with a tensor `std`:
//! `torch.normal` checks on the host that every standard deviation is non-negative.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use super::{argument, may_be_cuda, method_call};
use crate::diagnostic::{Diagnostic, Edit, Fix};
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::{Kind, torch_api};

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::NormalSample) {
        return;
    }
    match callee {
        Some("torch.normal") => normal(context, call),
        Some(_) => {}
        None => sample(context, call),
    }
}

/// `torch.normal(mean, std)` with `std` a tensor that may be on the GPU (a number `std` is not
/// checked).
fn normal(context: &mut RuleContext, call: &ExprCall) {
    let Some(std) = argument(call, "std", 1) else {
        return;
    };
    if !may_be_cuda(context, std, true) {
        return;
    }
    let text = context.slice(call);
    let mean = argument(call, "mean", 0).map_or("mean", |mean| context.slice(mean));
    let std = context.slice(std);
    context.report(Diagnostic::new(
        Rule::NormalSample,
        call.range(),
        format!("`{text}` checks on the host that every standard deviation is non-negative, and waits for the GPU"),
        format!("draw standard normals and scale them on the device: `{mean} + {std} * torch.randn_like({mean})`"),
    ));
}

/// `d.sample()` of a `Normal`-family distribution built here from tensors that may be on the GPU.
fn sample(context: &mut RuleContext, call: &ExprCall) {
    let Some((receiver, "sample")) = method_call(call) else {
        return;
    };
    if !matches!(
        context.model().kind_of(receiver),
        Kind::Distribution { normal: true, .. }
    ) {
        return;
    }
    let Some(constructor) = constructor_of(context, receiver) else {
        return;
    };
    if !super::distribution_validation::parameters_may_be_cuda(context, constructor) {
        return;
    }
    let distribution = context.slice(receiver);
    let mut diagnostic = Diagnostic::new(
        Rule::NormalSample,
        call.range(),
        format!(
            "`{distribution}.sample()` draws with `torch.normal`, which checks the scale on the host and waits for the GPU"
        ),
        format!("draw with `{distribution}.rsample().detach()`: the same values, no host check"),
    );
    // Measured: the same values as `sample()` for `Normal`, from the same random numbers.
    let is_normal = context
        .callee(constructor)
        .is_some_and(|qualified| qualified.rsplit('.').next() == Some("Normal"));
    let plain = call.arguments.keywords.is_empty() && call.arguments.args.iter().all(|arg| !arg.is_starred_expr());
    if is_normal && plain {
        let shape = context.slice(&call.arguments);
        let replacement = format!("{distribution}.rsample{shape}.detach()");
        let edits = vec![Edit::replace(call.range(), replacement.clone())];
        if !super::edits::drops_comment(context.source(), &edits) {
            diagnostic = diagnostic.with_fix(format!("Replace with `{replacement}`"), Fix::safe(edits));
        }
    }
    context.report(diagnostic);
}

/// The `torch.distributions` constructor call a distribution was built by: inline, or the value
/// of the name it is bound to.
fn constructor_of<'a>(context: &RuleContext<'_, 'a>, receiver: &'a Expr) -> Option<&'a ExprCall> {
    let built = match receiver {
        Expr::Call(call) => call,
        Expr::Name(name) => match context.model().lookup(name.id.as_str())?.value? {
            Expr::Call(call) => call,
            _ => return None,
        },
        _ => return None,
    };
    context
        .callee(built)
        .is_some_and(|qualified| torch_api::is_distribution_class(&qualified))
        .then_some(built)
}
