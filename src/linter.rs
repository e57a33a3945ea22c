//! One file: decode, parse, check, apply `# noqa`.

use crate::checker::{CheckOptions, check_module};
use crate::diagnostic::Diagnostic;
use crate::lines::Lines;
use crate::noqa::NoqaMap;
use crate::parse::{SyntaxError, parse};
use crate::registry::RuleSet;
use crate::semantic::{FileFacts, FileSemantics};

/// What linting one source produced.
pub struct FileLint {
    pub diagnostics: Vec<Diagnostic>,
    pub syntax_errors: Vec<SyntaxError>,
    pub semantics: FileSemantics,
}

/// Lints `source` with error recovery: syntax errors are returned beside the findings of the
/// part that parsed.
/// `every_call`: record calls in cold code too (for the whole call graph).
pub fn lint_source(
    source: &str,
    rules: RuleSet,
    hot_functions: &[String],
    facts: &FileFacts,
    every_call: bool,
) -> FileLint {
    let parsed = parse(source);
    let lines = Lines::new(source);
    let options = CheckOptions {
        rules: &rules,
        hot_functions,
        facts,
        every_call,
    };
    let result = check_module(parsed.module(), source, &lines, &options);
    let mut diagnostics = result.diagnostics;
    if !diagnostics.is_empty() {
        let noqa = NoqaMap::from_comments(source, parsed.comments(), &lines);
        diagnostics.retain(|d| !noqa.suppresses(d.rule, lines.row(d.range.start()) as u32));
    }
    diagnostics.sort_by_key(|d| (d.range.start(), d.rule));
    diagnostics.dedup_by(|a, b| a.rule == b.rule && a.range == b.range);
    FileLint {
        diagnostics,
        syntax_errors: parsed.syntax_errors,
        semantics: result.semantics,
    }
}

/// Why a file's bytes could not be used as source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub line: usize,
    pub byte: usize,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "not valid UTF-8 (first invalid byte at offset {}, line {}); synclint reads UTF-8 source only",
            self.byte, self.line
        )
    }
}

/// Source text from bytes: UTF-8 (a BOM is kept, as the parser skips it).
pub fn decode(bytes: Vec<u8>) -> Result<String, DecodeError> {
    String::from_utf8(bytes).map_err(|error| {
        let byte = error.utf8_error().valid_up_to();
        let line = error.as_bytes()[..byte].iter().filter(|b| **b == b'\n').count() + 1;
        DecodeError { line, byte }
    })
}
