//! The semantic model: what names refer to, what values are, and which lines are hot.
//!
//! It is built in one pass over a file by the checker, which runs the rules at each node
//! against the model's state at that point; rules only read it (through their context). What
//! the project pass reads of the file is its summary ([`FileSummary`]).
//!
//! The modules, each importing only those above it in this list:
//! - `ids`: the numbers of a file's functions, classes and scopes;
//! - `kinds`: what a value is ([`Kind`]) and what a function returns ([`Returned`]);
//! - `names`, `torch_api`: naming conventions (libraries among them) and PyTorch's API, as
//!   tables;
//! - `hot`: where a line runs ([`HotContext`]);
//! - `facts`: what the project tells a file ([`FileFacts`]);
//! - `demand`: the questions asked of values the file could not tell ([`Question`],
//!   [`Demand`]);
//! - `summary`: what the project pass reads of a file ([`FileSummary`]);
//! - `model`: the [`SemanticModel`] of the file being checked, with its children `scopes`,
//!   `imports`, `class_refs`, `infer`, `infer_call`, `infer_torch` and `trace`.
//!
//! Users outside import through the names re-exported here.

mod demand;
pub mod facts;
mod hot;
mod ids;
mod kinds;
mod model;
pub mod names;
mod summary;
pub mod torch_api;

pub use demand::{Demand, Dependence, GivenAsked, Question, Questions, slot_bit};
pub use facts::{FileFacts, Given, ProjectKind, ProjectReturns};
pub use hot::{HotContext, HotReason, IntrinsicHot, PeriodicInner};
pub use ids::{ClassId, FunctionId};
pub use kinds::{BatchSource, ClassRefId, Device, Kind, ModuleKind, OptimizerFacts, Returned, TensorFacts};
pub use model::Analysis;
pub use model::infer::device_from_str;
pub use model::infer_call::is_zero_int;
pub use model::scopes::ArmOutcome;
pub use model::scopes::{Binding, BindingSource, ScopeKind};
pub use model::trace::{Asked, falls_back_on_none, is_false_literal};
pub use model::{ClassInfo, FunctionInfo, LoopInfo, SemanticModel, StoredCallable};
pub use names::{is_host_library, is_library};
pub use summary::{
    Argument, ArgumentDetail, ArgumentSlot, CallArguments, CallArity, CallSite, Callee, ClassRef, ClassSummary,
    DeadWhere, EntryAsked, Export, Exports, FileSummary, FunctionDetails, FunctionSummary, ImportedAttribute,
    ImportedCall, MethodsCalledOn, ParamDefault, ParamSummary, ParameterSync, PassedTo, Receiver, Signature,
    refines_passed_on,
};
