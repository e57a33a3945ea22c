//! SYNC601: one blocking collective per tensor inside a loop (`for p in params:
//! dist.all_reduce(p.grad)`): a throughput hazard, not a host sync.

use ruff_python_ast::ExprCall;
use ruff_text_size::Ranged;

use super::{keyword_is_true, report};
use crate::checker::Checker;
use crate::registry::Rule;

pub(crate) fn call(checker: &mut Checker, call: &ExprCall) {
    if !checker.enabled(Rule::SerialCollectives) {
        return;
    }
    let Some(qualified) = checker.model().qualified_name(&call.func) else { return };
    let Some(collective) = qualified.strip_prefix("torch.distributed.") else { return };
    if !matches!(
        collective,
        "all_reduce" | "all_gather" | "broadcast" | "reduce_scatter" | "reduce" | "all_gather_into_tensor" | "reduce_scatter_tensor"
    ) || keyword_is_true(call, "async_op")
    {
        return;
    }
    if !checker.model().innermost_loop().is_some_and(|l| l.over_tensors) {
        return;
    }
    let func = checker.slice(&*call.func);
    report(
        checker,
        Rule::SerialCollectives,
        call.range(),
        format!("`{func}` once per tensor in a loop launches many small collectives one after another"),
        "flatten the tensors into one bucket (`torch.cat([t.flatten() for t in ts])`) and reduce it once, or pass `async_op=True` and wait on the handles after the loop".to_string(),
    );
}
