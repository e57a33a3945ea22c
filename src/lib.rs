//! synclint: finds host-device synchronization hazards in PyTorch code.
//!
//! Data flows one way: [`discovery`] finds files, [`parse`] parses them, the [`checker`] builds
//! the [`semantic`] model and runs the [`rules`] in one pass per file, leaving a summary of each
//! file; [`project`] joins the summaries into a call graph, resolves which functions are hot
//! across files and derives what each file cannot see by itself (what hot callers pass its
//! functions, what the project functions it calls return), and files whose facts changed are
//! checked again; [`fix`] applies fixes, and [`render`] prints findings ([`graph`] the call graph).

pub mod add_noqa;
pub mod arena;
pub mod cache;
pub mod checker;
pub mod cli;
pub mod config;
pub mod diagnostic;
pub mod discovery;
pub mod fix;
pub mod graph;
pub mod lines;
pub mod linter;
pub mod nesting;
pub mod noqa;
pub mod notebook;
pub mod outcome;
pub mod parse;
pub mod pipeline;
pub mod project;
pub mod registry;
pub mod regular_file;
pub mod render;
pub mod rules;
pub mod semantic;
pub mod server;
pub mod syntax;
pub mod trace;
pub mod write;

/// The binary's and the tests' allocator alike, so that the tests run the arena too.
#[global_allocator]
static ALLOCATOR: arena::Allocator = arena::Allocator;
