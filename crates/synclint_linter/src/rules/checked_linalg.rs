//! SYNC303: linear algebra with error checks that read a status back to the host:
//! `torch.linalg.inv/solve/cholesky/eigh/svd`, `torch.inverse`.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use super::{method_call, report, torch_input_may_be_cuda};
use crate::diagnostic::{Diagnostic, Edit, Fix};
use crate::registry::Rule;
use crate::rules::RuleContext;

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::CheckedLinalg) {
        return;
    }
    let qualified = callee;
    let function = match qualified {
        Some(
            q @ ("torch.linalg.inv"
            | "torch.linalg.solve"
            | "torch.linalg.cholesky"
            | "torch.linalg.eigh"
            | "torch.linalg.svd"
            | "torch.inverse"),
        ) => q.rsplit('.').next().unwrap_or(q),
        Some(_) => return,
        None => {
            if let Some((receiver, "inverse")) = method_call(call)
                && context.model().is_maybe_cuda_tensor(receiver)
                && call.arguments.is_empty()
            {
                report(
                    context,
                    Rule::CheckedLinalg,
                    call.range(),
                    "`.inverse()` checks for singular input on the host and waits for the GPU".to_string(),
                    "use `torch.linalg.inv_ex(a).inverse` and check `info` on the device".to_string(),
                );
            }
            return;
        }
    };
    if !torch_input_may_be_cuda(context, call.arguments.args.first()) {
        return;
    }
    let (replacement, field) = match function {
        "inv" | "inverse" => ("inv_ex", "inverse"),
        "solve" => ("solve_ex", "result"),
        "cholesky" => ("cholesky_ex", "L"),
        _ => ("", ""),
    };
    let func = context.slice(&*call.func);
    let mut diagnostic = Diagnostic::new(
        Rule::CheckedLinalg,
        call.range(),
        format!("`{func}` checks its input on the host (singular / not positive-definite) and waits for the GPU"),
        if replacement.is_empty() {
            "no `_ex` variant exists; compute it outside the step, or accept the sync".to_string()
        } else {
            format!("use `torch.linalg.{replacement}(...).{field}` and check `info` on the device")
        },
    );
    let fixable = !replacement.is_empty() && call.arguments.find_keyword("out").is_none();
    if let (true, Expr::Attribute(attribute)) = (fixable, call.func.as_ref()) {
        let mut edits = Vec::new();
        if function == "inverse" {
            // torch.inverse -> torch.linalg.inv_ex
            let base = context.slice(&*attribute.value);
            edits.push(Edit::replace(call.func.range(), format!("{base}.linalg.inv_ex")));
        } else {
            edits.push(Edit::replace(attribute.attr.range(), replacement));
        }
        edits.push(Edit::insert(call.end(), format!(".{field}")));
        // No error on singular input any more (NaN/garbage instead): unsafe.
        diagnostic = diagnostic.with_fix(format!("Use `{replacement}(...).{field}`"), Fix::unsafe_(edits));
    }
    context.report(diagnostic);
}
