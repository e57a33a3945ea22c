//! Each file's path on a line of its own, then its findings under it as `row:col CODE message`,
//! with the rows right-aligned and the columns padded so that the codes line up, as Ruff's
//! `grouped` does; a blank line ends each file.

use std::io::{self, Write};

use super::{Finding, fix_marker, one_line};

/// One file's `findings`.
pub fn render(out: &mut Vec<u8>, findings: &[Finding], unsafe_fixes: bool) -> io::Result<()> {
    let Some(first) = findings.first() else {
        return Ok(());
    };
    let digits = |n: usize| n.max(1).ilog10() as usize + 1;
    let row_width = findings.iter().map(|f| digits(f.start.row)).max().unwrap_or(1);
    let column_width = findings.iter().map(|f| digits(f.start.column)).max().unwrap_or(1);
    writeln!(out, "{}:", first.path)?;
    for finding in findings {
        // A notebook's rows count within a cell.
        let cell = finding.cell.map(|cell| format!("cell {cell}:")).unwrap_or_default();
        writeln!(
            out,
            "  {cell}{:>row_width$}:{:<column_width$} {}{} {}",
            finding.start.row,
            finding.start.column,
            finding.code(),
            fix_marker(finding, unsafe_fixes),
            one_line(&finding.message)
        )?;
    }
    writeln!(out)
}
