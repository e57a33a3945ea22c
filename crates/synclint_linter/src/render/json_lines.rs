//! JSON Lines: each finding as the object `json` writes for it, one per line, so that a reader
//! can stream a large report instead of parsing one array.

use std::io::{self, Write};

use super::Finding;
use super::json::json_finding;

pub fn render(out: &mut dyn Write, findings: &[Finding]) -> io::Result<()> {
    for finding in findings {
        // Compact, never pretty: a line is an object.
        serde_json::to_writer(&mut *out, &json_finding(finding))?;
        writeln!(out)?;
    }
    Ok(())
}
