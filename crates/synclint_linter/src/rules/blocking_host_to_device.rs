//! SYNC401: host-to-device copies that block behind queued GPU work: `torch.tensor(data,
//! device=cuda)`, `torch.as_tensor(..., device=cuda)`, `t.new_tensor(...)`, `t.new([...])`,
//! `.to(cuda)` / `.cuda()` of host data without `non_blocking=True`, and a CPU tensor written into
//! a CUDA tensor (`cuda_t[a:b] = cpu_t`, `cuda_t.copy_(cpu_t)`).

use ruff_python_ast::{Expr, ExprCall, StmtAssign, UnaryOp};
use ruff_text_size::Ranged;

use super::edits::{add_argument, torch_name};
use super::{keyword_may_be_true, locals, method_call, report};
use crate::diagnostic::{Diagnostic, Edit, Fix};
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::{BatchSource, Device, Kind};

/// A Python number literal (`3`, `-1.5`, `True`): `torch.full((), lit)` makes the same dtype
/// (measured: int -> int64, float -> default float, bool -> bool).
fn is_number_literal(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(number) => !matches!(number.value, ruff_python_ast::Number::Complex { .. }),
        Expr::BooleanLiteral(_) => true,
        Expr::UnaryOp(unary) => unary.op == UnaryOp::USub && matches!(&*unary.operand, Expr::NumberLiteral(_)),
        _ => false,
    }
}

/// `[]` or `()`: a tensor made of no elements copies nothing, so it waits for nothing
/// (measured on an H200, PyTorch 2.11: `torch.tensor([], device=cuda)` 0.04 ms behind 30 ms of
/// queued work, as `torch.as_tensor([], ...)` and `x.new_tensor([])`).
fn is_empty_sequence(expr: &Expr) -> bool {
    match expr {
        Expr::List(list) => list.elts.is_empty(),
        Expr::Tuple(tuple) => tuple.elts.is_empty(),
        _ => false,
    }
}

/// `x.new_tensor(data)`, `x.new(data)`: given something, and not a tensor of no elements.
fn gives_data(call: &ExprCall) -> bool {
    match call.arguments.args.first() {
        Some(data) => !is_empty_sequence(data),
        None => !call.arguments.keywords.is_empty(),
    }
}

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::BlockingHostToDevice) {
        return;
    }
    let qualified = callee;
    match qualified {
        Some("torch.tensor" | "torch.as_tensor") => factory(context, call),
        Some(_) => {}
        None => method(context, call),
    }
}

fn factory(context: &mut RuleContext, call: &ExprCall) {
    let Some(device) = call.arguments.find_keyword("device") else {
        return;
    };
    if context
        .model()
        .device_of(&device.value)
        .is_none_or(|d| d == Device::Cpu)
    {
        return;
    }
    let Some(data) = call.arguments.args.first() else {
        return;
    };
    if is_empty_sequence(data) {
        return;
    }
    // Copying a tensor that is already on the GPU does not touch the host.
    if context.model().tensor(data).is_some_and(|f| f.device != Device::Cpu) {
        return;
    }
    let func = context.slice(&*call.func);
    let device_text = context.slice(&device.value);
    let mut diagnostic = Diagnostic::new(
        Rule::BlockingHostToDevice,
        call.range(),
        format!("`{func}(..., device={device_text})` copies host data to the GPU and waits behind queued work"),
        "create constants once, outside the loop; for a scalar use `torch.full((), value, device=...)`".to_string(),
    );
    let only_device = call.arguments.args.len() == 1
        && call.arguments.keywords.iter().all(|k| {
            k.arg
                .as_ref()
                .is_some_and(|a| matches!(a.as_str(), "device" | "dtype" | "requires_grad"))
        });
    if is_number_literal(data) && only_device {
        // `torch.tensor` / `th.as_tensor`: the same module; `tensor(...)` imported from torch:
        // the name torch is bound to, or `import torch`.
        let (torch, mut edits) = match call.func.as_ref() {
            Expr::Attribute(attribute) => (
                context.slice(&*attribute.value).to_string(),
                vec![Edit::replace(attribute.attr.range(), "full")],
            ),
            _ => {
                let (torch, import) = torch_name(context);
                let mut edits = vec![Edit::replace(call.func.range(), format!("{torch}.full"))];
                edits.extend(import);
                (torch, edits)
            }
        };
        // `()` goes before the value (and its parentheses); the rest of the call, comments and
        // layout included, stays as it is.
        let open = call.arguments.start() + ruff_text_size::TextSize::from(1);
        edits.push(Edit::insert(super::edits::next_token(context.source(), open), "(), "));
        let keywords: Vec<&str> = call.arguments.keywords.iter().map(|k| context.slice(k)).collect();
        let replacement = format!("{torch}.full((), {}, {})", context.slice(data), keywords.join(", "));
        diagnostic = diagnostic.with_fix(format!("Replace with `{replacement}`"), Fix::safe(edits));
    }
    context.report(diagnostic);
}

fn method(context: &mut RuleContext, call: &ExprCall) {
    let Some((receiver, method)) = method_call(call) else {
        return;
    };
    match method {
        // `cpu_t.type_as(gpu_t)` copies to `gpu_t`'s device as `.to()` would, always blocking.
        "type_as" => {
            let model = context.model();
            let (Kind::Tensor(facts), Some(other)) =
                (model.kind_for_device_test(receiver), call.arguments.args.first())
            else {
                return;
            };
            if facts.device != Device::Cpu || model.tensor(other).is_none_or(|other| other.device == Device::Cpu) {
                return;
            }
            report_copy(
                context,
                call,
                "create it on the GPU once (`register_buffer`, or `device=` where it is made) instead of copying it every step",
            );
        }
        "copy_" if !keyword_may_be_true(call, "non_blocking") => {
            if let Some(source) = call.arguments.args.first() {
                cpu_into_cuda(context, receiver, source, call.range());
            }
        }
        // `x.new(data)` copies it (measured: 30.06 ms); `x.new(n, m)` of sizes allocates.
        "new_tensor" | "new"
            if context.model().is_maybe_cuda_tensor(receiver)
                && gives_data(call)
                && !(method == "new" && gives_sizes(context, call)) =>
        {
            report_copy(
                context,
                call,
                "create it once, outside the loop, or use `new_full` / `torch.full` for constants",
            );
        }
        "to" | "cuda" => {
            let Kind::Tensor(facts) = context.model().kind_for_device_test(receiver) else {
                return;
            };
            if facts.device != Device::Cpu {
                return;
            }
            // Pinned memory copies asynchronously with `non_blocking=True`; from pageable
            // memory the copy still blocks (measured: 30.29 ms for 4 MB), but an unpinned
            // loader's batches are SYNC402's finding.
            let non_blocking = keyword_may_be_true(call, "non_blocking")
                || (method == "to" && matches!(call.arguments.args.get(1), Some(Expr::BooleanLiteral(b)) if b.value));
            // A tokenizer's or processor's output is moved once per call of the code that
            // encodes (a pipeline's prompt encoding, before its loop): not reported.
            if facts.batch == BatchSource::Encoded {
                return;
            }
            // A loader's batch stops blocking once the loader pins memory.
            let loader_batch = facts.is_batch();
            if non_blocking && (facts.pinned || loader_batch) {
                return;
            }
            let target = if method == "cuda" {
                Some(Device::Cuda)
            } else {
                context.model().target_device_of_to(call)
            };
            if target.is_none_or(|d| d == Device::Cpu) {
                return;
            }
            let text = context.slice(call);
            let help = if non_blocking {
                "the source is pageable, so `non_blocking=True` still blocks: pin it once (`.pin_memory()`) outside the loop".to_string()
            } else if facts.pinned {
                "add `non_blocking=True`: the memory is pinned, so the copy overlaps with GPU work".to_string()
            } else if loader_batch {
                "add `non_blocking=True` and build the DataLoader with `pin_memory=True` (from pageable memory the copy still blocks)".to_string()
            } else {
                "pin the source once (`.pin_memory()`) and copy with `non_blocking=True`, or create it on the GPU"
                    .to_string()
            };
            let mut diagnostic = Diagnostic::new(
                Rule::BlockingHostToDevice,
                call.range(),
                format!("`{text}` copies host data to the GPU and waits behind queued work"),
                help,
            );
            if (loader_batch || facts.pinned)
                && !non_blocking
                && let Some(edit) = non_blocking_edit(context, call, method)
            {
                // Same values: the copy is ordered on the stream before any use. A loader's
                // batch stops blocking once the loader pins memory (SYNC402). A pinned tensor
                // read from a list of them is a buffer of its own; any other pinned tensor may
                // be a staging buffer the host fills again before the copy has run (unsafe).
                let own_buffer = loader_batch || element_of_a_sequence(context, receiver, call);
                let fix = if own_buffer {
                    Fix::safe(vec![edit])
                } else {
                    Fix::unsafe_(vec![edit])
                };
                diagnostic = diagnostic.with_fix("Add `non_blocking=True`", fix);
            }
            context.report(diagnostic);
        }
        _ => {}
    }
}

/// Reports `call` as a copy of host data to the GPU.
fn report_copy(context: &mut RuleContext, call: &ExprCall, help: &str) {
    let text = context.slice(call);
    report(
        context,
        Rule::BlockingHostToDevice,
        call.range(),
        format!("`{text}` copies host data to the GPU and waits behind queued work"),
        help.to_string(),
    );
}

/// `non_blocking=True` for `.to(...)` / `.cuda(...)`: added, or replacing `non_blocking=False`.
/// `None` where `non_blocking` may already be passed another way (positionally, through
/// `*args` / `**kwargs`, or as a variable).
fn non_blocking_edit(context: &RuleContext, call: &ExprCall, method: &str) -> Option<Edit> {
    let arguments = &call.arguments;
    let max_positional = if method == "to" { 2 } else { 1 };
    if arguments.args.len() > max_positional
        || arguments
            .args
            .iter()
            .any(|arg| arg.is_starred_expr() || arg.is_boolean_literal_expr())
        || arguments.keywords.iter().any(|k| k.arg.is_none())
    {
        return None;
    }
    match arguments.find_keyword("non_blocking") {
        Some(keyword) if matches!(&keyword.value, Expr::BooleanLiteral(b) if !b.value) => {
            Some(Edit::replace(keyword.value.range(), "True"))
        }
        Some(_) => None,
        None => add_argument(context, call, "non_blocking=True"),
    }
}

/// `x.new(n, m)` or `x.new(size)`: sizes, which allocate a tensor of that shape rather than
/// copying data. Data is one argument; several are sizes, and so is one Python number, a
/// shape (`x.shape`, `x.size()`) or one unpacked (`*shape`).
fn gives_sizes(context: &RuleContext, call: &ExprCall) -> bool {
    match &*call.arguments.args {
        [] => false,
        [one] => {
            // `x.new(*shape)`
            one.is_starred_expr()
                || matches!(context.model().kind_of(one), Kind::Number)
                || matches!(one, Expr::Attribute(attribute) if attribute.attr.as_str() == "shape")
                || matches!(one, Expr::Call(size) if matches!(size.func.as_ref(), Expr::Attribute(method) if method.attr.as_str() == "size"))
        }
        _ => true,
    }
}

/// `batches[i]`, or a name a `for` loop binds to the elements of a list or tuple of tensors
/// (`for batch in batches:`), not bound again in the loop before `call`.
fn element_of_a_sequence(context: &RuleContext, receiver: &Expr, call: &ExprCall) -> bool {
    let model = context.model();
    match receiver {
        Expr::Subscript(subscript) => matches!(model.kind_of(&subscript.value), Kind::TensorSequence(_)),
        Expr::Name(name) => locals::loops_around(context.enclosing_body(), call.range())
            .into_iter()
            .rev()
            .find(|for_stmt| matches!(&*for_stmt.target, Expr::Name(target) if target.id == name.id))
            .is_some_and(|for_stmt| {
                matches!(model.kind_of(&for_stmt.iter), Kind::TensorSequence(_))
                    && locals::binders_of(&for_stmt.body, &name.id)
                        .iter()
                        .all(|binder| binder.start() > call.start() || binder.range().contains_range(call.range()))
            }),
        _ => false,
    }
}

/// `cuda_t[a:b] = cpu_t`: the write copies the CPU tensor to the GPU and waits (measured: 30 ms
/// behind 30 ms of queued work, pinned or not).
pub fn assign(context: &mut RuleContext, assign: &StmtAssign) {
    if !context.enabled(Rule::BlockingHostToDevice) {
        return;
    }
    let [Expr::Subscript(target)] = assign.targets.as_slice() else {
        return;
    };
    cpu_into_cuda(context, &target.value, &assign.value, assign.range());
}

/// Reports a CPU tensor `source` written into `destination`, a tensor that may be on a GPU (made
/// on a device the file cannot tell, `torch.ones(7, device=self.device)`), not a host buffer.
fn cpu_into_cuda(context: &mut RuleContext, destination: &Expr, source: &Expr, range: ruff_text_size::TextRange) {
    let model = context.model();
    // The destination first: few are tensors off the host, and only then does what the source
    // is matter (asking about it makes the project tell the file more).
    if model.tensor(destination).is_none_or(|d| !d.may_be_cuda()) {
        return;
    }
    if !matches!(model.kind_for_device_test(source), Kind::Tensor(facts) if facts.device == Device::Cpu) {
        return;
    }
    let (source, destination) = (context.slice(source), context.slice(destination));
    report(
        context,
        Rule::BlockingHostToDevice,
        range,
        format!(
            "writing the CPU tensor `{source}` into the GPU tensor `{destination}` copies it and waits behind queued work"
        ),
        "make the source on the GPU, or pin it once and copy with `.copy_(src, non_blocking=True)`".to_string(),
    );
}
