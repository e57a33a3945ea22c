//! Tests on identifiers that ignore ASCII case, without a lowered copy of the name (they run
//! for every function, loop and call), and the naming conventions built on them (a loader, a
//! network, a step, a mask by its name; a qualified name rooted in a library rather than in the
//! project). It imports no other module of `semantic`.

use ruff_python_ast::Expr;

/// `haystack` contains the lowercase ASCII `needle` in any case: `lossFn` contains `loss`.
pub fn contains_ignoring_ascii_case(haystack: &str, needle: &str) -> bool {
    needle.is_empty()
        || haystack
            .as_bytes()
            .windows(needle.len())
            .any(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
}

/// `haystack` ends with the lowercase ASCII `suffix` in any case: `trainLoader` ends with
/// `loader`.
pub fn ends_with_ignoring_ascii_case(haystack: &str, suffix: &str) -> bool {
    haystack.len() >= suffix.len()
        && haystack.as_bytes()[haystack.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// The name a value goes by: `x`, the `x` of `a.b.x`, of `x(...)` and of `a.x(...)`.
pub fn last_name(expr: &Expr) -> Option<&str> {
    match expr {
        Expr::Name(name) => Some(name.id.as_str()),
        Expr::Attribute(attribute) => Some(attribute.attr.as_str()),
        Expr::Call(call) => match call.func.as_ref() {
            Expr::Call(_) => None,
            func => last_name(func),
        },
        _ => None,
    }
}

/// `tqdm`, `track`: what wraps an iterable in a progress bar (or a prefetcher) and yields its
/// items unchanged.
pub fn names_a_progress_wrapper(name: &str) -> bool {
    matches!(name, "tqdm" | "track" | "progress_bar" | "prefetcher")
}

/// `train_loader`, `self.val_dataloader`, `dm.train_dataloader()`.
pub fn names_a_loader(iter: &Expr) -> bool {
    let Some(name) = last_name(iter) else {
        return false;
    };
    ends_with_ignoring_ascii_case(name, "loader")
        || ends_with_ignoring_ascii_case(name, "_dl")
        || name.eq_ignore_ascii_case("dl")
}

/// A name with a word for a network or a loss in it, in any case: `model`, `self.backbone`,
/// `lossFn`, `ConvBlock`. One pass over the name, trying only the words that start with each
/// byte (this runs for every call of an unknown callable that takes a GPU tensor).
pub(crate) fn names_a_network(name: &str) -> bool {
    let name = name.as_bytes();
    (0..name.len()).any(|start| {
        let rest = &name[start..];
        let words: &[&[u8]] = match rest[0].to_ascii_lowercase() {
            b'a' => &[b"attn", b"attention"],
            b'b' => &[b"backbone", b"block"],
            b'c' => &[b"criterion", b"classifier", b"conv"],
            b'd' => &[b"decoder"],
            b'e' => &[b"encoder", b"embed"],
            b'f' => &[b"fc"],
            b'h' => &[b"head"],
            b'l' => &[b"loss", b"layer", b"linear"],
            b'm' => &[b"model", b"module", b"mlp"],
            b'n' => &[b"net"],
            b'p' => &[b"proj"],
            b't' => &[b"transformer"],
            _ => return false,
        };
        words
            .iter()
            .any(|word| rest.len() >= word.len() && rest[..word.len()].eq_ignore_ascii_case(word))
    })
}

/// A call by this name runs a network: the name has a word for one in it
/// ([`names_a_network`]), opens with no verb that does something else with a network and ends
/// with no word for what makes or describes one (`self.unet(x)`, `model(x)`, `self.layer1(x)`,
/// but not `unwrap_model(m)`, `m.named_modules()`, `convert_weights(sd)`, `load_model(path)`,
/// `layer_class(**kw)`, nor `nn.Linear(...)`).
pub(crate) fn calls_a_network(name: &str) -> bool {
    /// The first words of setup, conversion and bookkeeping calls, and `nn.Module`'s accessors
    /// of its submodules.
    #[rustfmt::skip]
    const FIRST: &[&str] = &[
        "add", "apply", "attach", "build", "cast", "check", "clean", "clear", "clone", "compile",
        "convert", "copy", "count", "create", "detach", "disable", "dispatch", "dump", "enable",
        "export", "extract", "find", "finetune", "freeze", "from", "fuse", "get", "has", "import",
        "init", "is", "load", "log", "make", "merge", "modules", "move", "named", "num", "offload",
        "patch", "plot", "prepare", "print", "quantize", "register", "remove", "replace", "reset",
        "resize", "save", "set", "setup", "shard", "submodules", "tie", "to", "trace", "unfreeze",
        "unwrap", "wrap", "write",
    ];
    /// The last words of what makes, describes or serialises a network.
    #[rustfmt::skip]
    const LAST: &[&str] = &[
        "args", "class", "cls", "config", "count", "device", "dict", "dtype", "info", "json",
        "kwargs", "name", "names", "params", "parameters", "path", "shape", "shapes", "size",
        "sizes", "state", "str", "summary", "type", "weights",
    ];
    let trimmed = name.trim_start_matches('_');
    // A class's name (`nn.Linear(...)`, `te.LayerNorm(...)`) constructs a layer.
    // Most names have no word for a network: that test first.
    if trimmed.starts_with(|c: char| c.is_ascii_uppercase())
        || !names_a_network(name)
        || contains_ignoring_ascii_case(name, "conver")
    {
        return false;
    }
    let first = trimmed
        .find(|c: char| c == '_' || c.is_ascii_uppercase())
        .map_or(trimmed, |end| &trimmed[..end]);
    let last = trimmed.rsplit('_').next().unwrap_or(trimmed);
    !FIRST.iter().any(|word| first.eq_ignore_ascii_case(word))
        && !LAST.iter().any(|word| last.eq_ignore_ascii_case(word))
}

/// A function whose name says it does a step's work: it runs a network
/// ([`calls_a_network`]) or trains (`train_one_epoch`, `training_step`, `step`).
pub fn names_a_step(name: &str) -> bool {
    calls_a_network(name) || contains_ignoring_ascii_case(name, "train") || contains_ignoring_ascii_case(name, "step")
}

/// `mask`, `fg_mask`, `attention_mask`, `keep`, `valid`: the names code gives boolean masks.
pub(crate) fn names_a_mask(name: &str) -> bool {
    matches!(name, "mask" | "keep" | "valid" | "is_valid")
        || ends_with_ignoring_ascii_case(name, "_mask")
        || ends_with_ignoring_ascii_case(name, "_valid")
}

/// Libraries that compute on the host alone: calling them runs no network, whatever the
/// function's name says (`scipy.optimize.linear_sum_assignment` in a Hungarian matcher).
pub fn is_host_library(qualified: &str) -> bool {
    let root = qualified.split('.').next().unwrap_or(qualified);
    matches!(
        root,
        "numpy" | "scipy" | "sklearn" | "pandas" | "cv2" | "PIL" | "math" | "shapely" | "pycocotools" | "skimage"
    )
}

/// Imports of third-party libraries are not part of the project's call graph.
pub fn is_library(qualified: &str) -> bool {
    let root = qualified.split('.').next().unwrap_or(qualified);
    matches!(
        root,
        "torch"
            | "numpy"
            | "math"
            | "os"
            | "sys"
            | "logging"
            | "time"
            | "json"
            | "re"
            | "typing"
            | "collections"
            | "functools"
            | "itertools"
            | "dataclasses"
            | "transformers"
            | "lightning"
            | "pytorch_lightning"
            | "torchvision"
            | "timm"
            | "accelerate"
            | "diffusers"
            | "torchmetrics"
            | "einops"
            | "tqdm"
            | "wandb"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_is_ignored_without_copies() {
        assert!(contains_ignoring_ascii_case("trainLOSS_fn", "loss"));
        assert!(contains_ignoring_ascii_case("loss", "loss"));
        assert!(!contains_ignoring_ascii_case("los", "loss"));
        assert!(!contains_ignoring_ascii_case("", "log"));
        assert!(contains_ignoring_ascii_case("log", ""));
        assert!(ends_with_ignoring_ascii_case("train_DataLoader", "loader"));
        assert!(names_a_mask("fg_mask") && names_a_mask("mask") && names_a_mask("keep"));
        assert!(!names_a_mask("masks") && !names_a_mask("mask_ratio") && !names_a_mask("keepdim"));
        assert!(ends_with_ignoring_ascii_case("dl", "dl"));
        assert!(!ends_with_ignoring_ascii_case("loaders", "loader"));
        assert!(!ends_with_ignoring_ascii_case("der", "loader"));
    }

    #[test]
    fn network_words_are_found_anywhere_in_any_case() {
        for name in [
            "model",
            "self_attn",
            "ConvBlock",
            "lossFn",
            "teacher_MODEL",
            "x_proj",
            "mlp",
            "fc2",
        ] {
            assert!(names_a_network(name), "{name}");
        }
        for name in ["", "forward", "compute", "atten", "mod", "los", "f", "tokenize"] {
            assert!(!names_a_network(name), "{name}");
        }
    }

    #[test]
    fn calls_that_run_a_network_are_told_from_setup_calls() {
        for name in [
            "model",
            "unet",
            "text_encoder",
            "conv1",
            "lm_head",
            "loss_fn",
            "_run_model",
        ] {
            assert!(calls_a_network(name), "{name}");
        }
        for name in [
            "unwrap_model",
            "named_modules",
            "modules",
            "convert_weights",
            "_maybe_convert_to_cpu",
            "load_model",
            "getModel",
            "Linear",
            "LayerNorm",
            "register_module",
            "import_module",
            "layer_class",
            "model_config",
            "model_dump_json",
            "_calculate_module_shape",
            // `net` inside `finetune`: a callback's unfreezing step, run once per epoch.
            "finetune_function",
        ] {
            assert!(!calls_a_network(name), "{name}");
        }
        assert!(names_a_step("train_one_epoch") && names_a_step("training_step") && names_a_step("model"));
        assert!(!names_a_step("rmtree") && !names_a_step("safe_open"));
    }
}
