//! SYNC302: `scaler.step(opt)` with an optimizer that is not `Adam`/`AdamW(fused=True)`:
//! GradScaler then checks for infs on the host.

use ruff_python_ast::ExprCall;
use ruff_text_size::{Ranged, TextRange};

use super::method_call;
use crate::checker::Checker;
use crate::diagnostic::{Diagnostic, Edit, Fix};
use crate::registry::Rule;
use crate::semantic::Kind;

pub(crate) fn call(checker: &mut Checker, call: &ExprCall) {
    if !checker.enabled(Rule::GradScalerUnfusedOptimizer) {
        return;
    }
    let Some((scaler, "step")) = method_call(call) else { return };
    if checker.model().kind_of(scaler) != Kind::GradScaler {
        return;
    }
    let Some(optimizer) = call.arguments.args.first() else { return };
    let Kind::Optimizer(facts) = checker.model().kind_of(optimizer) else { return };
    if facts.fused {
        return;
    }
    let text = checker.slice(call);
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
    if facts.adam_family {
        let constructor = &checker.source()[facts.constructor];
        let open = constructor.find('(').map_or(0, |i| i + 1);
        let inside = constructor[open..constructor.len().saturating_sub(1)].trim();
        let insert = TextRange::empty(facts.insert_at);
        let content = if inside.is_empty() {
            "fused=True".to_string()
        } else if inside.ends_with(',') {
            " fused=True,".to_string()
        } else {
            ", fused=True".to_string()
        };
        let edit = if inside.ends_with(',') {
            // After the trailing comma.
            let comma = constructor.rfind(',').map_or(0, |i| i + 1);
            Edit::insert(facts.constructor.start() + ruff_text_size::TextSize::from(comma as u32), content)
        } else {
            Edit::insert(insert.start(), content)
        };
        // A different optimizer implementation (numerics, CUDA-only): unsafe.
        diagnostic = diagnostic.with_fix("Add `fused=True` to the optimizer", Fix::unsafe_(vec![edit]));
    }
    checker.report(diagnostic);
}
