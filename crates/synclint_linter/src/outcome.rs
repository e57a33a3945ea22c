//! What a run leaves to report and to write: the findings whose lines are hot (resolved across
//! files), each with the note that says why, and the fixes applied in passes until nothing
//! changes, written back ([`crate::write`]) or shown as a diff.

use std::sync::Arc;

use miette::{Report, miette};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::config::Settings;
use crate::diagnostic::{Applicability, Diagnostic};
use crate::fix::{FixFailure, FixTarget, Moves, fix_in_passes};
use crate::lines::Lines;
use crate::linter::lint_source;
use crate::notebook::Notebook;
use crate::parse::{SourceKind, TextSize};
use crate::pipeline::{Checked, Errors, Linted, Run};
use crate::project::hotness::{FunctionNotes, hot_note};
use crate::registry::Rule;
use crate::render::{Finding, SourceText};
use crate::semantic::{FileSummary, FunctionId, HotContext};
use crate::write::{FileId, Writer, file_id};

/// Fix passes before a file is reported as not converging.
const MAX_FIX_PASSES: usize = 10;

/// What becomes of fixed text.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum FixedText {
    /// Written over the file.
    Write,
    /// Shown as a unified diff; nothing is written.
    Diff,
    /// Returned (source from stdin goes back to stdout).
    Return,
}

/// What a run leaves for the named files.
#[derive(Default)]
pub struct Outcome {
    /// Syntax errors and the findings still to report, by path and position.
    pub findings: Vec<Finding>,
    /// Findings fixed (in files written, with [`FixedText::Write`]).
    pub fixed_total: usize,
    /// Files whose text the fixes changed.
    pub changed_files: usize,
    /// The unified diff of every change (with [`FixedText::Diff`]).
    pub diff: String,
    /// What was fixed in each changed file, by rule.
    pub fix_log: Vec<(String, FxHashMap<Rule, usize>)>,
    /// The last changed file's fixed text (with [`FixedText::Return`]).
    pub fixed_text: Option<String>,
    /// Whether a named file's settings show unsafe fixes.
    pub unsafe_fixes: bool,
}

/// Keeps the named files' findings whose lines are hot and applies their fixes: `fixing` gives
/// the least safe fixes applied under a file's settings (`None`: not fixed). Syntax errors go
/// to `errors` too, where the findings that include them are not printed. A file whose fixed
/// text is not written reports the findings of the text on disk, and counts as not fixed.
pub fn outcome(
    run: Run,
    fixing: &(dyn Fn(&Settings) -> Option<Applicability> + Sync),
    fixed_text: FixedText,
    findings_printed: bool,
) -> (Outcome, Errors) {
    let Run {
        linted,
        notes,
        mut errors,
        roots,
        ..
    } = run;
    let mut outputs: Vec<FileOutput> = linted
        .par_iter()
        .zip(&notes)
        .map(|(file, notes)| {
            if file.named {
                process_file(file, notes, fixing(&file.settings))
            } else {
                FileOutput::default()
            }
        })
        .collect();

    let writer = Writer::new(&roots);
    // Two paths of a run may name one file (a link and its target, two hard links): it is
    // written once. Which file each names is taken before anything is written.
    let ids: Vec<Option<FileId>> = match fixed_text {
        FixedText::Write => linted
            .iter()
            .zip(&outputs)
            .map(|(file, output)| output.fixed.as_ref().and_then(|_| file_id(&file.path)))
            .collect(),
        FixedText::Diff | FixedText::Return => Vec::new(),
    };
    // The file each written id names, by the index of the path it was written under.
    let mut written: FxHashMap<FileId, usize> = FxHashMap::default();
    let mut outcome = Outcome::default();
    for (index, file) in linted.iter().enumerate().filter(|(_, file)| file.named) {
        outcome.unsafe_fixes |= file.settings.unsafe_fixes;
        errors.push_syntax(file, findings_printed);
        if let Some(error) = outputs[index].error.take() {
            errors.push(error);
        }
        if outputs[index].not_fixed_for_syntax {
            errors.push(miette!(
                "{}: the file has syntax errors, so its fixes were not applied; the file was left unchanged",
                file.display
            ));
        }
        // Whether the fixed text stands: shown, returned, or now the file's.
        let fixed_stands = match (&outputs[index].fixed, fixed_text) {
            (None, _) => false,
            (Some(fixed), FixedText::Diff) => {
                outcome.diff.push_str(&fixed.diff(&file.display));
                true
            }
            (Some(fixed), FixedText::Return) => {
                outcome.fixed_text = Some(fixed.file_text().to_string());
                true
            }
            (Some(fixed), FixedText::Write) => {
                let id = ids.get(index).copied().flatten();
                let written_already = id
                    .and_then(|id| written.get(&id))
                    .and_then(|&first| outputs[first].fixed.as_ref())
                    .is_some_and(|first| {
                        first.read_text() == fixed.read_text() && first.file_text() == fixed.file_text()
                    });
                written_already
                    || match writer.write(&file.path, fixed.read_text().as_bytes(), fixed.file_text().as_bytes()) {
                        Ok(()) => {
                            written.extend(id.map(|id| (id, index)));
                            true
                        }
                        Err(not_written) => {
                            errors.push(not_written.report(&file.display, "not fixed"));
                            false
                        }
                    }
            }
        };
        let output = &mut outputs[index];
        match output.fixed.as_mut().filter(|_| fixed_stands) {
            Some(fixed) => {
                outcome.changed_files += 1;
                outcome.fixed_total += fixed.applied.len();
                let mut counts: FxHashMap<Rule, usize> = FxHashMap::default();
                for rule in &fixed.applied {
                    *counts.entry(*rule).or_default() += 1;
                }
                outcome.fix_log.push((file.display.clone(), counts));
                outcome.findings.append(&mut fixed.findings);
            }
            None => outcome.findings.append(&mut output.findings),
        }
    }
    outcome
        .findings
        .sort_by(|a, b| (&a.path, a.cell, a.start, a.code()).cmp(&(&b.path, b.cell, b.start, b.code())));
    // The process ends once the outcome is printed, and the OS takes its memory back at once:
    // freeing every file's call graph piece by piece costs about 10 ms on a large tree.
    std::mem::forget(linted);
    (outcome, errors)
}

/// What happened to one file after the project-wide pass.
#[derive(Default)]
pub struct FileOutput {
    /// Syntax errors and the findings to report in the text as read, with why their line is
    /// hot.
    pub findings: Vec<Finding>,
    /// The fixed text, where the fixes changed it.
    pub fixed: Option<Fixed>,
    pub error: Option<Report>,
    /// Asked to fix, it had fixes but was left unchanged: it has syntax errors. `check --fix`
    /// says so; an editor's fix-all on a half-typed file just offers nothing.
    not_fixed_for_syntax: bool,
}

/// A file's code before and after its fixes; for a notebook, the notebook with the fixed code.
pub struct Fixed {
    original: Arc<str>,
    /// The notebook `original` is the code of, as read.
    original_notebook: Option<Arc<Notebook>>,
    code: String,
    notebook: Option<Notebook>,
    applied: Vec<Rule>,
    /// The findings left in the fixed text, located there: reported in place of the file's
    /// once the fixed text is the file's.
    findings: Vec<Finding>,
}

impl Fixed {
    /// What the file holds once fixed.
    pub fn file_text(&self) -> &str {
        match &self.notebook {
            Some(notebook) => notebook.json(),
            None => &self.code,
        }
    }

    /// What the file held when it was read.
    fn read_text(&self) -> &str {
        match &self.original_notebook {
            Some(notebook) => notebook.json(),
            None => &self.original,
        }
    }

    /// The change as a unified diff; a notebook's cell by cell, each headed `path:cell N`.
    fn diff(&self, display: &str) -> String {
        let (Some(before), Some(after)) = (&self.original_notebook, &self.notebook) else {
            return unified_diff(display, &self.original, &self.code);
        };
        before
            .cell_texts(&self.original)
            .zip(after.cell_texts(&self.code))
            .filter(|((_, old), (_, new))| old != new)
            .map(|((cell, old), (_, new))| unified_diff(&format!("{display}:cell {cell}"), old, new))
            .collect()
    }
}

/// Keeps the findings whose line is hot (resolving calls across files), and applies fixes in
/// passes until nothing changes.
pub fn process_file(file: &Linted, notes: &FunctionNotes, fixing: Option<Applicability>) -> FileOutput {
    let settings = &file.settings;
    let (source, notebook, diagnostics, syntax_errors) = match &file.checked {
        Checked::Located(candidates) => {
            let called_note = |id: FunctionId| notes.get(&id).cloned();
            let findings = candidates.iter().filter_map(|(context, finding)| {
                let note = hot_note(
                    *context,
                    &file.display,
                    &file.summary,
                    called_note,
                    settings.report_periodic,
                )?;
                Some(finding.clone().with_note(note))
            });
            return FileOutput {
                findings: findings.collect(),
                ..FileOutput::default()
            };
        }
        Checked::Whole {
            source,
            notebook,
            diagnostics,
            syntax_errors,
        } => (source, notebook, diagnostics, syntax_errors),
    };
    let original_notebook = notebook;
    let notebook = notebook.as_deref();
    let kind = SourceKind::of(&file.path);
    // Notes of this file's hot functions, by qualified name, so re-checked (fixed) code finds
    // them again.
    let function_notes: FxHashMap<&str, String> = file
        .summary
        .functions
        .iter()
        .enumerate()
        .filter_map(|(id, f)| Some((&*f.qualname, notes.get(&(id as FunctionId))?.clone())))
        .collect();
    // Whether a finding is reported in a file with this summary, and why its line is hot.
    let note = |context: HotContext, summary: &FileSummary| {
        let called_note = |id: FunctionId| {
            let qualname = &*summary.functions.get(id as usize)?.qualname;
            function_notes.get(qualname).cloned()
        };
        hot_note(context, &file.display, summary, called_note, settings.report_periodic)
    };
    let visible = |diagnostics: &[Diagnostic], summary: &FileSummary| -> Vec<(Diagnostic, Option<String>)> {
        diagnostics
            .iter()
            .filter_map(|d| Some((d.clone(), note(d.context, summary)?)))
            .collect()
    };
    let original_lines = Lines::new(source);
    let original = SourceText {
        lines: &original_lines,
        notebook,
    };
    let mut output = FileOutput {
        findings: syntax_errors
            .iter()
            .map(|error| Finding::syntax_error(file.display.clone(), error, original))
            .collect(),
        ..FileOutput::default()
    };
    // The findings to report in the text as read.
    let mut remaining = visible(diagnostics, &file.summary);
    let has_fix = |minimum| {
        remaining
            .iter()
            .any(|(d, _)| d.fix.as_ref().is_some_and(|f| f.applicability >= minimum))
    };
    let fixable = fixing.filter(|&minimum| has_fix(minimum));
    // Fixes are placed by a tree the parser had to guess at.
    output.not_fixed_for_syntax = fixable.is_some() && !syntax_errors.is_empty();
    if let Some(minimum) = fixable.filter(|_| syntax_errors.is_empty()) {
        let rules = settings.rules_for(&file.path);
        // The project's facts about calls are keyed by where the call is: each pass moves them
        // with the text, so that a call after a fix still finds what the project said of it.
        let mut facts = file.facts.clone();
        let relint = |source: &str, boundaries: &[TextSize], moves: &Moves| {
            facts = facts.with_calls_moved(|at| Some(moves.offset(at.into())?.into()));
            let test_code = crate::discovery::is_test_path(&file.path);
            let mut lint = lint_source(source, kind, rules, &settings.hot_functions, &facts, false, test_code);
            if let Some(notebook) = notebook {
                lint.summary.cell_rows = notebook.cell_rows(source, boundaries);
            }
            visible(&lint.diagnostics, &lint.summary)
        };
        let target = FixTarget {
            source,
            kind,
            boundaries: notebook.map(Notebook::cell_starts).unwrap_or_default(),
        };
        let fixed = fix_in_passes(target, remaining.clone(), minimum, MAX_FIX_PASSES, |(d, _)| d, relint)
            .map_err(|failure| match failure {
                FixFailure::DoesNotParse => "a fix produced code that does not parse".to_string(),
                FixFailure::NotConverged(passes) => format!("fixes did not converge after {passes} passes"),
            })
            .and_then(|fixed| {
                if fixed.source == **source {
                    return Ok((fixed, None));
                }
                let why = "the fixed cells could not be written back into the notebook (a fix would move a cell magic off its cell's first line, or the cells would not read back)";
                let notebook = notebook
                    .map(|notebook| notebook.with_code(source, &fixed.source, &fixed.boundaries).ok_or(why))
                    .transpose()?;
                Ok((fixed, Some(notebook)))
            });
        match fixed {
            // The fixes changed nothing.
            Ok((fixed, None)) => remaining = fixed.remaining,
            Ok((fixed, Some(notebook))) => {
                // The findings left are located in the text they were found in.
                let lines = Lines::new(&fixed.source);
                let located_in = SourceText {
                    lines: &lines,
                    notebook: notebook.as_ref(),
                };
                let findings = fixed
                    .remaining
                    .into_iter()
                    .map(|(d, note)| Finding::from_diagnostic(file.display.clone(), d, note, located_in))
                    .collect();
                output.fixed = Some(Fixed {
                    original: source.clone(),
                    original_notebook: original_notebook.clone(),
                    code: fixed.source,
                    notebook,
                    applied: fixed.applied,
                    findings,
                });
            }
            Err(why) => output.error = Some(miette!("{}: {why}; the file was left unchanged", file.display)),
        }
    }
    let remaining = remaining
        .into_iter()
        .map(|(d, note)| Finding::from_diagnostic(file.display.clone(), d, note, original));
    output.findings.extend(remaining);
    output
}

/// The unified diff of `before` and `after`, headed `path`. Lines end at `\n` alone, as `patch`
/// and `git apply` read them: `similar` also ends a line at a lone `\r` and prints it with no
/// newline after, so the diff of a file with CR line ends ran its lines together where no tool
/// could read them.
fn unified_diff(path: &str, before: &str, after: &str) -> String {
    use std::fmt::Write;

    let old: Vec<&str> = before.split_inclusive('\n').collect();
    let new: Vec<&str> = after.split_inclusive('\n').collect();
    let diff = similar::TextDiff::configure().diff_slices(&old, &new);
    let mut out = String::new();
    for hunk in diff.unified_diff().context_radius(3).iter_hunks() {
        if out.is_empty() {
            let _ = writeln!(out, "--- {path}\n+++ {path}");
        }
        let _ = writeln!(out, "{}", hunk.header());
        for change in hunk.iter_changes() {
            let sign = match change.tag() {
                similar::ChangeTag::Equal => ' ',
                similar::ChangeTag::Delete => '-',
                similar::ChangeTag::Insert => '+',
            };
            let line = change.value();
            out.push(sign);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}
