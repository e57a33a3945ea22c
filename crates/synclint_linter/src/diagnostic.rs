//! What a rule reports: a finding, its rewrite, and an optional fix.

use ruff_text_size::{TextRange, TextSize};

use crate::registry::Rule;
use crate::semantic::HotContext;

/// Whether `--fix` may apply a fix without `--unsafe-fixes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, bincode::Encode, bincode::Decode)]
pub enum Applicability {
    /// Changes a type, drops an error check, changes numerics or needs judgement.
    Unsafe,
    /// Same values, same types, same aliasing: only the sync goes away.
    Safe,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::Safe => "safe",
            Applicability::Unsafe => "unsafe",
        }
    }
}

/// Replace the text in `range` with `content` (insertion when the range is empty).
#[derive(Debug, Clone, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct Edit {
    #[bincode(with_serde)]
    pub range: TextRange,
    pub content: String,
}

impl Edit {
    pub fn replace(range: TextRange, content: impl Into<String>) -> Self {
        Edit {
            range,
            content: content.into(),
        }
    }

    pub fn insert(at: TextSize, content: impl Into<String>) -> Self {
        Edit {
            range: TextRange::empty(at),
            content: content.into(),
        }
    }

    pub fn delete(range: TextRange) -> Self {
        Edit {
            range,
            content: String::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct Fix {
    pub applicability: Applicability,
    /// Non-overlapping edits, applied together or not at all.
    pub edits: Vec<Edit>,
}

impl Fix {
    pub fn safe(edits: Vec<Edit>) -> Self {
        Fix {
            applicability: Applicability::Safe,
            edits,
        }
    }

    pub fn unsafe_(edits: Vec<Edit>) -> Self {
        Fix {
            applicability: Applicability::Unsafe,
            edits,
        }
    }

    /// The smallest range covering every edit.
    pub fn range(&self) -> TextRange {
        self.edits
            .iter()
            .map(|edit| edit.range)
            .reduce(|a, b| a.cover(b))
            .unwrap_or_default()
    }
}

/// One finding, as a rule produced it. Whether it is reported depends on `context`, which the
/// project-wide call graph resolves once every file has been checked.
#[derive(Debug, Clone, bincode::Encode, bincode::Decode)]
pub struct Diagnostic {
    pub rule: Rule,
    pub message: String,
    #[bincode(with_serde)]
    pub range: TextRange,
    /// The rewrite that keeps the GPU busy, named for this code.
    pub help: String,
    pub fix: Option<Fix>,
    /// Title of the fix ("Replace with `torch.where(mask, x, 0).sum()`").
    pub fix_title: Option<String>,
    pub context: HotContext,
    /// The 1-based row whose `# noqa` covers it (see [`crate::noqa`]); set once the file's
    /// comments are read.
    pub noqa_row: u32,
}

impl Diagnostic {
    pub fn new(rule: Rule, range: TextRange, message: impl Into<String>, help: impl Into<String>) -> Self {
        Diagnostic {
            rule,
            message: message.into(),
            range,
            help: help.into(),
            fix: None,
            fix_title: None,
            context: HotContext::Cold,
            noqa_row: 0,
        }
    }

    pub fn with_fix(mut self, title: impl Into<String>, fix: Fix) -> Self {
        self.fix_title = Some(title.into());
        self.fix = Some(fix);
        self
    }
}
