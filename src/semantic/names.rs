//! Tests on identifiers that ignore ASCII case, without a lowered copy of the name (they run
//! for every function, loop and call).

use ruff_python_ast::Expr;

/// `haystack` contains the lowercase ASCII `needle` in any case: `lossFn` contains `loss`.
pub(crate) fn contains_ignoring_ascii_case(haystack: &str, needle: &str) -> bool {
    needle.is_empty()
        || haystack
            .as_bytes()
            .windows(needle.len())
            .any(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
}

/// `haystack` ends with the lowercase ASCII `suffix` in any case: `trainLoader` ends with
/// `loader`.
pub(crate) fn ends_with_ignoring_ascii_case(haystack: &str, suffix: &str) -> bool {
    haystack.len() >= suffix.len()
        && haystack.as_bytes()[haystack.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

/// The name a value goes by: `x`, the `x` of `a.b.x`, of `x(...)` and of `a.x(...)`.
pub(crate) fn last_name(expr: &Expr) -> Option<&str> {
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
pub(crate) fn names_a_progress_wrapper(name: &str) -> bool {
    matches!(name, "tqdm" | "track" | "progress_bar" | "prefetcher")
}

/// `train_loader`, `self.val_dataloader`, `dm.train_dataloader()`.
pub(crate) fn names_a_loader(iter: &Expr) -> bool {
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

/// `mask`, `fg_mask`, `attention_mask`, `keep`, `valid`: the names code gives boolean masks.
pub(crate) fn names_a_mask(name: &str) -> bool {
    matches!(name, "mask" | "keep" | "valid" | "is_valid")
        || ends_with_ignoring_ascii_case(name, "_mask")
        || ends_with_ignoring_ascii_case(name, "_valid")
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
}
