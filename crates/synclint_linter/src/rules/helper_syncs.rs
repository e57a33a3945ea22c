//! Issue 14's helper syncs: a hot call that gives a project function a value it syncs on
//! (`log_value(loss)` where `def log_value(t): return t.item()`) is reported at the call, under
//! the code of the sync it leads to, with the helper's line. The project pass tells the file
//! which calls reach such syncs ([`crate::semantic::FileFacts::callee_syncs`]); whether the
//! value given may be a GPU tensor is decided here.

use ruff_python_ast::ExprCall;
use ruff_text_size::Ranged;

use super::{argument, may_be_cuda};
use crate::diagnostic::Diagnostic;
use crate::rules::RuleContext;

pub fn call(context: &mut RuleContext, call: &ExprCall) {
    let facts = context.model().facts;
    let Some(syncs) = facts.callee_syncs.get(&call.start().to_u32()) else {
        return;
    };
    for sync in syncs {
        if !context.enabled(sync.rule) {
            continue;
        }
        let Some(given) = argument(call, &sync.parameter, usize::from(sync.position)) else {
            continue;
        };
        if !may_be_cuda(context, given, sync.unknown_counts) {
            continue;
        }
        let given_text = context.slice(given);
        let as_parameter = if given_text == &*sync.parameter {
            String::new()
        } else {
            format!(" as `{}`", sync.parameter)
        };
        let message = format!(
            "`{}` syncs on the `{given_text}` it is given{as_parameter}: {}",
            sync.callee, sync.sync
        );
        let help = format!(
            "keep `{given_text}` out of `{}` on every step, or remove the sync there",
            sync.callee
        );
        context.report_deeper_sync(Diagnostic::new(sync.rule, call.range(), message, help), &sync.sync);
    }
}
