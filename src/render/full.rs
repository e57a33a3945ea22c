//! The default output: each finding with its source, an underline, the rewrite and why the line
//! is hot (codespan-reporting).

use std::io::{self, IsTerminal};
use std::ops::Range;

use codespan_reporting::diagnostic::{Diagnostic, Label, Severity};
use codespan_reporting::files::{self, Files};
use codespan_reporting::term::termcolor::{Ansi, NoColor, WriteColor};
use codespan_reporting::term::{self, Config};
use ruff_source_file::{LineIndex, OneIndexed};
use ruff_text_size::TextSize;

use super::{Excerpt, Finding, one_line};
use crate::diagnostic::Applicability;

/// A finding's lines as codespan sees them, through ruff's line index so that rows and columns
/// agree with the other formats: a line ends at `\n`, `\r\n` or a lone `\r` (codespan's own
/// index knows only `\n`), and a byte-order mark is not a column of line 1. Offsets are the
/// excerpt's; line numbers are the file's.
struct SourceFile<'a> {
    name: &'a str,
    excerpt: &'a Excerpt,
    index: LineIndex,
}

impl<'a> Files<'a> for SourceFile<'a> {
    type FileId = ();
    type Name = &'a str;
    type Source = &'a str;

    fn name(&'a self, (): ()) -> Result<&'a str, files::Error> {
        Ok(self.name)
    }

    fn source(&'a self, (): ()) -> Result<&'a str, files::Error> {
        Ok(&self.excerpt.text)
    }

    fn line_index(&'a self, (): (), byte_index: usize) -> Result<usize, files::Error> {
        let offset = byte_index.min(self.excerpt.text.len());
        let offset = TextSize::try_from(offset).map_err(|_| files::Error::IndexTooLarge {
            given: byte_index,
            max: self.excerpt.text.len(),
        })?;
        Ok(self.index.line_index(offset).to_zero_indexed())
    }

    fn line_number(&'a self, (): (), line_index: usize) -> Result<usize, files::Error> {
        Ok(self.excerpt.first_row + line_index)
    }

    fn line_range(&'a self, (): (), line_index: usize) -> Result<Range<usize>, files::Error> {
        let lines = self.index.line_count();
        if line_index >= lines {
            return Err(files::Error::LineTooLarge {
                given: line_index,
                max: lines - 1,
            });
        }
        let text = &self.excerpt.text;
        let range = self.index.line_range(OneIndexed::from_zero_indexed(line_index), text);
        let file_start = line_index == 0 && self.excerpt.base == TextSize::default();
        let bom = if file_start && text.starts_with('\u{feff}') {
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
        for finding in findings {
            let excerpt = &finding.excerpt;
            // A notebook's rows count within a cell: `train.ipynb:cell 3:2:9`.
            let name = match finding.cell {
                Some(cell) => format!("{}:cell {cell}", finding.path),
                None => finding.path.clone(),
            };
            let file = SourceFile {
                name: &name,
                excerpt,
                index: LineIndex::from_source_text(&excerpt.text),
            };
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
                .with_labels(vec![Label::primary(
                    (),
                    Range::<usize>::from(finding.range - excerpt.base),
                )])
                .with_notes(notes);
            term::emit(&mut *writer, &config, &file, &diagnostic).map_err(io::Error::other)?;
        }
    }
    Ok(())
}
