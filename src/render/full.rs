//! The default output: each finding with its source, an underline, the rewrite and why the line
//! is hot (codespan-reporting).

use std::io::{self, IsTerminal, Write};

use codespan_reporting::diagnostic::{Diagnostic, Label, Severity};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::termcolor::{Ansi, NoColor, WriteColor};
use codespan_reporting::term::{self, Config};

use super::Finding;
use crate::diagnostic::Applicability;

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
            ColorChoice::Auto => {
                io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
        }
    }
}

pub fn render(
    out: &mut dyn Write,
    findings: &[Finding],
    color: ColorChoice,
    show_fix_availability: bool,
) -> io::Result<()> {
    let config = Config::default();
    let mut buffer = Vec::new();
    {
        let mut writer: Box<dyn WriteColor> = if color.enabled() {
            Box::new(Ansi::new(&mut buffer))
        } else {
            Box::new(NoColor::new(&mut buffer))
        };
        for finding in findings {
            let file = SimpleFile::new(finding.path.as_str(), &*finding.source.text);
            let severity = if finding.rule.is_some() {
                Severity::Warning
            } else {
                Severity::Error
            };
            let mut notes = Vec::new();
            if let Some(help) = &finding.help {
                notes.push(format!("help: {help}"));
            }
            if let Some(note) = &finding.note {
                notes.push(format!("note: {note}"));
            }
            if let (true, Some(fix), Some(title)) =
                (show_fix_availability, &finding.fix, &finding.fix_title)
            {
                let how = match fix.applicability {
                    Applicability::Safe => "fix available with `--fix`",
                    Applicability::Unsafe => "unsafe fix available with `--fix --unsafe-fixes`",
                };
                notes.push(format!("fix: {title} ({how})"));
            }
            let diagnostic = Diagnostic::new(severity)
                .with_code(finding.code())
                .with_message(&finding.message)
                .with_labels(vec![Label::primary(
                    (),
                    finding.range.start().to_usize()..finding.range.end().to_usize(),
                )])
                .with_notes(notes);
            term::emit(&mut *writer, &config, &file, &diagnostic).map_err(io::Error::other)?;
        }
    }
    out.write_all(&buffer)
}
