//! SYNC103: blocking device-to-host copies: `.cpu()`, `.to("cpu")`, `model.cpu()`,
//! `torch.save` of CUDA tensors, a CUDA value stored into a CPU tensor.

use ruff_python_ast::{Expr, ExprCall, StmtAssign};
use ruff_text_size::Ranged;

use super::{keyword_is_true, method_call, report};
use crate::registry::Rule;
use crate::rules::RuleContext;
use crate::semantic::{Binding, BindingSource, Device, Kind, Question};

fn receiver_may_be_on_gpu(context: &RuleContext, receiver: &Expr) -> bool {
    match context.model().kind_for_device_test(receiver) {
        Kind::Tensor(facts) => facts.may_be_cuda(),
        Kind::Unknown | Kind::Module(..) | Kind::Object(_) => true,
        _ => false,
    }
}

pub fn call(context: &mut RuleContext, call: &ExprCall, callee: Option<&str>) {
    if !context.enabled(Rule::DeviceToHostCopy) {
        return;
    }
    if callee == Some("torch.save") {
        if let Some(object) = call.arguments.args.first()
            && context.model().is_maybe_cuda_tensor(object)
        {
            let text = context.slice(object);
            report(
                context,
                Rule::DeviceToHostCopy,
                call.range(),
                format!("`torch.save({text}, ...)` copies a GPU tensor to the host and waits for the GPU"),
                "save checkpoints outside the step loop, or under a periodic guard".to_string(),
            );
        }
        return;
    }
    let Some((receiver, method)) = method_call(call) else {
        return;
    };
    let to_cpu = match method {
        "cpu" => call.arguments.is_empty(),
        "to" => {
            context.model().target_device_of_to(call) == Some(Device::Cpu) && !keyword_is_true(call, "non_blocking")
        }
        _ => false,
    };
    if !to_cpu || !receiver_may_be_on_gpu(context, receiver) {
        return;
    }
    let receiver_text = super::receiver_text(context, receiver);
    let is_module = matches!(context.model().object_kind(receiver), Kind::Module(..));
    let (message, help) = if is_module {
        (
            format!(
                "`{}` moves every parameter to the host and waits for the GPU",
                context.slice(call)
            ),
            "move the model once, outside the loop".to_string(),
        )
    } else {
        (
            format!("`{}` copies to the host and waits for the GPU", context.slice(call)),
            format!(
                "keep `{receiver_text}` on the device, or copy with `{receiver_text}.to(\"cpu\", non_blocking=True)` and read it after a sync at the log interval"
            ),
        )
    };
    report(context, Rule::DeviceToHostCopy, call.range(), message, help);
}

/// A name this function bound to a tensor it made without `device=` (`torch.zeros(n)`).
fn allocated_on_host_here(context: &RuleContext, buffer: &Expr) -> bool {
    let Expr::Name(name) = buffer else { return false };
    matches!(
        context.model().lookup(name.id.as_str()),
        Some(Binding { source: BindingSource::Value, value: Some(Expr::Call(call)), .. })
            if call.arguments.find_keyword("device").is_none() && context.model().made_here(buffer)
    )
}

/// `host[i] = cuda_scalar`: storing a CUDA value into a CPU tensor copies it to the host.
pub fn assign(context: &mut RuleContext, assign: &StmtAssign) {
    if !context.enabled(Rule::DeviceToHostCopy) {
        return;
    }
    for target in &assign.targets {
        let Expr::Subscript(subscript) = target else { continue };
        // A loader's batch is a container as often as a tensor: `batch[key] = value.to(device)`
        // puts a field back.
        let target_on_cpu = context
            .model()
            .asked(&subscript.value, Question::Device)
            .tensor()
            .is_some_and(|f| f.device == Device::Cpu && !f.is_batch());
        if !target_on_cpu {
            continue;
        }
        let known_on_gpu = match context.model().kind_for_gpu_test(&assign.value) {
            Kind::Tensor(facts) if facts.device == Device::Cuda => true,
            // A tensor that may be on the GPU (a model's output, a helper's result) stored into
            // a host buffer this function allocated without naming a device (`losses =
            // torch.zeros(n)`) is the pattern of collecting per-step results on the host; into
            // a CPU tensor handed in, or one made on another tensor's device, both sides are as
            // likely to be data prepared on the host.
            Kind::Tensor(facts) if facts.may_be_cuda() && allocated_on_host_here(context, &subscript.value) => false,
            _ => continue,
        };
        let host = context.slice(&*subscript.value);
        let value = context.slice(&*assign.value);
        let message = if known_on_gpu {
            format!("storing the GPU value `{value}` into the CPU tensor `{host}` waits for the GPU")
        } else {
            format!(
                "storing `{value}` into the CPU tensor `{host}` copies it to the host and waits for the GPU if it is on one"
            )
        };
        report(
            context,
            Rule::DeviceToHostCopy,
            assign.range(),
            message,
            format!(
                "keep `{host}` on the device (`torch.zeros(..., device=...)`) and copy it to the host once, after the loop"
            ),
        );
    }
}
