//! reviewdog's Diagnostic JSON (rdjson), which reviewdog posts as review comments, with a fix's
//! edits as suggested changes.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::{Finding, Location};

pub fn render(out: &mut dyn Write, findings: &[Finding]) -> io::Result<()> {
    let mut source = json!({ "name": "synclint" });
    // Cargo sets this to "" when Cargo.toml names no repository.
    let repository = env!("CARGO_PKG_REPOSITORY");
    if !repository.is_empty() {
        source["url"] = json!(repository);
    }
    let diagnostics: Vec<Value> = findings.iter().map(diagnostic).collect();
    let report = json!({
        "source": source,
        "severity": "WARNING",
        "diagnostics": diagnostics,
    });
    serde_json::to_writer_pretty(&mut *out, &report)?;
    writeln!(out)
}

fn diagnostic(finding: &Finding) -> Value {
    let mut code = json!({ "value": finding.code() });
    if let Some(rule) = finding.rule {
        code["url"] = json!(rule.url());
    }
    let mut diagnostic = json!({
        "message": finding.long_message(),
        "location": {
            "path": finding.path,
            "range": range(finding.start, finding.end),
        },
        "code": code,
    });
    if finding.rule.is_none() {
        // The report's WARNING is for the rules; a file that does not parse is an error, as in
        // `github` and `sarif`.
        diagnostic["severity"] = json!("ERROR");
    }
    if let Some(fix) = &finding.fix {
        let suggestions: Vec<Value> = fix
            .edits
            .iter()
            .zip(&finding.edit_locations)
            .map(|(edit, &(start, end))| json!({ "range": range(start, end), "text": edit.content }))
            .collect();
        diagnostic["suggestions"] = json!(suggestions);
    }
    diagnostic
}

fn range(start: Location, end: Location) -> Value {
    json!({
        "start": { "line": start.row, "column": start.column },
        "end": { "line": end.row, "column": end.column },
    })
}
