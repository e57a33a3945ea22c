//! Findings as LSP diagnostics: a rule's finding is a warning with its code, a link to the
//! rule's doc, the message with its help, and why its line is hot as related information; a
//! syntax error is an error.

use std::path::Path;
use std::str::FromStr;

use lsp_types::{
    CodeDescription, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Position,
    Range, Uri,
};

use super::analysis::Report;
use super::documents::Document;
use super::uri;
use crate::render::Finding;
use crate::semantic::FileSummary;

pub const SOURCE: &str = "synclint";

/// The diagnostics of `report`, the check of `document` (at `document_uri`); paths in notes are
/// relative to `root`.
pub fn diagnostics(report: &Report, document: &Document, document_uri: &Uri, root: &Path) -> Vec<Diagnostic> {
    report
        .findings
        .iter()
        .map(|finding| diagnostic(finding, report, document, document_uri, root))
        .collect()
}

pub fn diagnostic(
    finding: &Finding,
    report: &Report,
    document: &Document,
    document_uri: &Uri,
    root: &Path,
) -> Diagnostic {
    let range = document.range(finding.range);
    let Some(rule) = finding.rule else {
        return Diagnostic {
            range,
            severity: Some(DiagnosticSeverity::ERROR),
            source: Some(SOURCE.to_string()),
            message: format!("SyntaxError: {}", finding.message),
            ..Diagnostic::default()
        };
    };
    let message = match &finding.help {
        Some(help) => format!("{}\n{help}", finding.message),
        None => finding.message.clone(),
    };
    let related = finding.note.as_ref().map(|note| {
        let location = note_location(note, report, document_uri, root).unwrap_or_else(|| Location {
            uri: document_uri.clone(),
            range,
        });
        vec![DiagnosticRelatedInformation {
            location,
            message: note.clone(),
        }]
    });
    Diagnostic {
        range,
        severity: Some(DiagnosticSeverity::WARNING),
        code: Some(NumberOrString::String(rule.code().to_string())),
        code_description: Uri::from_str(&rule.url()).ok().map(|href| CodeDescription { href }),
        source: Some(SOURCE.to_string()),
        message,
        related_information: related,
        ..Diagnostic::default()
    }
}

/// Where a hot note's chain starts: the first place the note names (the loop, or the function
/// hot by itself, that the chain starts from: `hot: inside the loop at train.py:12`), with the
/// path shown relative to the folder checked; a function hot by itself in this file is named
/// as `` hot: `Net.forward`: ... ``, and its line is the file's to tell. A chain that starts in a
/// notebook's cell has no place in a text document.
fn note_location(note: &str, report: &Report, document_uri: &Uri, root: &Path) -> Option<Location> {
    let at_line = |uri: Uri, line: u32| Location {
        uri,
        range: Range::new(Position::new(line - 1, 0), Position::new(line - 1, 0)),
    };
    if let Some(place) = FileSummary::places_in_note(note).next() {
        if place.cell.is_some() {
            return None;
        }
        let path = root.join(place.path);
        let uri = if report.path() == path {
            document_uri.clone()
        } else {
            uri::from_path(&path)?
        };
        return Some(at_line(uri, place.row));
    }
    let name = note.strip_prefix("hot: `")?.split('`').next()?;
    let line = report.function_line(name)?;
    Some(at_line(document_uri.clone(), line))
}
