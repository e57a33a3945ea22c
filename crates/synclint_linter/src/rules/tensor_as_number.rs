//! SYNC104: a CUDA tensor used where Python needs a number: `float(t)`, `int(t)`, `bool(t)`,
//! `math.*(t)`, builtin `max`/`min`/`sorted`, `range(t)`, and tensors as sizes, bounds or `k`.

use ruff_python_ast::{Expr, ExprCall, ExprSubscript};
use ruff_text_size::Ranged;

use super::{method_call, report};
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::{Kind, torch_api};

/// A known tensor (or tensors) that may be on the GPU (unknown values are not assumed to be
/// tensors here: `float(args.lr)` is fine).
fn is_cuda_value(context: &RuleContext, expr: &Expr) -> bool {
    match context.model().kind_for_gpu_test(expr) {
        Kind::Tensor(facts) | Kind::TensorSequence(facts) => facts.may_be_cuda(),
        _ => false,
    }
}

fn flag(context: &mut RuleContext, expr: &Expr, message: String, help: &str) {
    report(context, Rule::TensorAsNumber, expr.range(), message, help.to_string());
}

const KEEP_ON_DEVICE: &str =
    "keep the computation on the device (`torch.where`, `torch.clamp`, tensor ops) instead of a Python number";
/// Keyword arguments that take a size, a count or a bound.
const SIZE_KEYWORDS: [&str; 6] = ["size", "k", "steps", "end", "n", "length"];

const STATIC_SIZE: &str =
    "use a size known on the host (`x.shape[0]`, a config value), or keep the full shape and mask with `torch.where`";

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::TensorAsNumber) {
        return;
    }
    let args = &call.arguments.args;
    let Expr::Name(func) = call.func.as_ref() else {
        return method_or_torch_call(context, call, callee);
    };
    let name = func.id.as_str();
    // The name is tested before its binding (cheaper); a name that is bound (`from torch import
    // max`, a local `range`) is not the builtin. A builtin no arm takes goes on to the torch
    // functions and methods, of which it is none.
    let builtin = || context.model().is_builtin(name);
    match name {
        "float" | "int" | "bool" | "complex" if builtin() && args.len() == 1 && is_cuda_value(context, &args[0]) => {
            let arg = context.slice(&args[0]);
            flag(
                context,
                &call.func,
                format!("`{name}({arg})` reads a GPU value on the host and waits for the GPU"),
                KEEP_ON_DEVICE,
            );
        }
        "max" | "min" | "sorted" if builtin() && args.iter().any(|arg| is_cuda_value(context, arg)) => {
            let help = if name == "sorted" {
                "use `torch.sort` and keep the result on the device"
            } else {
                "use `torch.maximum`/`torch.minimum` or `t.amax()`/`t.amin()` and keep the result on the device"
            };
            flag(
                context,
                &call.func,
                format!("builtin `{name}()` compares GPU values on the host, one sync per comparison"),
                help,
            );
        }
        "range" if builtin() && args.iter().any(|arg| is_cuda_value(context, arg)) => {
            flag(
                context,
                &call.func,
                "`range()` of a GPU tensor reads its value on the host".to_string(),
                STATIC_SIZE,
            );
        }
        _ => method_or_torch_call(context, call, callee),
    }
}

fn method_or_torch_call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    let args = &call.arguments.args;
    if let Some(qualified) = callee {
        if torch_api::is_math_function(qualified) {
            if let Some(arg) = args.iter().find(|arg| is_cuda_value(context, arg)) {
                let text = format!(
                    "`{}({})` reads a GPU value on the host",
                    context.slice(&*call.func),
                    context.slice(arg)
                );
                flag(
                    context,
                    &call.func,
                    text,
                    "use the torch function (`torch.sqrt`, `torch.isfinite`, ...) and keep the result on the device",
                );
            }
            return;
        }
        let size_positions: &[usize] = match qualified {
            "torch.zeros" | "torch.ones" | "torch.empty" | "torch.rand" | "torch.randn" | "torch.arange"
            | "torch.randint" | "torch.randperm" | "torch.eye" => &[0, 1, 2, 3],
            "torch.full" => &[0],
            "torch.linspace" | "torch.logspace" => &[2],
            "torch.topk" | "torch.kthvalue" => &[1],
            "torch.narrow" => &[3],
            _ => &[],
        };
        if let Some(arg) = sized_argument(context, call, size_positions) {
            let text = format!(
                "the GPU tensor `{}` is used as a size in `{}`",
                context.slice(arg),
                context.slice(&*call.func)
            );
            flag(context, arg, text, STATIC_SIZE);
            return;
        }
        if qualified == "torch.full"
            && let Some(fill) = super::argument(call, "fill_value", 1).filter(|fill| is_cuda_value(context, fill))
        {
            let text = format!(
                "the GPU tensor `{}` is read on the host as the fill value of `{}`",
                context.slice(fill),
                context.slice(&*call.func)
            );
            flag(
                context,
                fill,
                text,
                "broadcast it on the device instead: `fill.expand(size)` (`.clone()` for a tensor of its own)",
            );
            return;
        }
        if matches!(qualified, "torch.tensor" | "torch.as_tensor") {
            // A list of GPU scalars (a tensor sequence); a single tensor is copied on the device.
            let of_tensors = args.first().is_some_and(
                |data| matches!(context.model().kind_for_gpu_test(data), Kind::TensorSequence(facts) if facts.may_be_cuda()),
            );
            if of_tensors {
                let text = format!(
                    "`{}` reads each GPU scalar on the host to build a new tensor",
                    context.slice(call)
                );
                flag(
                    context,
                    &call.func,
                    text,
                    "use `torch.stack([...])`, which stays on the device",
                );
            }
            return;
        }
        if matches!(qualified, "torch.split" | "torch.tensor_split") {
            split_sizes(context, args.get(1));
        }
        return;
    }
    let Some((receiver, method)) = method_call(call) else {
        return;
    };
    let positions: &[usize] = match method {
        "view" | "reshape" | "expand" | "repeat" | "new_zeros" | "new_ones" | "new_empty" | "tile" => &[0, 1, 2, 3, 4],
        "new_full" => &[0],
        "topk" | "kthvalue" => &[0],
        "narrow" => &[2],
        _ => &[],
    };
    // Nothing that could be a size (the receiver's kind is the costly question).
    let no_sizes = positions.is_empty()
        && !call.arguments.keywords.iter().any(|keyword| {
            keyword
                .arg
                .as_ref()
                .is_some_and(|arg| SIZE_KEYWORDS.contains(&arg.as_str()))
        })
        && method != "split";
    if no_sizes || !context.model().is_maybe_cuda_tensor(receiver) {
        return;
    }
    if let Some(arg) = sized_argument(context, call, positions) {
        let text = format!(
            "the GPU tensor `{}` is used as a size in `.{method}()`",
            context.slice(arg)
        );
        flag(context, arg, text, STATIC_SIZE);
    } else if method == "split" {
        split_sizes(context, call.arguments.args.first());
    }
}

/// The first argument at one of `positions` (or inside a size tuple there) that is a CUDA tensor.
fn sized_argument<'e>(context: &RuleContext, call: &'e ExprCall, positions: &[usize]) -> Option<&'e Expr> {
    let positional = positions.iter().filter_map(|&i| call.arguments.args.get(i));
    let keywords = SIZE_KEYWORDS
        .iter()
        .filter_map(|name| call.arguments.find_keyword(name).map(|k| &k.value));
    positional.chain(keywords).find_map(|arg| match arg {
        Expr::Tuple(tuple) => tuple.elts.iter().find(|elt| is_cuda_value(context, elt)),
        Expr::List(list) => list.elts.iter().find(|elt| is_cuda_value(context, elt)),
        other => is_cuda_value(context, other).then_some(other),
    })
}

/// `torch.split(x, sizes.tolist())`: the split sizes are read from the GPU. SYNC104 reports it,
/// so SYNC102 does not report the same `.tolist()` again.
fn split_sizes(context: &mut RuleContext, sizes: Option<&Expr>) {
    let Some(Expr::Call(inner)) = sizes else { return };
    let Some((receiver, "tolist")) = method_call(inner) else {
        return;
    };
    if !context.model().is_maybe_cuda_tensor(receiver) {
        return;
    }
    context.supersede(Rule::Tolist, inner.range());
    let text = format!("split sizes read from the GPU tensor `{}`", context.slice(receiver));
    flag(
        context,
        sizes.expect("matched above"),
        text,
        "compute the sizes on the host (they are usually known from the batch), or pad to a fixed size",
    );
}

/// `x[:n]` with a GPU tensor `n` as a bound; `table[i]` of a numpy array or a Python list or
/// tuple with a GPU tensor `i` (Python reads the index as a number).
pub fn subscript(context: &mut RuleContext, subscript: &ExprSubscript) {
    if !context.enabled(Rule::TensorAsNumber) {
        return;
    }
    let slices = match subscript.slice.as_ref() {
        Expr::Tuple(tuple) => tuple.elts.as_slice(),
        other => std::slice::from_ref(other),
    };
    let host_container = matches!(
        context.model().kind_of(&subscript.value),
        Kind::NdArray | Kind::List | Kind::NumberList | Kind::Tuple | Kind::Str
    );
    for slice in slices {
        if host_container && !slice.is_slice_expr() && is_cuda_value(context, slice) {
            let container = context.slice(&*subscript.value);
            let text = format!(
                "the GPU tensor `{}` indexes the host value `{container}`, which reads it as a number",
                context.slice(slice)
            );
            flag(context, slice, text, KEEP_ON_DEVICE);
            return;
        }
        let Expr::Slice(slice) = slice else { continue };
        for bound in [&slice.lower, &slice.upper, &slice.step].into_iter().flatten() {
            if is_cuda_value(context, bound) {
                let text = format!("the GPU tensor `{}` is used as a slice bound", context.slice(&**bound));
                flag(context, bound, text, STATIC_SIZE);
                return;
            }
        }
    }
}
