//! The one module that talks to Ruff's parser crates. Everything else sees a [`ParsedModule`]
//! and the AST types re-exported from `ruff_python_ast`.

use ruff_python_ast::token::TokenKind;
use ruff_python_ast::{ModModule, PySourceType};
use ruff_python_parser::{ParseOptions, Parsed, parse_unchecked, parse_unchecked_source};
use ruff_text_size::TextRange;

pub use ruff_python_ast as ast;
pub use ruff_text_size::{Ranged, TextLen, TextSize};

/// A parsed file: the recovered module, its tokens, and its syntax errors.
pub struct ParsedModule {
    parsed: Parsed<ModModule>,
    pub syntax_errors: Vec<SyntaxError>,
}

impl ParsedModule {
    pub fn module(&self) -> &ModModule {
        self.parsed.syntax()
    }

    /// Ranges of every `#` comment, in source order (for `# noqa`): read from the tokens only
    /// for the files that have findings to suppress.
    pub fn comments(&self) -> impl Iterator<Item = TextRange> + '_ {
        self.parsed
            .tokens()
            .iter()
            .filter(|token| token.kind() == TokenKind::Comment)
            .map(|token| token.range())
    }
}

/// A syntax error with its location; the rest of the file is still linted.
#[derive(Debug, Clone, bincode::Encode, bincode::Decode)]
pub struct SyntaxError {
    #[bincode(with_serde)]
    pub range: TextRange,
    pub message: String,
}

/// Parses with error recovery: always returns a module, possibly partial.
pub fn parse(source: &str) -> ParsedModule {
    let parsed = parse_unchecked_source(source, PySourceType::Python);
    let syntax_errors = parsed
        .errors()
        .iter()
        .map(|error| SyntaxError {
            range: error.location,
            message: error.error.to_string(),
        })
        .collect();
    ParsedModule { parsed, syntax_errors }
}

/// True when `source` parses without any syntax error (used to vet fixed code).
pub fn parses_cleanly(source: &str) -> bool {
    parse_unchecked(source, ParseOptions::from(PySourceType::Python))
        .errors()
        .is_empty()
}
