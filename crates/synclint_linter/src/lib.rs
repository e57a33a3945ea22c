//! The linter: the rules and the per-file checker, the project pass, the run every command shares
//! (discovery, cache, fact rounds), `# noqa`, fixes and their writes, and the output formats.

pub mod add_noqa;
pub mod cache;
pub mod checker;
pub mod config;
pub mod diagnostic;
pub mod discovery;
pub mod fix;
pub mod graph;
pub mod linter;
pub mod noqa;
pub mod outcome;
pub mod pipeline;
pub mod project;
pub mod render;
pub mod rules;
pub mod write;

// The modules of the crates below, under their own names: the linter's code reaches them as
// `crate::parse`, `crate::semantic`, ..., and the crates above as `synclint_linter::parse`.
pub use synclint_python::{arena, lines, nesting, notebook, parse, regular_file};
pub use synclint_semantic::{registry, semantic, syntax};

/// The binary's allocator for this crate's unit tests too, so that they run the arena.
#[cfg(test)]
#[global_allocator]
static ALLOCATOR: arena::Allocator = arena::Allocator;
