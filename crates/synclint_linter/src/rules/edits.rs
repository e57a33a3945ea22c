//! Building blocks for fixes: keyword arguments, imports, the name `torch` is bound to.

use ruff_python_ast::{Expr, ExprCall, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};

use crate::diagnostic::Edit;
use crate::rules::RuleContext;
use crate::semantic::BindingSource;

/// Adds `text` (e.g. `non_blocking=True`) as the last argument of `call`. `None` where another
/// argument cannot follow the last one (a lone unparenthesized generator: `f(x for x in y)`), or
/// the call is not closed yet (`x.to(d` in code being typed).
pub(crate) fn add_argument(context: &RuleContext, call: &ExprCall, text: &str) -> Option<Edit> {
    add_argument_in(context.source(), call, text)
}

/// [`add_argument`] for a call parsed from `source` (offsets into `source`).
pub(crate) fn add_argument_in(source: &str, call: &ExprCall, text: &str) -> Option<Edit> {
    let close = closing_paren(source, call)?;
    match call.arguments.iter_source_order().last() {
        None => Some(Edit::insert(close, text)),
        Some(_) if matches!(call.arguments.args.first(), Some(Expr::Generator(g)) if !g.parenthesized) => None,
        Some(last) => {
            let between = &source[TextRange::new(last.end(), close)];
            match separator_comma(between) {
                // `f(a, b,)` / multi-line with a trailing comma: add after the comma.
                Some(comma) => Some(Edit::insert(
                    last.end() + TextSize::from(comma as u32 + 1),
                    format!(" {text},"),
                )),
                None => {
                    // After the last argument's closing parentheses, if it is parenthesized.
                    let parens = closing_parens(between);
                    Some(Edit::insert(
                        last.end() + TextSize::from(parens as u32),
                        format!(", {text}"),
                    ))
                }
            }
        }
    }
}

/// Where the `)` that closes `call` is; `None` for a call not closed yet (`x.to(d` in code being
/// typed, whose arguments the parser ends where the text runs out).
fn closing_paren(source: &str, call: &ExprCall) -> Option<TextSize> {
    let close = call.arguments.end().checked_sub(TextSize::from(1))?;
    let after_arguments = call
        .arguments
        .iter_source_order()
        .last()
        .is_none_or(|last| last.end() <= close);
    (source.as_bytes().get(close.to_usize()) == Some(&b')') && after_arguments).then_some(close)
}

/// The offset of the first comma in `between` (the text after an argument), skipping the
/// closing parentheses of a parenthesized argument, whitespace, line continuations and comments.
fn separator_comma(between: &str) -> Option<usize> {
    let mut chars = between.char_indices();
    while let Some((index, c)) = chars.next() {
        match c {
            ',' => return Some(index),
            '#' => {
                // Skip to the end of the line.
                for (_, c) in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            ')' | '\\' => {}
            c if c.is_whitespace() => {}
            _ => return None,
        }
    }
    None
}

/// The length of the run of closing parentheses (and whitespace between them) that ends a
/// parenthesized argument: `(a + b)` has its range without the parentheses.
fn closing_parens(between: &str) -> usize {
    let mut end = 0;
    for (index, c) in between.char_indices() {
        match c {
            ')' => end = index + 1,
            ' ' | '\t' => {}
            _ => break,
        }
    }
    end
}

/// Removes the keyword argument `name` from `call`, with its comma, never deleting a comment. In
/// a call written one argument per line, the keyword's whole line goes.
pub(crate) fn remove_keyword(context: &RuleContext, call: &ExprCall, name: &str) -> Option<Edit> {
    let source = context.source();
    let ordered: Vec<TextRange> = call.arguments.iter_source_order().map(|arg| arg.range()).collect();
    let keyword = call.arguments.find_keyword(name)?;
    let index = ordered.iter().position(|range| *range == keyword.range())?;
    let close = closing_paren(source, call)?;
    let next_start = ordered.get(index + 1).map_or(close, |r| r.start());
    let after = &source[TextRange::new(keyword.end(), next_start)];
    // Own line: only indentation before it, and only its comma after it.
    let start_of_line = line_start(source, keyword.start());
    let before = &source[TextRange::new(start_of_line, keyword.start())];
    if before.trim().is_empty()
        && start_of_line > call.arguments.start()
        && let Some(newline) = after.find('\n')
    {
        let rest = after[..newline].trim();
        if rest.is_empty() || rest == "," {
            // The previous argument keeps its comma: `f(\n    a,\n)` is valid.
            let end = keyword.end() + TextSize::from(newline as u32 + 1);
            return Some(Edit::delete(TextRange::new(start_of_line, end)));
        }
    }
    // With a comma after it: the keyword, the comma and the spaces after it (`f(a, k=1, b)`).
    let trailing = after.len() - after.trim_start_matches([' ', '\t']).len();
    if let Some(rest) = after[trailing..].strip_prefix(',') {
        let spaces = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        let end = keyword.end() + TextSize::from((trailing + 1 + spaces) as u32);
        // `f(k=1, )`: keep no dangling comma before the parenthesis.
        let range = if index > 0 && ordered.get(index + 1).is_none() && rest.trim().is_empty() {
            let previous = ordered[index - 1].end();
            let parens = closing_parens(&source[TextRange::new(previous, keyword.start())]);
            TextRange::new(previous + TextSize::from(parens as u32), keyword.end())
        } else {
            TextRange::new(keyword.start(), end)
        };
        if !source[range].contains('#') {
            return Some(Edit::delete(range));
        }
        return Some(Edit::delete(TextRange::new(keyword.start(), end)));
    }
    // The last argument, without a trailing comma: with the comma before it, unless a comment
    // sits in between (then the previous argument keeps its comma as a trailing one).
    if index > 0 {
        let previous = ordered[index - 1].end();
        let parens = closing_parens(&source[TextRange::new(previous, keyword.start())]);
        let range = TextRange::new(previous + TextSize::from(parens as u32), keyword.end());
        if !source[range].contains('#') {
            return Some(Edit::delete(range));
        }
    }
    Some(Edit::delete(keyword.range()))
}

/// The offset of the next token at or after `offset`: past whitespace, line continuations and
/// comments.
pub(crate) fn next_token(source: &str, offset: TextSize) -> TextSize {
    let rest = &source[offset.to_usize()..];
    let mut chars = rest.char_indices().peekable();
    while let Some(&(index, c)) = chars.peek() {
        match c {
            '#' => while chars.next_if(|&(_, c)| c != '\n' && c != '\r').is_some() {},
            '\\' => {
                chars.next();
            }
            c if c.is_whitespace() => {
                chars.next();
            }
            _ => return offset + TextSize::from(index as u32),
        }
    }
    offset + TextSize::from(rest.len() as u32)
}

/// Would the edits delete a comment? Each `#...` in a replaced or deleted range must reappear in
/// the edit's new text (a `#` inside a string literal copied over counts as kept). Fixes that
/// rebuild an expression or statement from its parts check this and are not offered when a
/// comment would be lost.
pub(crate) fn drops_comment(source: &str, edits: &[Edit]) -> bool {
    edits.iter().any(|edit| {
        let text = &source[edit.range];
        text.match_indices('#').any(|(index, _)| {
            let comment = text[index..].split(['\n', '\r']).next().unwrap_or_default().trim_end();
            !edit.content.contains(comment)
        })
    })
}

/// `expr`'s text, parenthesized unless it is an atom or a primary (a name, an attribute, a call,
/// a subscript, a literal) that binds tighter than any operator around it.
pub(crate) fn parenthesized(context: &RuleContext, expr: &Expr) -> String {
    let text = context.slice(expr);
    match expr {
        Expr::Name(_)
        | Expr::Attribute(_)
        | Expr::Call(_)
        | Expr::Subscript(_)
        | Expr::List(_)
        | Expr::Dict(_)
        | Expr::Set(_)
        | Expr::ListComp(_)
        | Expr::SetComp(_)
        | Expr::DictComp(_)
        | Expr::StringLiteral(_)
        | Expr::BytesLiteral(_)
        | Expr::FString(_)
        | Expr::BooleanLiteral(_)
        | Expr::NoneLiteral(_)
        | Expr::EllipsisLiteral(_) => text.to_string(),
        Expr::Tuple(tuple) if tuple.parenthesized => text.to_string(),
        Expr::Generator(generator) if generator.parenthesized => text.to_string(),
        _ => format!("({text})"),
    }
}

/// The name `torch` is bound to here (`torch`, `th`), and an edit adding `import torch` to the
/// file's import block when nothing binds it.
pub(crate) fn torch_name(context: &RuleContext) -> (String, Option<Edit>) {
    for name in ["torch", "th", "pt", "T"] {
        if let Some(binding) = context.model().lookup(name)
            && binding.source == BindingSource::Import("torch".into())
        {
            return (name.to_string(), None);
        }
    }
    if context.model().lookup("torch").is_some() {
        // `torch` is shadowed by something else: no safe way to spell it.
        return ("torch".to_string(), None);
    }
    ("torch".to_string(), Some(import_edit(context, "import torch")))
}

/// Inserts `statement` at the top of the file's import block (after a docstring,
/// `from __future__` imports and a notebook's leading escape commands), with the file's line
/// ending. In a file without imports it goes
/// before the first statement, after the comments that head the file (a shebang, an encoding
/// declaration, a licence).
pub(crate) fn import_edit(context: &RuleContext, statement: &str) -> Edit {
    let source = context.source();
    let newline = newline(source);
    let body = context.module_body();
    let mut position = None;
    for (index, stmt) in body.iter().enumerate() {
        let is_docstring = index == 0 && matches!(stmt, Stmt::Expr(expr) if expr.value.is_string_literal_expr());
        let is_future = matches!(stmt, Stmt::ImportFrom(import)
            if import.module.as_ref().is_some_and(|m| m.id.as_str() == "__future__"));
        // A notebook's leading escape commands stay first: a cell magic (`%%time`) works only on
        // its cell's first line, and `!pip install torch` comes before the import it enables.
        let is_escape = matches!(stmt, Stmt::IpyEscapeCommand(_));
        if is_docstring || is_future || is_escape {
            position = Some(line_end_after(source, stmt.end()));
            continue;
        }
        if position.is_none() || matches!(stmt, Stmt::Import(_) | Stmt::ImportFrom(_)) {
            // Never before the docstring (`"""doc"""; import os`).
            let start = line_start(source, stmt.start());
            position = Some(position.map_or(start, |after_header: TextSize| after_header.max(start)));
        }
        break;
    }
    let position = position.unwrap_or_else(|| {
        // No statement at all: after a byte-order mark.
        TextSize::from(if source.starts_with('\u{feff}') { 3 } else { 0 })
    });
    let position = if position.to_usize() < 3 && source.starts_with('\u{feff}') {
        TextSize::from(3)
    } else {
        position
    };
    // At the end of a file without a final newline, start a line first.
    let at_end = position.to_usize() == source.len();
    let needs_newline = at_end && !source.is_empty() && !source.ends_with(['\n', '\r']);
    let content = if needs_newline {
        format!("{newline}{statement}{newline}")
    } else {
        format!("{statement}{newline}")
    };
    Edit::insert(position, content)
}

/// The file's line ending (`\n` for a file without one).
pub fn newline(source: &str) -> &'static str {
    if source.contains("\r\n") {
        "\r\n"
    } else if source.contains('\n') || !source.contains('\r') {
        "\n"
    } else {
        "\r"
    }
}

/// Statements to replace the statement starting at `start`, one per line at its indentation.
/// `None` where something other than indentation precedes it on its line (`x = 1; if t: ...`).
pub(crate) fn statements_at(source: &str, start: TextSize, statements: &[String]) -> Option<String> {
    let indent = &source[line_start(source, start).to_usize()..start.to_usize()];
    if !indent.chars().all(|c| c == ' ' || c == '\t') {
        return None;
    }
    Some(statements.join(&format!("{}{indent}", newline(source))))
}

/// Deletes the statement at `range` with its line, where it is alone on it (indentation
/// before, a line end or the end of the file after).
pub(crate) fn delete_statement_line(source: &str, range: TextRange) -> Option<Edit> {
    let start = line_start(source, range.start());
    let end = line_end_after(source, range.end());
    let before = &source[TextRange::new(start, range.start())];
    let after = &source[TextRange::new(range.end(), end)];
    (before.chars().all(|c| c == ' ' || c == '\t') && after.trim().is_empty())
        .then(|| Edit::delete(TextRange::new(start, end)))
}

fn line_start(source: &str, offset: TextSize) -> TextSize {
    let before = &source[..offset.to_usize()];
    TextSize::from(before.rfind(['\n', '\r']).map_or(0, |i| i + 1) as u32)
}

fn line_end_after(source: &str, offset: TextSize) -> TextSize {
    let after = &source[offset.to_usize()..];
    let end = match after.find(['\n', '\r']) {
        Some(i) if after[i..].starts_with("\r\n") => i + 2,
        Some(i) => i + 1,
        None => after.len(),
    };
    TextSize::from((offset.to_usize() + end) as u32)
}

/// Parses the call at `range` of `source` again (a constructor the semantic model kept only as a
/// range), with offsets into `source`.
pub(crate) fn call_at(source: &str, range: TextRange) -> Option<ExprCall> {
    let parsed = ruff_python_parser::parse_parenthesized_expression_range(source, range).ok()?;
    let Expr::Call(call) = *parsed.into_syntax().body else {
        return None;
    };
    Some(call)
}

#[cfg(test)]
mod tests {
    use ruff_python_ast::{Expr, Stmt};

    use super::add_argument_in;

    /// `text` added to the call that is the first statement of `source`.
    fn added(source: &str) -> Option<String> {
        let parsed = crate::parse::parse(source, crate::parse::SourceKind::Python);
        let Some(Stmt::Expr(statement)) = parsed.module().body.first() else {
            panic!("a call statement in {source:?}");
        };
        let Expr::Call(call) = &*statement.value else {
            panic!("a call in {source:?}");
        };
        let edit = add_argument_in(source, call, "non_blocking=True")?;
        let mut fixed = source.to_string();
        fixed.insert_str(edit.range.start().to_usize(), &edit.content);
        Some(fixed)
    }

    #[test]
    fn arguments_go_after_the_last_one() {
        assert_eq!(added("x.to(d)\n").as_deref(), Some("x.to(d, non_blocking=True)\n"));
        assert_eq!(added("x.to()\n").as_deref(), Some("x.to(non_blocking=True)\n"));
        assert_eq!(added("x.to((d))\n").as_deref(), Some("x.to((d), non_blocking=True)\n"));
    }

    #[test]
    fn a_call_being_typed_gets_none() {
        assert_eq!(added("x.to(d"), None);
        assert_eq!(added("x.to(d\n"), None);
        assert_eq!(added("x.to(\n"), None);
        // The last argument's own parenthesis is not the call's.
        assert_eq!(added("D.Normal(m, s.std()"), None);
    }

    /// Fixes for calls cut short by the end of the text, as while typing, are not offered.
    #[test]
    fn rules_with_fixes_leave_unclosed_calls_alone() {
        let header = "import torch\nfrom torch.nn.utils import clip_grad_norm_\n\n\ndef train(model, loader, opt):\n    for x in loader:\n";
        for tail in [
            "        x = x.to(torch.device('cuda')",
            "        clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True",
            "        d = torch.distributions.Normal(x.mean(), x.std()",
        ] {
            let source = format!("{header}{tail}");
            let facts = crate::semantic::FileFacts::default();
            let lint = crate::linter::lint_source(
                &source,
                crate::parse::SourceKind::Python,
                crate::registry::RuleSet::all(),
                &[],
                &facts,
                false,
                false,
            );
            assert!(!lint.syntax_errors.is_empty(), "{source}");
        }
    }
}
