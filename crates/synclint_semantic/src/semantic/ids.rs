//! The numbers a file gives its functions, classes and scopes, in the order the checker meets
//! them: the summary, the hot contexts and the model all refer to them. It imports nothing.

/// Index of a function in its file's [`FunctionTable`](super::FunctionInfo) list.
pub type FunctionId = u32;

/// Index of a class in its file's list of [`ClassInfo`](super::ClassInfo) (and of
/// [`ClassSummary`](super::ClassSummary)).
pub type ClassId = u32;

/// Index of a scope in the model's list of scopes.
pub type ScopeId = u32;
