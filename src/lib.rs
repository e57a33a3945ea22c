//! synclint: finds host-device synchronization hazards in PyTorch code.
//!
//! Data flows one way: [`discovery`] finds files, [`parse`] parses them, the [`checker`] builds
//! the [`semantic`] model and runs the [`rules`] in one pass per file, [`project`] resolves which
//! functions are hot across files, [`fix`] applies fixes, and [`render`] prints findings.

pub mod checker;
pub mod cli;
pub mod config;
pub mod diagnostic;
pub mod discovery;
pub mod fix;
pub mod lines;
pub mod linter;
pub mod noqa;
pub mod parse;
pub mod project;
pub mod registry;
pub mod render;
pub mod rules;
pub mod semantic;
