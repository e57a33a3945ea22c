//! Python source as synclint reads it: the per-file arena, the nesting bound, line starts, the
//! parser wrapper, notebooks, and regular files only. It depends on no other synclint crate.

pub mod arena;
pub mod lines;
pub mod nesting;
pub mod notebook;
pub mod parse;
pub mod regular_file;

/// The binary's allocator for this crate's unit tests too, so that they run the arena.
#[cfg(test)]
#[global_allocator]
static ALLOCATOR: arena::Allocator = arena::Allocator;
