//! The semantic model and the contract between the file pass and the project pass (summary,
//! kinds, facts, demand), the rule registry and the model-free syntax predicates. It depends on
//! `synclint_python` alone.

pub mod registry;
pub mod semantic;
pub mod syntax;

// The modules of the crates below, under their own names (`crate::parse`).
use synclint_python::parse;

/// The binary's allocator for this crate's unit tests too, so that they run the arena.
#[cfg(test)]
#[global_allocator]
static ALLOCATOR: synclint_python::arena::Allocator = synclint_python::arena::Allocator;
