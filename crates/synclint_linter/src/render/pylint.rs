//! pylint's parseable lines, `path:row: [CODE] message`, for the tools and editors that read
//! pylint's output.

use std::io::{self, Write};

use super::Finding;

pub fn render(out: &mut dyn Write, findings: &[Finding]) -> io::Result<()> {
    for finding in findings {
        writeln!(
            out,
            "{}:{}: [{}] {}",
            finding.path,
            finding.start.row,
            finding.code(),
            finding.long_message()
        )?;
    }
    Ok(())
}
