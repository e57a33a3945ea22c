//! The source a miette report shows: the lines around its label, long ones cut to a
//! [`Window`]. miette prints every column of the lines it is given, and cannot print a column
//! past 65,535 at all (formatting its underline panics): a syntax error at the end of a 72 KB
//! line would print all of it, or abort the run. Syntax errors and config errors are reported
//! through here.

use std::ops::Range;

use miette::{MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents};
use ruff_source_file::{LineIndex, OneIndexed};
use ruff_text_size::TextSize;

use super::window::{ELLIPSIS, Window};

/// Lines kept before and after a label's: one more than miette shows, so that what it reads
/// of them never reaches the ends of what it is given where the text goes on.
const CONTEXT_ROWS: usize = 2;
/// The most rows of a label shown.
const LABEL_ROWS: usize = 4;

/// A text that reports point into, named as they name it and indexed once for all of them.
pub(crate) struct ReportText<'a> {
    name: String,
    text: &'a str,
    index: LineIndex,
}

impl<'a> ReportText<'a> {
    pub fn new(name: String, text: &'a str) -> Self {
        ReportText {
            name,
            index: LineIndex::from_source_text(text),
            text,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The source of a report whose label covers `span` of the text, and the label's span in
    /// it. A span past the text is taken at its end.
    pub fn around(&self, span: Range<usize>) -> (WindowedSource, Range<usize>) {
        let start = span.start.min(self.text.len());
        let row = |offset: usize| {
            let offset = TextSize::try_from(offset).unwrap_or(TextSize::new(u32::MAX));
            self.index.line_index(offset).to_zero_indexed()
        };
        // A label over many rows (an unclosed string runs to the end of the file) is shown by its
        // first ones: miette would print every row it covers.
        let last_label_row = OneIndexed::from_zero_indexed(row(start) + LABEL_ROWS - 1);
        let label_rows_end = if last_label_row.to_zero_indexed() < self.index.line_count() {
            usize::from(self.index.line_end(last_label_row, self.text))
        } else {
            self.text.len()
        };
        let end = span.end.clamp(start, self.text.len()).min(label_rows_end.max(start));
        let first_row = row(start).saturating_sub(CONTEXT_ROWS);
        let last_row = (row(end) + CONTEXT_ROWS).min(self.index.line_count() - 1);
        let lines = (first_row..=last_row)
            .map(|row| Range::<usize>::from(self.index.line_range(OneIndexed::from_zero_indexed(row), self.text)));
        let window = Window::new(self.text, lines, start);
        let focus_row = row(start) - first_row;
        let cut = window
            .lines()
            .get(focus_row)
            .filter(|line| line.cut_before())
            .map(|line| CutRow {
                row: focus_row,
                shown_from: line.kept.start - line.line.start,
            });
        let span = window.offset(start)..window.offset(end);
        let source = WindowedSource {
            name: self.name.clone(),
            text: window.text().to_string(),
            first_row,
            cut,
        };
        (source, span)
    }
}

/// The lines of a text around a report's label, as miette reads them: rows and columns are
/// the text's.
#[derive(Debug)]
pub(crate) struct WindowedSource {
    name: String,
    text: String,
    /// The 0-based row of the text its first line is.
    first_row: usize,
    /// The label's row, where its line is cut before the part shown.
    cut: Option<CutRow>,
}

#[derive(Debug)]
struct CutRow {
    /// The 0-based row in the window.
    row: usize,
    /// The byte column of the line that the part shown starts at (miette counts bytes).
    shown_from: usize,
}

impl SourceCode for WindowedSource {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let contents = self.text.read_span(span, context_lines_before, context_lines_after)?;
        let (line, column) = (contents.line(), contents.column());
        // A column inside the cut line's ellipsis is none of the line's: miette gives column 0
        // where it reads from a context line's start.
        let column = match &self.cut {
            Some(cut) if cut.row == line && column >= ELLIPSIS.len() => column - ELLIPSIS.len() + cut.shown_from,
            _ => column,
        };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            contents.data(),
            *contents.span(),
            self.first_row + line,
            column,
            contents.line_count(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use miette::{LabeledSpan, miette};

    fn report(name: &str, text: &str, span: Range<usize>) -> String {
        let (source, span) = ReportText::new(name.to_string(), text).around(span);
        let report = miette!(labels = vec![LabeledSpan::at(span, "here")], "bad").with_source_code(source);
        let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor());
        let mut out = String::new();
        handler.render_report(&mut out, report.as_ref()).unwrap();
        out
    }

    fn plain(name: &str, text: &str, span: Range<usize>) -> String {
        let report = miette!(labels = vec![LabeledSpan::at(span, "here")], "bad")
            .with_source_code(miette::NamedSource::new(name, text.to_string()));
        let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor());
        let mut out = String::new();
        handler.render_report(&mut out, report.as_ref()).unwrap();
        out
    }

    /// Where no line is long, the report is the one miette makes of the whole text.
    #[test]
    fn short_lines_report_as_the_whole_text_does() {
        let texts = [
            "a = 1\nb = 2\nc = )\nd = 4\ne = 5\nf = 6\n",
            "c = )\n",
            "a = 1\r\nb = (\r\nc = )\r\nd = 4\r\n",
            "x = '''abc\ndef\nghi\njkl\n",
            "\u{feff}x = )\n",
            "s = 'é日本'; x = )",
        ];
        for text in texts {
            for start in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                for end in [
                    start,
                    (start + 1..=text.len())
                        .find(|&i| text.is_char_boundary(i))
                        .unwrap_or(start),
                ] {
                    assert_eq!(
                        report("f.py", text, start..end),
                        plain("f.py", text, start..end),
                        "{text:?} at {start}..{end}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_label_past_column_65535_is_reported_in_a_window() {
        let line = format!("x = {}a )", "a+".repeat(40_000));
        let text = format!("import torch\n{line}\ny = 1\n");
        let at = text.find(" )").unwrap() + 1;
        let out = report("f.py", &text, at..at + 1);
        assert!(
            out.contains(&format!("[f.py:2:{}]", at - "import torch\n".len() + 1)),
            "{out}"
        );
        assert!(out.contains("│ …+a+a+a"), "{out}");
        assert!(out.len() < 2_000, "{} bytes", out.len());
    }

    /// An unclosed string's label runs to the end of the file: its first rows are shown.
    #[test]
    fn a_label_over_many_rows_shows_its_first() {
        let text = format!("x = \"\"\"\n{}", "line\n".repeat(100_000));
        let out = report("f.py", &text, 4..text.len());
        assert!(out.contains("[f.py:1:5]"), "{out}");
        assert!(out.lines().count() < 16, "{out}");
        // Within the limit, all of it.
        let text = "x = (\n1,\n2)\n";
        assert_eq!(
            report("f.py", text, 4..text.len() - 1),
            plain("f.py", text, 4..text.len() - 1)
        );
    }
}
