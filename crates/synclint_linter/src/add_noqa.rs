//! `--add-noqa`: a `# noqa: CODE` on every line with a finding, so that the next run passes
//! (Ruff's `--add-noqa`). Each goes where the finding's `# noqa` is read ([`crate::noqa`]), one
//! per line with the line's codes sorted; a line's existing `# noqa: CODE` gets the new codes
//! after its own, and every other byte of the file is kept.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use miette::{Report, miette};
use rayon::prelude::*;
use ruff_text_size::TextRange;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::diagnostic::Edit;
use crate::fix::apply_edits;
use crate::linter::decode;
use crate::noqa::{Directive, covering_line_end, parse_line_directive};
use crate::notebook::{Notebook, code_of};
use crate::outcome::{FixedText, outcome};
use crate::parse::{SourceKind, TextLen, TextSize, parse, parses_cleanly};
use crate::pipeline::{Errors, Run};
use crate::registry::Rule;
use crate::regular_file::read_regular_file;
use crate::render::Finding;
use crate::write::{NotWritten, Writer, file_id};

/// What an unwritten file was left without.
const NOT_ADDED: &str = "no `# noqa` added";

/// Adds the directives for the findings `check` would report on the named files of `run`, and
/// writes the files; returns how many directives were added.
pub fn add_noqa_to_files(run: Run) -> (usize, Errors) {
    let paths: FxHashMap<String, PathBuf> = run
        .linted
        .iter()
        .filter(|file| file.named)
        .map(|file| (file.display.clone(), file.path.clone()))
        .collect();
    let roots = run.roots.clone();
    // Nothing is fixed: the directives go on the lines the findings are on now.
    let (outcome, mut errors) = outcome(run, &|_| None, FixedText::Write, false);
    let mut by_file: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
    for finding in outcome.findings.iter().filter(|finding| finding.rule.is_some()) {
        by_file.entry(&finding.path).or_default().push(finding);
    }
    // Two paths may name one file (a link and its target, two hard links): it gets its
    // directives once, under the first.
    let mut seen = FxHashSet::default();
    by_file.retain(|display, _| file_id(&paths[*display]).is_none_or(|id| seen.insert(id)));
    let writer = Writer::new(&roots);
    let results: Vec<Result<usize, Report>> = by_file
        .into_par_iter()
        .map(|(display, findings)| {
            let path = &paths[display];
            let bytes = read_regular_file(path).map_err(|e| miette!("{display}: cannot read it: {e}"))?;
            let text = decode(bytes).map_err(|e| miette!("{display}: {e}"))?;
            let kind = SourceKind::of(path);
            let (source, notebook) = code_of(kind, text).map_err(|e| miette!("{display}: {e}"))?;
            // The directives go where the findings were: their lines must still be as they were
            // found.
            let as_found = findings.iter().all(|finding| {
                let start = finding.excerpt.base.to_usize();
                source.get(start..start + finding.excerpt.text.len()) == Some(&*finding.excerpt.text)
            });
            if !as_found {
                return Err(NotWritten::Changed.report(display, NOT_ADDED));
            }
            let findings: Vec<(Rule, TextSize)> = findings
                .iter()
                .filter_map(|finding| Some((finding.rule?, finding.range.start())))
                .collect();
            let Some(edits) = directives(&source, kind, &findings) else {
                // Its syntax errors are reported already; findings in code that does not parse
                // may move once it does.
                return Ok(0);
            };
            let unchanged =
                || miette!("{display}: adding `# noqa` produced code that does not parse; the file was left unchanged");
            let boundaries = notebook.as_deref().map(Notebook::cell_starts).unwrap_or_default();
            let (code, boundaries) = apply_edits(&source, &edits.iter().collect::<Vec<_>>(), &boundaries);
            if !parses_cleanly(&code, kind) {
                return Err(unchanged());
            }
            let written = notebook
                .as_deref()
                .map(|notebook| notebook.with_code(&source, &code, &boundaries).ok_or_else(unchanged))
                .transpose()?;
            let read = notebook.as_deref().map_or(source.as_str(), Notebook::json);
            let contents = written.as_ref().map_or(code.as_str(), Notebook::json);
            writer
                .write(path, read.as_bytes(), contents.as_bytes())
                .map_err(|not_written| not_written.report(display, NOT_ADDED))?;
            Ok(edits.len())
        })
        .collect();
    let mut added = 0;
    for result in results {
        match result {
            Ok(count) => added += count,
            Err(report) => errors.push(report),
        }
    }
    (added, errors)
}

/// The edits that give `source` a `# noqa` for each finding (its rule, where it starts), one per
/// line, in source order; `None` when the source does not parse, or no line needs one.
pub fn directives(source: &str, kind: SourceKind, findings: &[(Rule, TextSize)]) -> Option<Vec<Edit>> {
    let parsed = parse(source, kind);
    if !parsed.syntax_errors.is_empty() {
        return None;
    }
    let line_ends = parsed.line_ends();
    // Line ends in source order, each with its comment and the codes to add there.
    let mut codes_at: BTreeMap<TextSize, (Option<TextRange>, BTreeSet<&'static str>)> = BTreeMap::new();
    for &(rule, offset) in findings {
        let end = covering_line_end(&line_ends, offset)?;
        codes_at
            .entry(end.at)
            .or_insert((end.comment, BTreeSet::new()))
            .1
            .insert(rule.code());
    }
    let mut edits = Vec::with_capacity(codes_at.len());
    for (at, (comment, codes)) in codes_at {
        let codes = codes.into_iter().collect::<Vec<_>>().join(", ");
        let directive =
            comment.and_then(|range| Some((range.start().to_usize(), parse_line_directive(&source[range])?)));
        edits.push(match directive {
            // A bare `# noqa` covers every code already.
            Some((_, parsed)) if parsed.directive == Directive::All => continue,
            Some((comment_start, parsed)) => {
                let codes_end = TextSize::try_from(comment_start + parsed.end).ok()?;
                Edit::insert(codes_end, format!(", {codes}"))
            }
            None => {
                // After the line's text and its comment, in place of trailing blanks, as Ruff.
                let content_end = source[..at.to_usize()].trim_end_matches([' ', '\t', '\x0c']).text_len();
                Edit::replace(TextRange::new(content_end, at), format!("  # noqa: {codes}"))
            }
        });
    }
    (!edits.is_empty()).then_some(edits)
}

#[cfg(test)]
mod tests {
    use super::directives;
    use crate::fix::apply_edits;
    use crate::parse::{SourceKind, TextSize};
    use crate::registry::Rule;

    /// `source` with directives for findings of each rule starting at the first `needle`, and
    /// how many lines got one.
    fn added(source: &str, findings: &[(Rule, &str)]) -> Option<(String, usize)> {
        let findings: Vec<_> = findings
            .iter()
            .map(|&(rule, needle)| (rule, TextSize::new(source.find(needle).expect("a needle") as u32)))
            .collect();
        let edits = directives(source, SourceKind::Python, &findings)?;
        let (text, _) = apply_edits(source, &edits.iter().collect::<Vec<_>>(), &[]);
        Some((text, edits.len()))
    }

    #[test]
    fn one_comment_per_line_with_sorted_codes() {
        let source = "a = x.item() + y.item()  \nb = 1\n";
        let findings = [
            (Rule::Item, "y.item"),
            (Rule::TensorFormatting, "x.item"),
            (Rule::Item, "x.item"),
        ];
        let expected = "a = x.item() + y.item()  # noqa: SYNC101, SYNC106\nb = 1\n";
        assert_eq!(added(source, &findings), Some((expected.to_string(), 1)));
    }

    #[test]
    fn existing_directives_get_the_codes_after_their_own() {
        let source = "a = x.item()  # NOQA:E501,SYNC2 why\nb = y.item()  # noqa\n";
        let findings = [(Rule::Item, "x.item"), (Rule::Item, "y.item")];
        let expected = "a = x.item()  # NOQA:E501,SYNC2, SYNC101 why\nb = y.item()  # noqa\n";
        assert_eq!(added(source, &findings), Some((expected.to_string(), 1)));
    }

    #[test]
    fn code_that_does_not_parse_gets_nothing() {
        assert_eq!(added("a = x.item(\n", &[(Rule::Item, "x.item")]), None);
    }
}
