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

#[cfg(test)]
mod tests {
    use super::lint_source;
    use crate::registry::RuleSet;
    use crate::semantic::{FileFacts, FileSemantics};

    fn semantics(source: &str) -> FileSemantics {
        lint_source(source, RuleSet::all(), &[], &FileFacts::default(), false).semantics
    }

    /// (tensor demand, host demand) of the function named `name`.
    fn demand(semantics: &FileSemantics, name: &str) -> (u64, u64) {
        let function = semantics.functions.iter().find(|f| &*f.qualname == name).unwrap();
        (function.demand, function.host_demand)
    }

    #[test]
    fn a_rule_that_needs_a_tensor_demands_its_parameters_as_tensors() {
        // `x[keep]` reads a boolean mask only if `keep` turns out to be a boolean tensor.
        let source = "def step(x, keep):\n    ok = keep > 0\n    return x[ok]\n";
        let (tensor, _) = demand(&semantics(source), "step");
        assert_eq!(tensor & 0b10, 0b10);
    }

    #[test]
    fn a_rule_that_counts_unknowns_as_gpu_values_asks_only_for_host_evidence() {
        // `.item()` of an unknown is reported already: only a CPU tensor or a number changes it.
        let source = "def step(loss):\n    return loss.item()\n";
        let (tensor, host) = demand(&semantics(source), "step");
        assert_eq!((tensor & 1, host & 1), (0, 1));
    }

    #[test]
    fn values_that_are_never_tensors_demand_nothing() {
        let source = "def step(x, y):\n    n = x.shape[0]\n    if y is None:\n        return n\n    if isinstance(y, int):\n        return len(y)\n    return x.size(1)\n";
        let (tensor, _) = demand(&semantics(source), "step");
        assert_eq!(tensor, 0);
    }
}
