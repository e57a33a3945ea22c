//! SYNC601: one blocking collective per tensor inside a loop (`for p in params:
//! dist.all_reduce(p.grad)`): a throughput hazard, not a host sync.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use super::{keyword_is_true, report};
use crate::registry::Rule;
use crate::rules::RuleContext;

/// The name an argument is rooted in: `p` for `p`, `p.grad`, `p.grad.data`, `params[i]` (and
/// `i`).
fn roots<'e>(expr: &'e Expr, names: &mut Vec<&'e str>) {
    match expr {
        Expr::Name(name) => names.push(name.id.as_str()),
        Expr::Attribute(attribute) => roots(&attribute.value, names),
        Expr::Subscript(subscript) => {
            roots(&subscript.value, names);
            roots(&subscript.slice, names);
        }
        Expr::Call(call) => {
            if let Expr::Attribute(attribute) = call.func.as_ref() {
                roots(&attribute.value, names);
            }
        }
        _ => {}
    }
}

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::SerialCollectives) {
        return;
    }
    let Some(qualified) = callee else { return };
    let Some(collective) = qualified.strip_prefix("torch.distributed.") else {
        return;
    };
    if !matches!(
        collective,
        "all_reduce"
            | "all_gather"
            | "broadcast"
            | "reduce_scatter"
            | "reduce"
            | "all_gather_into_tensor"
            | "reduce_scatter_tensor"
    ) || keyword_is_true(call, "async_op")
    {
        return;
    }
    // Per tensor: the collective's tensor comes from the innermost loop's variable.
    let Some(innermost) = context.model().innermost_loop() else {
        return;
    };
    let mut names = Vec::new();
    call.arguments.args.iter().for_each(|arg| roots(arg, &mut names));
    if !names
        .iter()
        .any(|name| innermost.targets.iter().any(|target| target.as_str() == *name))
    {
        return;
    }
    let func = context.slice(&*call.func);
    report(
        context,
        Rule::SerialCollectives,
        call.range(),
        format!("`{func}` once per tensor in a loop launches many small collectives one after another"),
        "flatten the tensors into one bucket (`torch.cat([t.flatten() for t in ts])`) and reduce it once, or pass `async_op=True` and wait on the handles after the loop".to_string(),
    );
}
