//! `synclint trace`: profiler traces joined with the findings.

pub mod trace;

// The modules of the crates below, under their own names (`crate::parse`).
use synclint_linter::{config, lines, linter, outcome, parse, pipeline, project, registry, render};

/// The binary's allocator for this crate's unit tests too, so that they run the arena.
#[cfg(test)]
#[global_allocator]
static ALLOCATOR: synclint_linter::arena::Allocator = synclint_linter::arena::Allocator;
