//! The model's state: scopes and bindings, classes and functions, and the flow context of the
//! node being visited. The [`Checker`](crate::checker::Checker) updates it; rules query it.

use std::cell::RefCell;
use std::rc::Rc;

use ruff_python_ast::name::Name;
use ruff_python_ast::{self as ast, Expr, Operator, UnaryOp};
use ruff_text_size::{Ranged, TextRange};
use rustc_hash::{FxHashMap, FxHashSet};

use super::demand::{Demand, Dependence, GivenAsked, Question, Questions, slot_bit};
use super::facts::{ClassSpelled, FileFacts, Given, ProjectKind, ProjectReturns, ReturnsByType, spelled_union};
use super::hot::{HotContext, HotReason, IntrinsicHot, PeriodicInner};
use super::ids::{ClassId, FunctionId, ScopeId};
use super::kinds::{BatchSource, ClassRefId, Device, Kind, ModuleKind, OptimizerFacts, Returned, TensorFacts};
use super::summary::{CallSite, ClassRef, DeadWhere, DictEntry, Export, Exports, ParamSummary, Receiver};
use super::torch_api as api;
use crate::parse::literal_text;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScopeKind {
    Module,
    Class(ClassId),
    Function(FunctionId),
    Lambda,
    Comprehension,
}

#[derive(Debug)]
struct Scope<'a> {
    kind: ScopeKind,
    parent: Option<ScopeId>,
    bindings: FxHashMap<Name, Binding<'a>>,
    /// Names declared `global` in this scope: assignments go to the module scope.
    globals: Vec<Name>,
}

/// Where a binding comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindingSource {
    /// `import torch.nn.functional as F` binds `F` to `torch.nn.functional`; relative imports
    /// keep their leading dots (`.losses.masked_mean`).
    Import(Box<str>),
    Function(FunctionId),
    Class(ClassId),
    Value,
    /// The function's parameter in this slot (after `self`), as the call bound it.
    Parameter(u16),
    /// Bindings of several arms of a conditional joined (`if x is None: x = make()`), or an
    /// element unpacked from a call's result: where each came from, entry `i` of
    /// [`SemanticModel::joined`].
    Joined(u32),
}

/// Where one of the joined bindings came from, for what a value depends on.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Origin<'a> {
    Parameter(u16),
    Value(&'a Expr),
}

/// The most origins a joined binding keeps.
const MAX_ORIGINS: usize = 8;

impl Origin<'_> {
    fn same(&self, other: &Origin) -> bool {
        match (self, other) {
            (Origin::Parameter(a), Origin::Parameter(b)) => a == b,
            (Origin::Value(a), Origin::Value(b)) => std::ptr::eq(*a, *b),
            _ => false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Binding<'a> {
    pub kind: Kind,
    pub source: BindingSource,
    /// The expression last assigned (`mask = target != -100`), for rules that look at how a
    /// value was made.
    pub value: Option<&'a Expr>,
}

#[derive(Debug)]
pub struct ClassInfo {
    pub name: Name,
    /// Qualified names of bases where they resolve, else their source text.
    pub bases: Vec<String>,
    /// A direct or indirect `nn.Module` subclass (or any class with bases, for `forward`).
    pub is_module: bool,
    pub is_loss: bool,
    /// A subclass of a torchmetrics metric (directly or through a class of the file).
    pub is_metric: bool,
    /// Decorated to replace its `forward` with a dispatch to other implementations by default
    /// ([`replaces_forward`](super::torch_api::replaces_forward)): its own is a fallback.
    pub forward_replaced: bool,
    pub methods: FxHashMap<Name, FunctionId>,
    /// Kinds of `self.<attr>` as assigned in any method.
    pub attrs: FxHashMap<Name, Kind>,
    /// Attributes holding functions, by what any method assigns them (`self.loss_method =
    /// self.mat_loss if mat else self.pair_loss`, `self.losses = {"labels": self.loss_labels}`,
    /// `self.criterion = bce`, `self.criterion = fn` with `fn=bce` as the parameter's default):
    /// calling them calls those functions.
    pub stored_callables: FxHashMap<Name, Vec<StoredCallable>>,
    /// The methods that assign each `self.<attr>` (by name, in the class body's order).
    pub attribute_setters: FxHashMap<Name, Vec<Name>>,
    /// The functions of the file that assign an attribute of an instance of the class they make
    /// (`positions = Positions(); positions.table = t`, `optimizer = cls(...)` in a factory).
    pub instance_setters: FxHashMap<Name, Vec<FunctionId>>,
    /// The project functions (qualified as the file spells them) whose results an attribute
    /// holds where the file cannot tell what they are (`self.weights = to_tensor(weights)`): a
    /// question asked of the attribute is asked of those calls.
    pub attribute_calls: FxHashMap<Name, Vec<Rc<str>>>,
    /// Attributes whose kind in `attrs` is still that of an empty placeholder
    /// (`self.timesteps = torch.empty(0)` in `__init__`): the tensor set in its place replaces it.
    pub placeholders: FxHashSet<Name>,
    /// The registries its decorators register it in (`@MODELS.register_module()`), spelled as
    /// [`SemanticModel::registry_spelled`] spells them.
    pub registries: Vec<String>,
    /// The methods its methods call on what an attribute holds (`self.augmentations._set_seed()`):
    /// where the file cannot tell what that is, the classes of the project that have them; and
    /// whether code that may run hot calls it.
    pub methods_called_on: FxHashMap<Name, (Vec<Name>, bool)>,
}

/// A function an attribute holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoredCallable {
    /// A method of the instance (`self.loss_labels`).
    Method(Name),
    /// A name of the module's scope: a function of the file or an imported one (`bce`).
    Function(Name),
    /// A torch function that returns a tensor, by its qualified name
    /// (`self.clip_func = torch.nn.utils.clip_grad_norm_`): a call through the attribute gives
    /// what it gives.
    Library(Box<str>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Analysis {
    Pending,
    InProgress,
    Done,
}

#[derive(Debug)]
pub struct FunctionInfo<'a> {
    pub name: Name,
    /// `Class.method` or `function` (nested functions: `outer.<locals>.inner`).
    pub qualname: Box<str>,
    pub class: Option<ClassId>,
    pub def: &'a ast::StmtFunctionDef,
    pub line: u32,
    pub intrinsic: Option<IntrinsicHot>,
    /// Never hot, even with loops: it runs once (`__init__`, `configure_optimizers`, ...), or is
    /// a fallback that a dispatch replaces by default.
    pub never_hot: bool,
    /// It runs whole loops of steps: its body loops over a data loader (whole epochs) or
    /// decodes (a `generate`, or a loop of a network's calls over timesteps or new tokens), so
    /// the lines outside its loops run once per call (even when a loop calls it, or it is named
    /// `train_one_epoch`).
    pub runs_whole_loops: bool,
    /// The join of its `return` values' kinds (`None` until analyzed).
    pub returns: Option<Kind>,
    /// The kinds of the elements of the tuple it returns, where every `return` gives a tuple
    /// of one length (`return mask, idx`): unpacking its call binds them.
    pub returns_tuple: Option<Box<[Returned]>>,
    /// What it returns by the type of the argument its `isinstance` tests pick a `return` by.
    pub returns_by_type: Option<Box<ReturnsByType>>,
    /// What its first parameter is bound to by the call form.
    pub receiver: Receiver,
    /// A `@property`: reading the attribute runs it.
    pub property: bool,
    /// Its parameters as analysed (after `self`), for the project pass.
    pub params: Vec<ParamSummary>,
    /// Whether its hot callers give each parameter a value, as the project found (empty
    /// where it found nothing).
    pub given: Box<[Given]>,
    /// See [`FunctionSummary::demand`].
    pub demand: Demand,
    /// See [`FunctionSummary::return_depends`].
    pub return_depends: Option<Box<Dependence>>,
    /// See [`FunctionSummary::stored_absent`].
    pub stored_absent: Box<[(u16, Box<str>)]>,
    /// Holds a loop (whose lines are hot by themselves).
    pub has_loops: bool,
    /// Trains or runs a network itself (see `does_step_work`).
    pub step_work: bool,
    pub(crate) parent_scope: ScopeId,
    pub(crate) analysis: Analysis,
}

#[derive(Debug, Clone)]
pub struct LoopInfo {
    /// 1-based line of the `for` / `while`.
    pub line: u32,
    /// The names the loop binds (`for i, p in enumerate(params)` -> `i`, `p`).
    pub targets: Vec<Name>,
    /// An epoch loop: it holds a step loop, so the lines outside that loop run once per epoch.
    pub epoch: bool,
    /// Whether the loop makes its body hot: a step loop (it iterates batches, counts steps or
    /// reaches a step's work). Any other loop's body runs as often as the code around it.
    pub starts_hotness: bool,
}

/// The flow context the checker is in.
#[derive(Debug, Clone, Default)]
pub(crate) struct Flow {
    pub scope: ScopeId,
    pub function: Option<FunctionId>,
    pub class: Option<ClassId>,
    /// The enclosing loops inside the current function.
    pub loops: Vec<LoopInfo>,
    /// Tensors passed to a blocking collective in this function (`dist.all_reduce(t)`).
    pub all_reduced: Vec<Name>,
    pub periodic_guard: Option<u32>,
    pub except_depth: u32,
    /// Inside an arm that runs on no CUDA step: the body of a lazy initialisation (`if
    /// self._index is None: self._index = ...`, the first call only), a branch for another
    /// backend (`if x.device.type == "mps":`) or one that never runs (`if False:`).
    pub off_step_arm_depth: u32,
    /// The parameters whose hot callers' arguments decided that an arm being visited runs:
    /// what it reports or calls asks the project to tell them.
    pub given_guards: GivenAsked,
    /// What calls give the function's parameters where the arms being visited do not run (see
    /// [`DeadWhere`]): a finding there is not passed on to such calls.
    pub dead_where: Vec<DeadWhere>,
    /// Names the arms being visited know are not `None` (`if mask is not None:`): passed on,
    /// they give a value.
    pub not_none: Vec<Name>,
    /// `Distribution.set_default_validate_args(False)` was called earlier in this function.
    pub validation_disabled: bool,
    pub default_device_stack: Vec<Device>,
    /// `self.<attr>` narrowed by the arms being visited (`if isinstance(self.dist, Normal):`),
    /// innermost last.
    pub narrowed_attributes: Vec<(Name, Kind)>,
}

/// What one arm of a conditional (`if` body, `elif`, `else`, `except`) did to the bindings.
pub(crate) struct ArmOutcome<'a> {
    /// (scope, name, binding at the arm's end) for each name the arm changed; the binding
    /// before the arm is back in its scope.
    changes: Vec<(ScopeId, Name, Option<Binding<'a>>)>,
    /// The arm can reach the code after the statement (it does not end in `return`, `raise`,
    /// `continue` or `break`), on a CUDA step.
    pub(crate) falls_through: bool,
}

impl ArmOutcome<'_> {
    /// The arm bound or rebound a name.
    pub(crate) fn binds_anything(&self) -> bool {
        !self.changes.is_empty()
    }

    /// The arm bound or rebound `name`.
    pub(crate) fn binds(&self, name: &str) -> bool {
        self.changes.iter().any(|(_, changed, _)| changed.as_str() == name)
    }
}

pub struct SemanticModel<'a> {
    scopes: Vec<Scope<'a>>,
    /// One log per conditional arm being visited: the bindings it changed, with their value
    /// before the arm, so the next arm starts from the same state and the arms can be joined.
    pub(crate) branch_logs: Vec<ArmLog<'a>>,
    pub(crate) classes: Vec<ClassInfo>,
    pub(crate) functions: Vec<FunctionInfo<'a>>,
    /// What attributes of the file's function objects hold (`gather._buffer =
    /// torch.cuda.ByteTensor(n)`, a buffer kept between calls), joined over every assignment.
    pub(crate) function_attributes: FxHashMap<(FunctionId, Name), Kind>,
    pub(crate) flow: Flow,
    /// A test file: nothing in it runs per step (its loops repeat checks, its models are
    /// fixtures).
    pub(crate) test_code: bool,
    /// The device of factories without `device=` (`torch.set_default_device`).
    pub(crate) default_device: Device,
    pub(crate) call_sites: Vec<CallSite>,
    /// The call sites each call node made (one per callee it may call), by node.
    sites_of_call: FxHashMap<NodeKey, std::ops::Range<u32>>,
    /// `Distribution.set_default_validate_args(False)` was called.
    pub(crate) validation_disabled: bool,
    /// A call made a module the loss rules look for by kind (`nn.CrossEntropyLoss()`,
    /// `nn.CTCLoss()`): until one is made, no call can call one.
    loss_module_made: std::cell::Cell<bool>,
    /// Kinds of call expressions (and of what they call) already inferred since the bindings
    /// last changed: every rule asks about the same calls, and a call's kind is the costliest
    /// to infer.
    call_kinds: std::cell::RefCell<FxHashMap<NodeKey, CallKinds>>,
    /// Kinds of attributes and elements, likewise (see [`SemanticModel::remembered_kind`]).
    part_kinds: std::cell::RefCell<FxHashMap<NodeKey, Kind>>,
    /// Qualified names of callees resolved so far in the function being analysed, by call
    /// node: the checker, every rule and the call's kind ask for them in turn. The checker
    /// resolves each call when it visits it, so the name is the one its imports give at that
    /// point of the flow. Scans ahead of the flow (loops over data loaders) resolve calls of
    /// functions not yet analysed, so the cache is emptied as each analysis starts and ends.
    callees: std::cell::RefCell<FxHashMap<NodeKey, Option<Rc<str>>>>,
    /// The project classes this file refers to, numbered for [`Kind::Module`] and
    /// [`Kind::Object`].
    class_refs: RefCell<ClassRefs>,
    /// Where the bindings joined after conditionals came from ([`BindingSource::Joined`]).
    joined: Vec<Box<[Origin<'a>]>>,
    /// The kind of each list comprehension's or generator's element, as its loop variables were
    /// bound when the checker visited it: `[g.reshape(-1) for g in grids]` is a list of what
    /// `grids` holds, though `g` is out of scope wherever the list is used.
    comprehension_elements: FxHashMap<NodeKey, Kind>,
    /// What the project knows about this file (nothing on its first check).
    pub(crate) facts: &'a FileFacts,
    /// A rule is asking: what the kinds it cannot tell depend on is noted in `demand`.
    pub(crate) in_rule: std::cell::Cell<bool>,
    /// The parameters (as slot bits) the values rules asked about depend on, since the checker
    /// last cleared it: a finding made from one is a sync its callers' arguments go through.
    pub(crate) slots_traced: std::cell::Cell<u64>,
    /// Tracing has gone into the arguments of a call that is no torch operation (`Var(tx, x)`):
    /// what it makes depends on them, but is not the tensor they are, so no slot is traced.
    tracing_through_a_call: std::cell::Cell<bool>,
    /// Inside the kind of an element of a tuple or list display read by index (`dt[0]`): one
    /// level only, since the element may read the name again (`shape = (shape[0], 1)`).
    reading_display: std::cell::Cell<bool>,
    /// What the values the function being analysed could not tell depend on.
    pub(crate) demand: std::cell::RefCell<Asked>,
    /// The nodes a trace of demand reached (see [`SemanticModel::trace_demand`]), kept between
    /// traces so that each does not allocate its own.
    demand_traced: std::cell::RefCell<Vec<(usize, Question, u32)>>,
    /// The kinds the file gives the results of the call sites a question reached, by site.
    pub(crate) results_seen: std::cell::RefCell<FxHashMap<u32, Kind>>,
}

/// What the unknown values a function's rules asked about depend on: its parameters and the
/// project functions it calls (by the qualified name the file spells).
#[derive(Debug, Default)]
pub(crate) struct Asked {
    pub parameters: Demand,
    pub calls: Vec<(Rc<str>, Questions)>,
    /// Attributes of instances of other files' classes: (class as spelled, attribute).
    pub attributes: Vec<((Box<str>, Name), Questions)>,
    /// Call sites of project functions (by index), for what they return.
    pub sites: Vec<(u32, Questions)>,
}

/// A node by its address and range: the same node, never a look-alike (a temporary copy has
/// another address; two at one address with one range are copies of one node).
type NodeKey = (usize, TextRange);

/// The key of any expression node.
fn node_key(expr: &Expr) -> NodeKey {
    (expr as *const Expr as usize, expr.range())
}

/// The key of a call node.
fn call_key(call: &ast::ExprCall) -> NodeKey {
    (call as *const ast::ExprCall as usize, call.range())
}

/// What a call returns, and what the called expression itself is (`Module(CtcLoss)` for
/// `ctc(...)`).
#[derive(Debug, Clone, Copy)]
struct CallKinds {
    result: Kind,
    callee: Kind,
}

impl<'a> SemanticModel<'a> {
    pub fn new(facts: &'a FileFacts) -> Self {
        SemanticModel {
            scopes: vec![Scope {
                kind: ScopeKind::Module,
                parent: None,
                bindings: FxHashMap::default(),
                globals: Vec::new(),
            }],
            classes: Vec::new(),
            functions: Vec::new(),
            function_attributes: FxHashMap::default(),
            branch_logs: Vec::new(),
            flow: Flow::default(),
            test_code: false,
            default_device: Device::Cpu,
            call_sites: Vec::new(),
            sites_of_call: FxHashMap::default(),
            validation_disabled: false,
            loss_module_made: std::cell::Cell::new(false),
            call_kinds: Default::default(),
            part_kinds: Default::default(),
            callees: Default::default(),
            class_refs: Default::default(),
            joined: Vec::new(),
            comprehension_elements: FxHashMap::default(),
            results_seen: Default::default(),
            demand_traced: Default::default(),
            facts,
            in_rule: Default::default(),
            slots_traced: Default::default(),
            tracing_through_a_call: Default::default(),
            reading_display: Default::default(),
            demand: Default::default(),
        }
    }

    // ---- project classes -----------------------------------------------------------------

    /// The number of a class reference, given one on first use.
    pub(crate) fn class_ref(&self, class: ClassRef) -> ClassRefId {
        self.class_refs.borrow_mut().intern(class)
    }

    /// The number of the imported class `spelled`, allocating its name only the first time.
    fn imported_class_ref(&self, spelled: &str) -> ClassRefId {
        let known = self.class_refs.borrow().imported.get(spelled).copied();
        known.unwrap_or_else(|| self.class_ref(ClassRef::Imported(spelled.into())))
    }

    pub fn class_of_ref(&self, id: ClassRefId) -> ClassRef {
        self.class_refs.borrow()[id as usize].clone()
    }

    /// The kind of an instance of this file's class `id`.
    pub(crate) fn instance_of_local(&self, id: ClassId) -> Kind {
        let class = &self.classes[id as usize];
        let reference = self.class_ref(ClassRef::Local(id));
        if class.is_loss {
            Kind::Module(ModuleKind::Loss, Some(reference))
        } else if class.is_metric {
            Kind::Module(ModuleKind::Metric, Some(reference))
        } else if class.is_module {
            Kind::Module(ModuleKind::Plain, Some(reference))
        } else {
            Kind::Object(reference)
        }
    }

    /// The kind of an instance of a class the file names (`Head`, `.heads.Head`), as the file
    /// or the project's facts know it.
    pub(crate) fn instance_of_named(&self, spelled: &str) -> Kind {
        if !spelled.contains('.')
            && let Some(id) = self.local_class(spelled)
        {
            return self.instance_of_local(id);
        }
        Kind::Object(self.imported_class_ref(spelled))
    }

    /// A kind from the project (a caller's argument, an imported function's return) in this
    /// file's terms.
    pub(crate) fn kind_from_project(&self, kind: &ProjectKind) -> Kind {
        match (&kind.class, kind.kind) {
            (Some(class), Kind::Module(module, _)) => match self.instance_of_named(class) {
                Kind::Module(_, reference) => Kind::Module(module, reference),
                Kind::Object(reference) => Kind::Module(module, Some(reference)),
                other => other,
            },
            (Some(class), Kind::Object(_)) => self.instance_of_named(class),
            (None, Kind::Object(_)) => Kind::Unknown,
            (_, other) => other,
        }
    }

    /// A returned tuple's elements for another file: kinds without class references.
    pub(crate) fn to_project_returned(&self, returned: &Returned) -> Returned {
        returned.map_kinds(&|kind| self.to_project(kind).kind)
    }

    /// A returned tuple's elements as the project tells them, in this file's terms.
    fn returned_in_file(&self, returned: &Returned) -> Returned {
        returned.map_kinds(&|kind| self.kind_from_project(&ProjectKind { kind, class: None }))
    }

    /// What the project says a call through an object returns (`self.head.loss(x)`).
    fn project_result(&self, call: &ast::ExprCall) -> Option<&ProjectReturns> {
        if self.facts.results.is_empty() {
            return None;
        }
        self.facts.results.get(&call.start().to_u32())
    }

    /// The elements of the tuple a project function called here returns, as the project tells
    /// them: by the call's offset (a method through an object) or by the name the file calls.
    pub(crate) fn project_returned_tuple(&self, call: &ast::ExprCall) -> Option<Box<[Returned]>> {
        let returns = match self.project_result(call) {
            Some(returns) => returns,
            None => {
                if self.facts.returns.is_empty() {
                    return None;
                }
                self.facts.returns.get(&*self.callee(call)?)?
            }
        };
        let elements = returns.tuple.as_deref()?;
        Some(elements.iter().map(|e| self.returned_in_file(e)).collect())
    }

    /// A kind in the project's terms: a class reference spelled out as the file spells it
    /// (a local class by its name).
    pub(crate) fn to_project(&self, kind: Kind) -> ProjectKind {
        let class = kind
            .class()
            .map(|id| spelled_class(&self.class_refs, &self.classes, id));
        let kind = match kind {
            Kind::Module(module, _) => Kind::Module(module, None),
            Kind::Object(_) => Kind::Object(0),
            // A data-dependent shape synced where the op ran, in the code that made it; the
            // function it is passed to or returned to does not sync again by reading it. A
            // loader is known by its offset in this file: elsewhere, a loader's batch.
            Kind::Tensor(facts) => Kind::Tensor(TensorFacts {
                data_dependent: false,
                batch: match facts.batch {
                    BatchSource::Loader(_) => BatchSource::UnknownLoader,
                    other => other,
                },
                ..facts
            }),
            other => other,
        };
        ProjectKind {
            kind,
            class: class.map(ClassSpelled::from),
        }
    }

    /// What calling a project name gives: what the function returns, from the project's facts;
    /// else an instance for a class's name (`CamelCase` by convention; the project pass
    /// resolves it to the class, or finds no class and no method).
    fn project_call_kind(&self, qualified: &str, call: &ast::ExprCall) -> Option<Kind> {
        if let Some(returns) = self.facts.returns.get(qualified) {
            let by_type = returns.by_type.as_deref();
            return Some(
                by_type
                    .and_then(|by_type| self.returns_by_argument(by_type, call))
                    .unwrap_or_else(|| self.kind_from_project(&returns.kind)),
            );
        }
        self.project_instance(qualified)
    }

    /// What a call of a function of this file (by name, or a method of the current class
    /// through `self`) returns, once it is analysed.
    fn local_returns(&self, id: FunctionId, call: &ast::ExprCall) -> Kind {
        let function = &self.functions[id as usize];
        function
            .returns_by_type
            .as_deref()
            .and_then(|by_type| self.returns_by_argument(by_type, call))
            .or(function.returns)
            .unwrap_or_default()
    }

    /// What `call` returns where the type of its argument picks the callee's `return`s
    /// (`to_tensor([0, 2])`: the tensor made from a list, on the CPU), if it does.
    fn returns_by_argument(&self, by_type: &ReturnsByType, call: &ast::ExprCall) -> Option<Kind> {
        let arguments = &call.arguments;
        let argument = arguments
            .args
            .iter()
            .take_while(|argument| !argument.is_starred_expr())
            .nth(usize::from(by_type.slot))
            .or_else(|| arguments.find_keyword(&by_type.parameter).map(|keyword| &keyword.value))?;
        by_type
            .for_argument(self.kind_of(argument))
            .filter(|kind| !kind.is_opaque())
    }

    /// An instance of the project class a qualified name spells (`CamelCase` by convention; the
    /// project pass resolves it to the class, or finds none).
    fn project_instance(&self, qualified: &str) -> Option<Kind> {
        let name = qualified.rsplit('.').next().unwrap_or(qualified);
        (!is_library(qualified) && name.starts_with(|c: char| c.is_ascii_uppercase()))
            .then(|| self.instance_of_named(qualified))
    }

    // ---- scopes and bindings -------------------------------------------------------------

    pub(crate) fn push_scope(&mut self, kind: ScopeKind, parent: ScopeId) -> ScopeId {
        let id = self.scopes.len() as ScopeId;
        // A function binds its parameters and a few locals: start at a size that holds them
        // without growing the table three times.
        let capacity = if matches!(kind, ScopeKind::Function(_)) { 8 } else { 0 };
        self.scopes.push(Scope {
            kind,
            parent: Some(parent),
            bindings: FxHashMap::with_capacity_and_hasher(capacity, Default::default()),
            globals: Vec::new(),
        });
        id
    }

    pub fn scope_kind(&self) -> ScopeKind {
        self.scopes[self.flow.scope as usize].kind
    }

    pub(crate) fn declare_global(&mut self, name: Name) {
        self.scopes[self.flow.scope as usize].globals.push(name);
    }

    /// Binds `name` in the current scope (the module's for a `global` name).
    pub(crate) fn bind(&mut self, name: &Name, binding: Binding<'a>) {
        let scope = if self.scopes[self.flow.scope as usize].globals.contains(name) {
            0
        } else {
            self.flow.scope
        };
        self.bind_in(scope, name, Some(binding));
    }

    /// Forgets resolved callees: a function's analysis starts or ends.
    pub(crate) fn forget_callees(&mut self) {
        self.callees.get_mut().clear();
    }

    /// Forgets inferred call kinds: bindings, attributes, return kinds or the scope changed.
    /// Notes the kind of a comprehension's element while its loop variables are in scope.
    pub(crate) fn note_comprehension_element(&mut self, comprehension: &Expr, element: &Expr) {
        let kind = self.kind_of(element);
        if kind.tensor().is_some() || matches!(kind, Kind::Number | Kind::TensorSequence(_)) {
            self.comprehension_elements.insert(node_key(comprehension), kind);
        }
    }

    pub(crate) fn invalidate_kinds(&self) {
        let mut cache = self.call_kinds.borrow_mut();
        if !cache.is_empty() {
            cache.clear();
        }
        let mut parts = self.part_kinds.borrow_mut();
        if !parts.is_empty() {
            parts.clear();
        }
    }

    /// Sets (or, with `None`, removes) a binding, remembering its old value in the arm being
    /// visited.
    fn bind_in(&mut self, scope: ScopeId, name: &Name, binding: Option<Binding<'a>>) {
        self.invalidate_kinds();
        let bindings = &mut self.scopes[scope as usize].bindings;
        let before = match binding {
            Some(binding) => bindings.insert(name.clone(), binding),
            None => bindings.remove(name),
        };
        if let Some(log) = self.branch_logs.last_mut() {
            log.record(scope, name, before);
        }
    }

    pub(crate) fn begin_arm(&mut self) {
        self.branch_logs.push(ArmLog::default());
    }

    /// Ends an arm: restores the bindings it changed, so the next arm starts from the same
    /// state, and returns what it changed.
    pub(crate) fn end_arm(&mut self, falls_through: bool) -> ArmOutcome<'a> {
        let log = self.branch_logs.pop().unwrap_or_default();
        if !log.befores.is_empty() {
            self.invalidate_kinds();
        }
        let mut changes = Vec::with_capacity(log.befores.len());
        for ((scope, name), before) in log.changed.keys.into_iter().zip(log.befores) {
            let bindings = &mut self.scopes[scope as usize].bindings;
            let after = match before {
                Some(before) => bindings.insert(name.clone(), before),
                None => bindings.remove(&name),
            };
            changes.push((scope, name, after));
        }
        ArmOutcome { changes, falls_through }
    }

    /// After a conditional: each name an arm changed holds the join of what every path that
    /// reaches the next line leaves in it (the state before, when no arm is taken and the arms
    /// are not exhaustive).
    pub(crate) fn merge_arms(&mut self, arms: Vec<ArmOutcome<'a>>, exhaustive: bool) {
        if exhaustive && !arms.iter().any(|arm| arm.falls_through) {
            // No path reaches the next line; keep the old state.
            return;
        }
        // Each changed name once, in the order the arms changed them, with each arm's binding
        // at its end (`afters[key * arms + arm]`, `None` where that arm left the name alone).
        let mut changed: OrderedKeys<(ScopeId, &Name)> = OrderedKeys::default();
        let mut afters: Vec<Option<&Option<Binding<'a>>>> = Vec::new();
        for (position, arm) in arms.iter().enumerate() {
            for (scope, name, after) in &arm.changes {
                let (key, new) = changed.insert((*scope, name));
                if new {
                    afters.resize(changed.keys.len() * arms.len(), None);
                }
                afters[key * arms.len() + position] = Some(after);
            }
        }
        for (key, (scope, name)) in changed.keys.into_iter().enumerate() {
            // The arms ended with the state before them restored.
            let before = self.scopes[scope as usize].bindings.get(name);
            let reached = arms
                .iter()
                .zip(&afters[key * arms.len()..][..arms.len()])
                .filter(|(arm, _)| arm.falls_through)
                .map(|(_, after)| after.map_or(before, Option::as_ref))
                .chain((!exhaustive).then_some(before));
            let (class_refs, classes) = (&self.class_refs, &self.classes);
            let join = |a: Kind, b: Kind| join_instances(class_refs, classes, a, b);
            let merged = join_bindings(reached.flatten(), &mut self.joined, join);
            self.bind_in(scope, name, merged);
        }
    }

    /// Binds a name to an element unpacked from `whole` (`a, b = f(x)`, `b, n = x[:2]`): what
    /// it is depends on it.
    pub(crate) fn bind_unpacked(&mut self, name: &Name, kind: Kind, whole: &'a Expr) {
        self.joined.push(Box::new([Origin::Value(whole)]));
        let source = BindingSource::Joined(self.joined.len() as u32 - 1);
        self.bind(
            name,
            Binding {
                kind,
                source,
                value: None,
            },
        );
    }

    pub(crate) fn bind_value(&mut self, name: &Name, kind: Kind, value: Option<&'a Expr>) {
        self.bind(
            name,
            Binding {
                kind,
                source: BindingSource::Value,
                value,
            },
        );
    }

    /// Python's lookup: the current scope, enclosing function scopes (class scopes only when
    /// they are the current one), the module.
    pub fn lookup(&self, name: &str) -> Option<&Binding<'a>> {
        let mut id = Some(self.flow.scope);
        let mut first = true;
        while let Some(scope_id) = id {
            let scope = &self.scopes[scope_id as usize];
            if (first || !matches!(scope.kind, ScopeKind::Class(_)))
                && let Some(binding) = scope.bindings.get(name)
            {
                return Some(binding);
            }
            first = false;
            id = scope.parent;
        }
        None
    }

    /// The qualified name an expression refers to through imports: `F.cross_entropy` ->
    /// `torch.nn.functional.cross_entropy`. `None` for anything not rooted in an import.
    pub fn qualified_name(&self, expr: &Expr) -> Option<String> {
        let (root, length) = self.import_root(expr)?;
        let mut qualified = String::with_capacity(length);
        qualified.push_str(root);
        canonicalize(&mut qualified);
        push_attributes(expr, &mut qualified);
        Some(qualified)
    }

    /// The qualified name a bare name is imported as (`bce` from `from .losses import bce`).
    pub fn imported_name(&self, name: &str) -> Option<String> {
        let BindingSource::Import(qualified) = &self.lookup(name)?.source else {
            return None;
        };
        let mut qualified = qualified.to_string();
        canonicalize(&mut qualified);
        Some(qualified)
    }

    /// The import a `name.attr.attr` chain starts from, and the length of its qualified name.
    /// Kind inference asks this of every link of a chain, so a chain longer than any dotted
    /// name of a module's contents ([`MAX_DOTTED_LINKS`]) is answered `None` without walking
    /// it: a 100,000-link chain would otherwise cost 100,000 walks of its whole length.
    fn import_root(&self, expr: &Expr) -> Option<(&str, usize)> {
        let mut length = 0;
        let mut link = expr;
        for _ in 0..=MAX_DOTTED_LINKS {
            match link {
                Expr::Name(name) => {
                    return match &self.lookup(name.id.as_str())?.source {
                        BindingSource::Import(qualified) => Some((qualified, length + qualified.len())),
                        _ => None,
                    };
                }
                Expr::Attribute(attribute) => {
                    length += 1 + attribute.attr.len();
                    link = &attribute.value;
                }
                _ => return None,
            }
        }
        None
    }

    /// Is `name` unbound here (so a builtin like `max` or `print` is meant)?
    pub fn is_builtin(&self, name: &str) -> bool {
        self.lookup(name).is_none()
    }

    pub fn current_function(&self) -> Option<&FunctionInfo<'a>> {
        self.flow.function.map(|id| &self.functions[id as usize])
    }

    pub fn function(&self, id: FunctionId) -> &FunctionInfo<'a> {
        &self.functions[id as usize]
    }

    // ---- hot paths -----------------------------------------------------------------------

    /// Where the node being visited runs.
    pub fn context(&self) -> HotContext {
        if self.flow.except_depth > 0 || self.flow.off_step_arm_depth > 0 || self.test_code {
            return HotContext::Cold;
        }
        let function = self.current_function();
        if function.is_some_and(|f| f.never_hot) {
            return HotContext::Cold;
        }
        let hot_loop = self.flow.loops.iter().rev().find(|hot| hot.starts_hotness);
        let inner = if let Some(innermost) = hot_loop {
            if innermost.epoch {
                // Once per epoch: shown with the periodic lines.
                let epoch = PeriodicInner::Hot(HotReason::Loop { line: innermost.line });
                return HotContext::Periodic {
                    guard_line: innermost.line,
                    inner: epoch,
                };
            }
            PeriodicInner::Hot(HotReason::Loop { line: innermost.line })
        } else if let Some(id) = self.flow.function {
            if self.functions[id as usize].runs_whole_loops {
                return HotContext::Cold;
            }
            match self.functions[id as usize].intrinsic {
                Some(why) => PeriodicInner::Hot(HotReason::Function { function: id, why }),
                None => PeriodicInner::InFunction(id),
            }
        } else {
            return HotContext::Cold;
        };
        match (self.flow.periodic_guard, inner) {
            (Some(guard_line), inner) => HotContext::Periodic { guard_line, inner },
            (None, PeriodicInner::Hot(reason)) => HotContext::Hot(reason),
            (None, PeriodicInner::InFunction(id)) => HotContext::InFunction(id),
        }
    }

    /// True where no finding could ever be reported (module level, setup, `except`, lazy
    /// initialisation, test files).
    pub fn is_cold(&self) -> bool {
        self.context() == HotContext::Cold
    }

    // ---- value kinds ---------------------------------------------------------------------

    /// What `expr` evaluates to, at this point of the flow.
    pub fn kind_of(&self, expr: &Expr) -> Kind {
        self.asked(expr, Question::Kind)
    }

    /// What `expr` evaluates to, asked by a rule for which only whether it is on the host
    /// matters: one that counts an unknown value as maybe on a GPU already (`.item()`,
    /// `torch.nonzero(x)`), or fires on CPU tensors only (`cpu_t.to("cuda")`).
    pub fn kind_for_device_test(&self, expr: &Expr) -> Kind {
        self.asked(expr, Question::Host)
    }

    /// What `expr` evaluates to, asked by a rule for which only whether it is a tensor that may
    /// be on a GPU matters, and an unknown value counts as none (`if flag:`, `float(x)`).
    pub fn kind_for_gpu_test(&self, expr: &Expr) -> Kind {
        self.asked(expr, Question::GpuTensor)
    }

    /// What object `expr` is, asked by a rule that looks for one (a gradient scaler, a
    /// validating distribution): only an instance passed or returned changes the answer.
    pub fn object_kind(&self, expr: &Expr) -> Kind {
        self.asked(expr, Question::Instance)
    }

    /// The kind of `expr`; where a rule asks and the file cannot tell, what it depends on is
    /// noted with the question asked. Only the value asked about is: its parts, inferred on
    /// the way, may be unknown while it is known (`x.shape` of an unknown `x`).
    pub fn asked(&self, expr: &Expr, question: Question) -> Kind {
        // Inferred and traced with rules off, so nothing on the way asks again.
        let asking = self.in_rule.replace(false);
        let kind = self.infer_kind(expr);
        if asking {
            // Only a plain function's own lines summarise syncs on its parameters.
            let summarised = self.flow.function.is_some_and(|id| {
                let function = &self.functions[id as usize];
                function.intrinsic.is_none() && !function.never_hot && !function.params.is_empty()
            }) && !self.flow.loops.iter().any(|hot| hot.starts_hotness);
            if summarised && let Some(slot) = self.parameter_root(expr, 0) {
                self.slots_traced
                    .set(self.slots_traced.get() | slot_bit(usize::from(slot)));
            }
            if kind.is_opaque() {
                self.note_demand_of(expr, 0, question);
            } else if question.left_open_by(kind)
                && let Some(slot) = self.parameter_as_is(expr)
            {
                // `masks: torch.Tensor` indexing (or `masks.clone()`): the callers may pass a
                // mask.
                self.note_parameter(question, slot);
            }
        }
        self.in_rule.set(asking);
        kind
    }

    /// Notes what an expression whose kind the file cannot tell depends on: parameters of the
    /// function, through the values assigned on the way (`valid = labels >= 0`), and calls of
    /// project functions (whose return kinds the project may know).
    pub(crate) fn note_demand(&self, expr: &Expr) {
        let asking = self.in_rule.replace(false);
        self.note_demand_of(expr, 0, Question::Kind);
        self.in_rule.set(asking);
    }

    /// The call sites `call` made, one per project function it may call.
    pub(crate) fn sites_of(&self, call: &ast::ExprCall) -> &[CallSite] {
        match self.sites_of_call.get(&call_key(call)) {
            Some(sites) => &self.call_sites[sites.start as usize..sites.end as usize],
            None => &[],
        }
    }

    /// Records the call sites `call` made (from `first` to the last one recorded).
    pub(crate) fn note_sites_of(&mut self, call: &ast::ExprCall, first: usize) {
        let key = call_key(call);
        let sites = first as u32..self.call_sites.len() as u32;
        if !sites.is_empty() {
            self.sites_of_call.insert(key, sites);
        }
    }

    /// Whether `expr`, passed as an argument, is a value made here (`Always`), `None`
    /// (`Never`), what the caller was given (`Passed`: a parameter, an attribute, a value of
    /// unknown kind, which may be `None` whatever its kind says), or may be either
    /// (`Sometimes`).
    pub(crate) fn given_by(&self, expr: &Expr) -> Given {
        self.given_within(expr, 0)
    }

    /// What a dict `expr` spells out gives each of its keys (see [`Argument::entries`]): a
    /// literal whose keys are all strings, or `dict(key=value)`.
    pub(crate) fn entries_given(&self, expr: &Expr) -> Option<Box<[DictEntry]>> {
        match expr {
            Expr::Dict(dict) => dict
                .items
                .iter()
                .map(|item| match &item.key {
                    Some(Expr::StringLiteral(key)) => {
                        Some((Box::from(literal_text(&key.value)?), self.given_by(&item.value)))
                    }
                    _ => None,
                })
                .collect(),
            Expr::Call(call)
                if call.arguments.args.is_empty()
                    && matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "dict")
                    && self.lookup("dict").is_none() =>
            {
                call.arguments
                    .keywords
                    .iter()
                    .map(|keyword| Some((Box::from(keyword.arg.as_ref()?.as_str()), self.given_by(&keyword.value))))
                    .collect()
            }
            _ => None,
        }
    }

    fn given_within(&self, expr: &Expr, depth: u32) -> Given {
        if depth > 4 {
            return Given::Sometimes;
        }
        let made = |kind: Kind| match kind {
            Kind::NoneValue => Given::Never,
            Kind::Unknown => Given::Passed,
            _ => Given::Always,
        };
        match expr {
            Expr::NoneLiteral(_) => Given::Never,
            _ if is_false_literal(expr) => Given::Falsy,
            Expr::BooleanLiteral(_) | Expr::NumberLiteral(_) | Expr::StringLiteral(_) => Given::Truthy,
            Expr::FString(_)
            | Expr::Tuple(_)
            | Expr::List(_)
            | Expr::Dict(_)
            | Expr::Set(_)
            | Expr::ListComp(_)
            | Expr::DictComp(_)
            | Expr::SetComp(_)
            | Expr::BinOp(_)
            | Expr::UnaryOp(_)
            | Expr::Compare(_)
            | Expr::Lambda(_) => Given::Always,
            // A lookup that falls back on `None` (`d.get(k)`, `getattr(o, name, None)`).
            Expr::Call(call) if falls_back_on_none(call) => Given::Sometimes,
            // What a call or an index makes, where its kind is known.
            Expr::Call(_) | Expr::Subscript(_) => made(self.kind_of(expr)),
            Expr::Attribute(_) => Given::Passed,
            Expr::If(if_expr) => self
                .given_within(&if_expr.body, depth + 1)
                .join(self.given_within(&if_expr.orelse, depth + 1)),
            // Unless bound to `None` again inside the arm.
            Expr::Name(name) if self.flow.not_none.contains(&name.id) => {
                match self.lookup(name.id.as_str()).and_then(|binding| binding.value) {
                    Some(Expr::NoneLiteral(_)) => Given::Never,
                    _ => Given::Always,
                }
            }
            Expr::Name(name) => match self.lookup(name.id.as_str()) {
                Some(Binding {
                    source: BindingSource::Joined(index),
                    ..
                }) => self.joined[*index as usize]
                    .iter()
                    .map(|origin| match *origin {
                        Origin::Parameter(_) => Given::Passed,
                        Origin::Value(value) => self.given_within(value, depth + 1),
                    })
                    .fold(Given::Unseen, Given::join),
                Some(Binding { value: Some(value), .. }) => self.given_within(value, depth + 1),
                Some(Binding {
                    source: BindingSource::Parameter(_),
                    ..
                }) => Given::Passed,
                _ => Given::Sometimes,
            },
            _ => Given::Sometimes,
        }
    }

    /// What `expr`, a value passed on (an argument to a project function, a `return` value)
    /// whose kind the file cannot tell, depends on; `None` where nothing the project may learn.
    pub(crate) fn dependence_of(&self, expr: &Expr) -> Option<Dependence> {
        let saved = std::mem::take(&mut *self.demand.borrow_mut());
        self.note_demand(expr);
        let traced = std::mem::replace(&mut *self.demand.borrow_mut(), saved);
        let dependence = Dependence {
            parameters: traced.parameters.asked(Question::Kind),
            calls: traced.calls.into_iter().map(|(name, _)| Box::from(&*name)).collect(),
            sites: traced.sites.into_iter().map(|(site, _)| site).collect(),
        };
        (dependence != Dependence::default()).then_some(dependence)
    }

    /// The parameter a value is, or is made from by tensor operations on it (`x`, `x.max()`,
    /// `x[0]`, `x > 0`, `torch.round(x * t)`, a name bound to one of those), known or not: what
    /// a caller gives it is what the value reads.
    pub(crate) fn parameter_root(&self, expr: &Expr, depth: u32) -> Option<u16> {
        if depth > 6 {
            return None;
        }
        let next = depth + 1;
        match expr {
            Expr::Name(name) => match self.lookup(name.id.as_str())? {
                Binding {
                    source: BindingSource::Parameter(slot),
                    ..
                } => Some(*slot),
                Binding { value: Some(value), .. } => self.parameter_root(value, next),
                _ => None,
            },
            Expr::Attribute(attribute) => self.parameter_root(&attribute.value, next),
            Expr::Subscript(subscript) => self.parameter_root(&subscript.value, next),
            Expr::Call(call) => {
                let Expr::Attribute(method) = call.func.as_ref() else {
                    return None;
                };
                match self.import_root(&method.value) {
                    // `torch.round(x * t)`, `F.pad(x, ...)`: what the operation is given first.
                    Some((root, _)) if root == "torch" || root.starts_with("torch.") => {
                        self.parameter_root(call.arguments.args.first()?, next)
                    }
                    Some(_) => None,
                    // `x.max()`: the receiver.
                    None => self.parameter_root(&method.value, next),
                }
            }
            Expr::BinOp(binop) => self
                .parameter_root(&binop.left, next)
                .or_else(|| self.parameter_root(&binop.right, next)),
            Expr::UnaryOp(unary) => self.parameter_root(&unary.operand, next),
            Expr::Compare(compare) => self.parameter_root(&compare.left, next),
            _ => None,
        }
    }

    /// The parameter `expr` is, as it was given or through methods that keep its dtype and device
    /// (`mask.clone()`, `mask.view(-1)`, `mask.to(x.device)`).
    fn parameter_as_is(&self, expr: &Expr) -> Option<u16> {
        let mut expr = expr;
        for _ in 0..6 {
            match expr {
                Expr::Name(name) => {
                    return match self.lookup(name.id.as_str())?.source {
                        BindingSource::Parameter(slot) => Some(slot),
                        _ => None,
                    };
                }
                Expr::Call(call) => {
                    let Expr::Attribute(method) = call.func.as_ref() else {
                        return None;
                    };
                    let keeps = match method.attr.as_str() {
                        // A device, not a dtype.
                        "to" => {
                            self.target_device_of_to(call).is_some() && call.arguments.find_keyword("dtype").is_none()
                        }
                        other => api::keeps_dtype_and_device(other),
                    };
                    if !keeps {
                        return None;
                    }
                    expr = &method.value;
                }
                _ => return None,
            }
        }
        None
    }

    /// A rule's verdict hangs on what parameter `slot` is, as `question` asks.
    fn note_parameter(&self, question: Question, slot: u16) {
        self.demand.borrow_mut().parameters.note(question, usize::from(slot));
        if !self.tracing_through_a_call.get() {
            self.slots_traced
                .set(self.slots_traced.get() | slot_bit(usize::from(slot)));
        }
    }

    /// [`Self::note_demand`] of `question`: it stays the question while the value is the same
    /// one (a name bound to it, an arm of a conditional); of a part the value is made from (an
    /// operand, a receiver, an argument), what the part is matters (a tensor compared is a
    /// mask), except that a value made from host values is on the host.
    fn note_demand_of(&self, expr: &Expr, depth: u32, question: Question) {
        // A trace that starts inside another (through a kind inferred on the way) takes an
        // empty list of its own.
        let mut seen = self.demand_traced.take();
        seen.clear();
        self.trace_demand(expr, depth, question, &mut seen);
        self.demand_traced.replace(seen);
    }

    /// [`Self::note_demand_of`], once per node and question: the values joined after
    /// conditionals branch, and a name assigned in several arms is reached again and again.
    /// `seen` holds each node traced (address, question) with the least depth it was reached at.
    fn trace_demand(&self, expr: &Expr, depth: u32, question: Question, seen: &mut Vec<(usize, Question, u32)>) {
        if depth > 6 || never_a_tensor(expr) {
            return;
        }
        let address = expr as *const Expr as usize;
        match seen.iter_mut().find(|(a, q, _)| *a == address && *q == question) {
            Some((_, _, reached)) if *reached <= depth => return,
            Some((_, _, reached)) => *reached = depth,
            None => seen.push((address, question, depth)),
        }

        // Known already: what callers pass cannot change it (a tuple's elements may not be
        // known: a name unpacked from one is traced to it).
        if depth > 0
            && !expr.is_tuple_expr()
            && !matches!(self.infer_kind(expr), Kind::Unknown | Kind::Object(_) | Kind::Tuple)
        {
            return;
        }
        let part = match question {
            Question::Host => Question::Host,
            _ => Question::Kind,
        };
        // Arithmetic keeps these questions: `a * b` is a GPU tensor where an operand is one, and
        // a number where both are.
        let operand = match question {
            Question::GpuTensor | Question::Number => question,
            _ => part,
        };
        match expr {
            Expr::Name(name) => match self.lookup(name.id.as_str()) {
                Some(Binding {
                    source: BindingSource::Parameter(slot),
                    ..
                }) => self.note_parameter(question, *slot),
                Some(Binding {
                    source: BindingSource::Joined(index),
                    ..
                }) => {
                    for origin in &self.joined[*index as usize] {
                        match *origin {
                            Origin::Parameter(slot) => self.note_parameter(question, slot),
                            Origin::Value(value) => self.trace_demand(value, depth + 1, question, seen),
                        }
                    }
                }
                Some(Binding { value: Some(value), .. }) => self.trace_demand(value, depth + 1, question, seen),
                _ => {}
            },
            Expr::Call(call) => {
                let key = call_key(call);
                if let Some(sites) = self.sites_of_call.get(&key) {
                    let seen = self.call_kinds(call).result;
                    let mut results_seen = self.results_seen.borrow_mut();
                    let asked = &mut self.demand.borrow_mut().sites;
                    for site in sites.clone() {
                        note_question(asked, site, question);
                        results_seen.insert(site, seen);
                    }
                }
                let callee = self.callee(call);
                let torch_operation = callee.as_deref().is_some_and(|callee| callee.starts_with("torch."));
                if let Some(callee) = callee.filter(|q| !is_library(q)) {
                    note_question(&mut self.demand.borrow_mut().calls, callee, question);
                }
                self.trace_demand(&call.func, depth + 1, part, seen);
                let outer = self.tracing_through_a_call.get();
                self.tracing_through_a_call.set(outer || !torch_operation);
                for arg in &call.arguments.args {
                    self.trace_demand(arg, depth + 1, part, seen);
                }
                self.tracing_through_a_call.set(outer);
            }
            Expr::Attribute(attribute) => {
                self.note_imported_attribute(attribute, question);
                // `self.weights`, set from a project call in another method: that call is asked.
                if let Expr::Name(receiver) = attribute.value.as_ref()
                    && receiver.id.as_str() == "self"
                    && let Some(class) = self.flow.class
                {
                    let calls = self
                        .lineage(class)
                        .filter_map(|id| self.classes[id as usize].attribute_calls.get(attribute.attr.as_str()))
                        .flatten();
                    for callee in calls {
                        note_question(&mut self.demand.borrow_mut().calls, callee.clone(), question);
                    }
                }
                self.trace_demand(&attribute.value, depth + 1, part, seen);
            }
            // An element is never a number (`x.shape[0]` is known already), and it is a GPU
            // tensor where what is indexed is one, whatever the index.
            Expr::Subscript(_) if question == Question::Number => {}
            Expr::Subscript(subscript) if question == Question::GpuTensor => {
                self.trace_demand(&subscript.value, depth + 1, question, seen);
            }
            Expr::Subscript(subscript) => {
                self.trace_demand(&subscript.value, depth + 1, part, seen);
                self.trace_demand(&subscript.slice, depth + 1, part, seen);
            }
            Expr::BinOp(binop) => {
                self.trace_demand(&binop.left, depth + 1, operand, seen);
                self.trace_demand(&binop.right, depth + 1, operand, seen);
            }
            Expr::UnaryOp(unary) => self.trace_demand(&unary.operand, depth + 1, operand, seen),
            Expr::Compare(compare) => {
                let operand = if question == Question::GpuTensor {
                    question
                } else {
                    part
                };
                self.trace_demand(&compare.left, depth + 1, operand, seen);
                for comparator in &compare.comparators {
                    self.trace_demand(comparator, depth + 1, operand, seen);
                }
            }
            Expr::BoolOp(bool_op) => {
                for value in &bool_op.values {
                    self.trace_demand(value, depth + 1, question, seen);
                }
            }
            Expr::If(if_expr) => {
                self.trace_demand(&if_expr.body, depth + 1, question, seen);
                self.trace_demand(&if_expr.orelse, depth + 1, question, seen);
            }
            Expr::Tuple(tuple) => {
                for element in &tuple.elts {
                    self.trace_demand(element, depth + 1, question, seen);
                }
            }
            _ => {}
        }
    }

    fn infer_kind(&self, expr: &Expr) -> Kind {
        match expr {
            Expr::Name(name) => self.lookup(name.id.as_str()).map_or(Kind::Unknown, |b| b.kind),
            Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) => Kind::Number,
            Expr::StringLiteral(_) | Expr::FString(_) | Expr::BytesLiteral(_) | Expr::TString(_) => Kind::Str,
            Expr::NoneLiteral(_) => Kind::NoneValue,
            Expr::List(list) => self.sequence_kind(&list.elts, Kind::List),
            Expr::Tuple(tuple) => self.sequence_kind(&tuple.elts, Kind::Tuple),
            Expr::ListComp(_) | Expr::Generator(_) => match self.comprehension_elements.get(&node_key(expr)) {
                // Tensors, or tuples of them (a matcher's `[(rows, cols) for ...]`): several
                // tensors, each element read as one.
                Some(Kind::Tensor(facts) | Kind::TensorSequence(facts)) => Kind::TensorSequence(*facts),
                Some(Kind::Number) if matches!(expr, Expr::ListComp(_)) => Kind::NumberList,
                _ if matches!(expr, Expr::ListComp(_)) => Kind::List,
                _ => Kind::Unknown,
            },
            Expr::Dict(_) | Expr::DictComp(_) => Kind::Dict,
            Expr::Attribute(attribute) => self.remembered_kind(expr, || self.attribute_kind(attribute)),
            Expr::Call(call) => self.call_kinds(call).result,
            Expr::Subscript(subscript) => self.remembered_kind(expr, || self.subscript_kind(subscript)),
            Expr::BinOp(binop) => self.binop_kind(binop),
            Expr::UnaryOp(unary) => match unary.op {
                UnaryOp::Not => Kind::Number,
                UnaryOp::Invert => self.kind_of(&unary.operand),
                UnaryOp::USub | UnaryOp::UAdd => match self.kind_of(&unary.operand) {
                    Kind::Tensor(facts) => Kind::Tensor(facts.numeric()),
                    other => other,
                },
            },
            Expr::Compare(compare) => self.compare_kind(compare),
            Expr::If(if_expr) => join_instances(
                &self.class_refs,
                &self.classes,
                self.kind_of(&if_expr.body),
                self.kind_of(&if_expr.orelse),
            ),
            // `limit or lengths.max()` is one of its operands.
            Expr::BoolOp(bool_op) => {
                let kinds = bool_op.values.iter().map(|value| self.kind_of(value));
                if bool_op.op == ast::BoolOp::Or {
                    kinds.reduce(Kind::join_fallback).unwrap_or_default()
                } else {
                    kinds.reduce(Kind::join).unwrap_or_default()
                }
            }
            Expr::Named(named) => self.kind_of(&named.value),
            _ => Kind::Unknown,
        }
    }

    /// The kind of an attribute or an element, inferred once while the bindings stand: rules
    /// ask about the same receivers (`self.cfg.x`, `batch["labels"]`) again and again. Not while
    /// a display's element is read (see `reading_display`), where the answer may differ.
    fn remembered_kind(&self, expr: &Expr, infer: impl FnOnce() -> Kind) -> Kind {
        if self.reading_display.get() {
            return infer();
        }
        let key = node_key(expr);
        if let Some(kind) = self.part_kinds.borrow().get(&key) {
            return *kind;
        }
        let kind = infer();
        self.part_kinds.borrow_mut().insert(key, kind);
        kind
    }

    fn call_kinds(&self, call: &ast::ExprCall) -> CallKinds {
        let key = call_key(call);
        if let Some(kinds) = self.call_kinds.borrow().get(&key) {
            return *kinds;
        }
        let kinds = self.infer_call(call);
        self.call_kinds.borrow_mut().insert(key, kinds);
        kinds
    }

    /// Does `call` call an `nn.Module` (whose output is a tensor, whatever its `forward` tells)?
    pub(crate) fn calls_a_module(&self, call: &ast::ExprCall) -> bool {
        matches!(self.call_kinds(call).callee, Kind::Module(..))
    }

    /// Does `call` call a module of this kind? The loss modules the rules look for
    /// (`ClassIndexLoss`, `CtcLoss`) come only from their constructors: where the file made none
    /// yet, the answer is no without inferring the call (most files make none).
    pub fn calls_module(&self, call: &ast::ExprCall, module: ModuleKind) -> bool {
        if module.only_from_torch_constructor() && !self.loss_module_made.get() {
            return false;
        }
        // What the call returns is not asked, nor are its arguments: only what is called.
        let asking = self.in_rule.replace(false);
        let callee = self.call_kinds(call).callee;
        if callee.is_opaque() && asking {
            self.note_demand_of(&call.func, 0, Question::Instance);
        }
        self.in_rule.set(asking);
        matches!(callee, Kind::Module(kind, _) if kind == module)
    }

    /// Whether the value is made by an op of this function (`torch.nonzero(m)`, `x[mask]`,
    /// `x.unique()`), directly or through names assigned here, rather than returned by a project
    /// function, held in an attribute or passed in: a rule on the op reports it here.
    pub fn made_here(&self, expr: &Expr) -> bool {
        self.made_here_within(expr, 0)
    }

    fn made_here_within(&self, expr: &Expr, depth: u32) -> bool {
        if depth > 6 {
            return false;
        }
        match expr {
            Expr::Subscript(_) => true,
            Expr::BinOp(binop) => {
                self.made_here_within(&binop.left, depth + 1) || self.made_here_within(&binop.right, depth + 1)
            }
            Expr::UnaryOp(unary) => self.made_here_within(&unary.operand, depth + 1),
            Expr::ListComp(ast::ExprListComp { elt, .. }) | Expr::Generator(ast::ExprGenerator { elt, .. }) => {
                self.made_here_within(elt, depth + 1)
            }
            // A tensor's method (`x.nonzero()`) or a library function; a project function
            // returns what its own function made.
            Expr::Call(call) => {
                matches!(call.func.as_ref(), Expr::Attribute(attribute)
                    if api::is_tensor_only_method(attribute.attr.as_str()) || self.infer_kind(&attribute.value).tensor().is_some())
                    || self.callee(call).is_some_and(|callee| is_library(&callee))
            }
            Expr::Name(name) => match self.lookup(name.id.as_str()) {
                Some(Binding {
                    source: BindingSource::Value,
                    value: Some(value),
                    ..
                }) => self.made_here_within(value, depth + 1),
                Some(Binding {
                    source: BindingSource::Joined(index),
                    ..
                }) => self.joined[*index as usize].iter().all(|origin| match *origin {
                    Origin::Value(value) => self.made_here_within(value, depth + 1),
                    Origin::Parameter(_) => false,
                }),
                _ => false,
            },
            _ => false,
        }
    }

    /// The qualified name of what `call` calls (`torch.nn.functional.cross_entropy`), resolved
    /// once per call however many rules ask.
    pub fn callee(&self, call: &ast::ExprCall) -> Option<Rc<str>> {
        let key = call_key(call);
        if let Some(name) = self.callees.borrow().get(&key) {
            return name.clone();
        }
        let name: Option<Rc<str>> = self.qualified_name(&call.func).map(Rc::from);
        self.callees.borrow_mut().insert(key, name.clone());
        name
    }

    /// A list or tuple display: tensors make a tensor sequence; a list of numbers (or of number
    /// lists) is a [`Kind::NumberList`]; anything else is `otherwise`. Each element's kind is
    /// worked out once (nested displays would otherwise cost twice per level).
    fn sequence_kind(&self, elements: &[Expr], otherwise: Kind) -> Kind {
        let Some((first, rest)) = elements.split_first() else {
            return otherwise;
        };
        match self.kind_of(first) {
            Kind::Tensor(first) => rest
                .iter()
                .try_fold(first, |facts, element| {
                    Some(facts.join(self.kind_of(element).tensor()?))
                })
                .map_or(otherwise, Kind::TensorSequence),
            Kind::Number | Kind::NumberList if otherwise == Kind::List => {
                let numbers = rest
                    .iter()
                    .all(|element| matches!(self.kind_of(element), Kind::Number | Kind::NumberList));
                if numbers { Kind::NumberList } else { otherwise }
            }
            _ => otherwise,
        }
    }

    /// The tensor facts of `expr`, if it is a tensor.
    pub fn tensor(&self, expr: &Expr) -> Option<TensorFacts> {
        self.kind_of(expr).tensor()
    }

    /// A parameter of the function, as bound on entry.
    pub fn is_parameter(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::Name(name) if matches!(
            self.lookup(name.id.as_str()),
            Some(Binding { source: BindingSource::Parameter(_), .. })
        ))
    }

    /// A tensor that could be on a CUDA device.
    pub fn is_maybe_cuda_tensor(&self, expr: &Expr) -> bool {
        self.kind_for_gpu_test(expr).is_maybe_cuda_tensor()
    }

    fn attribute_kind(&self, attribute: &ast::ExprAttribute) -> Kind {
        self.named_attribute_kind(attribute)
            .unwrap_or_else(|| self.attribute_of(self.kind_of(&attribute.value), attribute.attr.as_str()))
    }

    /// Attributes known by name rather than by their receiver's kind: `torch.float16` (through
    /// imports) and `self.<attr>` (as the class's methods set it).
    fn named_attribute_kind(&self, attribute: &ast::ExprAttribute) -> Option<Kind> {
        let attr = attribute.attr.as_str();
        let receiver = match attribute.value.as_ref() {
            // One lookup tells an import from `self`.
            Expr::Name(name) => match self.lookup(name.id.as_str()) {
                Some(Binding {
                    source: BindingSource::Import(module),
                    ..
                }) => {
                    // Only `torch.<dtype>` names a dtype: no need to spell out the qualified name.
                    let on_torch = &**module == "torch";
                    return Some(if on_torch && api::is_dtype_name(attr) {
                        Kind::Dtype
                    } else {
                        Kind::Unknown
                    });
                }
                Some(Binding {
                    source: BindingSource::Function(id),
                    ..
                }) => return self.function_attributes.get(&(*id, attribute.attr.id.clone())).copied(),
                Some(_) => Some(name.id.as_str()),
                None => None,
            },
            value => {
                if self.import_root(value).is_some() {
                    return Some(Kind::Unknown);
                }
                None
            }
        };
        if matches!(receiver, Some("self" | "cls"))
            && let Some(class) = self.flow.class
        {
            if let Some((_, kind)) = self
                .flow
                .narrowed_attributes
                .iter()
                .rev()
                .find(|(name, _)| name == attr)
            {
                return Some(*kind);
            }
            // Set by this class's methods, else inherited from a local base.
            return Some(self.local_class_attribute(class, attr).unwrap_or_default());
        }
        None
    }

    /// The attribute `attr` of a value of kind `receiver`.
    fn attribute_of(&self, receiver: Kind, attr: &str) -> Kind {
        match receiver {
            Kind::Tensor(facts) => match attr {
                "T" | "mT" | "H" | "mH" | "data" | "real" | "imag" => Kind::Tensor(facts),
                "grad" => Kind::Tensor(facts.numeric()),
                "shape" => Kind::Tuple,
                "device" => Kind::Device(facts.device),
                "dtype" => Kind::Dtype,
                "ndim" | "is_cuda" | "requires_grad" | "is_leaf" | "itemsize" | "nbytes" => Kind::Number,
                // Flags: `t.is_quantized`, `out.has_mask`.
                _ if attr.starts_with("is_") || attr.starts_with("has_") => Kind::Number,
                // A network's output holds per-layer tuples and sizes beside its tensors.
                _ if facts.batch == BatchSource::Output && api::is_per_layer_output(attr) => {
                    Kind::TensorSequence(facts)
                }
                _ if facts.batch == BatchSource::Output && api::names_sizes(attr) => Kind::Unknown,
                // A field of a batch, an encoding or a network's output (`batch.input_ids`,
                // `outputs.logits`): one of its tensors.
                _ if facts.has_tensor_fields() => Kind::Tensor(facts),
                _ => Kind::Unknown,
            },
            Kind::TensorSequence(facts) => match attr {
                "indices" | "pivots" => Kind::Tensor(facts.integer()),
                "values" | "L" | "inverse" | "result" | "info" | "eigenvalues" | "eigenvectors" | "U" | "S" | "Vh"
                | "Q" | "R" | "solution" | "LU" | "mean" | "std" => Kind::Tensor(facts.numeric()),
                _ => Kind::Unknown,
            },
            Kind::Module(..) | Kind::Object(_) if receiver.class().is_some() => {
                match self.instance_attribute(receiver, attr) {
                    Some(kind) => kind,
                    None if matches!(receiver, Kind::Module(..)) && matches!(attr, "weight" | "bias") => {
                        Kind::Tensor(TensorFacts::on(Device::Unknown))
                    }
                    None => Kind::Unknown,
                }
            }
            Kind::Module(..) => match attr {
                "weight" | "bias" => Kind::Tensor(TensorFacts::on(Device::Unknown)),
                _ => Kind::Unknown,
            },
            Kind::NdArray => Kind::NdArray,
            _ => Kind::Unknown,
        }
    }

    fn subscript_kind(&self, subscript: &ast::ExprSubscript) -> Kind {
        if let Expr::Attribute(attribute) = subscript.value.as_ref()
            && attribute.attr.as_str() == "shape"
        {
            return Kind::Number;
        }
        // `dt[0]` of `dt = (Profile(), Profile())`: that element.
        if let (Expr::Name(name), Expr::NumberLiteral(index)) = (subscript.value.as_ref(), subscript.slice.as_ref())
            && let Some(Binding {
                value: Some(Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. })),
                ..
            }) = self.lookup(name.id.as_str())
            && let ast::Number::Int(index) = &index.value
            && let Some(element) = index.as_usize().and_then(|index| elts.get(index))
            && !self.reading_display.replace(true)
        {
            let kind = self.kind_of(element);
            self.reading_display.set(false);
            return kind;
        }
        if self.is_optimizer_step(subscript) {
            return Kind::Tensor(TensorFacts::on(Device::Cpu));
        }
        match self.kind_of(&subscript.value) {
            Kind::Tensor(facts) => {
                if self.is_boolean_index(&subscript.slice) {
                    Kind::Tensor(TensorFacts {
                        data_dependent: true,
                        pinned: false,
                        ..facts
                    })
                } else {
                    Kind::Tensor(TensorFacts { pinned: false, ..facts })
                }
            }
            Kind::TensorSequence(facts) => Kind::Tensor(facts),
            Kind::NdArray => Kind::NdArray,
            Kind::Unknown => self.indexed_by_gpu_tensors(&subscript.slice),
            _ => Kind::Unknown,
        }
    }

    /// `mat[rows, cols]` of a value nothing is known of, by index tensors one of which may be on
    /// a GPU: PyTorch indexes only a tensor on the indices' device (a numpy array or a list
    /// cannot take a GPU tensor among several indices), so the elements are a tensor there.
    fn indexed_by_gpu_tensors(&self, slice: &Expr) -> Kind {
        let Expr::Tuple(tuple) = slice else {
            return Kind::Unknown;
        };
        tuple
            .elts
            .iter()
            .find_map(|index| self.tensor(index).filter(|facts| facts.may_be_cuda()))
            .map_or(Kind::Unknown, |facts| {
                Kind::Tensor(TensorFacts {
                    data_dependent: facts.boolean,
                    ..TensorFacts::on(facts.device)
                })
            })
    }

    /// `opt.state[p]["step"]` (also through `state = opt.state[p]`): an optimizer keeps its step
    /// count as a CPU tensor unless it is fused or `capturable`. Measured on an H100 with PyTorch
    /// 2.11 (docs/accuracy.md): after a step, AdamW's and Adagrad's step is on the CPU and its
    /// `.item()` takes 0.02 ms behind queued work; `Adam(capturable=True)`'s and
    /// `AdamW(fused=True)`'s is on the GPU and takes 428 ms. A fused optimizer's, or one the code
    /// builds `capturable`, stays unknown.
    fn is_optimizer_step(&self, subscript: &ast::ExprSubscript) -> bool {
        let Expr::StringLiteral(key) = subscript.slice.as_ref() else {
            return false;
        };
        if literal_text(&key.value) != Some("step") {
            return false;
        }
        let state = match subscript.value.as_ref() {
            Expr::Name(name) => match self.lookup(name.id.as_str()) {
                Some(Binding { value: Some(value), .. }) => value,
                _ => return false,
            },
            value => value,
        };
        let Expr::Subscript(per_parameter) = state else {
            return false;
        };
        let Expr::Attribute(attribute) = per_parameter.value.as_ref() else {
            return false;
        };
        if attribute.attr.as_str() != "state" {
            return false;
        }
        match self.kind_of(&attribute.value) {
            Kind::Optimizer(optimizer) => !optimizer.fused && !optimizer.capturable,
            Kind::Unknown | Kind::Object(_) => true,
            _ => false,
        }
    }

    /// Is this index a boolean mask (or a tuple holding one)? A parameter named as a mask
    /// (`mask`, `*_mask`, `keep`, `valid`) whose kind the code does not show counts as one.
    pub fn is_boolean_index(&self, index: &Expr) -> bool {
        let is_mask = |expr: &Expr| self.is_boolean_tensor(expr) || self.is_mask_parameter(expr);
        match index {
            Expr::Tuple(tuple) => tuple.elts.iter().any(is_mask),
            _ => is_mask(index),
        }
    }

    pub fn is_mask_parameter(&self, expr: &Expr) -> bool {
        let Expr::Name(name) = expr else {
            return false;
        };
        let Some(Binding {
            source: BindingSource::Parameter(_),
            kind,
            ..
        }) = self.lookup(name.id.as_str())
        else {
            return false;
        };
        let unknown = match kind {
            Kind::Tensor(facts) => !facts.integer,
            other => other.is_opaque(),
        };
        unknown && super::names::names_a_mask(name.id.as_str())
    }

    pub fn is_boolean_tensor(&self, expr: &Expr) -> bool {
        self.asked(expr, Question::Mask)
            .tensor()
            .is_some_and(|facts| facts.boolean)
    }

    fn binop_kind(&self, binop: &ast::ExprBinOp) -> Kind {
        let left = self.kind_of(&binop.left);
        let right = self.kind_of(&binop.right);
        match (left, right) {
            (Kind::Tensor(a), Kind::Tensor(b)) => {
                // bool x bool stays bool for the logical operators and for `*` and `+` (and, or).
                let logical = matches!(
                    binop.op,
                    Operator::BitAnd | Operator::BitOr | Operator::BitXor | Operator::Mult | Operator::Add
                );
                Kind::Tensor(TensorFacts {
                    device: a.device.combine(b.device),
                    boolean: logical && a.boolean && b.boolean,
                    integer: a.integer && b.integer && keeps_integers(binop.op),
                    data_dependent: a.data_dependent || b.data_dependent,
                    pinned: false,
                    batch: BatchSource::NotABatch,
                })
            }
            (Kind::Tensor(facts), other) | (other, Kind::Tensor(facts)) => {
                // The other operand is not known to be a tensor: almost always a Python number
                // (a CPU tensor mixed with a CUDA one would raise), so the device carries over.
                let device = facts.device;
                let integer = facts.integer && other == Kind::Number && keeps_integers(binop.op);
                Kind::Tensor(TensorFacts {
                    device,
                    integer,
                    ..facts.numeric()
                })
            }
            (Kind::Number, Kind::Number) => Kind::Number,
            (Kind::NdArray, Kind::Number | Kind::NdArray) | (Kind::Number, Kind::NdArray) => Kind::NdArray,
            (Kind::Str, _) if matches!(binop.op, Operator::Mod | Operator::Add | Operator::Mult) => Kind::Str,
            (Kind::Number, Kind::Str) if binop.op == Operator::Mult => Kind::Str,
            // `[0] * n`, `a + b` of number lists.
            (Kind::NumberList, Kind::NumberList | Kind::Number) | (Kind::Number, Kind::NumberList) => Kind::NumberList,
            (Kind::List | Kind::NumberList, Kind::List | Kind::NumberList | Kind::Number)
            | (Kind::Number, Kind::List) => Kind::List,
            _ => Kind::Unknown,
        }
    }

    fn compare_kind(&self, compare: &ast::ExprCompare) -> Kind {
        use ast::CmpOp;
        if compare
            .ops
            .iter()
            .all(|op| matches!(op, CmpOp::Is | CmpOp::IsNot | CmpOp::In | CmpOp::NotIn))
        {
            return Kind::Number;
        }
        let mut device: Option<Device> = None;
        let mut data_dependent = false;
        let mut all_host = true;
        for operand in std::iter::once(&*compare.left).chain(compare.comparators.iter()) {
            let kind = self.kind_of(operand);
            if let Kind::Tensor(facts) = kind {
                device = Some(device.map_or(facts.device, |d| d.combine(facts.device)));
                data_dependent |= facts.data_dependent;
            }
            all_host &= kind.is_known_host_value() && !matches!(kind, Kind::Tensor(_));
        }
        match device {
            Some(device) => Kind::Tensor(TensorFacts {
                data_dependent,
                ..TensorFacts::on(device).boolean()
            }),
            None if all_host => Kind::Number,
            None => Kind::Unknown,
        }
    }

    /// The device an argument names: `"cuda"`, `torch.device("cpu")`, a device variable,
    /// `x.device`, `0`. `None` when the argument is not a device (a dtype, `None`).
    pub fn device_of(&self, expr: &Expr) -> Option<Device> {
        match expr {
            Expr::StringLiteral(string) => literal_text(&string.value).map(device_from_str),
            Expr::NoneLiteral(_) => None,
            Expr::If(if_expr) => {
                let a = self.device_of(&if_expr.body)?;
                let b = self.device_of(&if_expr.orelse)?;
                Some(a.join(b))
            }
            _ => match self.asked(expr, Question::Device) {
                Kind::Device(device) => Some(device),
                // A device index (`device=0`, `device=rank`).
                Kind::Number => Some(Device::Cuda),
                Kind::Dtype | Kind::NoneValue | Kind::Tensor(_) => None,
                Kind::Str => Some(Device::Unknown),
                // `x.to(dtype)`, `x.to(self.dtype)`, `x.to(torch.get_default_dtype())` change
                // the dtype; anything else unknown may be a device.
                Kind::Unknown if names_a_dtype(expr) => None,
                Kind::Unknown => Some(Device::Unknown),
                _ => None,
            },
        }
    }

    /// The device a `.to(...)` call moves to: `None` when it only changes the dtype.
    pub fn target_device_of_to(&self, call: &ast::ExprCall) -> Option<Device> {
        if let Some(keyword) = call.arguments.find_keyword("device") {
            return self.device_of(&keyword.value);
        }
        let first = call.arguments.args.first()?;
        if let Kind::Tensor(other) = self.asked(first, Question::Device) {
            return Some(other.device);
        }
        self.device_of(first)
    }

    fn infer_call(&self, call: &ast::ExprCall) -> CallKinds {
        // `tokenizer(text, return_tensors="pt")`, `processor(images=..., return_tensors="pt")`:
        // tensors made on the CPU, whoever made them.
        if call.arguments.find_keyword("return_tensors").is_some_and(
            |keyword| matches!(&keyword.value, Expr::StringLiteral(pt) if literal_text(&pt.value) == Some("pt")),
        ) {
            return CallKinds {
                result: Kind::Tensor(TensorFacts {
                    batch: BatchSource::Encoded,
                    ..TensorFacts::on(Device::Cpu)
                }),
                callee: Kind::Unknown,
            };
        }
        if let Some(batches) = self.batches_of(call) {
            return CallKinds {
                result: batches,
                callee: Kind::Unknown,
            };
        }
        if let Some(instance) = self.registry_instance(call) {
            return CallKinds {
                result: instance,
                callee: Kind::Unknown,
            };
        }
        if let Some(qualified) = self.callee(call) {
            return CallKinds {
                result: self.qualified_call_kind(&qualified, call),
                callee: Kind::Unknown,
            };
        }
        let (result, callee) = self.unqualified_call_kind(call);
        CallKinds { result, callee }
    }

    /// `MODELS.build(cfg)` (mmengine), `ROI_HEADS.get(name)(cfg)` (fvcore, detectron2): an
    /// instance of whichever class of the registry the config names. The file knows only the
    /// registry; the project knows its classes (those its decorators register), so the instance
    /// is referred to by the registry's name, as an imported class is by its own.
    fn registry_instance(&self, call: &ast::ExprCall) -> Option<Kind> {
        let registry = match call.func.as_ref() {
            Expr::Attribute(build) if build.attr.as_str() == "build" => &build.value,
            Expr::Call(get) => match get.func.as_ref() {
                Expr::Attribute(get) if get.attr.as_str() == "get" => &get.value,
                _ => return None,
            },
            _ => return None,
        };
        let spelled = self.registry_spelled(registry)?;
        Some(Kind::Object(self.imported_class_ref(&spelled)))
    }

    /// How the file spells a registry (what `@MODELS.register_module()` registers in and
    /// `MODELS.build(cfg)` builds from): the qualified name of an imported one
    /// (`mmdet.registry.MODELS`), the name of one the module makes itself
    /// (`MODELS = Registry("model")`). `None` for anything else.
    pub(crate) fn registry_spelled(&self, expr: &Expr) -> Option<String> {
        if let Some(qualified) = self.qualified_name(expr) {
            return Some(qualified);
        }
        let Expr::Name(name) = expr else {
            return None;
        };
        let binding = self.lookup(name.id.as_str())?;
        let module_level = self.scopes[0]
            .bindings
            .get(name.id.as_str())
            .is_some_and(|global| std::ptr::eq(global, binding));
        (module_level && matches!(binding.source, BindingSource::Value) && matches!(binding.value, Some(Expr::Call(_))))
            .then(|| name.id.to_string())
    }

    /// A call not reached through an import: a module instance, a method, a local function
    /// or class, a builtin. Returns (result, callee).
    fn unqualified_call_kind(&self, call: &ast::ExprCall) -> (Kind, Kind) {
        // Each link of a method chain evaluates its receiver once (twice would be exponential
        // in the chain's length).
        let (callee, receiver) = match call.func.as_ref() {
            Expr::Attribute(attribute) => match self.named_attribute_kind(attribute) {
                Some(kind) => (kind, None),
                None => {
                    let receiver = self.kind_of(&attribute.value);
                    (self.attribute_of(receiver, attribute.attr.as_str()), Some(receiver))
                }
            },
            func => (self.kind_of(func), None),
        };
        // What the project found the methods reached return says more than a module's
        // generic tensor.
        if let Some(returns) = self.project_result(call) {
            return (self.kind_from_project(&returns.kind), callee);
        }
        // A module of a class of this file whose `forward` gives host data or several tensors
        // (a matcher's CPU indices) returns that, not a network's output.
        if let Some(returned) = self
            .instance_method_returns(callee, "forward")
            .filter(|returned| match returned {
                Kind::Tensor(facts) => facts.device == Device::Cpu,
                other => matches!(other, Kind::TensorSequence(_) | Kind::Number | Kind::NumberList),
            })
        {
            return (returned, callee);
        }
        if matches!(callee, Kind::Module(..)) || (callee.is_opaque() && self.looks_like_model_call(call)) {
            // Its shape follows its inputs', whose data-dependent sizes synced where they were
            // made.
            let output = TensorFacts {
                batch: BatchSource::Output,
                data_dependent: false,
                ..self.device_of_inputs(call).numeric()
            };
            return (Kind::Tensor(output), callee);
        }
        let result = match call.func.as_ref() {
            // `Net.from_config(cfg)`, `Net._from_config(cfg)`: an alternative constructor.
            Expr::Attribute(attribute)
                if is_alternative_constructor(attribute.attr.as_str())
                    && let Some(instance) = self.instance_of_class_named(&attribute.value) =>
            {
                instance
            }
            Expr::Attribute(attribute)
                if matches!(attribute.value.as_ref(), Expr::Name(receiver) if receiver.id.as_str() == "self")
                    && let Some(kind) = self.stored_library_call(attribute.attr.as_str(), call) =>
            {
                kind
            }
            Expr::Attribute(attribute) => {
                let receiver = receiver.unwrap_or_else(|| self.kind_of(&attribute.value));
                self.method_call_kind(attribute, call, receiver)
            }
            Expr::Name(name) => match self.lookup(name.id.as_str()) {
                None => self.builtin_call_kind(name.id.as_str(), call),
                Some(Binding {
                    source: BindingSource::Function(id),
                    ..
                }) => self.local_returns(*id, call),
                Some(Binding {
                    source: BindingSource::Class(id),
                    ..
                }) => self.instance_of_local(*id),
                Some(binding) => match binding.kind {
                    Kind::Module(..) => Kind::Tensor(TensorFacts::on(Device::Unknown)),
                    _ => Kind::Unknown,
                },
            },
            _ => Kind::Unknown,
        };
        (result, callee)
    }

    /// An empty tensor made to hold a place (`torch.empty(0)`, `torch.zeros(0)`,
    /// `torch.tensor([])`): what is set in its place is what the attribute holds.
    pub(crate) fn is_empty_placeholder(&self, value: &Expr) -> bool {
        let Expr::Call(call) = value else {
            return false;
        };
        let Some(callee) = self.callee(call) else {
            return false;
        };
        let empty = |expr: &Expr| match expr {
            Expr::NumberLiteral(_) => is_zero_int(expr),
            Expr::List(list) => list.elts.is_empty(),
            Expr::Tuple(tuple) => tuple.elts.is_empty(),
            _ => false,
        };
        match (&*callee, &*call.arguments.args) {
            ("torch.empty" | "torch.zeros" | "torch.ones" | "torch.tensor" | "torch.Tensor", [size]) => empty(size),
            ("torch.Tensor", []) => true,
            _ => false,
        }
    }

    /// An instance of the project class `expr` names (a local class, or an imported name
    /// spelled as a class is).
    fn instance_of_class_named(&self, expr: &Expr) -> Option<Kind> {
        if let Expr::Name(name) = expr
            && let Some(Binding {
                source: BindingSource::Class(id),
                ..
            }) = self.lookup(name.id.as_str())
        {
            return Some(self.instance_of_local(*id));
        }
        self.project_instance(&self.qualified_name(expr)?)
    }

    /// `model(xb)`, `self.backbone(x)`, `criterion(out, y)`, `model(**inputs)`: an unknown
    /// callable named like a network or a loss, applied to a tensor that may be on the GPU (or to
    /// keywords alone), returns such a tensor.
    fn looks_like_model_call(&self, call: &ast::ExprCall) -> bool {
        let name = match call.func.as_ref() {
            Expr::Name(name) if self.lookup(name.id.as_str()).is_some() => name.id.as_str(),
            Expr::Attribute(attribute) => attribute.attr.as_str(),
            _ => return false,
        };
        // The arguments first: most calls take no GPU tensor, and their kinds are cached. A
        // network called with keywords alone (`model(**inputs)`, `model(input_ids=ids)`) is
        // told by its name.
        if call.arguments.args.is_empty() && !call.arguments.keywords.is_empty() {
            return super::names::calls_a_network(name);
        }
        if !call
            .arguments
            .args
            .iter()
            .any(|arg| self.kind_of(arg).is_maybe_cuda_tensor())
        {
            return false;
        }
        super::names::names_a_network(name)
    }

    /// What iterates a loader's batches: `tqdm(loader)`, `iter(loader)`, `enumerate(loader)`
    /// (and each of them around another), of a `DataLoader` or of a value named as a loader.
    fn batches_of(&self, call: &ast::ExprCall) -> Option<Kind> {
        let name = match call.func.as_ref() {
            Expr::Name(name) => name.id.as_str(),
            Expr::Attribute(attribute) => attribute.attr.as_str(),
            _ => return None,
        };
        let builtin = || self.lookup(name).is_none();
        let enumerates = match name {
            "enumerate" if builtin() => true,
            "iter" if builtin() => false,
            name if super::names::names_a_progress_wrapper(name) => false,
            _ => return None,
        };
        let loader = call.arguments.args.first()?;
        match self.kind_of(loader) {
            Kind::DataLoader {
                pinned,
                constructor,
                enumerated,
            } => Some(Kind::DataLoader {
                pinned,
                constructor,
                enumerated: enumerated || enumerates,
            }),
            Kind::Unknown if super::names::names_a_loader(loader) => Some(Kind::DataLoader {
                pinned: false,
                constructor: None,
                enumerated: enumerates,
            }),
            _ => None,
        }
    }

    fn builtin_call_kind(&self, name: &str, call: &ast::ExprCall) -> Kind {
        match name {
            "len" | "int" | "float" | "bool" | "round" | "abs" | "hash" | "id" | "isinstance" | "callable" => {
                match (name, call.arguments.args.first().map(|arg| self.kind_of(arg))) {
                    ("abs", Some(kind @ Kind::Tensor(_))) => kind,
                    // `abs(d)` of a value nothing is known of may be a tensor's.
                    ("abs", Some(Kind::Unknown)) => Kind::Unknown,
                    _ => Kind::Number,
                }
            }
            "str" | "repr" | "format" => Kind::Str,
            "list" | "sorted" => Kind::List,
            "tuple" => Kind::Tuple,
            "dict" => Kind::Dict,
            // `next(it)` of `it = iter(loader)`: one batch, as a `for` over it gives.
            "next" => call
                .arguments
                .args
                .first()
                .map_or(Kind::Unknown, |it| self.kind_of(it).element()),
            "sum" | "max" | "min" => {
                let mut kind: Option<Kind> = None;
                for arg in &call.arguments.args {
                    let arg_kind = match self.kind_of(arg) {
                        Kind::TensorSequence(facts) => Kind::Tensor(facts.numeric()),
                        Kind::Tensor(facts) if call.arguments.args.len() == 1 => Kind::Tensor(facts.numeric()),
                        other => other,
                    };
                    kind = Some(kind.map_or(arg_kind, |k| k.join(arg_kind)));
                }
                kind.unwrap_or_default()
            }
            _ => Kind::Unknown,
        }
    }

    /// The device a factory's keywords give it: `device=d`, or a `"device"` entry of a dict
    /// spread into them (`**tensor_kwargs` with `tensor_kwargs = {"device": x.device, ...}`); a
    /// spread of what the function cannot see may give any (`Some(Some(Device::Unknown))`).
    /// `None` where none is given; `Some(None)` where the given one cannot be told as a device.
    fn device_given(&self, arguments: &ast::Arguments) -> Option<Option<Device>> {
        if let Some(keyword) = arguments.find_keyword("device") {
            return Some(self.device_of(&keyword.value));
        }
        let mut given = None;
        for spread in arguments.keywords.iter().filter(|keyword| keyword.arg.is_none()) {
            let dict = match &spread.value {
                Expr::Name(name) => self.lookup(name.id.as_str()).and_then(|binding| binding.value),
                value => Some(value),
            };
            let device = match dict {
                Some(Expr::Dict(dict)) => dict
                    .items
                    .iter()
                    .find(|item| matches!(&item.key, Some(Expr::StringLiteral(key)) if literal_text(&key.value) == Some("device")))
                    .map(|item| self.device_of(&item.value)),
                Some(Expr::Call(call)) if matches!(call.func.as_ref(), Expr::Name(name) if name.id == "dict") => {
                    self.device_given(&call.arguments)
                }
                _ => Some(Some(Device::Unknown)),
            };
            given = given.or(device);
        }
        given
    }

    fn qualified_call_kind(&self, qualified: &str, call: &ast::ExprCall) -> Kind {
        let arguments = &call.arguments;
        let keyword_true = |name: &str| {
            arguments
                .find_keyword(name)
                .is_some_and(|k| matches!(&k.value, Expr::BooleanLiteral(b) if b.value))
        };
        if api::is_factory(qualified) {
            let device = match self.device_given(arguments) {
                Some(device) => device.unwrap_or(self.default_device()),
                None if api::is_like_factory(qualified) => arguments
                    .args
                    .first()
                    .and_then(|arg| self.tensor(arg))
                    .map_or(Device::Unknown, |facts| facts.device),
                None => match (qualified, arguments.args.first().map(|arg| self.kind_of(arg))) {
                    ("torch.as_tensor" | "torch.asarray", Some(Kind::Tensor(facts))) => facts.device,
                    _ => self.default_device(),
                },
            };
            let dtype = self.dtype_keyword(call);
            // `ones_like(mask)` is a mask.
            let like = match qualified {
                "torch.ones_like" | "torch.zeros_like" | "torch.empty_like" | "torch.full_like" if dtype.is_none() => {
                    arguments.args.first().and_then(|arg| self.tensor(arg))
                }
                _ => None,
            };
            let boolean = dtype.as_deref() == Some("torch.bool") || like.is_some_and(|facts| facts.boolean);
            let integer = match dtype.as_deref() {
                None if like.is_some() => like.is_some_and(|facts| facts.integer),
                Some(dtype) => api::is_integer_dtype(dtype),
                // `arange` of integers counts in int64.
                None => {
                    matches!(qualified, "torch.randint" | "torch.randperm" | "torch.randint_like")
                        // `torch.tensor(3)`, `torch.tensor([0, 2])`: int64 from int literals.
                        || (matches!(qualified, "torch.tensor" | "torch.as_tensor")
                            && arguments.args.first().is_some_and(holds_only_int_literals))
                        || (qualified == "torch.arange"
                            && !arguments
                                .args
                                .iter()
                                .any(|arg| matches!(arg, Expr::NumberLiteral(n) if n.value.is_float())))
                }
            };
            let pinned = keyword_true("pin_memory");
            return Kind::Tensor(TensorFacts {
                boolean,
                integer,
                pinned,
                ..TensorFacts::on(device)
            });
        }
        match qualified {
            "torch.from_numpy" => return Kind::Tensor(TensorFacts::on(Device::Cpu)),
            // A `Variable` is its tensor (autograd's old wrapper).
            "torch.autograd.Variable" | "torch.autograd.variable.Variable" => {
                return match arguments.args.first().map(|arg| self.kind_of(arg)) {
                    Some(kind @ Kind::Tensor(_)) => kind,
                    _ => Kind::Tensor(TensorFacts::on(Device::Unknown)),
                };
            }
            // `torch.Tensor([[3, 224, 224]])` copies its data into a new float tensor.
            "torch.Tensor" => return Kind::Tensor(TensorFacts::on(self.default_device())),
            // The legacy typed constructors: `torch.FloatTensor([0.5])` is a CPU tensor,
            // `torch.cuda.LongTensor(n)` a CUDA one, of the type's dtype.
            typed if let Some((device, dtype)) = api::legacy_tensor_type(typed) => {
                let facts = TensorFacts::on(device);
                return Kind::Tensor(match dtype {
                    "Bool" => facts.boolean(),
                    "Long" | "Int" | "Short" | "Byte" | "Char" => facts.integer(),
                    _ => facts,
                });
            }
            "torch.device" => {
                return Kind::Device(
                    arguments
                        .args
                        .first()
                        .and_then(|arg| self.device_of(arg))
                        .unwrap_or(Device::Unknown),
                );
            }
            "torch.nn.Parameter" | "torch.nn.parameter.Parameter" | "torch.nn.Buffer" => {
                return Kind::Tensor(TensorFacts::on(Device::Unknown));
            }
            "torch.cuda.FloatTensor" | "torch.cuda.LongTensor" => return Kind::Tensor(TensorFacts::on(Device::Cuda)),
            _ => {}
        }
        if let Some(module) = api::nn_module_class(qualified) {
            if module.only_from_torch_constructor() {
                self.loss_module_made.set(true);
            }
            return Kind::Module(module, None);
        }
        if let Some(adam_family) = api::optimizer_class(qualified) {
            return Kind::Optimizer(OptimizerFacts {
                fused: keyword_true("fused"),
                capturable: arguments
                    .find_keyword("capturable")
                    .is_some_and(|k| !matches!(&k.value, Expr::BooleanLiteral(b) if !b.value)),
                adam_family,
                constructor: call.range(),
            });
        }
        if api::is_grad_scaler(qualified) {
            return Kind::GradScaler;
        }
        if api::is_data_loader(qualified) {
            return Kind::DataLoader {
                pinned: keyword_true("pin_memory"),
                constructor: Some(call.range()),
                enumerated: false,
            };
        }
        if api::is_distribution_class(qualified) {
            let disabled = arguments
                .find_keyword("validate_args")
                .is_some_and(|k| matches!(&k.value, Expr::BooleanLiteral(b) if !b.value));
            // Its parameters' device: a Python number's is the default one.
            let parameters = arguments.args.iter().chain(
                arguments
                    .keywords
                    .iter()
                    .filter(|k| k.arg.as_ref().is_some_and(|name| name != "validate_args"))
                    .map(|k| &k.value),
            );
            let device = parameters
                .map(|parameter| match self.kind_of(parameter) {
                    Kind::Tensor(facts) => facts.device,
                    Kind::Number => self.default_device(),
                    _ => Device::Unknown,
                })
                .reduce(Device::combine)
                .unwrap_or(Device::Unknown);
            return Kind::Distribution {
                validating: !disabled && !self.validation_disabled(),
                normal: api::samples_with_torch_normal(qualified),
                device,
            };
        }
        if api::is_cuda_sync_object(qualified) {
            return Kind::CudaSyncObject;
        }
        if qualified.starts_with("numpy.") {
            return Kind::NdArray;
        }
        if qualified == "typing.cast"
            && let Some(class) = arguments.args.first()
        {
            return self.annotation_kind(class);
        }
        if !is_library(qualified)
            && let Some(kind) = self.project_call_kind(qualified, call)
        {
            return kind;
        }
        if api::returns_tensor(qualified) {
            let name = qualified.rsplit('.').next().unwrap_or(qualified);
            return self.torch_function_kind(name, call);
        }
        match qualified.rsplit('.').next() {
            Some(name)
                if matches!(name, "numel" | "equal" | "allclose")
                    || name.starts_with("is_")
                    || name.starts_with("are_") =>
            {
                Kind::Number
            }
            _ => Kind::Unknown,
        }
    }

    /// The device of a torch op's result: CUDA if any tensor input is, CPU if all are.
    fn device_of_inputs(&self, call: &ast::ExprCall) -> TensorFacts {
        let mut facts: Option<TensorFacts> = None;
        // An input of unknown kind is most likely a tensor too (a model's output): its device
        // is unknown, so the result's is.
        let mut unknown_input = false;
        let mut visit = |kind: Kind| {
            unknown_input |= kind == Kind::Unknown;
            if let Kind::Tensor(t) | Kind::TensorSequence(t) = kind {
                facts = Some(match facts {
                    None => t,
                    Some(f) => TensorFacts {
                        device: f.device.combine(t.device),
                        data_dependent: f.data_dependent || t.data_dependent,
                        ..f
                    },
                });
            }
        };
        for arg in &call.arguments.args {
            match arg {
                Expr::List(list) => list.elts.iter().for_each(|elt| visit(self.kind_of(elt))),
                Expr::Tuple(tuple) => tuple.elts.iter().for_each(|elt| visit(self.kind_of(elt))),
                _ => visit(self.kind_of(arg)),
            }
        }
        let facts = facts.map_or(TensorFacts::on(Device::Unknown), |f| TensorFacts {
            pinned: false,
            batch: BatchSource::NotABatch,
            ..f
        });
        if unknown_input {
            facts.with_device(facts.device.combine(Device::Unknown))
        } else {
            facts
        }
    }

    fn torch_function_kind(&self, name: &str, call: &ast::ExprCall) -> Kind {
        // Python numbers alone (`torch.div(n, k, rounding_mode="floor")`) make a tensor on the
        // default device, the CPU unless `with torch.device(...)` says otherwise.
        let numbers_only =
            !call.arguments.args.is_empty() && call.arguments.args.iter().all(|arg| self.kind_of(arg) == Kind::Number);
        let inputs = if numbers_only {
            TensorFacts::on(self.default_device())
        } else {
            self.device_of_inputs(call)
        };
        let as_tuple = call
            .arguments
            .find_keyword("as_tuple")
            .is_some_and(|k| matches!(&k.value, Expr::BooleanLiteral(b) if b.value));
        match name {
            "where" if call.arguments.args.len() == 1 && call.arguments.keywords.is_empty() => {
                Kind::TensorSequence(TensorFacts {
                    data_dependent: true,
                    ..inputs.integer()
                })
            }
            "nonzero" if as_tuple => Kind::TensorSequence(TensorFacts {
                data_dependent: true,
                ..inputs.integer()
            }),
            "nonzero" | "argwhere" => Kind::Tensor(TensorFacts {
                data_dependent: true,
                ..inputs.integer()
            }),
            _ if api::returns_indices(name) => Kind::Tensor(TensorFacts {
                data_dependent: false,
                ..inputs.integer()
            }),
            "unique" | "unique_consecutive"
                if call.arguments.keywords.iter().any(|k| {
                    k.arg.as_ref().is_some_and(|a| a.as_str().starts_with("return_"))
                        && matches!(&k.value, Expr::BooleanLiteral(b) if b.value)
                }) =>
            {
                Kind::TensorSequence(TensorFacts {
                    data_dependent: true,
                    ..inputs.numeric()
                })
            }
            _ if api::is_data_dependent_function(name) => Kind::Tensor(TensorFacts {
                data_dependent: true,
                ..inputs.numeric()
            }),
            _ if api::returns_tensor_sequence(name) => Kind::TensorSequence(inputs.numeric()),
            _ if returns_values_and_indices(name, call)
                && call
                    .arguments
                    .args
                    .get(1)
                    .is_none_or(|dim| self.kind_of(dim) == Kind::Number) =>
            {
                Kind::TensorSequence(inputs.numeric())
            }
            _ if api::is_boolean_function(name) => Kind::Tensor(inputs.boolean()),
            _ if api::is_reduction(name) => Kind::Tensor(TensorFacts {
                data_dependent: false,
                ..inputs.numeric()
            }),
            _ if api::keeps_dtype(name) => Kind::Tensor(self.with_dtype_of_inputs(inputs, name, call)),
            _ => Kind::Tensor(inputs.numeric()),
        }
    }

    /// The dtype a call's `dtype=` names (`torch.bool`), qualified.
    fn dtype_keyword(&self, call: &ast::ExprCall) -> Option<String> {
        call.arguments
            .find_keyword("dtype")
            .and_then(|k| self.qualified_name(&k.value))
    }

    /// The result of an op that keeps its inputs' dtype (`torch.stack`, `torch.cat`,
    /// `torch.where(c, a, b)`): a mask when every tensor input is one (an index
    /// when every one is an index), unless `dtype=` says otherwise.
    fn with_dtype_of_inputs(&self, inputs: TensorFacts, name: &str, call: &ast::ExprCall) -> TensorFacts {
        if let Some(dtype) = self.dtype_keyword(call) {
            return of_dtype(inputs, &dtype);
        }
        let args = &call.arguments.args;
        let inputs_of_dtype: &[Expr] = match name {
            // The condition picks; the values give the dtype.
            "where" => args.get(1..).unwrap_or_default(),
            _ => args,
        };
        let (mut boolean, mut integer, mut any) = (true, true, false);
        let mut visit = |kind: Kind| {
            if let Kind::Tensor(t) | Kind::TensorSequence(t) = kind {
                boolean &= t.boolean;
                integer &= t.integer;
                any = true;
            } else if kind != Kind::Number {
                boolean = false;
                integer = false;
            }
        };
        for arg in inputs_of_dtype {
            match arg {
                Expr::List(list) => list.elts.iter().for_each(|elt| visit(self.kind_of(elt))),
                Expr::Tuple(tuple) => tuple.elts.iter().for_each(|elt| visit(self.kind_of(elt))),
                _ => visit(self.kind_of(arg)),
            }
        }
        match (any, boolean, integer) {
            (true, true, _) => inputs.boolean(),
            (true, _, true) => inputs.integer(),
            _ => inputs.numeric(),
        }
    }

    fn method_call_kind(&self, attribute: &ast::ExprAttribute, call: &ast::ExprCall, receiver: Kind) -> Kind {
        let method = attribute.attr.as_str();
        match receiver {
            Kind::Tensor(facts) => self.tensor_method_kind(facts, method, call),
            Kind::TensorSequence(facts) if matches!(method, "items" | "values") => Kind::TensorSequence(facts),
            Kind::Module(..) | Kind::Object(_) if let Some(kind) = self.instance_method_returns(receiver, method) => {
                kind
            }
            // An instance of a project class that may be a module: moving it returns itself.
            Kind::Object(class) => match method {
                "to" | "cuda" | "cpu" | "train" | "eval" | "float" | "half" | "bfloat16" | "double"
                | "requires_grad_" => Kind::Object(class),
                _ => Kind::Unknown,
            },
            Kind::Module(module, class) => match method {
                "parameters" | "buffers" => Kind::TensorSequence(TensorFacts::on(Device::Unknown)),
                "to" | "cuda" | "cpu" | "train" | "eval" | "float" | "half" | "bfloat16" | "double"
                | "requires_grad_" | "type" => Kind::Module(module, class),
                "state_dict" => Kind::Dict,
                "forward" => Kind::Tensor(TensorFacts::on(Device::Unknown)),
                _ => Kind::Unknown,
            },
            Kind::Distribution { device, .. } => match method {
                "sample" | "rsample" => Kind::Tensor(TensorFacts::on(device)),
                "log_prob" | "entropy" | "cdf" | "icdf" => Kind::Tensor(TensorFacts::on(Device::Unknown)),
                _ => Kind::Unknown,
            },
            Kind::NdArray => match method {
                "tolist" => Kind::NumberList,
                "item" => Kind::Number,
                _ => Kind::NdArray,
            },
            Kind::Device(_) | Kind::Number | Kind::Str | Kind::List | Kind::NumberList | Kind::Dict | Kind::Tuple => {
                Kind::Unknown
            }
            Kind::Unknown => {
                if let Expr::Name(receiver) = attribute.value.as_ref()
                    && matches!(receiver.id.as_str(), "self" | "cls")
                    && let Some(id) = self.method_of_current_class(method)
                {
                    return self.local_returns(id, call);
                }
                match method {
                    "to" => match self.target_device_of_to(call) {
                        Some(device) => Kind::Tensor(TensorFacts::on(device)),
                        None => Kind::Unknown,
                    },
                    "cuda" => Kind::Tensor(TensorFacts::on(Device::Cuda)),
                    // `t.dim()`, `t.dense_dim()`: a Python value whatever `t` is.
                    _ if api::method_returns_python_value(method) => Kind::Number,
                    // Only a tensor has the method: what it gives a tensor of unknown device and
                    // dtype (`.bool()` is a mask, `.long()` integers).
                    _ if api::is_tensor_only_method(method) && !matches!(method, "cpu" | "item" | "numel") => {
                        self.tensor_method_kind(TensorFacts::on(Device::Unknown), method, call)
                    }
                    _ => Kind::Unknown,
                }
            }
            _ => Kind::Unknown,
        }
    }

    /// What `self.<attr>(...)` gives where the class keeps torch functions in `attr`
    /// ([`StoredCallable::Library`]): what each of them gives, joined.
    fn stored_library_call(&self, attr: &str, call: &ast::ExprCall) -> Option<Kind> {
        let stored = self
            .lineage(self.flow.class?)
            .find_map(|id| self.classes[id as usize].stored_callables.get(attr))?;
        stored
            .iter()
            .filter_map(|callable| match callable {
                StoredCallable::Library(qualified) => Some(self.qualified_call_kind(qualified, call)),
                StoredCallable::Method(_) | StoredCallable::Function(_) => None,
            })
            .reduce(Kind::join)
    }

    /// The dtype a call names among its positional arguments or as `dtype=` (`t.to(x.device,
    /// torch.float16)`, `t.type(torch.bool)`).
    fn dtype_argument(&self, call: &ast::ExprCall) -> Option<String> {
        call.arguments
            .args
            .iter()
            .chain(call.arguments.find_keyword("dtype").map(|k| &k.value))
            .find_map(|arg| self.qualified_name(arg).filter(|q| api::is_dtype(q)))
    }

    fn tensor_method_kind(&self, facts: TensorFacts, method: &str, call: &ast::ExprCall) -> Kind {
        let keyword_true = |name: &str| {
            call.arguments
                .find_keyword(name)
                .is_some_and(|k| matches!(&k.value, Expr::BooleanLiteral(b) if b.value))
        };
        match method {
            "item" => Kind::Number,
            "tolist" => Kind::NumberList,
            "numpy" => Kind::NdArray,
            "size" if call.arguments.is_empty() => Kind::Tuple,
            "size" => Kind::Number,
            _ if api::method_returns_python_value(method) => Kind::Number,
            "cpu" => Kind::Tensor(facts.with_device(Device::Cpu)),
            "cuda" => Kind::Tensor(facts.with_device(Device::Cuda)),
            "to" => {
                let facts = self.dtype_argument(call).map_or(facts, |dtype| of_dtype(facts, &dtype));
                match self.target_device_of_to(call) {
                    Some(device) => Kind::Tensor(facts.with_device(device)),
                    None => Kind::Tensor(facts),
                }
            }
            // `t.type_as(other)`: `other`'s dtype and device.
            "type_as" => {
                let other = call.arguments.args.first().and_then(|arg| self.tensor(arg));
                let device = other.map_or(Device::Unknown, |other| other.device);
                let facts = facts.with_device(device).numeric();
                Kind::Tensor(other.map_or(facts, |other| TensorFacts {
                    boolean: other.boolean,
                    integer: other.integer,
                    ..facts
                }))
            }
            // `m.type(torch.bool)`: the dtype named (without one it returns a type name).
            "type" if call.arguments.is_empty() => Kind::Str,
            "type" => Kind::Tensor(self.dtype_argument(call).map_or(facts, |dtype| of_dtype(facts, &dtype))),
            "pin_memory" => Kind::Tensor(TensorFacts {
                pinned: true,
                ..facts.with_device(Device::Cpu)
            }),
            "items" | "values" if facts.has_tensor_fields() => Kind::TensorSequence(facts),
            "get" | "pop" if facts.has_tensor_fields() => Kind::Tensor(facts),
            "nonzero" if keyword_true("as_tuple") => Kind::TensorSequence(TensorFacts {
                data_dependent: true,
                ..facts.integer()
            }),
            "nonzero" | "argwhere" => Kind::Tensor(TensorFacts {
                data_dependent: true,
                ..facts.integer()
            }),
            "long" | "int" | "short" | "byte" => Kind::Tensor(TensorFacts {
                pinned: false,
                ..facts.integer()
            }),
            _ if api::returns_indices(method) => Kind::Tensor(TensorFacts {
                data_dependent: false,
                ..facts.integer()
            }),
            _ if api::is_data_dependent_function(method) => Kind::Tensor(TensorFacts {
                data_dependent: true,
                ..facts.numeric()
            }),
            "unique" => Kind::TensorSequence(TensorFacts {
                data_dependent: true,
                ..facts.numeric()
            }),
            // Pieces of a mask are masks.
            "split" | "chunk" | "unbind" | "tensor_split" | "hsplit" | "vsplit" | "dsplit" => {
                Kind::TensorSequence(TensorFacts { pinned: false, ..facts })
            }
            _ if api::returns_tensor_sequence(method) || returns_values_and_indices(method, call) => {
                Kind::TensorSequence(facts.numeric())
            }
            // New tensors like the receiver keep its dtype unless told otherwise.
            "new_ones" | "new_zeros" | "new_full" | "new_empty" => {
                let facts = TensorFacts {
                    data_dependent: false,
                    pinned: false,
                    ..facts
                };
                Kind::Tensor(self.dtype_keyword(call).map_or(facts, |dtype| of_dtype(facts, &dtype)))
            }
            _ if api::is_boolean_function(method) => {
                let reduced = api::is_reduction(method);
                Kind::Tensor(TensorFacts {
                    data_dependent: facts.data_dependent && !reduced,
                    ..facts.boolean()
                })
            }
            _ if api::is_reduction(method) => Kind::Tensor(TensorFacts {
                data_dependent: false,
                ..facts.numeric()
            }),
            _ if api::keeps_dtype_and_device(method) => Kind::Tensor(TensorFacts { pinned: false, ..facts }),
            _ => Kind::Tensor(facts.numeric()),
        }
    }

    /// The kind an annotation gives: tensors (`Optional[Tensor]`, `Tensor | None`), numbers,
    /// strings, devices, modules, arrays, and instances of project classes (`head: Head`).
    pub(crate) fn annotation_kind(&self, annotation: &Expr) -> Kind {
        let tensor = Kind::Tensor(TensorFacts::on(Device::Unknown));
        match annotation {
            Expr::StringLiteral(string) => match literal_text(&string.value).unwrap_or_default() {
                "Tensor" | "torch.Tensor" => tensor,
                "torch.BoolTensor" => Kind::Tensor(TensorFacts::on(Device::Unknown).boolean()),
                name if self.local_class(name).is_some() => self.instance_of_named(name),
                _ => Kind::Unknown,
            },
            Expr::Name(name) if name.id.as_str() == "Tensor" => tensor,
            Expr::Name(name) => match name.id.as_str() {
                "int" | "float" | "bool" | "complex" => Kind::Number,
                "str" => Kind::Str,
                local if self.local_class(local).is_some() => self.instance_of_named(local),
                _ => self.qualified_annotation(annotation),
            },
            // Optional[Tensor], Tensor | None
            Expr::Subscript(subscript) if names_optional(&subscript.value) => self.annotation_kind(&subscript.slice),
            // `list[int]`, `List[Tensor]`, `tuple[Tensor, Tensor]` (tensors, unpacked or
            // indexed), `dict[str, Tensor]`.
            Expr::Subscript(subscript) if let Some(container) = container_annotation(&subscript.value) => {
                let elements = match subscript.slice.as_ref() {
                    Expr::Tuple(tuple) => tuple.elts.iter().filter(|e| !e.is_ellipsis_literal_expr()).collect(),
                    element => vec![element],
                };
                let element_kinds: Vec<Kind> = elements.iter().map(|e| self.annotation_kind(e)).collect();
                let all = |kind: fn(Kind) -> bool| !element_kinds.is_empty() && element_kinds.iter().all(|k| kind(*k));
                match container {
                    Container::Dict => Kind::Dict,
                    // Also of tuples of tensors (`list[tuple[Tensor, Tensor]]`): several tensors.
                    _ if all(|k| matches!(k, Kind::Tensor(_) | Kind::TensorSequence(_))) => {
                        Kind::TensorSequence(TensorFacts::on(Device::Unknown))
                    }
                    Container::Sequence if all(|k| k == Kind::Number) => Kind::NumberList,
                    Container::Sequence => Kind::List,
                    Container::Tuple => Kind::Tuple,
                }
            }
            Expr::BinOp(binop) if matches!(&*binop.right, Expr::NoneLiteral(_)) => self.annotation_kind(&binop.left),
            _ => self.qualified_annotation(annotation),
        }
    }

    fn qualified_annotation(&self, annotation: &Expr) -> Kind {
        let Some(qualified) = self.qualified_name(annotation) else {
            return Kind::Unknown;
        };
        match qualified.as_str() {
            "torch.Tensor" | "torch.FloatTensor" | "torch.LongTensor" => Kind::Tensor(TensorFacts::on(Device::Unknown)),
            "torch.BoolTensor" => Kind::Tensor(TensorFacts::on(Device::Unknown).boolean()),
            "torch.device" => Kind::Device(Device::Unknown),
            "torch.nn.Module" => Kind::Module(ModuleKind::Plain, None),
            q if q.starts_with("numpy.") => Kind::NdArray,
            q => self.project_instance(q).unwrap_or_default(),
        }
    }

    /// The local class an instance kind is of.
    pub(crate) fn local_class_of(&self, kind: Kind) -> Option<ClassId> {
        match self.class_refs.borrow()[kind.class()? as usize] {
            ClassRef::Local(id) => Some(id),
            ClassRef::Imported(_) => None,
        }
    }

    /// `self.<attr>` of a local class, as its methods (or a local base's) assign it.
    pub(crate) fn local_class_attribute(&self, class: ClassId, attr: &str) -> Option<Kind> {
        let assigned = self
            .lineage(class)
            .find_map(|id| self.classes[id as usize].attrs.get(attr).copied());
        match assigned {
            // What the project found has every method the class calls on it.
            None | Some(Kind::Unknown) if !self.facts.duck_typed.is_empty() => {
                let name = self.classes[class as usize].name.as_str();
                self.facts
                    .duck_typed
                    .get(attr)
                    .and_then(|classes| classes.iter().find(|(class, _)| **class == *name))
                    .map(|(_, told)| self.kind_from_project(told))
                    .or(assigned)
            }
            _ => assigned,
        }
    }

    /// `head.proj` of an instance of a local class: what its methods assign to `self.proj`;
    /// of another file's class, what the project found they assign.
    fn instance_attribute(&self, receiver: Kind, attr: &str) -> Option<Kind> {
        match self.local_class_of(receiver) {
            Some(class) => self.local_class_attribute(class, attr),
            None => {
                let class = self.imported_class_of(receiver)?;
                let told = self.facts.attributes.get(&(class, attr.into()))?;
                Some(self.kind_from_project(told))
            }
        }
    }

    /// The class an instance kind is of, where it is one class of another file (as spelled).
    fn imported_class_of(&self, kind: Kind) -> Option<Box<str>> {
        match &self.class_refs.borrow()[kind.class()? as usize] {
            ClassRef::Imported(spelled) if !spelled.contains('|') => Some(spelled.clone()),
            _ => None,
        }
    }

    /// `x.attr` of an instance of another file's class, where the file cannot tell what it
    /// holds: the project is asked.
    pub(crate) fn note_imported_attribute(&self, attribute: &ast::ExprAttribute, question: Question) {
        let receiver = self.kind_of(&attribute.value);
        if let Some(class) = self.imported_class_of(receiver)
            && self.attribute_kind(attribute).is_opaque()
        {
            let key = (class, attribute.attr.id.clone());
            note_question(&mut self.demand.borrow_mut().attributes, key, question);
        }
    }

    /// What `head.loss(x)` returns for an instance of a local class, once the method is analysed.
    fn instance_method_returns(&self, receiver: Kind, method: &str) -> Option<Kind> {
        let class = self.local_class_of(receiver)?;
        let id = self.method_of(class, method)?;
        self.functions[id as usize].returns
    }

    pub fn method_of_current_class(&self, method: &str) -> Option<FunctionId> {
        self.method_of(self.flow.class?, method)
    }

    /// `method` as `class` resolves it: its own, else its nearest local base's.
    pub(crate) fn method_of(&self, class: ClassId, method: &str) -> Option<FunctionId> {
        self.lineage(class)
            .find_map(|id| self.classes[id as usize].methods.get(method).copied())
    }

    /// A class and the bases defined in this file it inherits from, nearest first (the first
    /// local base at each level; bounded: class hierarchies in one file are shallow).
    pub(crate) fn lineage(&self, class: ClassId) -> impl Iterator<Item = ClassId> + '_ {
        std::iter::successors(Some(class), |&id| {
            self.classes[id as usize]
                .bases
                .iter()
                .find_map(|base| self.local_class(base))
                .filter(|&base| base != id)
        })
        .take(8)
    }

    pub(crate) fn local_class(&self, name: &str) -> Option<ClassId> {
        match self.scopes[0].bindings.get(name)?.source {
            BindingSource::Class(id) => Some(id),
            _ => None,
        }
    }

    /// The innermost enclosing loop of the current function.
    pub fn innermost_loop(&self) -> Option<&LoopInfo> {
        self.flow.loops.last()
    }

    /// `set_default_validate_args(False)` ran before this point: at module level (for the whole
    /// file), or earlier in this function (functions run in an order the file does not show).
    pub fn validation_disabled(&self) -> bool {
        self.validation_disabled || self.flow.validation_disabled
    }

    /// Whether this name was passed to a blocking collective earlier in this function.
    pub fn is_all_reduced(&self, name: &str) -> bool {
        self.flow.all_reduced.iter().any(|reduced| reduced.as_str() == name)
    }

    /// Names other modules can import from this one.
    pub(crate) fn module_exports(&self) -> Exports {
        self.scopes[0]
            .bindings
            .iter()
            .filter_map(|(name, binding)| {
                let export = match &binding.source {
                    BindingSource::Function(id) => Export::Function(*id),
                    BindingSource::Class(id) => Export::Class(*id),
                    // A library's names are never resolved to project files.
                    BindingSource::Import(qualified) if !is_library(qualified) => {
                        let (module, name) = qualified.rsplit_once('.')?;
                        Export::Import {
                            module: module.into(),
                            name: name.into(),
                        }
                    }
                    _ => return None,
                };
                Some((name.as_str().into(), export))
            })
            .collect()
    }

    fn default_device(&self) -> Device {
        self.flow
            .default_device_stack
            .last()
            .copied()
            .unwrap_or(self.default_device)
    }
}

/// Adds `question` to what was asked of `key` (a call site, a callee), listed once.
fn note_question<K: PartialEq>(asked: &mut Vec<(K, Questions)>, key: K, question: Question) {
    match asked.iter_mut().find(|(known, _)| *known == key) {
        Some((_, questions)) => questions.insert(question),
        None => asked.push((key, Questions::of(question))),
    }
}

/// Kinds joined, where instances of different project classes stay instances of either (`s =
/// BeamSearch(...) if beam else GreedySearch(...)`: `s.advance(x)` may run either's `advance`),
/// as a reference spelled with each class (see [`spelled_union`]).
fn join_instances(class_refs: &RefCell<ClassRefs>, classes: &[ClassInfo], a: Kind, b: Kind) -> Kind {
    let union = |x: ClassRefId, y: ClassRefId| {
        let spelled = |id| spelled_class(class_refs, classes, id);
        let union = spelled_union(&spelled(x), &spelled(y))?;
        Some(class_refs.borrow_mut().intern(ClassRef::Imported(union)))
    };
    match (a, b) {
        (Kind::Object(x), Kind::Object(y)) if x != y => union(x, y).map_or(Kind::Unknown, Kind::Object),
        (Kind::Module(_, Some(x)), Kind::Module(_, Some(y))) if x != y => match a.join(b) {
            Kind::Module(module, _) => Kind::Module(module, union(x, y)),
            other => other,
        },
        _ => a.join(b),
    }
}

/// The project classes a file refers to, numbered in the order they are first met, with the
/// number of each found by a lookup (a file may name tens of thousands of classes: finding
/// one by a scan of the list made the file's check quadratic in them).
#[derive(Default)]
struct ClassRefs {
    list: Vec<ClassRef>,
    local: FxHashMap<ClassId, ClassRefId>,
    imported: FxHashMap<Box<str>, ClassRefId>,
}

impl std::ops::Index<usize> for ClassRefs {
    type Output = ClassRef;

    fn index(&self, id: usize) -> &ClassRef {
        &self.list[id]
    }
}

impl ClassRefs {
    /// The number of a class reference in the list, given one on first use.
    fn intern(&mut self, class: ClassRef) -> ClassRefId {
        let known = match &class {
            ClassRef::Local(id) => self.local.get(id),
            ClassRef::Imported(spelled) => self.imported.get(spelled),
        };
        if let Some(&number) = known {
            return number;
        }
        let number = self.list.len() as ClassRefId;
        match &class {
            ClassRef::Local(id) => self.local.insert(*id, number),
            ClassRef::Imported(spelled) => self.imported.insert(spelled.clone(), number),
        };
        self.list.push(class);
        number
    }
}

/// A class reference spelled as the file spells it: a local class by its name.
fn spelled_class(class_refs: &RefCell<ClassRefs>, classes: &[ClassInfo], id: ClassRefId) -> Box<str> {
    match &class_refs.borrow()[id as usize] {
        ClassRef::Local(local) => Box::from(classes[*local as usize].name.as_str()),
        ClassRef::Imported(spelled) => spelled.clone(),
    }
}

/// The binding a name holds after paths that left different bindings: kinds joined, the
/// defining expression kept only when every path has the same one.
fn join_bindings<'a, 'b>(
    bindings: impl Iterator<Item = &'b Binding<'a>>,
    joined: &mut Vec<Box<[Origin<'a>]>>,
    join: impl Fn(Kind, Kind) -> Kind,
) -> Option<Binding<'a>>
where
    'a: 'b,
{
    let bindings: Vec<&Binding<'a>> = bindings.collect();
    let (first, rest) = bindings.split_first()?;
    let mut merged = (*first).clone();
    for binding in rest {
        merged.kind = join(merged.kind, binding.kind);
        merged.value = match (merged.value, binding.value) {
            (Some(a), Some(b)) if std::ptr::eq(a, b) => Some(a),
            _ => None,
        };
        if merged.source != binding.source {
            merged.source = BindingSource::Value;
        }
    }
    // Of different values: each arm's origin is kept for what the value depends on.
    if !rest.is_empty() && merged.value.is_none() && !matches!(merged.source, BindingSource::Parameter(_)) {
        let mut origins: Vec<Origin<'a>> = Vec::new();
        let mut add = |origin: Origin<'a>| {
            // A loop joins the same arms again and again: each origin once, and a few at most
            // (beyond them what the value depends on is left untraced).
            if origins.len() < MAX_ORIGINS && !origins.iter().any(|known| known.same(&origin)) {
                origins.push(origin);
            }
        };
        for binding in &bindings {
            match (&binding.source, binding.value) {
                (BindingSource::Parameter(slot), _) => add(Origin::Parameter(*slot)),
                (BindingSource::Joined(index), _) => joined[*index as usize].iter().copied().for_each(&mut add),
                (_, Some(value)) => add(Origin::Value(value)),
                _ => {}
            }
        }
        if !origins.is_empty() && matches!(merged.source, BindingSource::Value | BindingSource::Joined(_)) {
            joined.push(origins.into_boxed_slice());
            merged.source = BindingSource::Joined(joined.len() as u32 - 1);
        }
    }
    Some(merged)
}

/// The bindings one conditional arm changed, with their value before it, so the next arm
/// starts from the same state and the arms can be joined.
#[derive(Default)]
pub(crate) struct ArmLog<'a> {
    /// (scope, name) of each binding the arm changed, in order.
    changed: OrderedKeys<(ScopeId, Name)>,
    /// The value of each before the arm, in the same order.
    befores: Vec<Option<Binding<'a>>>,
}

impl<'a> ArmLog<'a> {
    /// Remembers a binding's value before the arm, the first time the arm changes it.
    fn record(&mut self, scope: ScopeId, name: &Name, before: Option<Binding<'a>>) {
        if let (_, true) = self.changed.insert((scope, name.clone())) {
            self.befores.push(before);
        }
    }
}

/// Keys in the order they were first inserted, each once. Found by a scan while few (most arms
/// change a handful of names), through a map once many (an arm of thousands of imports would
/// otherwise take quadratic time).
struct OrderedKeys<K> {
    keys: Vec<K>,
    /// Each key's position, built once `keys` outgrows a scan.
    positions: FxHashMap<K, usize>,
}

impl<K> Default for OrderedKeys<K> {
    fn default() -> Self {
        OrderedKeys {
            keys: Vec::new(),
            positions: FxHashMap::default(),
        }
    }
}

impl<K: Eq + std::hash::Hash + Clone> OrderedKeys<K> {
    /// Up to this many keys, a scan beats hashing.
    const SCAN_LIMIT: usize = 16;

    /// The key's position, and whether it was new (then it goes last).
    fn insert(&mut self, key: K) -> (usize, bool) {
        let found = if self.keys.len() > Self::SCAN_LIMIT {
            if self.positions.is_empty() {
                let indexed = self.keys.iter().cloned().enumerate().map(|(i, key)| (key, i));
                self.positions.extend(indexed);
            }
            self.positions.get(&key).copied()
        } else {
            self.keys.iter().position(|known| *known == key)
        };
        match found {
            Some(position) => (position, false),
            None => {
                if !self.positions.is_empty() {
                    self.positions.insert(key.clone(), self.keys.len());
                }
                self.keys.push(key);
                (self.keys.len() - 1, true)
            }
        }
    }
}

/// Libraries that compute on the host alone: calling them runs no network, whatever the
/// function's name says (`scipy.optimize.linear_sum_assignment` in a Hungarian matcher).
pub(crate) fn is_host_library(qualified: &str) -> bool {
    let root = qualified.split('.').next().unwrap_or(qualified);
    matches!(
        root,
        "numpy" | "scipy" | "sklearn" | "pandas" | "cv2" | "PIL" | "math" | "shapely" | "pycocotools" | "skimage"
    )
}

/// Imports of third-party libraries are not part of the project's call graph.
pub(crate) fn is_library(qualified: &str) -> bool {
    let root = qualified.split('.').next().unwrap_or(qualified);
    matches!(
        root,
        "torch"
            | "numpy"
            | "math"
            | "os"
            | "sys"
            | "logging"
            | "time"
            | "json"
            | "re"
            | "typing"
            | "collections"
            | "functools"
            | "itertools"
            | "dataclasses"
            | "transformers"
            | "lightning"
            | "pytorch_lightning"
            | "torchvision"
            | "timm"
            | "accelerate"
            | "diffusers"
            | "torchmetrics"
            | "einops"
            | "tqdm"
            | "wandb"
    )
}

/// Appends `.attr` for each attribute of a `name.attr.attr` chain, outermost last, naming each
/// prefix canonically.
/// The most attributes a dotted name through an import is followed for
/// (`torch.nn.functional.cross_entropy` has three); longer chains name nothing the model knows.
const MAX_DOTTED_LINKS: usize = 64;

fn push_attributes(expr: &Expr, qualified: &mut String) {
    if let Expr::Attribute(attribute) = expr {
        push_attributes(&attribute.value, qualified);
        qualified.push('.');
        qualified.push_str(attribute.attr.as_str());
        canonicalize(qualified);
    }
}

/// `torch.nn.modules.loss.CrossEntropyLoss` and `torch.nn.CrossEntropyLoss` are the same.
fn canonicalize(qualified: &mut String) {
    const ALIASES: &[(&str, &str)] = &[
        ("torch.nn.modules.loss.", "torch.nn."),
        ("torch.nn.modules.", "torch.nn."),
        ("torch.functional.", "torch."),
        ("torch.utils.data.dataloader.", "torch.utils.data."),
        ("torch.cuda.amp.grad_scaler.", "torch.cuda.amp."),
        ("torch.amp.grad_scaler.", "torch.amp."),
        ("torch.distributions.normal.", "torch.distributions."),
        ("torch.distributions.categorical.", "torch.distributions."),
    ];
    if !qualified.starts_with("torch.") {
        return;
    }
    for (from, to) in ALIASES {
        if let Some(rest) = qualified.strip_prefix(from)
            && !rest.contains('.')
        {
            qualified.replace_range(..from.len(), to);
            return;
        }
    }
}

/// A container type an annotation subscripts.
enum Container {
    /// `list`, `List`, `Sequence`: elements of one kind (not `Iterable`: a loader is one).
    Sequence,
    Tuple,
    Dict,
}

fn container_annotation(expr: &Expr) -> Option<Container> {
    let name = match expr {
        Expr::Name(name) => name.id.as_str(),
        Expr::Attribute(attribute) => attribute.attr.as_str(),
        _ => return None,
    };
    match name {
        "list" | "List" | "Sequence" | "MutableSequence" => Some(Container::Sequence),
        "tuple" | "Tuple" => Some(Container::Tuple),
        "dict" | "Dict" | "Mapping" | "MutableMapping" => Some(Container::Dict),
        _ => None,
    }
}

/// The integer literal `0`.
pub(crate) fn is_zero_int(expr: &Expr) -> bool {
    matches!(expr, Expr::NumberLiteral(number) if matches!(&number.value, ast::Number::Int(n) if *n == 0u8))
}

/// `False`, `0`, `0.0`, `""`: false as a test, but not `None`.
/// A lookup that gives `None` where it finds nothing: `d.get(k)`, `d.pop(k, None)`,
/// `getattr(o, name, None)`.
pub(crate) fn falls_back_on_none(call: &ast::ExprCall) -> bool {
    let args = &call.arguments.args;
    let fallback = match call.func.as_ref() {
        Expr::Attribute(attribute) if attribute.attr.as_str() == "get" && args.len() == 1 => return true,
        Expr::Attribute(attribute) if matches!(attribute.attr.as_str(), "get" | "pop") => args.get(1),
        Expr::Name(name) if name.id.as_str() == "getattr" => args.get(2),
        _ => return false,
    };
    matches!(fallback, Some(Expr::NoneLiteral(_)))
}

pub(crate) fn is_false_literal(expr: &Expr) -> bool {
    match expr {
        Expr::BooleanLiteral(literal) => !literal.value,
        Expr::NumberLiteral(number) => match &number.value {
            ast::Number::Int(n) => *n == 0u8,
            ast::Number::Float(f) => *f == 0.0,
            ast::Number::Complex { .. } => false,
        },
        Expr::StringLiteral(string) => string.value.is_empty(),
        _ => false,
    }
}

/// A classmethod that builds an instance by convention: `from_config`, `from_pretrained`,
/// `_from_config`.
fn is_alternative_constructor(method: &str) -> bool {
    method.strip_prefix('_').unwrap_or(method).starts_with("from_")
}

/// `Optional` / `typing.Optional`.
fn names_optional(expr: &Expr) -> bool {
    match expr {
        Expr::Name(name) => name.id.as_str() == "Optional",
        Expr::Attribute(attribute) => attribute.attr.as_str() == "Optional",
        _ => false,
    }
}

/// A name, attribute or call named like a dtype (`dtype`, `self.compute_dtype`,
/// `torch.get_default_dtype()`).
fn names_a_dtype(expr: &Expr) -> bool {
    let name = match expr {
        Expr::Name(name) => name.id.as_str(),
        Expr::Attribute(attribute) => attribute.attr.as_str(),
        Expr::Call(call) => return names_a_dtype(&call.func),
        _ => return false,
    };
    name.contains("dtype")
}

/// Arithmetic that keeps an integer tensor an integer one (true division does not).
fn keeps_integers(op: Operator) -> bool {
    matches!(
        op,
        Operator::Add | Operator::Sub | Operator::Mult | Operator::FloorDiv | Operator::Mod
    )
}

/// `x.max(dim)` / `torch.max(x, dim)` return `(values, indices)`; without a dim, a tensor.
fn returns_values_and_indices(name: &str, call: &ast::ExprCall) -> bool {
    matches!(name, "max" | "min" | "median" | "nanmedian")
        && (!call.arguments.args.is_empty() || call.arguments.find_keyword("dim").is_some())
}

pub(crate) fn device_from_str(value: &str) -> Device {
    if value == "cuda" || value.starts_with("cuda:") {
        Device::Cuda
    } else if value == "cpu" {
        Device::Cpu
    } else {
        Device::Unknown
    }
}

/// `facts` with the dtype `dtype` (qualified: `torch.bool`, `torch.long`) makes them: a mask,
/// an index or a number.
fn of_dtype(facts: TensorFacts, dtype: &str) -> TensorFacts {
    match dtype {
        "torch.bool" => facts.boolean(),
        dtype if api::is_integer_dtype(dtype) => facts.integer(),
        _ => facts.numeric(),
    }
}

/// Expressions whose value is never a tensor, whatever their operands are: what callers pass
/// cannot change what a rule sees of them (`x.shape[0]`, `x.size(1)`, `isinstance(x, T)`,
/// `x is None`), so they demand nothing.
fn never_a_tensor(expr: &Expr) -> bool {
    match expr {
        Expr::Attribute(attribute) => matches!(
            attribute.attr.as_str(),
            "shape"
                | "ndim"
                | "dtype"
                | "device"
                | "is_cuda"
                | "requires_grad"
                | "is_leaf"
                | "layout"
                | "itemsize"
                | "nbytes"
        ),
        Expr::Call(call) => match call.func.as_ref() {
            Expr::Attribute(method) => matches!(
                method.attr.as_str(),
                "size"
                    | "dim"
                    | "ndimension"
                    | "numel"
                    | "nelement"
                    | "element_size"
                    | "stride"
                    | "is_contiguous"
                    | "get_device"
                    | "is_floating_point"
                    | "is_complex"
            ),
            Expr::Name(name) => matches!(
                name.id.as_str(),
                "isinstance" | "len" | "hasattr" | "callable" | "type" | "id"
            ),
            _ => false,
        },
        Expr::Compare(compare) => compare
            .ops
            .iter()
            .all(|op| matches!(op, ast::CmpOp::Is | ast::CmpOp::IsNot)),
        _ => false,
    }
}

/// An int literal, or a list or tuple of them (nested too): what `torch.tensor` makes int64 of.
fn holds_only_int_literals(expr: &Expr) -> bool {
    match expr {
        Expr::NumberLiteral(number) => number.value.is_int(),
        Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::USub => holds_only_int_literals(&unary.operand),
        Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. }) => {
            !elts.is_empty() && elts.iter().all(holds_only_int_literals)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::OrderedKeys;

    #[test]
    fn ordered_keys_keep_first_positions_past_the_scan_limit() {
        let mut keys = OrderedKeys::default();
        let count = 3 * OrderedKeys::<u32>::SCAN_LIMIT;
        for key in 0..count as u32 {
            assert_eq!(keys.insert(key * 7), (key as usize, true));
        }
        // Every key again, in another order: found where it was first put, not added twice.
        for key in (0..count as u32).rev() {
            assert_eq!(keys.insert(key * 7), (key as usize, false));
        }
        assert_eq!(keys.insert(1), (count, true));
        assert_eq!(keys.keys.len(), count + 1);
    }
}
