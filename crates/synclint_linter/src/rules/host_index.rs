//! SYNC205: indexing that copies host data to the GPU behind queued work: `x[idx] = 0.0` with an
//! index tensor (the scalar is copied host to device), and a CUDA tensor indexed with a CPU
//! tensor, a numpy array, a Python list or a `range`.

use ruff_python_ast::{Expr, ExprContext, ExprSubscript, StmtAssign};
use ruff_text_size::Ranged;

use super::report;
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::{Device, Kind, Question};

/// The index elements of a subscript (`x[a, b]` -> `[a, b]`).
fn index_elements(slice: &Expr) -> Vec<&Expr> {
    match slice {
        Expr::Tuple(tuple) => tuple.elts.iter().collect(),
        other => vec![other],
    }
}

/// A host index on a CUDA tensor: a CPU tensor, a numpy array, a list literal or a list of
/// numbers, a `range`, or a tuple inside a tuple index (`x[rows, 0]`; a tuple as the whole index
/// is one index per dimension). Measured: each is copied to the GPU, 30 ms behind 30 ms of queued
/// work (a numpy array of ints or of bools alike, docs/measurements/test-split-h200-torch2.11.jsonl). A list of
/// unknown elements held in a name is not taken for one: lists of slices (`x[slicer]`) index
/// one dimension each; so does a list literal holding one tensor (`x[[idx]]` is `x[idx]`:
/// measured 0.14 ms with a CUDA index).
fn host_index<'e>(context: &RuleContext, subscript: &'e ExprSubscript) -> Option<&'e Expr> {
    let model = context.model();
    let in_tuple = subscript.slice.is_tuple_expr();
    index_elements(&subscript.slice).into_iter().find(|index| match index {
        Expr::List(list) => !matches!(
            &*list.elts,
            [only] if model.tensor(only).is_some_and(|facts| facts.device != Device::Cpu)
        ),
        Expr::Tuple(_) => in_tuple,
        Expr::Call(call) if matches!(&*call.func, Expr::Name(name) if name.id == "range" && model.is_builtin("range")) => {
            true
        }
        _ => match model.kind_for_device_test(index) {
            Kind::Tensor(facts) => facts.device == Device::Cpu && !facts.boolean,
            Kind::NumberList | Kind::NdArray => true,
            Kind::Tuple => in_tuple,
            _ => false,
        },
    })
}

pub fn subscript(context: &mut RuleContext, subscript: &ExprSubscript) {
    if !context.enabled(Rule::HostIndex) || subscript.ctx != ExprContext::Load {
        return;
    }
    // The index first: few are on the host, and what is asked of the tensor indexed could
    // only change a verdict where one is.
    let Some(index) = host_index(context, subscript) else {
        return;
    };
    if context.model().is_maybe_cuda_tensor(&subscript.value) {
        let text = context.slice(index);
        report(
            context,
            Rule::HostIndex,
            subscript.range(),
            format!("indexing a GPU tensor with the host index `{text}` copies it to the GPU behind queued work"),
            "build the index on the device once, outside the loop (`torch.tensor(..., device=...)`)".to_string(),
        );
    }
}

pub fn assign(context: &mut RuleContext, assign: &StmtAssign) {
    if !context.enabled(Rule::HostIndex) {
        return;
    }
    // What is asked of the tensor written into comes last: it decides a verdict only where the
    // index is on the host, or is an integer tensor written with a Python scalar.
    for target in &assign.targets {
        let Expr::Subscript(subscript) = target else { continue };
        if let Some(index) = host_index(context, subscript) {
            if !context.model().is_maybe_cuda_tensor(&subscript.value) {
                continue;
            }
            let text = context.slice(index);
            report(
                context,
                Rule::HostIndex,
                target.range(),
                format!(
                    "writing into a GPU tensor through the host index `{text}` copies it to the GPU behind queued work"
                ),
                "build the index on the device once, outside the loop".to_string(),
            );
            continue;
        }
        let integer_index = index_elements(&subscript.slice).into_iter().find(|index| {
            // Known to be an integer index: with a mask of unknown dtype (`h[~mask] = 0.0`) this
            // may be a boolean-mask write, which does not sync. The indices of a mask
            // (`torch.nonzero(m, as_tuple=True)`, `torch.where(m)`) index every dimension at once.
            match context.model().kind_of(index) {
                Kind::Tensor(facts) => facts.integer && facts.may_be_cuda(),
                Kind::TensorSequence(facts) => {
                    facts.integer && facts.may_be_cuda() && std::ptr::eq(*index, &*subscript.slice)
                }
                _ => false,
            }
        });
        if let Some(index) = integer_index
            && context.model().asked(&assign.value, Question::Number) == Kind::Number
            && context.model().is_maybe_cuda_tensor(&subscript.value)
        {
            let (x, idx, v) = (
                context.slice(&*subscript.value),
                context.slice(index),
                context.slice(&*assign.value),
            );
            let (written, help) = if std::ptr::eq(index, &*subscript.slice) {
                (
                    format!("`{x}[{idx}] = {v}`"),
                    format!("use `{x}.index_fill_(0, {idx}, {v})`, or a value tensor made on the device once"),
                )
            } else {
                (
                    format!("`{x}[{}] = {v}` (through the index tensor `{idx}`)", context.slice(&*subscript.slice)),
                    "write a value tensor made on the device once (`torch.full((), v, device=...)`), or select with `torch.where` instead of indexing".to_string(),
                )
            };
            report(
                context,
                Rule::HostIndex,
                target.range(),
                format!("{written} copies the Python scalar to the GPU behind queued work"),
                help,
            );
        }
    }
}
