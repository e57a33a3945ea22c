//! The default output: each finding with its source, an underline, the rewrite and why the line
//! is hot (codespan-reporting).

use std::io::{self, IsTerminal};
use std::ops::Range;
use std::sync::Arc;

use codespan_reporting::diagnostic::{Diagnostic, Label, Severity};
use codespan_reporting::files::{self, Files};
use codespan_reporting::term::termcolor::{Ansi, NoColor, WriteColor};
use codespan_reporting::term::{self, Config};
use ruff_source_file::{LineIndex, OneIndexed};
use ruff_text_size::TextSize;

use super::window::Window;
use super::{Finding, one_line};
use crate::diagnostic::Applicability;

/// A finding's lines as codespan sees them, through ruff's line index so that rows and columns
/// agree with the other formats: a line ends at `\n`, `\r\n` or a lone `\r` (codespan's own
/// index knows only `\n`), and a byte-order mark is not a column of line 1. Long lines are cut
/// to a [`Window`] around the finding; offsets are the window's, line numbers and columns the
/// file's.
struct SourceFile<'a> {
    name: &'a str,
    window: Window<'a>,
    index: LineIndex,
    first_row: usize,
    /// Whether the window starts where the file does (a byte-order mark there is no column).
    file_start: bool,
    /// Where the first line is cut before its part shown, the column that part starts at.
    first_column: Option<usize>,
}

impl<'a> SourceFile<'a> {
    /// The lines `finding` touches, windowed around it; `index` is that of its excerpt's text.
    fn new(name: &'a str, finding: &'a Finding, index: &LineIndex) -> Self {
        let excerpt = &finding.excerpt;
        let text = &*excerpt.text;
        let range = finding.range - excerpt.base;
        let rows = index.line_index(range.start()).to_zero_indexed()..=index.line_index(range.end()).to_zero_indexed();
        let lines = rows.map(|row| Range::<usize>::from(index.line_range(OneIndexed::from_zero_indexed(row), text)));
        let window = Window::new(text, lines, range.start().to_usize());
        let first = window.lines().first();
        let first_column = first.filter(|line| line.cut_before()).map(|line| {
            let before_finding = text[line.kept.start..range.start().to_usize()].chars().count();
            finding.start.column.saturating_sub(before_finding)
        });
        let file_start = first.is_some_and(|line| excerpt.base.to_usize() + line.line.start == 0);
        SourceFile {
            name,
            index: LineIndex::from_source_text(window.text()),
            window,
            first_row: finding.start.row,
            file_start,
            first_column,
        }
    }

    /// The finding's range in the window.
    fn label(&self, finding: &Finding) -> Range<usize> {
        let range = finding.range - finding.excerpt.base;
        self.window.offset(range.start().to_usize())..self.window.offset(range.end().to_usize())
    }
}

impl<'a> Files<'a> for SourceFile<'a> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, (): ()) -> Result<&'a str, files::Error> {
        Ok(self.name)
    }

    fn source(&'a self, (): ()) -> Result<&'a str, files::Error> {
        Ok(self.window.text())
    }

    fn line_index(&'a self, (): (), byte_index: usize) -> Result<usize, files::Error> {
        let text = self.window.text();
        let offset = byte_index.min(text.len());
        let offset = TextSize::try_from(offset).map_err(|_| files::Error::IndexTooLarge {
            given: byte_index,
            max: text.len(),
        })?;
        Ok(self.index.line_index(offset).to_zero_indexed())
    }

    fn line_number(&'a self, (): (), line_index: usize) -> Result<usize, files::Error> {
        Ok(self.first_row + line_index)
    }

    fn column_number(&'a self, (): (), line_index: usize, byte_index: usize) -> Result<usize, files::Error> {
        let text = self.window.text();
        let line = self.line_range((), line_index)?;
        match (line_index, self.first_column, self.window.lines().first()) {
            (0, Some(column), Some(first)) => Ok(column + files::column_index(text, first.at..line.end, byte_index)),
            _ => Ok(files::column_index(text, line, byte_index) + 1),
        }
    }

    fn line_range(&'a self, (): (), line_index: usize) -> Result<Range<usize>, files::Error> {
        let lines = self.index.line_count();
        if line_index >= lines {
            return Err(files::Error::LineTooLarge {
                given: line_index,
                max: lines - 1,
            });
        }
        let text = self.window.text();
        let range = self.index.line_range(OneIndexed::from_zero_indexed(line_index), text);
        let bom = if line_index == 0 && self.file_start && text.starts_with('\u{feff}') {
            '\u{feff}'.len_utf8()
        } else {
            0
        };
        Ok(range.start().to_usize() + bom..range.end().to_usize())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Color on a terminal unless `NO_COLOR` is set (or `always`/`never` say otherwise).
    pub fn enabled(self) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }
}

pub fn render(out: &mut Vec<u8>, findings: &[Finding], color: bool) -> io::Result<()> {
    let config = Config::default();
    {
        let mut writer: Box<dyn WriteColor> = if color {
            Box::new(Ansi::new(&mut *out))
        } else {
            Box::new(NoColor::new(&mut *out))
        };
        // Findings on the same lines share their excerpt's text: it is indexed once for them.
        let mut indexed: Option<(&Arc<str>, LineIndex)> = None;
        for finding in findings {
            let text = &finding.excerpt.text;
            if indexed.as_ref().is_some_and(|(last, _)| !Arc::ptr_eq(last, text)) {
                indexed = None;
            }
            let (_, index) = indexed.get_or_insert_with(|| (text, LineIndex::from_source_text(text)));
            // A notebook's rows count within a cell: `train.ipynb:cell 3:2:9`.
            let name = match finding.cell {
                Some(cell) => format!("{}:cell {cell}", finding.path),
                None => finding.path.clone(),
            };
            let file = SourceFile::new(&name, finding, index);
            let severity = if finding.rule.is_some() {
                Severity::Warning
            } else {
                Severity::Error
            };
            let mut notes = Vec::new();
            if let Some(help) = &finding.help {
                notes.push(format!("help: {}", one_line(help)));
            }
            if let Some(note) = &finding.note {
                notes.push(format!("note: {note}"));
            }
            if let (Some(fix), Some(title)) = (&finding.fix, &finding.fix_title) {
                let how = match fix.applicability {
                    Applicability::Safe => "fix available with `--fix`",
                    Applicability::Unsafe => "unsafe fix available with `--fix --unsafe-fixes`",
                };
                notes.push(format!("fix: {title} ({how})"));
            }
            let diagnostic = Diagnostic::new(severity)
                .with_code(finding.code())
                .with_message(one_line(&finding.message))
                .with_labels(vec![Label::primary((), file.label(finding))])
                .with_notes(notes);
            term::emit(&mut *writer, &config, &file, &diagnostic).map_err(io::Error::other)?;
        }
    }
    Ok(())
}
