//! Building blocks for fixes: keyword arguments, imports, the name `torch` is bound to.

use ruff_python_ast::{ExprCall, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::checker::Checker;
use crate::diagnostic::Edit;
use crate::semantic::BindingSource;

/// Adds `text` (e.g. `non_blocking=True`) as the last argument of `call`.
pub(crate) fn add_argument(checker: &Checker, call: &ExprCall, text: &str) -> Edit {
    let close = call.arguments.end() - TextSize::from(1);
    match call.arguments.iter_source_order().last() {
        None => Edit::insert(close, text),
        Some(last) => {
            let between = &checker.source()[TextRange::new(last.end(), close)];
            if between.trim_start().starts_with(',') {
                // `f(a, b,)` / multi-line with a trailing comma: add after the comma.
                let comma = last.end() + TextSize::from(between.find(',').unwrap_or(0) as u32 + 1);
                Edit::insert(comma, format!(" {text},"))
            } else {
                Edit::insert(last.end(), format!(", {text}"))
            }
        }
    }
}

/// Removes the keyword argument `name` from `call`, with its comma.
pub(crate) fn remove_keyword(call: &ExprCall, name: &str) -> Option<Edit> {
    let ordered: Vec<TextRange> = call.arguments.iter_source_order().map(|arg| arg.range()).collect();
    let keyword = call.arguments.find_keyword(name)?;
    let index = ordered.iter().position(|range| *range == keyword.range())?;
    let range = if index > 0 {
        TextRange::new(ordered[index - 1].end(), keyword.end())
    } else if let Some(next) = ordered.get(1) {
        TextRange::new(keyword.start(), next.start())
    } else {
        keyword.range()
    };
    Some(Edit::delete(range))
}

/// The name `torch` is bound to here (`torch`, `th`), and an edit adding `import torch` to the
/// file's import block when nothing binds it.
pub(crate) fn torch_name(checker: &Checker) -> (String, Option<Edit>) {
    for name in ["torch", "th", "pt", "T"] {
        if let Some(binding) = checker.model().lookup(name) {
            if binding.source == BindingSource::Import("torch".into()) {
                return (name.to_string(), None);
            }
        }
    }
    if checker.model().lookup("torch").is_some() {
        // `torch` is shadowed by something else: no safe way to spell it.
        return ("torch".to_string(), None);
    }
    ("torch".to_string(), Some(import_edit(checker, "import torch")))
}

/// Inserts `statement` at the top of the file's import block (after a docstring and
/// `from __future__` imports), with the file's line ending.
pub(crate) fn import_edit(checker: &Checker, statement: &str) -> Edit {
    let source = checker.source();
    let newline = if source.contains("\r\n") { "\r\n" } else { "\n" };
    let body = checker.module_body();
    let mut position = TextSize::from(0);
    for (index, stmt) in body.iter().enumerate() {
        let is_docstring = index == 0
            && matches!(stmt, Stmt::Expr(expr) if expr.value.is_string_literal_expr());
        let is_future = matches!(stmt, Stmt::ImportFrom(import)
            if import.module.as_ref().is_some_and(|m| m.id.as_str() == "__future__"));
        if is_docstring || is_future {
            position = line_end_after(source, stmt.end());
            continue;
        }
        if matches!(stmt, Stmt::Import(_) | Stmt::ImportFrom(_)) {
            position = line_start(source, stmt.start());
        }
        break;
    }
    if position == TextSize::from(0) {
        // Keep a byte-order mark first.
        position = TextSize::from(if source.starts_with('\u{feff}') { 3 } else { 0 });
    }
    Edit::insert(position, format!("{statement}{newline}"))
}

fn line_start(source: &str, offset: TextSize) -> TextSize {
    let before = &source[..offset.to_usize()];
    TextSize::from(before.rfind('\n').map_or(0, |i| i + 1) as u32)
}

fn line_end_after(source: &str, offset: TextSize) -> TextSize {
    let after = &source[offset.to_usize()..];
    TextSize::from((offset.to_usize() + after.find('\n').map_or(after.len(), |i| i + 1)) as u32)
}
