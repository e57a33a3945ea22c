//! SARIF 2.1.0, for GitHub code scanning.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::Finding;
use crate::registry::Rule;

pub fn render(out: &mut dyn Write, findings: &[Finding]) -> io::Result<()> {
    let rules: Vec<Value> = Rule::ALL
        .iter()
        .map(|rule| {
            json!({
                "id": rule.code(),
                "name": rule.name(),
                "shortDescription": { "text": rule.summary() },
                "fullDescription": { "text": rule.summary() },
                "help": { "text": rule.summary(), "markdown": rule.doc() },
                "helpUri": rule.url(),
                "defaultConfiguration": { "level": "warning" },
                "properties": { "tags": ["performance", "cuda"] },
            })
        })
        .collect();
    let results: Vec<Value> = findings
        .iter()
        .map(|finding| {
            let (start, end) = (finding.start, finding.end);
            let mut result = json!({
                "ruleId": finding.code(),
                "level": if finding.rule.is_some() { "warning" } else { "error" },
                "message": { "text": finding.long_message() },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": finding.path },
                        "region": {
                            "startLine": start.row,
                            "startColumn": start.column,
                            "endLine": end.row,
                            "endColumn": end.column,
                        }
                    }
                }],
            });
            if let Some(index) = finding.rule.and_then(|rule| Rule::ALL.iter().position(|r| *r == rule)) {
                result["ruleIndex"] = json!(index);
            }
            result
        })
        .collect();
    let sarif = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "synclint",
                    "version": env!("CARGO_PKG_VERSION"),
                    "informationUri": "https://github.com/synclint/synclint",
                    "rules": rules,
                }
            },
            "results": results,
        }]
    });
    serde_json::to_writer_pretty(&mut *out, &sarif)?;
    writeln!(out)
}
