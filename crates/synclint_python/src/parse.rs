//! The one module that talks to Ruff's parser crates. Everything else sees a [`ParsedModule`]
//! and the AST types re-exported from `ruff_python_ast`.

use ruff_python_ast::token::{Token, TokenKind};
use ruff_python_ast::{ModModule, PySourceType};
use ruff_python_parser::{Parsed, parse_unchecked_source};
use ruff_text_size::TextRange;

use std::mem::ManuallyDrop;

use crate::arena::{Lease, in_arena};
use crate::nesting::{MAX_NESTING, dismantle, first_too_deep, may_nest_deeper_than, with_thousands};

pub use ruff_python_ast as ast;
pub use ruff_text_size::{Ranged, TextLen, TextSize};

/// A parsed file: the recovered module, its tokens, and its syntax errors.
pub struct ParsedModule {
    tree: Tree,
    pub syntax_errors: Vec<SyntaxError>,
}

/// What the parser's tree became.
enum Tree {
    /// Within [`MAX_NESTING`]: kept for the checker.
    Kept {
        /// Dropped only where some of its blocks are not in this thread's arena (see `Drop`).
        parsed: ManuallyDrop<Parsed<ModModule>>,
        /// Keeps the tree's blocks valid.
        nodes: Lease,
    },
    /// Nested too deep to check: freed as soon as it was measured, and an empty module in its
    /// place (the file's one syntax error says why).
    Refused(ModModule),
}

/// Where every block of the tree and its tokens is in this thread's arena, released whole with
/// the lease, a walk that frees node by node would free nothing: the tree is left undropped.
/// Where some are not (the thread has no region, or the tree outgrew it), it is dropped.
impl Drop for Tree {
    fn drop(&mut self) {
        if let Tree::Kept { parsed, nodes } = self
            && !nodes.holds_all()
        {
            // SAFETY: dropped here once; `parsed` is not used after.
            unsafe { ManuallyDrop::drop(parsed) }
        }
    }
}

impl ParsedModule {
    pub fn module(&self) -> &ModModule {
        match &self.tree {
            Tree::Kept { parsed, .. } => parsed.syntax(),
            Tree::Refused(empty) => empty,
        }
    }

    /// Whether the tree nested too deep to check (its syntax errors say so).
    pub fn is_refused(&self) -> bool {
        matches!(self.tree, Tree::Refused(_))
    }

    /// The tokens of a kept tree; none of a refused one.
    fn tokens(&self) -> &[Token] {
        match &self.tree {
            Tree::Kept { parsed, .. } => parsed.tokens(),
            Tree::Refused(_) => &[],
        }
    }

    /// Ranges of every `#` comment, in source order (for `# noqa`): read from the tokens only
    /// for the files that have findings to suppress.
    pub fn comments(&self) -> impl Iterator<Item = TextRange> + '_ {
        self.tokens()
            .iter()
            .filter(|token| token.kind() == TokenKind::Comment)
            .map(|token| token.range())
    }

    /// Where each line that can take a trailing comment ends, in source order: the line
    /// endings outside strings (a line inside a multi-line string or f-string, or continued by a
    /// backslash, has none), and the end of the file.
    pub fn line_ends(&self) -> Vec<LineEnd> {
        let mut ends = Vec::new();
        let mut comment = None;
        // Inside an f-string's replacement field, a line break or a comment belongs to the
        // string's line, which ends after the string.
        let mut string_depth = 0u32;
        for token in self.tokens() {
            match token.kind() {
                TokenKind::FStringStart | TokenKind::TStringStart => string_depth += 1,
                TokenKind::FStringEnd | TokenKind::TStringEnd => string_depth = string_depth.saturating_sub(1),
                _ if string_depth > 0 => {}
                TokenKind::Comment => comment = Some(token.range()),
                TokenKind::Newline | TokenKind::NonLogicalNewline => ends.push(LineEnd {
                    at: token.start(),
                    comment: comment.take(),
                }),
                _ => {}
            }
        }
        ends
    }
}

/// The end of a line that can take a trailing comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineEnd {
    /// Where the line's text ends: at its line ending, or at the end of the file.
    pub at: TextSize,
    /// The comment already closing the line.
    pub comment: Option<TextRange>,
}

/// A syntax error with its location; the rest of the file is still linted.
#[derive(Debug, Clone, bincode::Encode, bincode::Decode)]
pub struct SyntaxError {
    #[bincode(with_serde)]
    pub range: TextRange,
    pub message: String,
}

/// What a source is: a Python file, or a notebook's code cells joined (where IPython's escape
/// commands, `%time` and `!pip`, are syntax).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SourceKind {
    #[default]
    Python,
    Notebook,
}

impl SourceKind {
    /// By the file's extension: `.ipynb` is a notebook.
    pub fn of(path: &std::path::Path) -> Self {
        match path.extension().is_some_and(|ext| ext == "ipynb") {
            true => SourceKind::Notebook,
            false => SourceKind::Python,
        }
    }

    fn source_type(self) -> PySourceType {
        match self {
            SourceKind::Python => PySourceType::Python,
            SourceKind::Notebook => PySourceType::Ipynb,
        }
    }
}

/// Parses with error recovery: always returns a module, possibly partial.
pub fn parse(source: &str, kind: SourceKind) -> ParsedModule {
    let (parsed, nodes) = in_arena(|| parse_unchecked_source(source, kind.source_type()));
    let mut syntax_errors: Vec<SyntaxError> = parsed
        .errors()
        .iter()
        .map(|error| SyntaxError {
            range: error.location,
            message: error.error.to_string(),
        })
        .collect();
    let too_deep = may_nest_deeper_than(parsed.tokens(), MAX_NESTING)
        .then(|| first_too_deep(parsed.syntax(), MAX_NESTING))
        .flatten();
    let Some(too_deep) = too_deep else {
        return ParsedModule {
            tree: Tree::Kept {
                parsed: ManuallyDrop::new(parsed),
                nodes,
            },
            syntax_errors,
        };
    };
    syntax_errors.push(SyntaxError {
        range: too_deep,
        message: format!(
            "code nested more than {} levels deep; synclint does not check this file (CPython's compiler refuses code nested more than about 3,000 levels)",
            with_thousands(MAX_NESTING)
        ),
    });
    // Freed before the lease goes, which would release the blocks the walk reads.
    if !nodes.holds_all() {
        dismantle(parsed.into_syntax());
    } else {
        std::mem::forget(parsed);
    }
    drop(nodes);
    ParsedModule {
        tree: Tree::Refused(ModModule {
            node_index: ast::AtomicNodeIndex::NONE,
            range: TextRange::default(),
            body: Default::default(),
        }),
        syntax_errors,
    }
}

/// The text of a string literal written as one part; `None` for an implicitly concatenated one
/// (`"a" "b"`), whose joined text Ruff's AST computes on demand and caches inside the tree. The
/// tree's nodes live in the parser's arena and are released without running their destructors,
/// so that cache would never be freed; no name, key or device string the model reads is written
/// in parts. (`clippy.toml` bars `to_str` for this reason.)
pub fn literal_text(value: &ast::StringLiteralValue) -> Option<&str> {
    (!value.is_implicit_concatenated()).then(|| value.iter().next().map_or("", |part| part.as_str()))
}

/// True when `source` parses without any syntax error (used to vet fixed code).
pub fn parses_cleanly(source: &str, kind: SourceKind) -> bool {
    parse(source, kind).syntax_errors.is_empty()
}
