//! Code actions: each finding's fix, a `# noqa` for it, and every fix `synclint check --fix`
//! would apply to the file at once (`source.fixAll.synclint`, for fix-on-save).

use std::collections::HashMap;
use std::path::Path;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, Diagnostic, TextEdit, Uri, WorkspaceEdit,
};
use ruff_text_size::{TextRange, TextSize};

use super::analysis::{Report, fix_minimum};
use super::diagnostics::diagnostic;
use super::documents::Document;
use crate::add_noqa::directives;
use crate::diagnostic::Applicability;
use crate::parse::SourceKind;

/// The kind of the action that applies every fix.
pub const FIX_ALL: &str = "source.fixAll.synclint";

/// The actions for `params`, on `document` checked as `report`; `problems` gets what went
/// wrong computing them (a fix that does not converge).
pub fn code_actions(
    params: &CodeActionParams,
    report: &Report,
    document: &Document,
    root: &Path,
    problems: &mut Vec<String>,
) -> Vec<CodeActionOrCommand> {
    let uri = &params.text_document.uri;
    let wanted = |kind: &CodeActionKind| {
        params.context.only.as_ref().is_none_or(|only| {
            only.iter().any(|asked| {
                kind.as_str() == asked.as_str() || kind.as_str().starts_with(&format!("{}.", asked.as_str()))
            })
        })
    };
    let mut actions = Vec::new();
    if wanted(&CodeActionKind::QUICKFIX) {
        let range = document.text_range(params.range);
        for finding in &report.findings {
            let Some(rule) = finding.rule else { continue };
            if finding.range.intersect(range).is_none() {
                continue;
            }
            let diagnostics = vec![diagnostic(finding, report, document, uri, root)];
            if let Some(fix) = &finding.fix {
                let safety = fix.applicability.as_str();
                let title = match &finding.fix_title {
                    Some(title) => format!("{title} ({safety})"),
                    None => format!("Fix {} ({safety})", rule.code()),
                };
                let edits = fix
                    .edits
                    .iter()
                    .map(|edit| TextEdit::new(document.range(edit.range), edit.content.clone()))
                    .collect();
                actions.push(action(
                    title,
                    CodeActionKind::QUICKFIX,
                    uri,
                    edits,
                    diagnostics.clone(),
                    fix.applicability == Applicability::Safe,
                ));
            }
            let noqa = directives(document.text(), SourceKind::Python, &[(rule, finding.range.start())]);
            if let Some(edits) = noqa {
                let edits = edits
                    .into_iter()
                    .map(|edit| TextEdit::new(document.range(edit.range), edit.content))
                    .collect();
                actions.push(action(
                    format!("Add `# noqa: {}`", rule.code()),
                    CodeActionKind::QUICKFIX,
                    uri,
                    edits,
                    diagnostics,
                    false,
                ));
            }
        }
    }
    let fix_all = CodeActionKind::new(FIX_ALL);
    if wanted(&fix_all) {
        match report.fixed_text() {
            Ok(Some(text)) => {
                let title = match fix_minimum(report.settings()) {
                    Applicability::Safe => "Fix all safe fixes",
                    // `unsafe-fixes = true`: `--fix` applies them too.
                    Applicability::Unsafe => "Fix all fixes, unsafe ones included (unsafe-fixes is on)",
                };
                let edits = vec![replacement(document, &text)];
                actions.push(action(title.to_string(), fix_all, uri, edits, Vec::new(), false));
            }
            Ok(None) => {}
            Err(problem) => problems.push(problem),
        }
    }
    actions
}

fn action(
    title: String,
    kind: CodeActionKind,
    uri: &Uri,
    edits: Vec<TextEdit>,
    diagnostics: Vec<Diagnostic>,
    preferred: bool,
) -> CodeActionOrCommand {
    CodeActionOrCommand::CodeAction(CodeAction {
        title,
        kind: Some(kind),
        diagnostics: (!diagnostics.is_empty()).then_some(diagnostics),
        edit: Some(WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), edits)])),
            ..WorkspaceEdit::default()
        }),
        is_preferred: preferred.then_some(true),
        ..CodeAction::default()
    })
}

/// One edit that turns the document's text into `text`: the span between what they share at
/// the start and at the end (an editor keeps the cursor and folds outside it).
fn replacement(document: &Document, text: &str) -> TextEdit {
    let old = document.text();
    let mut prefix = old.bytes().zip(text.bytes()).take_while(|(a, b)| a == b).count();
    while !old.is_char_boundary(prefix) || !text.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let mut suffix = old[prefix..]
        .bytes()
        .rev()
        .zip(text[prefix..].bytes().rev())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - suffix) || !text.is_char_boundary(text.len() - suffix) {
        suffix -= 1;
    }
    let replaced = TextRange::new(TextSize::new(prefix as u32), TextSize::new((old.len() - suffix) as u32));
    TextEdit::new(document.range(replaced), text[prefix..text.len() - suffix].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies one edit to the document's text.
    fn applied(document: &Document, edit: &TextEdit) -> String {
        let range = document.text_range(edit.range);
        let mut text = document.text().to_string();
        text.replace_range(range.start().to_usize()..range.end().to_usize(), &edit.new_text);
        text
    }

    #[test]
    fn a_replacement_spans_only_what_changed() {
        for (old, new) in [
            ("a = x.item()\nb = 1\n", "a = x\nb = 1\n"),
            ("é = 1\n", "è = 1\n"),
            ("aaa", "aaaa"),
            ("x = 1\n", "x = 1\n"),
            ("", "new\n"),
            ("s = '🙂'\n", "s = '🙃'\n"),
        ] {
            let document = Document::new(old.to_string(), 1);
            let edit = replacement(&document, new);
            assert_eq!(applied(&document, &edit), new, "{old:?} -> {new:?}");
        }
        let document = Document::new("a = x.item()\nb = 1\n".to_string(), 1);
        let edit = replacement(&document, "a = x\nb = 1\n");
        assert_eq!(edit.new_text, "");
        assert_eq!(edit.range.start.line, 0);
        assert_eq!(edit.range.end.line, 0);
    }
}
