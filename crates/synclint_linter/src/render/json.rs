//! Ruff's JSON output shape, so tools that read `ruff check --output-format json` read ours.

use std::borrow::Cow;
use std::io::{self, Write};

use serde::Serialize;

use super::{Finding, Location};

// Every field borrows from its finding: the report's objects are all made before it is
// written, and would otherwise hold a second copy of every message and edit.
#[derive(Serialize)]
struct JsonEdit<'a> {
    content: &'a str,
    location: Location,
    end_location: Location,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    applicability: &'static str,
    message: Option<&'a str>,
    edits: Vec<JsonEdit<'a>>,
}

/// One finding as Ruff's JSON writes it; `json-lines` writes the same objects.
#[derive(Serialize)]
pub(super) struct JsonFinding<'a> {
    cell: Option<u32>,
    code: Option<&'static str>,
    end_location: Location,
    filename: &'a str,
    fix: Option<JsonFix<'a>>,
    location: Location,
    message: Cow<'a, str>,
    noqa_row: Option<usize>,
    url: Option<String>,
    help: Option<&'a str>,
    note: Option<&'a str>,
}

pub fn render(out: &mut dyn Write, findings: &[Finding]) -> io::Result<()> {
    let rows: Vec<JsonFinding> = findings.iter().map(json_finding).collect();
    serde_json::to_writer_pretty(&mut *out, &rows)?;
    writeln!(out)
}

/// The object `finding` is in Ruff's JSON.
pub(super) fn json_finding(finding: &Finding) -> JsonFinding<'_> {
    let location = finding.start;
    JsonFinding {
        cell: finding.cell,
        code: finding.rule.map(|r| r.code()),
        end_location: finding.end,
        filename: &finding.path,
        fix: finding.fix.as_ref().map(|fix| JsonFix {
            applicability: fix.applicability.as_str(),
            message: finding.fix_title.as_deref(),
            edits: fix
                .edits
                .iter()
                .zip(&finding.edit_locations)
                .map(|(edit, &(location, end_location))| JsonEdit {
                    content: &edit.content,
                    location,
                    end_location,
                })
                .collect(),
        }),
        location,
        // One line, as in every other format: a message quoting multi-line source
        // would otherwise carry its line breaks.
        message: match finding.rule {
            Some(_) => super::one_line(&finding.message),
            None => Cow::Owned(format!("SyntaxError: {}", super::one_line(&finding.message))),
        },
        noqa_row: finding.noqa_row,
        url: finding.rule.map(|r| r.url()),
        help: finding.help.as_deref(),
        note: finding.note.as_deref(),
    }
}
