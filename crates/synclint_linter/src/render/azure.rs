//! Azure Pipelines logging commands: one `##vso[task.logissue]` per finding, which the pipeline
//! shows on the run's summary with its file and line.

use std::borrow::Cow;
use std::io::{self, Write};

use super::Finding;

/// Escapes a command's message as the Azure Pipelines agent unescapes it: a line break would
/// end the command, and `%` starts an escape (replaced first, so no escape is escaped again).
fn escape_data(text: &str) -> Cow<'_, str> {
    if !text.contains(['%', '\r', '\n']) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.replace('%', "%AZP25").replace('\r', "%0D").replace('\n', "%0A"))
}

/// Escapes a property value: also `;`, which ends a property, and `]`, which ends them all.
fn escape_property(text: &str) -> Cow<'_, str> {
    let data = escape_data(text);
    if !data.contains([';', ']']) {
        return data;
    }
    Cow::Owned(data.replace(';', "%3B").replace(']', "%5D"))
}

pub fn render(out: &mut dyn Write, findings: &[Finding]) -> io::Result<()> {
    for finding in findings {
        writeln!(
            out,
            "##vso[task.logissue type=error;sourcepath={};linenumber={};columnnumber={};code={};]{}",
            escape_property(&finding.path),
            finding.start.row,
            finding.start.column,
            escape_property(finding.code()),
            escape_data(&finding.long_message()),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{escape_data, escape_property};

    #[test]
    fn escapes() {
        let text = "50% a;b]c\r\nd";
        assert_eq!(escape_data(text), "50%AZP25 a;b]c%0D%0Ad");
        assert_eq!(escape_property(text), "50%AZP25 a%3Bb%5Dc%0D%0Ad");
        assert_eq!(escape_property("pkg/train.py"), "pkg/train.py");
    }
}
