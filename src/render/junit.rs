//! JUnit XML, as Ruff writes it: a test suite per file and a failing test case per finding, so
//! that CI systems that show test reports show the findings; a clean run is one passing test.

use std::borrow::Cow;
use std::io::{self, Write};

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

/// `text` as XML character data or an attribute value. Tabs and line breaks become character
/// references, because a parser turns them into spaces in an attribute; the other control
/// characters cannot appear in XML 1.0 at all, even as references, so they become U+FFFD.
fn escape(text: &str) -> Cow<'_, str> {
    let special = |c: char| matches!(c, '&' | '<' | '>' | '"' | '\'' | '\t' | '\n' | '\r') || !is_xml_char(c);
    if !text.contains(special) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&apos;"),
            '\t' => escaped.push_str("&#9;"),
            '\n' => escaped.push_str("&#10;"),
            '\r' => escaped.push_str("&#13;"),
            c if is_xml_char(c) => escaped.push(c),
            _ => escaped.push(char::REPLACEMENT_CHARACTER),
        }
    }
    Cow::Owned(escaped)
}

/// XML 1.0's `Char`: what a document may hold. Rust's `char` already excludes surrogates.
fn is_xml_char(c: char) -> bool {
    !matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{fffe}' | '\u{ffff}')
}

#[cfg(test)]
mod tests {
    use super::escape;

    /// Whatever a message or path holds, the XML parses and gives it back (U+FFFD for what
    /// XML cannot hold), as an attribute and as text.
    #[test]
    fn escaped_text_parses_back() {
        let text = "a & b < c > d \"e\" 'f'\tg\nh\ri \u{1}j\u{1f}k\u{fffe} \u{85}é🙂";
        let document = format!(r#"<a b="{0}">{0}</a>"#, escape(text));
        let parsed = roxmltree::Document::parse(&document).unwrap_or_else(|e| panic!("{e}: {document}"));
        let expected = "a & b < c > d \"e\" 'f'\tg\nh\ri \u{fffd}j\u{fffd}k\u{fffd} \u{85}é🙂";
        assert_eq!(parsed.root_element().attribute("b"), Some(expected));
        assert_eq!(parsed.root_element().text(), Some(expected));
        assert!(matches!(escape("plain"), std::borrow::Cow::Borrowed("plain")));
    }
}
