//! GitHub Actions workflow commands: one `::warning` annotation per finding.

use std::io::{self, Write};

use super::Finding;

/// Escapes a workflow-command message (`%`, CR, LF).
fn escape_data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a workflow-command property value (also `:` and `,`).
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

pub fn render(out: &mut dyn Write, findings: &[Finding]) -> io::Result<()> {
    for finding in findings {
        let (start, end) = (finding.start, finding.end);
        let level = if finding.rule.is_some() { "warning" } else { "error" };
        writeln!(
            out,
            "::{level} title={},file={},line={},col={},endLine={},endColumn={}::{}",
            escape_property(&format!("synclint ({})", finding.code())),
            escape_property(&finding.path),
            start.row,
            start.column,
            end.row,
            end.column,
            escape_data(&format!("{} {}", finding.code(), finding.long_message())),
        )?;
    }
    Ok(())
}
