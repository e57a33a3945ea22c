//! JUnit XML, as Ruff writes it: a test suite per file and a failing test case per finding, so
//! that CI systems that show test reports show the findings; a clean run is one passing test.

use std::io::{self, Write};

use super::xml::escape;
use super::{Finding, by_file};

pub fn render(out: &mut dyn Write, findings: &[Finding]) -> io::Result<()> {
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    if findings.is_empty() {
        // Some CI systems read a report without a test as a broken one.
        writeln!(out, r#"<testsuites name="synclint" tests="1" failures="0" errors="0">"#)?;
        writeln!(
            out,
            r#"    <testsuite name="synclint" tests="1" disabled="0" errors="0" failures="0" package="org.synclint">"#
        )?;
        writeln!(
            out,
            r#"        <testcase name="No errors found" classname="synclint"/>"#
        )?;
        writeln!(out, "    </testsuite>")?;
        return writeln!(out, "</testsuites>");
    }
    let count = findings.len();
    writeln!(
        out,
        r#"<testsuites name="synclint" tests="{count}" failures="{count}" errors="0">"#
    )?;
    for file in by_file(findings) {
        let path = &file[0].path;
        let count = file.len();
        writeln!(
            out,
            r#"    <testsuite name="{}" tests="{count}" disabled="0" errors="0" failures="{count}" package="org.synclint">"#,
            escape(path)
        )?;
        let classname = classname(path);
        for finding in file {
            let (row, column) = (finding.start.row, finding.start.column);
            let message = finding.long_message();
            let message = escape(&message);
            writeln!(
                out,
                r#"        <testcase name="org.synclint.{}" classname="{}" line="{row}" column="{column}">"#,
                finding.code(),
                escape(&classname)
            )?;
            writeln!(
                out,
                r#"            <failure message="{message}">line {row}, col {column}, {message}</failure>"#
            )?;
            writeln!(out, "        </testcase>")?;
        }
        writeln!(out, "    </testsuite>")?;
    }
    writeln!(out, "</testsuites>")
}

/// `pkg/sub/mod.py` as `pkg.sub.mod` (`\` too, Windows' separator): test reports group test
/// cases by the dotted parts of their class name, as Java packages.
fn classname(path: &str) -> String {
    let module = path.strip_suffix(".py").unwrap_or(path);
    module.replace(['/', '\\'], ".")
}
