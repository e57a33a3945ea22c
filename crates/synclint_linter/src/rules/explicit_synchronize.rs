//! SYNC501: explicit waits in a hot path: `torch.cuda.synchronize()`, `Stream.synchronize()`,
//! `Event.synchronize()`, `torch.cuda.empty_cache()`.

use ruff_python_ast::{Expr, ExprCall};
use ruff_text_size::Ranged;

use super::{method_call, report};
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::Kind;

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::ExplicitSynchronize) {
        return;
    }
    let qualified = callee;
    let what = match qualified {
        Some("torch.cuda.synchronize" | "torch.accelerator.synchronize" | "torch.cuda.empty_cache") => {
            context.slice(&*call.func).to_string()
        }
        Some(_) => return,
        None => match method_call(call) {
            Some((receiver, "synchronize")) => {
                let is_stream_or_event = context.model().kind_of(receiver) == Kind::CudaSyncObject
                    || matches!(receiver, Expr::Call(inner) if context.model().kind_of(&Expr::Call(inner.clone())) == Kind::CudaSyncObject);
                if !is_stream_or_event {
                    return;
                }
                context.slice(&*call.func).to_string()
            }
            _ => return,
        },
    };
    let help = if what.ends_with("empty_cache") {
        "drop it from the loop: the caching allocator reuses the memory; call it once after training if needed"
    } else {
        "for timing, record `torch.cuda.Event(enable_timing=True)` pairs in the loop and read `elapsed_time` after it"
    };
    report(
        context,
        Rule::ExplicitSynchronize,
        call.range(),
        format!("`{what}()` blocks the host until the GPU is idle"),
        help.to_string(),
    );
}
