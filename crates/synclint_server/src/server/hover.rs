//! Hover: over a finding, the documentation of its rule, as `synclint rule CODE` prints it.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};
use ruff_text_size::TextSize;

use super::analysis::Report;
use super::documents::Document;

/// The docs of the rules whose findings cover `position` (its ends included), each once.
pub fn hover(report: &Report, document: &Document, position: Position) -> Option<Hover> {
    let offset = TextSize::new(document.offset(position) as u32);
    let mut under = report
        .findings
        .iter()
        .filter(|finding| finding.range.contains_inclusive(offset))
        .filter_map(|finding| Some((finding.rule?, finding.range)))
        .peekable();
    let range = document.range(under.peek()?.1);
    let mut rules: Vec<_> = under.map(|(rule, _)| rule).collect();
    rules.sort();
    rules.dedup();
    let docs: Vec<&str> = rules.iter().map(|rule| rule.doc().trim_end()).collect();
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: docs.join("\n\n---\n\n"),
        }),
        range: Some(range),
    })
}
