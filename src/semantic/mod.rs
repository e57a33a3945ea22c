//! The semantic model: what names refer to, what values are, and which lines are hot.
//!
//! It is built in one pass over a file by the [`Checker`](crate::checker::Checker), which runs
//! the rules at each node against the model's state at that point; rules only read it.

mod demand;
pub mod facts;
mod hot;
mod kinds;
pub(crate) mod model;
pub(crate) mod names;
pub mod torch_api;

pub use demand::{Demand, Dependence, GivenAsked, Question, Questions, refines_passed_on, slot_bit};
pub use facts::{FileFacts, Given, ProjectKind, ProjectReturns};
pub use hot::{FunctionId, HotContext, HotReason, IntrinsicHot, PeriodicInner};
pub use kinds::{BatchSource, ClassRefId, Device, Kind, ModuleKind, OptimizerFacts, TensorFacts};
pub(crate) use model::{
    Analysis, ArmOutcome, Asked, Flow, device_from_str, falls_back_on_none, is_false_literal, is_host_library,
    is_library, is_zero_int,
};
pub use model::{
    Argument, ArgumentDetail, Binding, BindingSource, CallArguments, CallArity, CallSite, Callee, ClassInfo, ClassRef,
    ClassSummary, DeadWhere, EntryAsked, Export, Exports, FileSemantics, FunctionDetails, FunctionInfo,
    FunctionSummary, ImportedAttribute, ImportedCall, LoopInfo, ParamSummary, ParameterSync, Receiver, Returned,
    ScopeKind, SemanticModel, Signature,
};
pub use model::{ClassId, MethodsCalledOn, ParamDefault, StoredCallable};
