//! The semantic model of one file: its tables of functions and classes, the call sites its
//! calls made, and the flow context of the node being visited (the loops, guards and arms
//! around it, and so where it runs: [`SemanticModel::context`]). The
//! [`Checker`](crate::checker::Checker) updates it; rules query it.
//!
//! Its work is split among its child modules, each with an `impl SemanticModel` of its own:
//! `scopes` (scopes, bindings, and the arms of conditionals), `imports` (what names refer to
//! through imports), `class_refs` (the project classes the file refers to, and kinds in the
//! project's terms), `infer`, `infer_call` and `infer_torch` (what values are: kind
//! inference), and `trace` (what the values rules read depend on). The fields of
//! [`SemanticModel`] are private to the model and those modules, grouped by the one that owns
//! them.
//!
//! The model and its children may import the semantic vocabulary (ids, kinds, hot contexts,
//! questions, facts, and the summary types they fill in), the torch tables and the naming
//! conventions; never the checker, the rules or the project pass.

mod class_refs;
pub(super) mod imports;
pub(super) mod infer;
pub(super) mod infer_call;
mod infer_torch;
pub(super) mod scopes;
pub(super) mod trace;

use std::cell::RefCell;
use std::rc::Rc;

use ruff_python_ast::name::Name;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextRange};
use rustc_hash::{FxHashMap, FxHashSet};

use self::class_refs::ClassRefs;
use self::infer::Inferred;
use self::scopes::{ArmLog, BindingSource, Origin, Scope, ScopeKind};
use self::trace::Asked;
use super::demand::{Demand, Dependence, GivenAsked, Question};
use super::facts::{FileFacts, Given, ReturnsByType};
use super::hot::{HotContext, HotReason, IntrinsicHot, PeriodicInner};
use super::ids::{ClassId, FunctionId, ScopeId};
use super::kinds::{Device, Kind, Returned};
use super::names::is_library;
use super::summary::{CallSite, DeadWhere, Export, Exports, ParamSummary, Receiver};

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
pub enum Analysis {
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
    /// See [`FunctionDetails::demand`](super::FunctionDetails::demand).
    pub demand: Demand,
    /// See [`FunctionDetails::return_depends`](super::FunctionDetails::return_depends).
    pub return_depends: Option<Box<Dependence>>,
    /// See [`FunctionDetails::stored_absent`](super::FunctionDetails::stored_absent).
    pub stored_absent: Box<[(u16, Box<str>)]>,
    /// Holds a loop (whose lines are hot by themselves).
    pub has_loops: bool,
    /// Trains or runs a network itself (see `does_step_work`).
    pub step_work: bool,
    pub parent_scope: ScopeId,
    pub analysis: Analysis,
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
pub struct Flow {
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

/// What the function whose walk asked for another's analysis had in the model, kept while the
/// other is analysed (see [`SemanticModel::enter_function`]).
pub struct CallerContext<'a> {
    flow: Flow,
    branch_logs: Vec<ArmLog<'a>>,
    demand: Asked,
}

/// What one file's names and values are at the node being visited, and where it runs.
pub struct SemanticModel<'a> {
    // The file's tables, its call sites and the flow context (this module).
    pub classes: Vec<ClassInfo>,
    pub functions: Vec<FunctionInfo<'a>>,
    /// What attributes of the file's function objects hold (`gather._buffer =
    /// torch.cuda.ByteTensor(n)`, a buffer kept between calls), joined over every assignment.
    pub function_attributes: FxHashMap<(FunctionId, Name), Kind>,
    pub flow: Flow,
    /// A test file: nothing in it runs per step (its loops repeat checks, its models are
    /// fixtures).
    pub test_code: bool,
    /// The device of factories without `device=` (`torch.set_default_device`).
    pub default_device: Device,
    /// `Distribution.set_default_validate_args(False)` was called.
    pub validation_disabled: bool,
    pub call_sites: Vec<CallSite>,
    /// The call sites each call node made (one per callee it may call), by node.
    sites_of_call: FxHashMap<NodeKey, std::ops::Range<u32>>,
    /// What the project knows about this file (nothing on its first check).
    pub facts: &'a FileFacts,

    // Scopes and bindings (`scopes`).
    scopes: Vec<Scope<'a>>,
    /// One log per conditional arm being visited: the bindings it changed, with their value
    /// before the arm, so the next arm starts from the same state and the arms can be joined.
    pub branch_logs: Vec<ArmLog<'a>>,
    /// Where the bindings joined after conditionals came from ([`BindingSource::Joined`]).
    joined: Vec<Box<[Origin<'a>]>>,

    // The project classes the file refers to (`class_refs`).
    /// The project classes this file refers to, numbered for [`Kind::Module`] and
    /// [`Kind::Object`].
    class_refs: RefCell<ClassRefs>,

    // Kind inference (`infer`, `infer_call`, `infer_torch`).
    /// The kind of each list comprehension's or generator's element, as its loop variables were
    /// bound when the checker visited it: `[g.reshape(-1) for g in grids]` is a list of what
    /// `grids` holds, though `g` is out of scope wherever the list is used.
    comprehension_elements: FxHashMap<NodeKey, Kind>,
    /// What kind inference worked out already: the kinds of calls and parts, and callees.
    inferred: Inferred,
    /// Inside the kind of an element of a tuple or list display read by index (`dt[0]`): one
    /// level only, since the element may read the name again (`shape = (shape[0], 1)`).
    reading_display: std::cell::Cell<bool>,
    /// A call made a module the loss rules look for by kind (`nn.CrossEntropyLoss()`,
    /// `nn.CTCLoss()`): until one is made, no call can call one.
    loss_module_made: std::cell::Cell<bool>,

    // Demand tracing (`trace`): the checker sets `in_rule` and reads what was traced.
    /// A rule is asking: what the kinds it cannot tell depend on is noted in `demand`.
    pub in_rule: std::cell::Cell<bool>,
    /// The parameters (as slot bits) the values rules asked about depend on, since the checker
    /// last cleared it: a finding made from one is a sync its callers' arguments go through.
    pub slots_traced: std::cell::Cell<u64>,
    /// What the values the function being analysed could not tell depend on.
    pub demand: std::cell::RefCell<Asked>,
    /// The kinds the file gives the results of the call sites a question reached, by site.
    pub results_seen: std::cell::RefCell<FxHashMap<u32, Kind>>,
    /// Tracing has gone into the arguments of a call that is no torch operation (`Var(tx, x)`):
    /// what it makes depends on them, but is not the tensor they are, so no slot is traced.
    tracing_through_a_call: std::cell::Cell<bool>,
    /// The nodes a trace of demand reached (see [`SemanticModel::trace_demand`]), kept between
    /// traces so that each does not allocate its own.
    demand_traced: std::cell::RefCell<Vec<(usize, Question, u32)>>,
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
            inferred: Inferred::default(),
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

    /// The call sites `call` made, one per project function it may call.
    pub fn sites_of(&self, call: &ast::ExprCall) -> &[CallSite] {
        match self.sites_of_call.get(&call_key(call)) {
            Some(sites) => &self.call_sites[sites.start as usize..sites.end as usize],
            None => &[],
        }
    }

    /// Records the call sites `call` made (from `first` to the last one recorded).
    pub fn note_sites_of(&mut self, call: &ast::ExprCall, first: usize) {
        let key = call_key(call);
        let sites = first as u32..self.call_sites.len() as u32;
        if !sites.is_empty() {
            self.sites_of_call.insert(key, sites);
        }
    }

    /// Starts analysing function `id` (of `class`, if a method), defined in scope `parent`: a
    /// scope of its own, a fresh flow context (the default devices of `with` blocks around it
    /// kept), no arms, no demand. A function may be analysed in the middle of another's walk
    /// (a call asks what it returns); what the caller had is returned whole, to be given back
    /// by [`SemanticModel::leave_function`].
    pub fn enter_function(&mut self, id: FunctionId, parent: ScopeId, class: Option<ClassId>) -> CallerContext<'a> {
        self.forget_callees();
        let scope = self.push_scope(ScopeKind::Function(id), parent);
        let devices = self.flow.default_device_stack.clone();
        let flow = std::mem::replace(
            &mut self.flow,
            Flow {
                scope,
                function: Some(id),
                class,
                default_device_stack: devices,
                ..Flow::default()
            },
        );
        // A function analysed in the middle of a conditional has branches of its own.
        let branch_logs = std::mem::take(&mut self.branch_logs);
        let demand = std::mem::take(&mut *self.demand.borrow_mut());
        CallerContext {
            flow,
            branch_logs,
            demand,
        }
    }

    /// Ends the analysis [`SemanticModel::enter_function`] started, giving the caller's
    /// context back; returns what the function's reads asked.
    pub fn leave_function(&mut self, caller: CallerContext<'a>) -> Asked {
        let demand = std::mem::replace(&mut *self.demand.borrow_mut(), caller.demand);
        self.flow = caller.flow;
        self.invalidate_kinds();
        self.forget_callees();
        self.branch_logs = caller.branch_logs;
        demand
    }

    pub fn current_function(&self) -> Option<&FunctionInfo<'a>> {
        self.flow.function.map(|id| &self.functions[id as usize])
    }

    pub fn function(&self, id: FunctionId) -> &FunctionInfo<'a> {
        &self.functions[id as usize]
    }

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

    pub fn method_of_current_class(&self, method: &str) -> Option<FunctionId> {
        self.method_of(self.flow.class?, method)
    }

    /// `method` as `class` resolves it: its own, else its nearest local base's.
    pub fn method_of(&self, class: ClassId, method: &str) -> Option<FunctionId> {
        self.lineage(class)
            .find_map(|id| self.classes[id as usize].methods.get(method).copied())
    }

    /// A class and the bases defined in this file it inherits from, nearest first (the first
    /// local base at each level; bounded: class hierarchies in one file are shallow).
    pub fn lineage(&self, class: ClassId) -> impl Iterator<Item = ClassId> + '_ {
        std::iter::successors(Some(class), |&id| {
            self.classes[id as usize]
                .bases
                .iter()
                .find_map(|base| self.local_class(base))
                .filter(|&base| base != id)
        })
        .take(8)
    }

    pub fn local_class(&self, name: &str) -> Option<ClassId> {
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
    pub fn module_exports(&self) -> Exports {
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
