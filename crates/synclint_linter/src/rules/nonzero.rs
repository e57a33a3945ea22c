//! SYNC201: ops whose output size is the number of true elements: `torch.nonzero`,
//! `t.nonzero()`, `torch.argwhere`, one-argument `torch.where(c)`.

use ruff_python_ast::{Expr, ExprCall, ExprName, Stmt, StmtAssign};
use ruff_text_size::Ranged;

use super::{argument, edits, locals, method_call, report, torch_input_may_be_cuda};
use crate::diagnostic::{Edit, Fix};
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::Kind;

/// The condition of a nonzero-like call, if `call` is one.
fn nonzero_condition<'e>(
    context: &RuleContext,
    call: &'e ExprCall,
    callee: Option<&str>,
) -> Option<(&'e Expr, &'static str)> {
    match callee {
        Some("torch.nonzero") => Some((argument(call, "input", 0)?, "torch.nonzero")),
        Some("torch.argwhere") => Some((argument(call, "input", 0)?, "torch.argwhere")),
        Some("torch.where") if call.arguments.args.len() == 1 && call.arguments.keywords.is_empty() => {
            Some((&call.arguments.args[0], "torch.where(cond)"))
        }
        Some(_) => None,
        None => match method_call(call) {
            Some((receiver, method @ ("nonzero" | "argwhere"))) if context.model().is_maybe_cuda_tensor(receiver) => {
                Some((
                    receiver,
                    if method == "nonzero" {
                        ".nonzero()"
                    } else {
                        ".argwhere()"
                    },
                ))
            }
            _ => None,
        },
    }
}

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::Nonzero) {
        return;
    }
    let Some((condition, kind)) = nonzero_condition(context, call, callee) else {
        return;
    };
    // Name the function as the code spells it (`nonzero`, `th.where`), methods by their kind.
    let what = if kind.starts_with('.') {
        kind.to_string()
    } else {
        context.slice(&*call.func).to_string()
    };
    if !torch_input_may_be_cuda(context, Some(condition)) {
        return;
    }
    let condition_text = context.slice(condition);
    report(
        context,
        Rule::Nonzero,
        call.range(),
        format!(
            "`{what}` returns as many elements as are true in `{condition_text}`, so the host waits for the GPU to count them"
        ),
        format!(
            "keep the shape: `torch.where({condition_text}, a, b)`, `x.masked_fill({condition_text}, v)`, or `torch.nonzero_static({condition_text}, size=N)`"
        ),
    );
}

/// `x[torch.nonzero(c, as_tuple=True)] = s` / `x[torch.where(c)] = s` -> `x.masked_fill_(c, s)`,
/// also through a name bound to the indices and read only there
/// (`inds = torch.nonzero(c, as_tuple=True)` ... `x[inds] = s`).
pub fn assign(context: &mut RuleContext, assign: &StmtAssign) {
    if !context.enabled(Rule::Nonzero) {
        return;
    }
    let [Expr::Subscript(target)] = assign.targets.as_slice() else {
        return;
    };
    if !matches!(&*target.value, Expr::Name(_) | Expr::Attribute(_)) {
        return;
    }
    let (index, bound) = match target.slice.as_ref() {
        Expr::Call(index) => (index, None),
        Expr::Name(indices) => match indices_bound_once(context, indices, assign) {
            Some(bound) => (bound.call, Some(bound)),
            None => return,
        },
        _ => return,
    };
    let index_callee = context.callee(index);
    let Some((condition, _)) = nonzero_condition(context, index, index_callee.as_deref()) else {
        return;
    };
    let as_tuple = index_callee.as_deref() == Some("torch.where") || super::keyword_is_true(index, "as_tuple");
    // Asked only of a write through a nonzero's indices.
    if !as_tuple || context.model().kind_of(&assign.value) != Kind::Number {
        return;
    }
    let x = context.slice(&*target.value);
    let c = context.slice(condition);
    let s = context.slice(&*assign.value);
    // Same effect only when the mask has the shape of `x` (a row mask would broadcast along the
    // wrong axis): known when it tests `x`'s own elements. No fix otherwise.
    if !super::boolean_mask_read::mask_is_elementwise_on(context, condition, x) {
        return;
    }
    let replacement = format!("{x}.masked_fill_({c}, {s})");
    let mut edits = vec![Edit::replace(assign.range(), replacement.clone())];
    if let Some(bound) = bound {
        // Evaluated at the write instead: nothing between may change what the mask reads.
        let mut names = locals::names_read(condition);
        names.extend(locals::names_read(&target.value));
        if locals::mention_any(bound.between, &names) {
            return;
        }
        edits.push(bound.deletion);
    }
    context.attach_fix(
        Rule::Nonzero,
        index.range(),
        format!("Replace with `{replacement}`"),
        Fix::safe(edits),
    );
}

/// Mask indices bound to a name before the write that reads them.
struct BoundIndices<'b> {
    call: &'b ExprCall,
    /// Deletes the binding with its line.
    deletion: Edit,
    /// The statements between the binding and the write.
    between: &'b [Stmt],
}

/// The call `indices` is bound to, where the enclosing function binds it once, on a line of its
/// own in the block of `write` and before it, and reads it only in `write`.
fn indices_bound_once<'b>(
    context: &RuleContext<'_, 'b>,
    indices: &ExprName,
    write: &StmtAssign,
) -> Option<BoundIndices<'b>> {
    let body = context.enclosing_body();
    let name = indices.id.as_str();
    let [Stmt::Assign(binder)] = locals::binders_of(body, name).as_slice() else {
        return None;
    };
    let (Expr::Call(call), [Expr::Name(_)]) = (&*binder.value, binder.targets.as_slice()) else {
        return None;
    };
    if locals::reads_of(body, name).len() != 1 {
        return None;
    }
    let (block, at) = locals::block_of(body, write.range())?;
    let from = block[..at].iter().position(|stmt| stmt.range() == binder.range())?;
    Some(BoundIndices {
        call,
        deletion: edits::delete_statement_line(context.source(), binder.range())?,
        between: &block[from + 1..at],
    })
}
