//! Printing findings, in the shapes Ruff prints them: `full` and `concise` for people, `grouped`
//! (each file's findings under its path), `json` and `json-lines` for tools, and one per CI
//! system: `github` (Actions annotations), `sarif` (code scanning), `gitlab` (Code Quality),
//! `azure` (Pipelines logging commands), `junit` (test reports), `rdjson` (reviewdog) and
//! `pylint` (what pylint-reading tools parse).

mod azure;
mod full;
mod github;
mod gitlab;
mod grouped;
mod json;
mod json_lines;
mod junit;
mod pylint;
mod rdjson;
mod report_source;
mod sarif;
mod window;
pub mod xml;

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::Arc;

use rayon::prelude::*;
use ruff_text_size::{TextRange, TextSize};

use crate::diagnostic::{Diagnostic, Fix};
use crate::lines::Lines;
use crate::notebook::Notebook;
use crate::parse::SyntaxError;
use crate::registry::Rule;

pub use full::ColorChoice;
pub(crate) use report_source::ReportText;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Full,
    Concise,
    Json,
    JsonLines,
    Junit,
    Grouped,
    Github,
    Gitlab,
    Pylint,
    Rdjson,
    Azure,
    Sarif,
}

impl OutputFormat {
    /// Whether the findings are followed by the summary ("Found 3 findings."): only formats
    /// that people read, as Ruff does; a tool reading the others would choke on it.
    pub fn has_summary(self) -> bool {
        matches!(self, OutputFormat::Full | OutputFormat::Concise | OutputFormat::Grouped)
    }
}

pub use crate::lines::Location;

/// A file's text, through its lines, while its findings are located in it.
#[derive(Clone, Copy)]
pub struct SourceText<'a> {
    pub lines: &'a Lines<'a>,
    /// The notebook whose code cells the text joins: rows are then counted within a cell.
    pub notebook: Option<&'a Notebook>,
}

impl SourceText<'_> {
    /// The row and column of `offset`, and in a notebook its cell.
    pub fn location(&self, offset: TextSize) -> (Option<u32>, Location) {
        let (cell, rows_before) = self.cell_of(offset);
        let location = self.lines.location(offset);
        let row = location.row - rows_before;
        (cell, Location { row, ..location })
    }

    /// In a notebook, the cell `offset` is in and how many rows of the text come before it;
    /// elsewhere no cell and no rows.
    fn cell_of(&self, offset: TextSize) -> (Option<u32>, usize) {
        match self.notebook.and_then(|notebook| notebook.cell_at(offset)) {
            Some((cell, start)) => (Some(cell), self.lines.row(start) - 1),
            None => (None, 0),
        }
    }

    /// The whole lines `range` touches (all `full` output shows of the file), in a copy shared
    /// with the other findings on them.
    fn excerpt(&self, range: TextRange) -> Excerpt {
        let (text, base) = self.lines.shared_lines(range);
        Excerpt { text, base }
    }
}

/// Lines of a file under a finding, so that printing it needs neither the file nor its line
/// index: a large tree's findings would otherwise keep every flagged file in memory. The copy
/// is shared by the findings on the same lines: thousands of findings on one long line keep
/// one copy of it, not one each.
#[derive(Clone)]
pub struct Excerpt {
    /// Whole lines of the file, holding at least those the finding touches.
    pub text: Arc<str>,
    /// Where `text` starts in the file.
    pub base: TextSize,
}

/// One finding, located and ready to print.
#[derive(Clone)]
pub struct Finding {
    pub path: String,
    /// In a notebook, the 1-based cell (counting every cell) that `start` and `end` count rows
    /// in.
    pub cell: Option<u32>,
    /// `None` for a syntax error.
    pub rule: Option<Rule>,
    pub message: String,
    pub help: Option<String>,
    /// Why the line is hot.
    pub note: Option<String>,
    pub range: TextRange,
    /// The row whose `# noqa` covers it (`None` for a syntax error).
    pub noqa_row: Option<usize>,
    pub start: Location,
    pub end: Location,
    pub fix: Option<Fix>,
    pub fix_title: Option<String>,
    /// Where each of the fix's edits starts and ends.
    pub edit_locations: Vec<(Location, Location)>,
    pub excerpt: Excerpt,
}

impl Finding {
    /// A rule's finding, located in the `source` it was found in.
    pub fn from_diagnostic(path: String, diagnostic: Diagnostic, note: Option<String>, source: SourceText) -> Self {
        let edit_locations = diagnostic.fix.iter().flat_map(|fix| &fix.edits).map(|edit| {
            (
                source.location(edit.range.start()).1,
                source.location(edit.range.end()).1,
            )
        });
        // In a notebook the row of the `# noqa` counts in the finding's cell, as its own row does.
        let (_, rows_before) = source.cell_of(diagnostic.range.start());
        Finding {
            edit_locations: edit_locations.collect(),
            rule: Some(diagnostic.rule),
            noqa_row: Some(diagnostic.noqa_row as usize - rows_before),
            message: diagnostic.message,
            help: Some(diagnostic.help),
            note,
            fix: diagnostic.fix,
            fix_title: diagnostic.fix_title,
            ..Finding::at(path, diagnostic.range, source)
        }
    }

    /// A syntax error, as a finding without a rule.
    pub fn syntax_error(path: String, error: &SyntaxError, source: SourceText) -> Self {
        Finding {
            message: error.message.clone(),
            ..Finding::at(path, error.range, source)
        }
    }

    fn at(path: String, range: TextRange, source: SourceText) -> Self {
        let (cell, start) = source.location(range.start());
        Finding {
            path,
            cell,
            rule: None,
            message: String::new(),
            help: None,
            note: None,
            range,
            noqa_row: None,
            start,
            end: source.location(range.end()).1,
            fix: None,
            fix_title: None,
            edit_locations: Vec::new(),
            excerpt: source.excerpt(range),
        }
    }

    /// The finding with why its line is hot (if it is about a line's being hot).
    pub fn with_note(self, note: Option<String>) -> Self {
        Finding { note, ..self }
    }

    /// Where it starts, as people read it: `row:column`, in a notebook `cell N:row:column`.
    pub fn position(&self) -> String {
        let Location { row, column } = self.start;
        match self.cell {
            Some(cell) => format!("cell {cell}:{row}:{column}"),
            None => format!("{row}:{column}"),
        }
    }

    /// `cell N: ` before the message in formats that have a row and no place for a cell.
    fn cell_prefix(&self) -> String {
        self.cell.map(|cell| format!("cell {cell}: ")).unwrap_or_default()
    }

    pub fn code(&self) -> &'static str {
        self.rule.map_or("invalid-syntax", Rule::code)
    }

    /// The message with its help, on one line, for formats that carry one string (and in a
    /// notebook the cell its rows count in).
    pub fn long_message(&self) -> String {
        let mut text = self.cell_prefix();
        text.push_str(&one_line(&self.message));
        if let Some(help) = &self.help {
            text.push_str("; ");
            text.push_str(&one_line(help));
        }
        if let Some(note) = &self.note {
            text.push_str(" (");
            text.push_str(note);
            text.push(')');
        }
        text
    }
}

/// The plural ending of a count's noun: `1 finding`, `2 findings`.
pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `text` with each line break and the indentation around it made one space. Messages quote
/// source, and a quoted call may span lines; `concise` and `github` print a finding per line.
pub fn one_line(text: &str) -> Cow<'_, str> {
    if !text.contains(['\n', '\r']) {
        return Cow::Borrowed(text);
    }
    let lines: Vec<&str> = text
        .split(['\n', '\r'])
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    Cow::Owned(lines.join(" "))
}

/// Runs of findings in the same file: `findings` come sorted by path, so each file's are
/// together.
fn by_file(findings: &[Finding]) -> impl Iterator<Item = &[Finding]> {
    findings.chunk_by(|a, b| a.path == b.path)
}

/// `" [*]"` after the code of a finding `--fix` would fix (with `unsafe_fixes`, unsafe fixes
/// too), as Ruff marks them; `""` otherwise.
fn fix_marker(finding: &Finding, unsafe_fixes: bool) -> &'static str {
    let fixable = finding
        .fix
        .as_ref()
        .is_some_and(|fix| unsafe_fixes || fix.applicability == crate::diagnostic::Applicability::Safe);
    if fixable { " [*]" } else { "" }
}

/// `unsafe_fixes`: whether `--fix` would apply unsafe fixes too; `[*]` marks only the findings
/// `--fix` would fix, as Ruff's does. `findings` come sorted by path.
pub fn render(
    out: &mut dyn Write,
    format: OutputFormat,
    findings: &[Finding],
    color: ColorChoice,
    unsafe_fixes: bool,
) -> io::Result<()> {
    let color = color.enabled();
    match format {
        OutputFormat::Json => json::render(out, findings),
        OutputFormat::JsonLines => json_lines::render(out, findings),
        OutputFormat::Junit => junit::render(out, findings),
        OutputFormat::Gitlab => gitlab::render(out, findings),
        OutputFormat::Rdjson => rdjson::render(out, findings),
        OutputFormat::Sarif => sarif::render(out, findings),
        // A finding per line or per block: each file's findings are rendered on their own, in
        // parallel (codespan's snippets are the costly part), and written in order.
        OutputFormat::Full
        | OutputFormat::Concise
        | OutputFormat::Grouped
        | OutputFormat::Github
        | OutputFormat::Pylint
        | OutputFormat::Azure => {
            let files: Vec<&[Finding]> = by_file(findings).collect();
            let rendered: Vec<io::Result<Vec<u8>>> = files
                .par_iter()
                .map(|findings| {
                    let mut buffer = Vec::new();
                    render_blocks(&mut buffer, format, findings, color, unsafe_fixes)?;
                    Ok(buffer)
                })
                .collect();
            rendered.into_iter().try_for_each(|buffer| out.write_all(&buffer?))
        }
    }
}

/// One file's `findings` in a format that renders each file on its own.
fn render_blocks(
    out: &mut Vec<u8>,
    format: OutputFormat,
    findings: &[Finding],
    color: bool,
    unsafe_fixes: bool,
) -> io::Result<()> {
    match format {
        OutputFormat::Full => full::render(out, findings, color),
        OutputFormat::Grouped => grouped::render(out, findings, unsafe_fixes),
        OutputFormat::Github => github::render(out, findings),
        OutputFormat::Pylint => pylint::render(out, findings),
        OutputFormat::Azure => azure::render(out, findings),
        _ => {
            for finding in findings {
                writeln!(
                    out,
                    "{}:{}: {}{} {}",
                    finding.path,
                    finding.position(),
                    finding.code(),
                    fix_marker(finding, unsafe_fixes),
                    one_line(&finding.message)
                )?;
            }
            Ok(())
        }
    }
}
