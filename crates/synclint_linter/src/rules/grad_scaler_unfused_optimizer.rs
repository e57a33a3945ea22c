//! SYNC302: `scaler.step(opt)` with an optimizer that is not `Adam`/`AdamW(fused=True)`:
//! GradScaler then checks for infs on the host.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::{Ranged, TextRange};

use super::{edits, method_call, report};
use crate::diagnostic::{Diagnostic, Edit, Fix};
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::Kind;

pub fn call(context: &mut RuleContext, call: &ExprCall) {
    if !context.enabled(Rule::GradScalerUnfusedOptimizer) {
        return;
    }
    let Some((scaler, "step")) = method_call(call) else {
        return;
    };
    let scaler_kind = context.model().object_kind(scaler);
    if scaler_kind != Kind::GradScaler && !(scaler_kind.is_opaque() && names_a_scaler(scaler)) {
        return;
    }
    let Some(optimizer) = call.arguments.args.first() else {
        return;
    };
    let text = context.slice(call);
    let facts = match context.model().object_kind(optimizer) {
        Kind::Optimizer(facts) => facts,
        // Built where the file does not show (a parameter, a factory): only a fused Adam/AdamW
        // avoids the host read, and most training code builds another.
        opaque if opaque.is_opaque() => {
            let optimizer = context.slice(optimizer);
            report(
                context,
                Rule::GradScalerUnfusedOptimizer,
                call.range(),
                format!("`{text}` reads the inf check on the host (waits for the GPU) unless `{optimizer}` is a fused Adam/AdamW"),
                "build the optimizer as `torch.optim.AdamW(..., fused=True)` (or Adam); GradScaler steps any other after a host read".to_string(),
            );
            return;
        }
        _ => return,
    };
    if facts.fused {
        return;
    }
    let mut diagnostic = Diagnostic::new(
        Rule::GradScalerUnfusedOptimizer,
        call.range(),
        format!("`{text}` reads the inf check on the host (waits for the GPU) unless the optimizer is fused"),
        if facts.adam_family {
            "construct the optimizer with `fused=True`; GradScaler then skips the step on the device".to_string()
        } else {
            "use `torch.optim.AdamW(..., fused=True)` (or Adam), which GradScaler steps without a sync".to_string()
        },
    );
    if facts.adam_family
        && let Some(edit) = fused_edit(context, facts.constructor)
    {
        // A different optimizer implementation (numerics, CUDA-only): unsafe.
        diagnostic = diagnostic.with_fix("Add `fused=True` to the optimizer", Fix::unsafe_(vec![edit]));
    }
    context.report(diagnostic);
}

/// `scaler`, `self.grad_scaler`, `loss_scaler`: a value named as a GradScaler whose
/// construction the file does not show.
fn names_a_scaler(receiver: &Expr) -> bool {
    let name = match receiver {
        Expr::Name(name) => name.id.as_str(),
        Expr::Attribute(attribute) => attribute.attr.as_str(),
        _ => return false,
    };
    crate::semantic::names::ends_with_ignoring_ascii_case(name, "scaler")
}

/// `fused=True` for the optimizer constructor at `constructor`: added, or replacing
/// `fused=False` / `fused=None`. `None` where the constructor would then raise (`foreach=True`,
/// `differentiable=True`) or `**kwargs` may pass `fused` already.
fn fused_edit(context: &RuleContext, constructor: TextRange) -> Option<Edit> {
    let call = edits::call_at(context.source(), constructor)?;
    let arguments = &call.arguments;
    let conflicting = ["foreach", "differentiable"].iter().any(|name| {
        arguments.find_keyword(name).is_some_and(|k| {
            !matches!(&k.value, Expr::BooleanLiteral(b) if !b.value) && !k.value.is_none_literal_expr()
        })
    });
    if conflicting
        || arguments.keywords.iter().any(|k| k.arg.is_none())
        || arguments.args.iter().any(Expr::is_starred_expr)
    {
        return None;
    }
    match arguments.find_keyword("fused") {
        Some(keyword) if keyword.value.is_boolean_literal_expr() || keyword.value.is_none_literal_expr() => {
            Some(Edit::replace(keyword.value.range(), "True"))
        }
        Some(_) => None,
        None => edits::add_argument_in(context.source(), &call, "fused=True"),
    }
}
