//! `synclint server`: the language server.

pub mod server;

// The modules of the crates below, under their own names (`crate::parse`).
use synclint_linter::{
    add_noqa, arena, config, diagnostic, discovery, linter, outcome, parse, pipeline, project, render, semantic,
};

/// The binary's allocator for this crate's unit tests too, so that they run the arena.
#[cfg(test)]
#[global_allocator]
static ALLOCATOR: arena::Allocator = arena::Allocator;
