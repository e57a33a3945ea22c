//! One file: decode, parse, check, apply `# noqa` (and judge the directives, for SYNC900).

use rustc_hash::FxHashSet;

use crate::checker::{CheckOptions, check_module};
use crate::diagnostic::Diagnostic;
use crate::lines::Lines;
use crate::noqa::{NoqaMap, noqa_row};
use crate::parse::{SourceKind, SyntaxError, parse};
use crate::registry::{Rule, RuleSet};
use crate::rules;
use crate::semantic::{FileFacts, FileSummary};

/// What linting one source produced.
#[derive(bincode::Encode, bincode::Decode)]
pub struct FileLint {
    pub diagnostics: Vec<Diagnostic>,
    pub syntax_errors: Vec<SyntaxError>,
    pub summary: FileSummary,
}

/// Lints `source` with error recovery: syntax errors are returned beside the findings of the
/// part that parsed.
/// `every_call`: record calls in cold code too (for the whole call graph); `test_code`: the file
/// is a test (see [`crate::discovery::is_test_path`]): nothing in it is hot.
pub fn lint_source(
    source: &str,
    kind: SourceKind,
    rules: RuleSet,
    hot_functions: &[String],
    facts: &FileFacts,
    every_call: bool,
    test_code: bool,
) -> FileLint {
    let mut parsed = parse(source, kind);
    // Nothing of a tree too deep to walk is checked: its one error says why.
    if parsed.is_refused() {
        return FileLint {
            diagnostics: Vec::new(),
            syntax_errors: std::mem::take(&mut parsed.syntax_errors),
            summary: FileSummary::default(),
        };
    }
    let lines = Lines::new(source);
    let options = CheckOptions {
        rules: &rules,
        hot_functions,
        facts,
        every_call,
        test_code,
    };
    let result = check_module(parsed.module(), source, &lines, &options);
    let mut diagnostics = result.diagnostics;
    let mut summary = result.summary;
    let judge_directives = rules.contains(Rule::UnusedNoqa);
    // Most files have no finding: their comments are read only where SYNC900 judges them.
    if !diagnostics.is_empty() || judge_directives {
        let mut noqa = NoqaMap::from_comments(source, parsed.comments(), &lines);
        // The line ends come from a walk of every token: only where a finding needs its row.
        if !diagnostics.is_empty() {
            let line_ends = parsed.line_ends();
            for diagnostic in &mut diagnostics {
                diagnostic.noqa_row = noqa_row(&line_ends, &lines, diagnostic.range.start());
            }
        }
        // A directive is used by any finding it suppresses. The checker kept no finding in code
        // that this file shows to be cold, so such code uses none. A finding kept may still be
        // hidden later, for want of a hot caller (which other files decide) or under
        // `report-periodic = false`, and uses it all the same: removing the directive must not
        // let a finding through once a hot caller appears or the setting changes, and `--fix`
        // with `--isolated` must not strip what the project run needs.
        diagnostics.retain(|d| !noqa.suppresses(d.rule, d.noqa_row));
        // A sync accepted in a helper (`# noqa` there) is accepted at its callers too.
        let kept: FxHashSet<(Rule, u32)> = diagnostics.iter().map(|d| (d.rule, d.range.start().to_u32())).collect();
        summary.keep_syncs(|rule, at| kept.contains(&(rule, at)));
        if judge_directives {
            let unused = rules::unused_noqa(source, &lines, noqa.directives(), rules);
            // Only a file-level directive can cover these: one that lists SYNC900 is not judged.
            diagnostics.extend(unused.into_iter().filter(|d| !noqa.suppresses(d.rule, d.noqa_row)));
        }
    }
    diagnostics.sort_by_key(|d| (d.range.start(), d.rule));
    diagnostics.dedup_by(|a, b| a.rule == b.rule && a.range == b.range);
    FileLint {
        diagnostics,
        syntax_errors: std::mem::take(&mut parsed.syntax_errors),
        summary,
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

/// The text a panic carried (a message given as a literal or formatted), for the error that
/// reports a check that panicked; empty for any other payload.
pub fn panic_reason(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::lint_source;
    use crate::parse::SourceKind;
    use crate::registry::RuleSet;
    use crate::semantic::{FileFacts, FileSummary, Question, Questions};

    fn summary(source: &str) -> FileSummary {
        lint_source(
            source,
            SourceKind::Python,
            RuleSet::all(),
            &[],
            &FileFacts::default(),
            false,
            false,
        )
        .summary
    }

    /// The questions asked of parameter `slot` of the function named `name`.
    fn asked(summary: &FileSummary, name: &str, slot: usize) -> Questions {
        let function = summary.functions.iter().find(|f| &*f.qualname == name).unwrap();
        function.details().demand.of(slot)
    }

    /// `step`'s parameter `slot` is asked `question`, and not what it is in general.
    fn assert_asks_only(source: &str, slot: usize, question: Question) {
        let questions = asked(&summary(source), "step", slot);
        assert!(questions.contains(question), "{questions:?}");
        assert!(!questions.contains(Question::Kind), "{questions:?}");
    }

    #[test]
    fn a_value_made_from_a_parameter_asks_what_the_parameter_is() {
        // `x[ok]` reads a boolean mask if `keep` turns out to be a tensor (`ok` is then a mask).
        let source = "import torch\ndef step(x: torch.Tensor, keep):\n    ok = keep > 0\n    y = x[ok]\n";
        let summary = summary(source);
        assert!(asked(&summary, "step", 1).contains(Question::Kind));
    }

    #[test]
    fn an_index_asks_only_whether_it_is_a_mask_or_on_the_host() {
        // A float tensor passed as `i` changes nothing: only a mask or a host index would.
        let source = "import torch\ndef step(x: torch.Tensor, i):\n    y = x[i]\n";
        assert_asks_only(source, 1, Question::Mask);
    }

    #[test]
    fn a_rule_that_counts_unknowns_as_gpu_values_asks_only_for_host_evidence() {
        // `.item()` of an unknown is reported already: only a CPU tensor or a number changes it.
        let source = "def step(loss):\n    return loss.item()\n";
        assert_asks_only(source, 0, Question::Host);
    }

    #[test]
    fn a_call_of_a_parameter_asks_which_object_it_is() {
        // Is `criterion` a cross-entropy module (whose masked inputs SYNC301 reports)?
        let source = "import torch.nn as nn\nce = nn.CrossEntropyLoss()\ndef step(criterion, x, y):\n    loss = criterion(x, y)\n";
        assert_asks_only(source, 0, Question::Instance);
    }

    #[test]
    fn a_truth_test_asks_only_whether_it_is_a_gpu_tensor() {
        // `if flag:` of a flag passed as `True` reads no tensor: only a GPU tensor passed would,
        // also through arithmetic (`flag + 1 > 0`).
        assert_asks_only("def step(flag):\n    if flag:\n        pass\n", 0, Question::GpuTensor);
        assert_asks_only(
            "def step(n):\n    if n + 1 > 0:\n        pass\n",
            0,
            Question::GpuTensor,
        );
    }

    #[test]
    fn a_move_asks_only_which_device_it_names() {
        let source = "def step(x, device):\n    y = x.to(device)\n";
        assert_asks_only(source, 1, Question::Device);
    }

    #[test]
    fn a_length_asks_only_whether_the_size_depends_on_the_data() {
        let source = "def step(v):\n    y = v\n    return len(y)\n";
        assert_asks_only(source, 0, Question::DataDependent);
    }

    #[test]
    fn a_write_through_a_slice_asks_only_where_the_value_lives() {
        // `x[:, 1:] = v` writes through no index tensor: whether `v` is a Python number cannot
        // change a verdict. Where it lives can: a GPU value written into a host buffer is copied
        // to the host, a host value written into a tensor that may be on a GPU to the device.
        let source = "import torch\ndef step(v):\n    x = torch.zeros(4, 4)\n    x[:, 1:] = v\n";
        assert_asks_only(source, 0, Question::GpuTensor);
        assert!(!asked(&summary(source), "step", 0).contains(Question::Number));
        let source = "import torch\ndef step(x: torch.Tensor, v):\n    x[:, 1:] = v\n";
        assert_asks_only(source, 1, Question::Host);
        assert!(!asked(&summary(source), "step", 1).contains(Question::Number));
    }

    #[test]
    fn values_that_are_never_tensors_demand_nothing() {
        let source = "def step(x, y):\n    n = x.shape[0]\n    if y is None:\n        return n\n    if isinstance(y, int):\n        return len(y)\n    return x.size(1)\n";
        let summary = summary(source);
        assert_eq!(asked(&summary, "step", 0), Questions::default());
        assert_eq!(asked(&summary, "step", 1), Questions::default());
    }
}
