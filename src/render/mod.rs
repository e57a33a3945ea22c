//! Printing findings: `full`, `concise`, `json` (Ruff's shape), `github`, `sarif`.

mod full;
mod github;
mod json;
mod sarif;

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::Arc;

use ruff_source_file::LineIndex;
use ruff_text_size::{TextRange, TextSize};

use crate::diagnostic::Fix;
use crate::registry::Rule;

pub use full::ColorChoice;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Full,
    Concise,
    Json,
    Github,
    Sarif,
}

/// A file's text and line index, shared by its findings.
pub struct SourceText {
    pub text: Arc<str>,
    pub index: LineIndex,
}

/// A 1-based row and column (columns count characters, as Ruff's do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Location {
    pub row: usize,
    pub column: usize,
}

impl SourceText {
    pub fn location(&self, offset: TextSize) -> Location {
        let position = self.index.line_column(offset, &self.text);
        Location {
            row: position.line.get(),
            column: position.column.get(),
        }
    }
}

/// One finding, ready to print.
pub struct Finding {
    pub path: String,
    /// `None` for a syntax error.
    pub rule: Option<Rule>,
    pub message: String,
    pub help: Option<String>,
    /// Why the line is hot.
    pub note: Option<String>,
    pub range: TextRange,
    pub fix: Option<Fix>,
    pub fix_title: Option<String>,
    pub source: Arc<SourceText>,
}

impl Finding {
    pub fn start(&self) -> Location {
        self.source.location(self.range.start())
    }

    pub fn end(&self) -> Location {
        self.source.location(self.range.end())
    }

    pub fn code(&self) -> &'static str {
        self.rule.map_or("invalid-syntax", Rule::code)
    }

    /// The message with its help, on one line, for formats that carry one string.
    pub fn long_message(&self) -> String {
        let mut text = one_line(&self.message).into_owned();
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

/// `unsafe_fixes`: whether `--fix` would apply unsafe fixes too; `[*]` marks only the findings
/// `--fix` would fix, as Ruff's does.
pub fn render(
    out: &mut dyn Write,
    format: OutputFormat,
    findings: &[Finding],
    color: ColorChoice,
    unsafe_fixes: bool,
) -> io::Result<()> {
    match format {
        OutputFormat::Full => full::render(out, findings, color),
        OutputFormat::Concise => {
            for finding in findings {
                let start = finding.start();
                let fixable = finding
                    .fix
                    .as_ref()
                    .is_some_and(|fix| unsafe_fixes || fix.applicability == crate::diagnostic::Applicability::Safe);
                let marker = if fixable { " [*]" } else { "" };
                writeln!(
                    out,
                    "{}:{}:{}: {}{marker} {}",
                    finding.path,
                    start.row,
                    start.column,
                    finding.code(),
                    one_line(&finding.message)
                )?;
            }
            Ok(())
        }
        OutputFormat::Json => json::render(out, findings),
        OutputFormat::Github => github::render(out, findings),
        OutputFormat::Sarif => sarif::render(out, findings),
    }
}
