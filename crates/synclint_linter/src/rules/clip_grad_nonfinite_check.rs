//! SYNC305: `clip_grad_norm_(..., error_if_nonfinite=True)` reads the norm on the host, and so
//! does Lightning Fabric's `fabric.clip_gradients(model, optimizer, max_norm=...)`, whose
//! `error_if_nonfinite` defaults to `True`.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use super::edits::remove_keyword;
use crate::diagnostic::{Diagnostic, Fix};
use crate::registry::Rule;
use crate::rules::RuleContext;

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::ClipGradNonfiniteCheck) {
        return;
    }
    let qualified = callee;
    if qualified.is_none()
        && let Some((_, "clip_gradients")) = super::method_call(call)
    {
        fabric_clip(context, call);
        return;
    }
    if !matches!(
        qualified,
        Some("torch.nn.utils.clip_grad_norm_" | "torch.nn.utils.clip_grad.clip_grad_norm_")
    ) {
        return;
    }
    // `clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)`
    let keyword = call.arguments.find_keyword("error_if_nonfinite");
    let Some(value) = keyword.map(|k| &k.value).or_else(|| call.arguments.args.get(3)) else {
        return;
    };
    if !matches!(value, Expr::BooleanLiteral(b) if b.value) {
        return;
    }
    let range = keyword.map_or(value.range(), |k| k.range());
    let mut diagnostic = Diagnostic::new(
        Rule::ClipGradNonfiniteCheck,
        range,
        "`error_if_nonfinite=True` reads the gradient norm on the host and waits for the GPU".to_string(),
        "drop it and check the returned norm on the device (`torch._assert_async(torch.isfinite(norm))`), or let GradScaler skip bad steps".to_string(),
    );
    let removal = match keyword {
        Some(_) => remove_keyword(context, call, "error_if_nonfinite"),
        // The positional form: drop it when it is the last argument.
        None if call.arguments.len() == 4 => {
            let previous = call.arguments.args[2].end();
            // After the previous argument's closing parentheses, if it is parenthesized.
            let between = &context.source()[ruff_text_size::TextRange::new(previous, value.start())];
            let previous = previous + ruff_text_size::TextSize::from(between.find(',').unwrap_or(0) as u32);
            Some(crate::diagnostic::Edit::delete(ruff_text_size::TextRange::new(
                previous,
                value.end(),
            )))
        }
        None => None,
    };
    let removal = removal.filter(|edit| !super::edits::drops_comment(context.source(), std::slice::from_ref(edit)));
    if let Some(edit) = removal {
        // Drops an error check: unsafe.
        diagnostic = diagnostic.with_fix("Remove `error_if_nonfinite=True`", Fix::unsafe_(vec![edit]));
    }
    context.report(diagnostic);
}

/// `fabric.clip_gradients(model, optimizer, max_norm=1.0)`: Fabric clips by norm with
/// `error_if_nonfinite=True` unless told otherwise (its signature's default), so the norm is read
/// on the host. Only Fabric's method takes `max_norm=` (a `LightningModule`'s takes
/// `gradient_clip_val=` and does not check).
fn fabric_clip(context: &mut RuleContext, call: &ExprCall) {
    if call.arguments.find_keyword("max_norm").is_none() {
        return;
    }
    let keyword = call.arguments.find_keyword("error_if_nonfinite");
    if keyword.is_some_and(|k| !matches!(&k.value, Expr::BooleanLiteral(b) if b.value)) {
        return;
    }
    let mut diagnostic = Diagnostic::new(
        Rule::ClipGradNonfiniteCheck,
        call.range(),
        "`clip_gradients(..., max_norm=...)` checks the gradient norm on the host (`error_if_nonfinite` defaults to `True`) and waits for the GPU".to_string(),
        "pass `error_if_nonfinite=False` and check the returned norm on the device, or let the precision plugin skip bad steps".to_string(),
    );
    let edit = match keyword {
        Some(keyword) => Some(crate::diagnostic::Edit::replace(keyword.value.range(), "False")),
        None => super::edits::add_argument(context, call, "error_if_nonfinite=False"),
    };
    if let Some(edit) = edit.filter(|edit| !super::edits::drops_comment(context.source(), std::slice::from_ref(edit))) {
        // Drops an error check: unsafe.
        diagnostic = diagnostic.with_fix("Pass `error_if_nonfinite=False`", Fix::unsafe_(vec![edit]));
    }
    context.report(diagnostic);
}
