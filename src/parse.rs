//! The one module that talks to Ruff's parser crates. Everything else sees a [`ParsedModule`]
//! and the AST types re-exported from `ruff_python_ast`.

use ruff_python_ast::token::TokenKind;
use ruff_python_ast::{ModModule, PySourceType};
use ruff_python_parser::{ParseOptions, parse_unchecked, parse_unchecked_source};
use ruff_text_size::TextRange;

pub use ruff_python_ast as ast;
pub use ruff_text_size::{Ranged, TextLen, TextSize};

/// A parsed file: the recovered module, its comments, and its syntax errors.
pub struct ParsedModule {
    pub module: ModModule,
    /// Ranges of every `#` comment, in source order (for `# noqa`).
    pub comments: Vec<TextRange>,
    pub syntax_errors: Vec<SyntaxError>,
}

/// A syntax error with its location; the rest of the file is still linted.
#[derive(Debug, Clone)]
pub struct SyntaxError {
    pub range: TextRange,
    pub message: String,
}

/// Parses with error recovery: always returns a module, possibly partial.
pub fn parse(source: &str) -> ParsedModule {
    let parsed = parse_unchecked_source(source, PySourceType::Python);
    let comments = parsed
        .tokens()
        .iter()
        .filter(|token| token.kind() == TokenKind::Comment)
        .map(|token| token.range())
        .collect();
    let syntax_errors = parsed
        .errors()
        .iter()
        .map(|error| SyntaxError {
            range: error.location,
            message: error.error.to_string(),
        })
        .collect();
    let module: ModModule = parsed.into_syntax();
    ParsedModule {
        module,
        comments,
        syntax_errors,
    }
}

/// True when `source` parses without any syntax error (used to vet fixed code).
pub fn parses_cleanly(source: &str) -> bool {
    parse_unchecked(source, ParseOptions::from(PySourceType::Python))
        .errors()
        .is_empty()
}
