//! What PyTorch's API returns, by qualified name or tensor method name. The model uses these
//! tables to infer kinds; rules use the predicates to match calls by meaning. It imports only
//! the kinds.

use super::kinds::Device;

/// Torch factories: they make a new tensor whose device comes from `device=` (or, for the
/// `*_like` ones, from their first argument), else the default device.
pub fn is_factory(qualified: &str) -> bool {
    matches!(
        qualified,
        "torch.tensor"
            | "torch.as_tensor"
            | "torch.asarray"
            | "torch.zeros"
            | "torch.ones"
            | "torch.empty"
            | "torch.full"
            | "torch.rand"
            | "torch.randn"
            | "torch.randint"
            | "torch.randperm"
            | "torch.arange"
            | "torch.range"
            | "torch.linspace"
            | "torch.logspace"
            | "torch.eye"
            | "torch.empty_strided"
            | "torch.tril_indices"
            | "torch.triu_indices"
            | "torch.scalar_tensor"
            | "torch.frombuffer"
            | "torch.normal"
    ) || is_like_factory(qualified)
}

/// `torch.zeros_like(x)` and friends: same device as `x` unless `device=` says otherwise.
pub fn is_like_factory(qualified: &str) -> bool {
    qualified.starts_with("torch.") && qualified.ends_with("_like") && !qualified[6..].contains('.')
}

/// Torch functions (or submodule functions) that do not return a tensor.
fn returns_non_tensor(qualified: &str) -> bool {
    let name = qualified.rsplit('.').next().unwrap_or("");
    // `torch.is_autocast_enabled()`, `torch.are_deterministic_algorithms_enabled()`, getters
    // and setters of global state.
    if ["is_", "are_", "get_", "set_", "use_"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
    {
        return true;
    }
    matches!(
        name,
        "is_tensor"
            | "is_storage"
            | "is_floating_point"
            | "is_complex"
            | "is_nonzero"
            | "numel"
            | "equal"
            | "allclose"
            | "device"
            | "no_grad"
            | "enable_grad"
            | "inference_mode"
            | "set_grad_enabled"
            | "is_grad_enabled"
            | "manual_seed"
            | "seed"
            | "initial_seed"
            | "save"
            | "load"
            | "compile"
            | "get_default_dtype"
            // Dtypes: `torch.promote_types(a.dtype, b.dtype) != a.dtype` compares dtypes.
            | "promote_types"
            | "result_type"
            | "can_cast"
            | "set_default_dtype"
            | "set_default_device"
            | "get_default_device"
            | "set_printoptions"
            | "use_deterministic_algorithms"
            | "set_float32_matmul_precision"
            | "Size"
            | "Generator"
            | "finfo"
            | "iinfo"
            | "typename"
            | "autocast"
            | "_assert_async"
            | "_assert"
            | "get_rng_state"
            | "set_rng_state"
            | "set_num_threads"
            | "get_num_threads"
            | "is_available"
            | "device_count"
    )
}

/// Does this qualified torch callable return a tensor (or several)?
pub fn returns_tensor(qualified: &str) -> bool {
    let Some(rest) = qualified.strip_prefix("torch.") else {
        return false;
    };
    // The total norm of the gradients, a 0-dim tensor on their device (its read syncs; the
    // clipping does not).
    if matches!(
        rest,
        "nn.utils.clip_grad_norm_"
            | "nn.utils.clip_grad_norm"
            | "nn.utils.clip_grad.clip_grad_norm_"
            | "nn.utils.get_total_norm"
            | "nn.utils.clip_grad.get_total_norm"
            | "nn.utils.parameters_to_vector"
    ) {
        return true;
    }
    let module_ok = !rest.contains('.')
        || ["nn.functional.", "linalg.", "fft.", "special.", "nn.init.", "masked."]
            .iter()
            .any(|prefix| rest.starts_with(prefix) && !rest[prefix.len()..].contains('.'));
    module_ok && !returns_non_tensor(qualified) && !is_class_name(qualified)
}

fn is_class_name(qualified: &str) -> bool {
    qualified
        .rsplit('.')
        .next()
        .and_then(|last| last.chars().next())
        .is_some_and(|c| c.is_ascii_uppercase())
}

/// `torch.nn.Linear`, `torch.nn.CrossEntropyLoss`, ... (classes, not functions).
pub fn nn_module_class(qualified: &str) -> Option<super::kinds::ModuleKind> {
    use super::kinds::ModuleKind;
    let rest = qualified.strip_prefix("torch.nn.")?;
    let last = rest.rsplit('.').next()?;
    if !is_class_name(qualified) || rest.starts_with("functional.") || last == "Parameter" {
        return None;
    }
    Some(match last {
        "CrossEntropyLoss" | "NLLLoss" => ModuleKind::ClassIndexLoss,
        "CTCLoss" => ModuleKind::CtcLoss,
        _ if last.ends_with("Loss") => ModuleKind::Loss,
        _ => ModuleKind::Plain,
    })
}

/// `torch.optim.AdamW` -> Some(true) (Adam family), `torch.optim.SGD` -> Some(false).
pub fn optimizer_class(qualified: &str) -> Option<bool> {
    let rest = qualified.strip_prefix("torch.optim.")?;
    if rest.contains('.') || !is_class_name(qualified) || rest == "Optimizer" {
        return None;
    }
    Some(matches!(rest, "Adam" | "AdamW"))
}

pub fn is_grad_scaler(qualified: &str) -> bool {
    matches!(
        qualified,
        "torch.cuda.amp.GradScaler" | "torch.amp.GradScaler" | "torch.GradScaler" | "torch.amp.grad_scaler.GradScaler"
    )
}

pub fn is_data_loader(qualified: &str) -> bool {
    matches!(
        qualified,
        "torch.utils.data.DataLoader"
            | "torch.utils.data.dataloader.DataLoader"
            // torchdata's resumable loader: a `DataLoader` subclass, its `pin_memory` defaults
            // to `False` as there.
            | "torchdata.stateful_dataloader.StatefulDataLoader"
            | "torchdata.stateful_dataloader.stateful_dataloader.StatefulDataLoader"
    )
}

/// `torch.distributions.Normal(...)` etc.: distribution constructors that validate arguments.
pub fn is_distribution_class(qualified: &str) -> bool {
    qualified.strip_prefix("torch.distributions.").is_some_and(|rest| {
        let last = rest.rsplit('.').next().unwrap_or(rest);
        is_class_name(qualified) && last != "Distribution" && !last.ends_with("Transform") && last != "constraints"
    })
}

/// Distributions whose `sample()` calls `torch.normal(loc, scale)` (directly or through their
/// base distribution), which checks `scale` on the host.
pub fn samples_with_torch_normal(qualified: &str) -> bool {
    matches!(
        qualified.rsplit('.').next(),
        Some("Normal" | "LogNormal" | "HalfNormal")
    )
}

pub fn is_cuda_sync_object(qualified: &str) -> bool {
    matches!(
        qualified,
        "torch.cuda.Event"
            | "torch.cuda.Stream"
            | "torch.cuda.current_stream"
            | "torch.cuda.default_stream"
            | "torch.Event"
            | "torch.Stream"
            | "torch.cuda.ExternalStream"
    )
}

/// Dtype constants: `.to(torch.float16)` changes the dtype, not the device.
pub fn is_dtype(qualified: &str) -> bool {
    qualified.strip_prefix("torch.").is_some_and(is_dtype_name)
}

/// `float16` in `torch.float16`.
pub fn is_dtype_name(name: &str) -> bool {
    matches!(
        name,
        "float"
            | "float16"
            | "float32"
            | "float64"
            | "half"
            | "double"
            | "bfloat16"
            | "int"
            | "int8"
            | "int16"
            | "int32"
            | "int64"
            | "long"
            | "short"
            | "uint8"
            | "bool"
            | "complex64"
            | "complex128"
            | "cfloat"
            | "cdouble"
            | "uint16"
            | "uint32"
            | "uint64"
    ) || name.starts_with("float8_")
}

/// Torch functions whose result is a boolean tensor.
pub fn is_boolean_function(name: &str) -> bool {
    matches!(
        name,
        "isnan"
            | "isinf"
            | "isfinite"
            | "isneginf"
            | "isposinf"
            | "isreal"
            | "logical_and"
            | "logical_or"
            | "logical_not"
            | "logical_xor"
            | "eq"
            | "ne"
            | "lt"
            | "le"
            | "gt"
            | "ge"
            | "greater"
            | "greater_equal"
            | "less"
            | "less_equal"
            | "not_equal"
            | "isclose"
            | "isin"
            | "signbit"
            | "any"
            | "all"
            | "bool"
            | "is_nonzero_mask"
    )
}

/// Ops whose output shape depends on the data (the sync already happened there).
pub fn is_data_dependent_function(name: &str) -> bool {
    matches!(
        name,
        "nonzero" | "argwhere" | "unique" | "unique_consecutive" | "masked_select" | "bincount"
    )
}

/// Torch functions / tensor methods that return several tensors.
pub fn returns_tensor_sequence(name: &str) -> bool {
    matches!(
        name,
        "split"
            | "chunk"
            | "unbind"
            | "sort"
            | "topk"
            | "kthvalue"
            | "mode"
            | "meshgrid"
            | "broadcast_tensors"
            | "tensor_split"
            | "hsplit"
            | "vsplit"
            | "dsplit"
            | "eigh"
            | "eig"
            | "svd"
            | "qr"
            | "slogdet"
            | "inv_ex"
            | "cholesky_ex"
            | "solve_ex"
            | "lstsq"
            | "lu"
            | "lu_factor"
            | "aminmax"
            | "frexp"
            | "histogram"
            | "std_mean"
            | "var_mean"
            | "cummax"
            | "cummin"
            | "parameters"
            | "buffers"
    )
}

/// `torch.FloatTensor`, `torch.cuda.LongTensor`: the device and the dtype's name (`Float`).
pub fn legacy_tensor_type(qualified: &str) -> Option<(Device, &str)> {
    let (device, name) = match qualified.strip_prefix("torch.cuda.") {
        Some(name) => (Device::Cuda, name),
        None => (Device::Cpu, qualified.strip_prefix("torch.")?),
    };
    let dtype = name.strip_suffix("Tensor")?;
    matches!(
        dtype,
        "Float" | "Double" | "Half" | "BFloat16" | "Long" | "Int" | "Short" | "Byte" | "Char" | "Bool"
    )
    .then_some((device, dtype))
}

/// Torch functions whose result has the dtype of their tensor inputs (a mask from masks).
pub fn keeps_dtype(name: &str) -> bool {
    matches!(
        name,
        "stack"
            | "cat"
            | "concat"
            | "concatenate"
            | "hstack"
            | "vstack"
            | "dstack"
            | "column_stack"
            | "row_stack"
            | "where"
            | "flatten"
            | "reshape"
            | "squeeze"
            | "unsqueeze"
            | "transpose"
            | "permute"
            | "flip"
            | "roll"
            | "broadcast_to"
            | "tile"
            | "narrow"
            | "index_select"
            | "gather"
            | "movedim"
            | "clone"
            | "t"
    )
}

/// Tensor methods that reduce to a scalar or change the shape in a data-independent way.
pub fn is_reduction(name: &str) -> bool {
    matches!(
        name,
        "sum"
            | "mean"
            | "prod"
            | "max"
            | "min"
            | "amax"
            | "amin"
            | "norm"
            | "std"
            | "var"
            | "count_nonzero"
            | "any"
            | "all"
            | "argmax"
            | "argmin"
            | "logsumexp"
            | "median"
            | "nansum"
            | "nanmean"
            | "dot"
    )
}

/// Tensor methods that return a Python value (not a tensor).
pub fn method_returns_python_value(name: &str) -> bool {
    matches!(
        name,
        "item"
            | "tolist"
            | "dim"
            | "dense_dim"
            | "sparse_dim"
            | "ndimension"
            | "numel"
            | "nelement"
            | "element_size"
            | "get_device"
            | "data_ptr"
            | "is_contiguous"
            | "is_floating_point"
            | "is_complex"
            | "storage_offset"
            | "is_nonzero"
            | "equal"
            | "allclose"
            | "is_pinned"
            | "is_shared"
            | "requires_grad"
            | "stride"
            | "is_same_size"
            | "is_set_to"
            | "has_names"
            | "is_inference"
            | "dim_order"
            | "__len__"
            | "backward"
    )
}

/// Method names that only tensors (or modules, for `.cpu()` / `.cuda()`) have, so an unknown
/// receiver of them is almost surely a tensor.
pub fn is_tensor_only_method(name: &str) -> bool {
    matches!(
        name,
        "detach"
            | "cuda"
            | "cpu"
            | "item"
            | "float"
            | "half"
            | "bfloat16"
            | "long"
            | "int"
            | "bool"
            | "double"
            | "contiguous"
            | "view"
            | "unsqueeze"
            | "squeeze"
            | "permute"
            | "masked_fill"
            | "softmax"
            | "log_softmax"
            | "sigmoid"
            | "norm"
            | "abs"
            | "sqrt"
            | "exp"
            | "log"
            | "clamp"
            | "argmax"
            | "nonzero"
            | "numel"
            | "new_zeros"
            | "new_ones"
            | "new_full"
            | "type_as"
            | "expand"
            | "expand_as"
            | "masked_select"
            | "pin_memory"
            | "requires_grad_"
            | "zero_"
            | "fill_"
            | "add_"
            | "mul_"
            | "div_"
            | "copy_"
            | "clone"
    )
}

/// Functions of `math` that turn their argument into a Python float.
pub fn is_math_function(qualified: &str) -> bool {
    qualified
        .strip_prefix("math.")
        .is_some_and(|name| !matches!(name, "pi" | "e" | "tau" | "inf" | "nan" | "prod" | "fsum"))
}

/// Lightning hooks that run on every batch.
pub fn is_lightning_step_hook(name: &str) -> bool {
    matches!(
        name,
        "training_step"
            | "validation_step"
            | "test_step"
            | "predict_step"
            | "on_before_backward"
            | "on_after_backward"
            | "on_before_optimizer_step"
            | "on_before_zero_grad"
            | "optimizer_step"
    ) || (name.starts_with("on_") && name.contains("_batch_"))
}

/// A field of a network's output that holds one tensor per layer (transformers' `ModelOutput`:
/// `outputs.hidden_states`, `outputs.attentions`) or a cache (`past_key_values`).
pub fn is_per_layer_output(field: &str) -> bool {
    field.ends_with("hidden_states") || field.ends_with("attentions") || field == "past_key_values"
}

/// A field that holds sizes rather than tensors: `spatial_dimensions`, `image_sizes`,
/// `feature_shapes`.
pub fn names_sizes(field: &str) -> bool {
    ["dimensions", "sizes", "shapes", "_size", "_shape"]
        .iter()
        .any(|suffix| field.ends_with(suffix))
}

/// A class decorator that replaces the class's `forward` with a dispatch to other
/// implementations by default: transformers' `@use_experts_implementation` runs a mixture of
/// experts through grouped matrix multiplies unless eager experts are asked for, so the class's
/// own per-expert loop (a boolean mask and `nonzero` per expert) is a fallback.
pub fn replaces_forward(decorator: &str) -> bool {
    decorator.rsplit('.').next() == Some("use_experts_implementation")
}

/// Methods that run once: constructors and setup, even when they contain loops.
pub fn is_setup_function(name: &str) -> bool {
    runs_off_the_step(name)
        || matches!(
            name,
            "__init__"
                | "__new__"
                | "__post_init__"
                | "__init_subclass__"
                | "reset_parameters"
                | "_reset_parameters"
                | "init_weights"
                | "_init_weights"
                | "configure_optimizers"
                | "setup"
                | "prepare_data"
                | "__repr__"
                | "__str__"
                | "extra_repr"
                | "__getstate__"
                | "__setstate__"
                | "_load_from_state_dict"
                | "load_state_dict"
                | "teardown"
                | "configure_model"
        )
}

/// Debug and visualisation helpers, checkpoint saving and loading, export and benchmarking, by
/// their name's start (leading underscores aside): whatever calls them, they are not a training
/// step's work.
fn runs_off_the_step(name: &str) -> bool {
    const STARTS: [&str; 16] = [
        "visualize",
        "visualise",
        "plot",
        "draw_",
        "debug",
        "save_checkpoint",
        "load_checkpoint",
        "save_state",
        "load_state",
        "save_pretrained",
        "from_pretrained",
        "save_model",
        "load_model",
        "export",
        "benchmark",
        "profile",
    ];
    let name = name.trim_start_matches('_');
    STARTS
        .iter()
        .any(|start| name.len() >= start.len() && name.as_bytes()[..start.len()].eq_ignore_ascii_case(start.as_bytes()))
}

/// Integer dtypes: tensors of these can index.
pub fn is_integer_dtype(qualified: &str) -> bool {
    matches!(
        qualified,
        "torch.long"
            | "torch.int64"
            | "torch.int"
            | "torch.int32"
            | "torch.int16"
            | "torch.short"
            | "torch.int8"
            | "torch.uint8"
            | "torch.uint16"
            | "torch.uint32"
            | "torch.uint64"
    )
}

/// Torch functions and tensor methods that return indices (an integer tensor).
pub fn returns_indices(name: &str) -> bool {
    matches!(
        name,
        "argmax" | "argmin" | "argsort" | "multinomial" | "searchsorted" | "bucketize" | "randperm"
    )
}

/// Tensor methods whose result has the receiver's dtype and device (views, copies, reorderings,
/// fills): a mask stays a mask, a CPU tensor a CPU tensor.
pub fn keeps_dtype_and_device(method: &str) -> bool {
    matches!(
        method,
        "clone"
            | "detach"
            | "view"
            | "view_as"
            | "reshape"
            | "reshape_as"
            | "flatten"
            | "squeeze"
            | "unsqueeze"
            | "permute"
            | "transpose"
            | "t"
            | "contiguous"
            | "expand"
            | "expand_as"
            | "repeat"
            | "flip"
            | "roll"
            | "narrow"
            | "select"
            | "masked_fill"
            | "masked_fill_"
            | "requires_grad_"
            | "unflatten"
            | "movedim"
            | "swapaxes"
            | "tile"
            | "detach_"
            | "share_memory_"
            | "index_select"
    )
}
