//! GitLab Code Quality: a JSON array of issues, which merge requests show in their widget and
//! diff. GitLab tells a new issue from a fixed or an old one by its fingerprint alone, so the
//! fingerprint leaves out where the finding is: code moved up or down keeps its fingerprints.

use std::io::{self, Write};

use rustc_hash::FxHashMap;
use serde_json::{Value, json};
use xxhash_rust::xxh3::{Xxh3Default, xxh3_64};

use super::Finding;

pub fn render(out: &mut dyn Write, findings: &[Finding]) -> io::Result<()> {
    // How many findings with each identity came before: identical findings in one file (the
    // same call twice) are told apart by their order, which moving code keeps.
    let mut seen: FxHashMap<u64, u64> = FxHashMap::default();
    let issues: Vec<Value> = findings
        .iter()
        .map(|finding| {
            let identity = identity(finding);
            let occurrence = seen.entry(identity).or_default();
            let fingerprint = xxh3_64(&[identity.to_le_bytes(), occurrence.to_le_bytes()].concat());
            *occurrence += 1;
            let (start, end) = (finding.start, finding.end);
            json!({
                "check_name": finding.code(),
                "description": format!("{}: {}", finding.code(), finding.long_message()),
                "severity": "major",
                "fingerprint": format!("{fingerprint:016x}"),
                "location": {
                    "path": finding.path,
                    "positions": {
                        "begin": { "line": start.row, "column": start.column },
                        "end": { "line": end.row, "column": end.column },
                    },
                },
            })
        })
        .collect();
    serde_json::to_writer_pretty(&mut *out, &issues)?;
    writeln!(out)
}

/// A hash of what a finding is, apart from where it is: its file, code and message and the
/// source it flags. The note is left out, as it names lines ("the loop at train.py:10").
fn identity(finding: &Finding) -> u64 {
    let flagged = &finding.excerpt.text[finding.range - finding.excerpt.base];
    let mut hasher = Xxh3Default::new();
    for part in [finding.path.as_str(), finding.code(), &finding.message, flagged] {
        // Each part's length first, so that no two lists of parts hash the same bytes.
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.digest()
}
