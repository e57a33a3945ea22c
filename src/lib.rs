//! synclint: finds host-device synchronization hazards in PyTorch code.
//!
//! A run goes through stages (ARCHITECTURE.md describes each, with a code map): [`discovery`]
//! finds files, [`parse`] parses them, the [`checker`] walks each file once, building the
//! [`semantic`] model and running the [`rules`] at each node, and leaves a summary of the file;
//! [`project`] joins the summaries into a call graph, resolves which functions are hot across
//! files and derives what each file cannot see by itself (what hot callers pass its functions,
//! what the project functions it calls return). The data does not flow one way only: those facts
//! go back to the checker, and the files whose facts changed are checked again, for at most two
//! rounds ([`pipeline`]). Then [`noqa`] and [`fix`] apply suppressions and fixes, and [`render`]
//! prints findings ([`graph`] the call graph).

pub mod cli;

pub use synclint_linter::{
    add_noqa, cache, checker, config, diagnostic, discovery, fix, graph, linter, noqa, outcome, pipeline, project,
    render, rules, write,
};
pub use synclint_python::{arena, lines, nesting, notebook, parse, regular_file};
pub use synclint_semantic::{registry, semantic, syntax};
pub use synclint_server::server;
pub use synclint_trace::trace;

/// The binary's and the tests' allocator alike, so that the tests run the arena too.
#[global_allocator]
static ALLOCATOR: arena::Allocator = arena::Allocator;
