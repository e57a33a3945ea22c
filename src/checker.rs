//! One pass over a file: it updates the semantic model as it goes (bindings, kinds, the flow
//! context) and runs the enabled rules at each node against the model's state there.
//!
//! Function bodies are analysed after the code that defines them (so module-level globals
//! assigned later are visible, as at run time), or earlier, on demand, when a call needs the
//! function's return kind.

use std::rc::Rc;

use ruff_python_ast::name::Name;
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextRange, TextSize};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::diagnostic::Diagnostic;
use crate::lines::Lines;
use crate::nesting::MAX_NESTING;
use crate::parse::literal_text;
use crate::registry::{Rule, RuleSet};
use crate::rules::{self, Findings, RuleContext};
use crate::semantic::facts::{self, ReturnsByType, TypeSet};
use crate::semantic::names::{
    calls_a_network, contains_ignoring_ascii_case, ends_with_ignoring_ascii_case, last_name, names_a_loader,
    names_a_network, names_a_progress_wrapper,
};
use crate::semantic::torch_api as api;
use crate::semantic::{
    Analysis, ArmOutcome, ClassId, Flow, MethodsCalledOn, ParamDefault, ScopeKind, StoredCallable, device_from_str,
    falls_back_on_none, is_false_literal, is_host_library, is_library, is_zero_int,
};
use crate::semantic::{
    Argument, ArgumentDetail, BatchSource, Binding, BindingSource, CallArguments, CallArity, CallSite, Callee,
    ClassInfo, ClassRef, ClassSummary, DeadWhere, Device, EntryAsked, FileFacts, FileSemantics, FunctionDetails,
    FunctionId, FunctionInfo, HotContext, ImportedAttribute, ImportedCall, IntrinsicHot, Kind, ModuleKind,
    ParamSummary, ProjectKind, Receiver, SemanticModel, Signature, TensorFacts,
};
use crate::semantic::{
    Demand, Dependence, FunctionSummary, Given, GivenAsked, ParameterSync, Question, Questions, Returned, slot_bit,
};

/// What the checker needs from the settings.
pub struct CheckOptions<'s> {
    pub rules: &'s RuleSet,
    /// Extra function names (or `Class.method`) to treat as hot.
    pub hot_functions: &'s [String],
    /// What the project knows about the file.
    pub facts: &'s FileFacts,
    /// Record calls in cold code too (module level, setup), for the whole call graph.
    pub every_call: bool,
    /// A test file: nothing in it is hot.
    pub test_code: bool,
}

/// The kinds a call passes, as the callee's parameters see them: `skip` leading positional
/// arguments are not parameters of `params` (the instance of `Class.method(obj, x)`).
struct PassedArguments<'c> {
    arguments: &'c CallArguments,
    skip: usize,
}

/// The tree levels on the stack (see [`Checker::levels`]) past which no function is analysed on
/// demand: a tenth of the deepest tree a file may have, far above what real code nests (a call
/// inside a few statements and expressions, a few functions deep), so that the deepest tree
/// still fits above it.
const ON_DEMAND_LEVELS: u32 = (MAX_NESTING / 10) as u32;

pub struct Checker<'a> {
    model: SemanticModel<'a>,
    source: &'a str,
    lines: &'a Lines<'a>,
    options: &'a CheckOptions<'a>,
    /// What the rules found so far.
    findings: Findings,
    /// The join of the `return` kinds of the function being analysed.
    returns: Option<Kind>,
    /// What the `return` values of the function being analysed depend on, where it cannot
    /// tell what they are.
    return_depends: Option<Dependence>,
    /// What its `return`s give as a tuple: nothing yet, the joined elements, or something else
    /// (`Err(())`: a return that is not a tuple literal of that length).
    returns_tuple: Option<Result<Returned, ()>>,
    /// The `isinstance` tests of the function's own parameters (as given) around the line being
    /// visited, innermost last: (slot, the types the arm takes).
    type_arms: Vec<(u16, TypeSet)>,
    /// Per `return` of the function being analysed: the innermost such test around it, and
    /// what it returns.
    returns_by_arm: Vec<(Option<(u16, TypeSet)>, Kind)>,
    /// Whether the function being analysed yields (a generator returns an iterator).
    yields: bool,
    module_body: &'a [Stmt],
    /// What `self.<attr>(...)` calls by the file's constructions of the class, by (class,
    /// attribute), found when first needed (see [`Checker::constructed_callees`]).
    constructed: std::cell::RefCell<FxHashMap<(ClassId, Name), Vec<Callee>>>,
    /// Qualified names of the project names the file calls.
    project_imports: Vec<ImportedCall>,
    /// Attributes of other files' classes' instances the file's functions read.
    attributes_asked: Vec<ImportedAttribute>,
    /// Qualified names of project functions in other files whose step work decides whether a
    /// loop of this file is a step loop.
    step_work_asked: Vec<Box<str>>,
    /// The parameters whose callers' arguments a test consulted (see
    /// [`Checker::callers_never_take`]).
    consulted_given: std::cell::Cell<GivenAsked>,
    /// Whether what callers or constructions give decided a test (see
    /// [`Checker::arm_off_step`]).
    decided_by_arguments: std::cell::Cell<bool>,
    /// What tests of `self.<attr>` asked of the parameters of `__init__`s (by function), for
    /// their summaries: the constructions decide them.
    constructions_asked: std::cell::RefCell<Vec<ConstructionAsked>>,
    /// The dict entries functions' tests read (see [`EntryAsked`]), in the order first read.
    entries_asked: std::cell::RefCell<Vec<(FunctionId, EntryAsked)>>,
    /// The name the `if` whose test is being decided returns (`if cached is not None: return
    /// cached`): callers that pass it take the early return.
    returned_early: Option<&'a str>,
    /// Attributes the file sets on objects other than `self` (`model.roi_heads.mask_head = m`,
    /// `setattr(vq, "remap", r)`): parts attached from outside the class.
    attributes_set_outside: Vec<Name>,
    /// Where the function a call being visited is named (`obj.method` of `obj.method(x)`): no
    /// property read.
    called: TextRange,
    /// Findings on values made from parameters, for [`FunctionSummary::syncs_on`].
    parameter_syncs: Vec<ParameterSyncFound>,
    /// The statements and compound expressions being visited now, counted across the
    /// functions analysed inside one another (a function analysed on demand is visited inside
    /// the visit of the call that asked): what the stack holds, in tree levels.
    levels: u32,
}

/// A finding in a function's own lines on a value made from its parameters, found while the
/// rules ran (matched with the findings that remain when the file is done).
struct ParameterSyncFound {
    function: FunctionId,
    /// The parameters, as slot bits, and those of them whose kind was unknown.
    slots: u64,
    unknown: u64,
    rule: Rule,
    /// Where the finding ends (its start may move to the line of the method that syncs).
    end: TextSize,
    /// See [`ParameterSync::dead_where`].
    dead_where: Box<[DeadWhere]>,
}

/// How a test decided an arm (see [`Checker::arm_off_step`]).
#[derive(Clone, Default)]
struct ArmDecided {
    off_step: bool,
    guards: GivenAsked,
    dead_where: Vec<DeadWhere>,
}

/// What [`Checker::leave_arm`] restores.
struct EnteredArm {
    off_step: bool,
    saved_guards: GivenAsked,
    dead_where: usize,
}

/// What tests of `self.<attr>` asked of one `__init__`'s parameters.
struct ConstructionAsked {
    init: FunctionId,
    given: GivenAsked,
    /// The attributes those parameters are stored in, where an arm needs them absent (see
    /// [`FunctionSummary::stored_absent`]).
    stored_absent: Vec<(u16, Box<str>)>,
}

/// Everything checking a file produced.
pub struct CheckResult {
    pub diagnostics: Vec<Diagnostic>,
    pub semantics: FileSemantics,
}

pub fn check_module<'a>(
    module: &'a ast::ModModule,
    source: &'a str,
    lines: &'a Lines<'a>,
    options: &'a CheckOptions<'a>,
) -> CheckResult {
    let mut checker = Checker {
        model: SemanticModel::new(options.facts),
        source,
        lines,
        options,
        findings: Findings::default(),
        returns: None,
        return_depends: None,
        returns_tuple: None,
        type_arms: Vec::new(),
        returns_by_arm: Vec::new(),
        yields: false,
        module_body: &module.body,
        constructed: Default::default(),
        project_imports: Vec::new(),
        attributes_asked: Vec::new(),
        step_work_asked: Vec::new(),
        consulted_given: Default::default(),
        decided_by_arguments: Default::default(),
        constructions_asked: Default::default(),
        entries_asked: Default::default(),
        returned_early: None,
        attributes_set_outside: Vec::new(),
        called: TextRange::default(),
        parameter_syncs: Vec::new(),
        levels: 0,
    };
    checker.model.test_code = options.test_code;
    checker.visit_body(&module.body);
    checker.note_instance_setters();
    // Functions nobody called during the pass: first those whose callers the project knows,
    // then those hot by themselves, so the helpers they call are analysed with the arguments
    // they pass; then the rest (nested ones get appended).
    let facts = options.facts;
    for intrinsic_pass in [false, true] {
        for id in 0..checker.model.functions.len() {
            let function = &checker.model.functions[id];
            let first = if intrinsic_pass {
                function.intrinsic.is_some()
            } else {
                facts.parameters.contains_key(&*function.qualname)
            };
            if first {
                checker.ensure_analyzed(id as u32);
            }
        }
    }
    // The rest last to first: helpers are usually defined before the code that calls them,
    // so a caller analysed first hands its arguments to the helpers it calls.
    let defined = checker.model.functions.len();
    for id in (0..defined).rev() {
        checker.ensure_analyzed(id as u32);
    }
    let mut next = defined;
    while next < checker.model.functions.len() {
        checker.ensure_analyzed(next as u32);
        next += 1;
    }
    checker.finish()
}

impl<'a> Checker<'a> {
    /// Asks the project to tell what hot callers give the parameters in `guards`.
    fn ask_given(&self, guards: GivenAsked) {
        if !guards.is_empty() {
            let mut demand = self.model.demand.borrow_mut();
            demand.parameters.given = demand.parameters.given.union(guards);
        }
    }

    /// Runs rules, noting what the values they ask about and the file cannot tell depend on.
    #[inline]
    fn run_rules(&mut self, rules: impl FnOnce(&mut RuleContext)) {
        let reported = self.findings.diagnostics.len();
        self.model.in_rule.set(true);
        self.model.slots_traced.set(0);
        rules(&mut RuleContext::new(
            &self.model,
            self.source,
            self.options.rules,
            self.module_body,
            &mut self.findings,
        ));
        self.model.in_rule.set(false);
        // A finding may rest on a guess about a parameter (a tensor by its name in a
        // `forward`): what callers pass may overturn it (a CPU tensor, a number).
        if self.findings.diagnostics.len() > reported
            && let Some(id) = self.model.flow.function
        {
            self.note_parameter_syncs(id, reported);
            let tensors = self.model.functions[id as usize]
                .params
                .iter()
                .enumerate()
                .filter(|(_, param)| matches!(param.kind.kind, Kind::Tensor(_)))
                .fold(0, |bits, (slot, _)| bits | slot_bit(slot));
            self.model
                .demand
                .borrow_mut()
                .parameters
                .note_slots(Question::Host, tensors);
        }
    }

    /// The findings from `reported` on, in the lines of function `id` that run whenever it does
    /// (no loop, no guard), on values made from its parameters: its callers' arguments go
    /// through them.
    fn note_parameter_syncs(&mut self, id: FunctionId, reported: usize) {
        let slots = self.model.slots_traced.get() & !slot_bit(63);
        if slots == 0 {
            return;
        }
        let params = &self.model.functions[id as usize].params;
        let unknown = params
            .iter()
            .enumerate()
            .filter(|(_, param)| param.kind.kind == Kind::Unknown)
            .fold(0, |bits, (slot, _)| bits | slot_bit(slot));
        for diagnostic in &self.findings.diagnostics[reported..] {
            if diagnostic.context == HotContext::InFunction(id) && diagnostic.rule.reads_the_value() {
                self.parameter_syncs.push(ParameterSyncFound {
                    function: id,
                    slots,
                    unknown,
                    rule: diagnostic.rule,
                    end: diagnostic.range.end(),
                    dead_where: self.model.flow.dead_where.clone().into_boxed_slice(),
                });
            }
        }
    }

    /// A finding on a method call whose receiver spans lines (`torch.bernoulli(p)\n
    /// .to(x.device)`) starts at the method's name: the line of the call that syncs, where a
    /// reader (and a `# noqa`) looks for it.
    fn start_at_the_method(&mut self, expr: &Expr, reported: usize) {
        // Most expressions report nothing: no line is looked up for them.
        if self.findings.diagnostics.len() == reported {
            return;
        }
        let Expr::Call(call) = expr else { return };
        let Expr::Attribute(attribute) = call.func.as_ref() else {
            return;
        };
        if self.line(attribute.attr.start()) == self.line(call.start()) {
            return;
        }
        for diagnostic in &mut self.findings.diagnostics[reported..] {
            if diagnostic.range == call.range() {
                diagnostic.range = TextRange::new(attribute.attr.start(), call.end());
            }
        }
    }

    fn note_loop(&mut self) {
        if let Some(id) = self.model.flow.function {
            self.model.functions[id as usize].has_loops = true;
        }
    }

    fn line(&self, offset: TextSize) -> u32 {
        self.lines.row(offset) as u32
    }

    fn finish(mut self) -> CheckResult {
        let found = rules::dispatch::end_of_file(self.options.rules, &self.findings);
        self.findings.diagnostics.extend(found);
        let mut model = self.model;
        for asked in self.constructions_asked.into_inner() {
            let function = &mut model.functions[asked.init as usize];
            function.demand.given = function.demand.given.union(asked.given);
            function.stored_absent = asked.stored_absent.into_boxed_slice();
        }
        let mut entries: Vec<Vec<EntryAsked>> = vec![Vec::new(); model.functions.len()];
        for (function, entry) in self.entries_asked.into_inner() {
            entries[function as usize].push(entry);
        }
        let mut syncs_on: Vec<Vec<ParameterSync>> = vec![Vec::new(); model.functions.len()];
        // The first finding of each rule ending at each offset, and the first deeper sync of
        // each: looked up once per parameter sync, of which a file may have thousands.
        let mut reported: FxHashMap<(Rule, TextSize), &Diagnostic> = FxHashMap::default();
        let mut deeper: FxHashMap<(Rule, TextSize), &Box<str>> = FxHashMap::default();
        if !self.parameter_syncs.is_empty() {
            for diagnostic in &self.findings.diagnostics {
                reported
                    .entry((diagnostic.rule, diagnostic.range.end()))
                    .or_insert(diagnostic);
            }
            for (rule, end, sync) in &self.findings.deeper_syncs {
                deeper.entry((*rule, *end)).or_insert(sync);
            }
        }
        for found in &self.parameter_syncs {
            // A finding superseded by a more specific one is gone.
            let Some(diagnostic) = reported.get(&(found.rule, found.end)) else {
                continue;
            };
            let syncs = &mut syncs_on[found.function as usize];
            for slot in 0..63 {
                if found.slots & slot_bit(slot) != 0 {
                    syncs.push(ParameterSync {
                        slot: slot as u16,
                        rule: found.rule,
                        at: diagnostic.range.start().to_u32(),
                        line: self.lines.row(diagnostic.range.start()) as u32,
                        message: diagnostic.message.as_str().into(),
                        deeper: deeper.get(&(found.rule, found.end)).map(|sync| (*sync).clone()),
                        unknown_counts: found.unknown & slot_bit(slot) != 0,
                        dead_where: found.dead_where.clone(),
                    });
                }
            }
        }
        // Every file's call sites stay in memory until the project-wide pass: no spare room.
        model.call_sites.shrink_to_fit();
        let exports = model.module_exports();
        let returns: Vec<(ProjectKind, Option<Box<[Returned]>>)> = model
            .functions
            .iter()
            .map(|f| {
                let tuple = f.returns_tuple.as_deref().map(|elements| {
                    elements
                        .iter()
                        .map(|element| model.to_project_returned(element))
                        .collect()
                });
                (model.to_project(f.returns.unwrap_or_default()), tuple)
            })
            .collect();
        // A new list of exactly the summaries' size: collected in place, it would keep the
        // larger `FunctionInfo` list's memory until the project-wide pass.
        let functions: Vec<FunctionSummary> = model
            .functions
            .iter_mut()
            .zip(returns)
            .zip(syncs_on)
            .zip(entries)
            .map(|(((f, returns), syncs_on), entries)| FunctionSummary {
                name_at: (f.qualname.len() - f.name.len()) as u32,
                qualname: std::mem::take(&mut f.qualname),
                line: f.line,
                intrinsic: f.intrinsic,
                never_hot: f.never_hot,
                class: f.class,
                receiver: f.receiver,
                property: f.property,
                signature: Signature::of(&f.def.parameters, f.receiver),
                has_hot_lines: f.intrinsic.is_some() || f.has_loops,
                step_work: f.step_work || f.intrinsic.is_some(),
                params: std::mem::take(&mut f.params).into_boxed_slice(),
                returns: returns.0,
                details: FunctionDetails {
                    returns_tuple: returns.1,
                    returns_by_type: f.returns_by_type.take(),
                    entries: entries.into_boxed_slice(),
                    demand: f.demand,
                    return_depends: f.return_depends.take(),
                    stored_absent: std::mem::take(&mut f.stored_absent),
                    syncs_on: syncs_on.into_boxed_slice(),
                }
                .boxed(),
            })
            .collect();
        let classes = model
            .classes
            .iter()
            .map(|class| {
                let mut methods: Vec<FunctionId> = class.methods.values().copied().collect();
                methods.sort_unstable_by(|a, b| {
                    let name = |id: &FunctionId| functions[*id as usize].name();
                    name(a).cmp(name(b))
                });
                ClassSummary {
                    name: class.name.as_str().into(),
                    bases: class.bases.iter().map(|b| Box::from(b.as_str())).collect(),
                    methods: methods.into_boxed_slice(),
                    module: if class.is_loss {
                        Some(ModuleKind::Loss)
                    } else if class.is_metric {
                        Some(ModuleKind::Metric)
                    } else if class.is_module {
                        Some(ModuleKind::Plain)
                    } else {
                        None
                    },
                    attributes: told_attributes(&model, class),
                    registries: class.registries.iter().map(|r| Box::from(r.as_str())).collect(),
                    duck_typed: attributes_to_type(class),
                }
            })
            .collect();
        let mut attributes_asked = std::mem::take(&mut self.attributes_asked);
        attributes_asked.sort_unstable_by(|a, b| (&a.class, &a.attr, a.caller).cmp(&(&b.class, &b.attr, b.caller)));
        let mut imports = std::mem::take(&mut self.project_imports);
        imports.sort_unstable_by(|a, b| (&a.name, a.caller).cmp(&(&b.name, b.caller)));
        let mut results_seen: Vec<(u32, ProjectKind)> = model
            .results_seen
            .take()
            .into_iter()
            .map(|(site, kind)| (site, model.to_project(kind)))
            .collect();
        results_seen.sort_unstable_by_key(|(site, _)| *site);
        let mut step_work_asked = std::mem::take(&mut self.step_work_asked);
        step_work_asked.sort_unstable();
        step_work_asked.dedup();
        let mut attributes_set_outside: Vec<Box<str>> = self
            .attributes_set_outside
            .iter()
            .map(|name| Box::from(name.as_str()))
            .collect();
        attributes_set_outside.sort_unstable();
        attributes_set_outside.dedup();

        CheckResult {
            diagnostics: self.findings.diagnostics,
            semantics: FileSemantics {
                functions,
                call_sites: model.call_sites,
                exports,
                classes,
                imports: imports.into_boxed_slice(),
                attributes_asked: attributes_asked.into_boxed_slice(),
                results_seen: results_seen.into_boxed_slice(),
                step_work_asked: step_work_asked.into_boxed_slice(),
                attributes_set_outside: attributes_set_outside.into_boxed_slice(),
                cell_rows: Box::default(),
            },
        }
    }

    // ---- functions -----------------------------------------------------------------------

    fn ensure_analyzed(&mut self, id: u32) {
        self.ensure_analyzed_with(id, None);
    }

    /// Analyses a function if it was not yet, its parameters bound to what `passed` gives them
    /// when a call asks first (the project's facts, where there are any, come first). A call
    /// asks inside its own visit, so a chain of functions each calling the next would nest
    /// as many analyses on the stack: past [`ON_DEMAND_LEVELS`] the function is left for the
    /// file's own pass over the functions nobody analysed (the call learns nothing of what it
    /// returns), which keeps the stack within what a tree of [`MAX_NESTING`] levels needs.
    fn ensure_analyzed_with(&mut self, id: u32, passed: Option<PassedArguments>) {
        if self.model.functions[id as usize].analysis != Analysis::Pending || self.levels > ON_DEMAND_LEVELS {
            return;
        }
        let (def, parent, class, intrinsic) = {
            let f = &self.model.functions[id as usize];
            (f.def, f.parent_scope, f.class, f.intrinsic)
        };
        // `__init__` runs before any other method: the attributes it sets are what the others
        // read, wherever the class body defines it.
        if let Some(init) = class.and_then(|class| self.model.method_of(class, "__init__"))
            && init != id
        {
            self.ensure_analyzed(init);
        }
        self.model.functions[id as usize].analysis = Analysis::InProgress;
        self.model.forget_callees();
        let scope = self.model.push_scope(ScopeKind::Function(id), parent);
        let devices = self.model.flow.default_device_stack.clone();
        let saved_flow = std::mem::replace(
            &mut self.model.flow,
            Flow {
                scope,
                function: Some(id),
                class,
                default_device_stack: devices,
                ..Flow::default()
            },
        );
        let saved_returns = self.returns.take();
        let saved_return_depends = self.return_depends.take();
        let saved_returns_tuple = self.returns_tuple.take();
        let saved_type_arms = std::mem::take(&mut self.type_arms);
        let saved_returns_by_arm = std::mem::take(&mut self.returns_by_arm);
        let saved_yields = std::mem::replace(&mut self.yields, false);
        // A function analysed in the middle of a conditional has branches of its own.
        let saved_arms = std::mem::take(&mut self.model.branch_logs);
        let saved_demand = std::mem::take(&mut *self.model.demand.borrow_mut());

        self.bind_parameters(id, def, class.is_some(), intrinsic, passed);
        self.model.functions[id as usize].runs_whole_loops = self.runs_epochs(&def.body, false)
            || (intrinsic.is_none() && self.decodes(def.name.id.as_str(), &def.body));
        // The scan resolved calls before the body's own imports ran.
        self.model.forget_callees();
        self.visit_body(&def.body);

        // A stub's implicit `None` is no answer: what an override returns is (the project's,
        // asked where the call's result matters).
        let returns = if self.yields || def.is_async || is_stub(def) {
            Kind::Unknown
        } else {
            self.returns.unwrap_or(Kind::NoneValue)
        };
        // `-> torch.Tensor`, `-> Head`: the annotation says what the code may not show.
        let returns = match def
            .returns
            .as_deref()
            .map(|annotation| self.model.annotation_kind(annotation))
        {
            Some(annotated) if returns.is_opaque() || returns == Kind::NoneValue => match annotated {
                Kind::Unknown => returns,
                annotated => annotated,
            },
            _ => returns,
        };
        let demand = std::mem::replace(&mut *self.model.demand.borrow_mut(), saved_demand);
        self.project_imports
            .extend(demand.calls.iter().map(|(name, questions)| ImportedCall {
                name: name.as_ref().into(),
                caller: id,
                questions: *questions,
            }));
        self.attributes_asked.extend(
            demand
                .attributes
                .iter()
                .map(|((class, attr), questions)| ImportedAttribute {
                    class: class.clone(),
                    attr: attr.as_str().into(),
                    caller: id,
                    questions: *questions,
                }),
        );
        let returns_tuple = match std::mem::replace(&mut self.returns_tuple, saved_returns_tuple) {
            Some(Ok(Returned::Tuple(elements))) if !self.yields => Some(elements),
            _ => None,
        };
        let returns_by_type = match std::mem::replace(&mut self.returns_by_arm, saved_returns_by_arm) {
            _ if self.yields || def.is_async => None,
            arms => returns_by_type(&arms, &self.model.functions[id as usize].params),
        };
        self.type_arms = saved_type_arms;
        let function = &mut self.model.functions[id as usize];
        function.returns = Some(returns);
        function.returns_tuple = returns_tuple;
        function.returns_by_type = returns_by_type.map(Box::new);
        function.demand = demand.parameters;
        for (site, questions) in demand.sites {
            let asked = &mut self.model.call_sites[site as usize].result_asked;
            *asked = asked.union(questions);
        }
        function.return_depends = std::mem::replace(&mut self.return_depends, saved_return_depends).map(Box::new);
        function.analysis = Analysis::Done;
        self.model.flow = saved_flow;
        self.model.invalidate_kinds();
        self.model.forget_callees();
        self.model.branch_logs = saved_arms;
        self.returns = saved_returns;
        self.yields = saved_yields;
    }

    fn bind_parameters(
        &mut self,
        id: FunctionId,
        def: &ast::StmtFunctionDef,
        is_method: bool,
        intrinsic: Option<IntrinsicHot>,
        passed: Option<PassedArguments>,
    ) {
        let receiver = self.model.functions[id as usize].receiver;
        let facts = self
            .options
            .facts
            .parameters
            .get(&*self.model.functions[id as usize].qualname);
        let mut params = Vec::new();
        // Parameters of per-step functions are tensors unless they say otherwise.
        let tensors_by_default = matches!(
            intrinsic,
            Some(
                IntrinsicHot::Forward
                    | IntrinsicHot::LightningHook
                    | IntrinsicHot::Loss
                    | IntrinsicHot::Compiled
                    | IntrinsicHot::MetricUpdate
            )
        );
        let parameters = &def.parameters;
        let positional = parameters.posonlyargs.iter().chain(parameters.args.iter());
        let positional_count = parameters.posonlyargs.len() + parameters.args.len();
        for (index, parameter) in positional.chain(parameters.kwonlyargs.iter()).enumerate() {
            let name = &parameter.parameter.name.id;
            if index == 0 && is_method && receiver.is_implicit() {
                match (self.model.flow.class, receiver) {
                    // `cls`: the class, whose call makes an instance.
                    (Some(class), Receiver::Class) => self.model.bind(
                        name,
                        Binding {
                            kind: Kind::Unknown,
                            source: BindingSource::Class(class),
                            value: None,
                        },
                    ),
                    // `self`: an instance of the class.
                    (class, _) => {
                        let instance = class.map_or(Kind::Unknown, |c| self.model.instance_of_local(c));
                        self.model.bind_value(name, instance, None);
                    }
                }
                continue;
            }
            let annotation = parameter.parameter.annotation.as_deref();
            let base = self.parameter_kind(
                name.as_str(),
                annotation,
                parameter.default.as_deref(),
                tensors_by_default,
            );
            let slot = params.len();
            let from_callers = match (facts, &passed) {
                (Some(facts), _) => facts
                    .get(slot)
                    .map_or(Kind::Unknown, |k| self.model.kind_from_project(k)),
                (None, Some(passed)) => {
                    let position = (index < positional_count).then_some(slot + passed.skip);
                    passed
                        .arguments
                        .for_parameter(position, name.as_str())
                        .map_or(Kind::Unknown, |argument| self.model.kind_from_project(&argument.kind))
                }
                (None, None) => Kind::Unknown,
            };
            let kind = facts::parameter_kind(base, annotation.is_some(), from_callers);
            params.push(ParamSummary {
                name: name.as_str().into(),
                kind: self.model.to_project(kind),
                annotated: annotation.is_some(),
                default: param_default(parameter.default.as_deref()),
            });
            let binding = Binding {
                kind,
                source: BindingSource::Parameter(slot as u16),
                value: None,
            };
            self.model.bind(name, binding);
        }
        let function = &mut self.model.functions[id as usize];
        function.params = params;
        if let Some(given) = self.options.facts.given.get(&*function.qualname) {
            function.given = given.clone();
        }
        for variadic in [&parameters.vararg, &parameters.kwarg].into_iter().flatten() {
            let kind = if std::ptr::eq(variadic.as_ref(), parameters.vararg.as_deref().unwrap_or(variadic)) {
                Kind::Tuple
            } else {
                Kind::Dict
            };
            self.model.bind_value(&variadic.name.id, kind, None);
        }
    }

    fn parameter_kind(
        &self,
        name: &str,
        annotation: Option<&Expr>,
        default: Option<&Expr>,
        tensors_by_default: bool,
    ) -> Kind {
        if let Some(annotation) = annotation {
            return self.model.annotation_kind(annotation);
        }
        if let Some(default) = default {
            return match default {
                Expr::NoneLiteral(_) => Kind::Unknown,
                other => self.model.kind_of(other),
            };
        }
        if !tensors_by_default {
            return Kind::Unknown;
        }
        // Counters, names, modes, callables and networks are not tensors (`batch_idx`,
        // `layer_type`, `ref_model`).
        const NON_TENSOR_SUFFIXES: &[&str] = &[
            "model",
            "module",
            "criterion",
            "idx",
            "_id",
            "step",
            "epoch",
            "iteration",
            "index",
            "rank",
            "size",
            "dim",
            "num",
            "type",
            "name",
            "mode",
            "kind",
            "key",
            "prefix",
            "suffix",
            "path",
            "dir",
            "format",
            "style",
            "config",
            "cfg",
            "fn",
            "func",
            "callback",
            "hook",
            "strategy",
            "method",
            "flag",
            "dtype",
            "device",
            "len",
            "count",
            "height",
            "width",
        ];
        const NON_TENSOR_PREFIXES: &[&str] = &["num_", "n_", "use_", "return_", "is_", "do_", "output_", "with_"];
        let names_a_non_tensor = NON_TENSOR_SUFFIXES.iter().any(|suffix| name.ends_with(suffix))
            || NON_TENSOR_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
            || matches!(
                name,
                "i" | "j"
                    | "k"
                    | "n"
                    | "optimizer"
                    | "optimizers"
                    | "opt"
                    | "trainer"
                    | "pl_module"
                    | "ctx"
                    // A loss's options, as torch's losses name them.
                    | "reduction"
                    | "reduce"
                    | "size_average"
            );
        if names_a_non_tensor {
            Kind::Unknown
        } else {
            Kind::Tensor(TensorFacts::on(Device::Unknown))
        }
    }

    fn intrinsic_hotness(&self, def: &ast::StmtFunctionDef, class: Option<&ClassInfo>) -> Option<IntrinsicHot> {
        let name = def.name.id.as_str();
        let compiled = def.decorator_list.iter().any(|decorator| {
            matches!(
                self.model.qualified_name(decorator_callee(decorator)).as_deref(),
                Some("torch.compile" | "torch.jit.script" | "torch.jit.trace" | "torch.cuda.graphs.graph")
            )
        });
        let qualname_matches = |configured: &String| match configured.split_once('.') {
            Some((class_name, method)) => method == name && class.is_some_and(|c| c.name.as_str() == class_name),
            None => configured == name,
        };
        if self.options.hot_functions.iter().any(qualname_matches) {
            Some(IntrinsicHot::Configured)
        } else if compiled {
            Some(IntrinsicHot::Compiled)
        } else if class.is_some_and(|c| c.is_loss) {
            matches!(name, "forward" | "__call__").then_some(IntrinsicHot::Loss)
        } else if name == "forward" && class.is_some_and(|c| c.is_module) {
            Some(IntrinsicHot::Forward)
        } else if name == "update" && class.is_some_and(|c| c.is_metric) {
            Some(IntrinsicHot::MetricUpdate)
        } else if matches!(name, "forward" | "backward") && class.is_some_and(is_autograd_function) {
            Some(IntrinsicHot::AutogradFunction)
        } else if class.is_some() && api::is_lightning_step_hook(name) {
            Some(IntrinsicHot::LightningHook)
        } else if name == "step" || name.ends_with("_step") || name == "train_one_epoch" {
            Some(IntrinsicHot::StepName)
        } else if contains_ignoring_ascii_case(name, "loss") && !name.starts_with("__") {
            Some(IntrinsicHot::Loss)
        } else {
            None
        }
    }

    fn define_function(&mut self, def: &'a ast::StmtFunctionDef) {
        for decorator in &def.decorator_list {
            self.visit_expr(&decorator.expression);
        }
        for parameter in def.parameters.iter_non_variadic_params() {
            if let Some(default) = &parameter.default {
                self.visit_expr(default);
            }
        }
        let class = match self.model.scope_kind() {
            ScopeKind::Class(id) => Some(id),
            _ => None,
        };
        let name = def.name.id.as_str();
        let qualname = match (class, self.model.current_function()) {
            (Some(id), _) => joined(&[&self.model.classes[id as usize].name, ".", name]),
            (None, Some(outer)) => joined(&[&outer.qualname, ".<locals>.", name]),
            (None, None) => name.into(),
        };
        // A fallback the default dispatch replaces runs on no step: no hotness of its own, and
        // none through callers either (they reach the replacement).
        let replaced = name == "forward" && class.is_some_and(|id| self.model.classes[id as usize].forward_replaced);
        let intrinsic = self
            .intrinsic_hotness(def, class.map(|id| &self.model.classes[id as usize]))
            .filter(|_| !replaced);
        let id = self.model.functions.len() as u32;
        let decorated = |decorator: &str| {
            def.decorator_list
                .iter()
                .any(|d| matches!(&d.expression, Expr::Name(n) if n.id.as_str() == decorator))
        };
        let receiver = match class {
            None => Receiver::None,
            Some(_) if decorated("staticmethod") => Receiver::None,
            Some(_) if decorated("classmethod") => Receiver::Class,
            Some(_) => Receiver::Instance,
        };
        let property = class.is_some() && decorated("property") && self.model.is_builtin("property");
        // `@functools.lru_cache` / `@cache` / `@cached_property`: the body runs once per distinct
        // arguments, its result is what later calls get; so with a wrapper of `lru_cache` named
        // for it (diffusers' `@lru_cache_unless_export(maxsize=128)`).
        let cached = def.decorator_list.iter().any(|decorator| {
            let decorator = decorator_callee(decorator);
            matches!(
                self.model.qualified_name(decorator).as_deref(),
                Some("functools.lru_cache" | "functools.cache" | "functools.cached_property")
            ) || last_name(decorator).is_some_and(|name| name.starts_with("lru_cache"))
        });
        self.model.functions.push(FunctionInfo {
            name: def.name.id.clone(),
            qualname,
            class,
            def,
            line: self.line(def.name.range.start()),
            property,
            intrinsic,
            never_hot: replaced || cached || api::is_setup_function(def.name.id.as_str()),
            // Told once the class's methods are all known (see `ensure_analyzed_with`).
            runs_whole_loops: false,
            returns: None,
            returns_tuple: None,
            returns_by_type: None,
            receiver,
            params: Vec::new(),
            given: Box::default(),
            demand: Demand::default(),
            return_depends: None,
            stored_absent: Box::default(),
            has_loops: false,
            step_work: false,
            parent_scope: self.model.flow.scope,
            analysis: Analysis::Pending,
        });
        if let Some(class) = class {
            self.model.classes[class as usize]
                .methods
                .insert(def.name.id.clone(), id);
        }
        self.model.bind(
            &def.name.id,
            Binding {
                kind: Kind::Unknown,
                source: BindingSource::Function(id),
                value: None,
            },
        );
    }

    fn define_class(&mut self, class_def: &'a ast::StmtClassDef) {
        for decorator in &class_def.decorator_list {
            self.visit_expr(&decorator.expression);
        }
        let mut bases = Vec::new();
        if let Some(arguments) = &class_def.arguments {
            for base in arguments.args.iter() {
                self.visit_expr(base);
                bases.push(
                    self.model
                        .qualified_name(base)
                        .unwrap_or_else(|| self.source[base.range()].to_string()),
                );
            }
        }
        let local_base = |name: &str| self.model.local_class(name).map(|id| &self.model.classes[id as usize]);
        // `torchmetrics.Metric` or one of its metrics (all modules), not the collection of them
        // nor the package's helper classes (`torchmetrics.utilities.enums.EnumStr`).
        let is_metric = bases.iter().any(|base| {
            base.strip_prefix("torchmetrics.").is_some_and(|rest| {
                let last = rest.rsplit('.').next().unwrap_or(rest);
                last.starts_with(|c: char| c.is_ascii_uppercase())
                    && last != "MetricCollection"
                    && !rest.starts_with("utilities.")
            }) || local_base(base).is_some_and(|c| c.is_metric)
        });
        let is_module = is_metric
            || bases.iter().any(|base| {
                let last = base.rsplit('.').next().unwrap_or(base);
                (base.starts_with("torch.nn.") && !base.starts_with("torch.nn.functional"))
                    || last.ends_with("Module")
                    || last.ends_with("Model")
                    || last.ends_with("Loss")
                    || local_base(base).is_some_and(|c| c.is_module)
            });
        let is_loss = class_def.name.id.as_str().ends_with("Loss")
            || bases.iter().any(|base| {
                let last = base.rsplit('.').next().unwrap_or(base);
                last.ends_with("Loss") || local_base(base).is_some_and(|c| c.is_loss)
            });
        let forward_replaced = class_def.decorator_list.iter().any(|decorator| {
            self.model
                .qualified_name(decorator_callee(decorator))
                .is_some_and(|qualified| api::replaces_forward(&qualified))
        });
        let registries = class_def
            .decorator_list
            .iter()
            .filter_map(|decorator| {
                let Expr::Attribute(register) = decorator_callee(decorator) else {
                    return None;
                };
                matches!(register.attr.as_str(), "register_module" | "register")
                    .then(|| self.model.registry_spelled(&register.value))
                    .flatten()
            })
            .collect();
        let id = self.model.classes.len() as u32;
        let (stored_callables, attribute_setters) = class_attributes(&class_def.body);
        self.model.classes.push(ClassInfo {
            name: class_def.name.id.clone(),
            bases,
            is_module,
            is_loss,
            is_metric,
            forward_replaced,
            methods: Default::default(),
            attrs: Default::default(),
            attribute_calls: Default::default(),
            stored_callables,
            attribute_setters,
            instance_setters: Default::default(),
            placeholders: Default::default(),
            registries,
            methods_called_on: Default::default(),
        });
        let scope = self.model.push_scope(ScopeKind::Class(id), self.model.flow.scope);
        let saved_scope = std::mem::replace(&mut self.model.flow.scope, scope);
        let saved_class = self.model.flow.class.replace(id);
        self.visit_body(&class_def.body);
        // Annotated fields (`boxes: torch.Tensor` of a dataclass, a `NamedTuple`, a plain
        // class): what an instance's attribute holds, joined later with what methods assign.
        for stmt in &class_def.body {
            if let Stmt::AnnAssign(field) = stmt
                && let Expr::Name(name) = field.target.as_ref()
                && let kind @ (Kind::Tensor(_) | Kind::TensorSequence(_)) =
                    self.model.annotation_kind(&field.annotation)
            {
                self.model.classes[id as usize]
                    .attrs
                    .entry(name.id.clone())
                    .or_insert(kind);
            }
        }
        self.model.flow.scope = saved_scope;
        self.model.invalidate_kinds();
        self.model.flow.class = saved_class;
        self.model.bind(
            &class_def.name.id,
            Binding {
                kind: Kind::Unknown,
                source: BindingSource::Class(id),
                value: None,
            },
        );
    }

    // ---- bindings ------------------------------------------------------------------------

    fn bind_import(&mut self, alias: &ast::Alias, module: Option<&str>, level: u32) {
        let (name, qualified) = match module {
            // `import a.b.c` binds `a`; `import a.b as c` binds `c` to `a.b`.
            None => match &alias.asname {
                Some(asname) => (asname.id.clone(), alias.name.id.to_string()),
                None => {
                    let first = alias.name.id.as_str().split('.').next().unwrap_or_default();
                    (Name::new(first), first.to_string())
                }
            },
            Some(module) => {
                let name = alias.name.id.as_str();
                let mut qualified = String::with_capacity(level as usize + module.len() + 1 + name.len());
                qualified.extend(std::iter::repeat_n('.', level as usize));
                qualified.push_str(module);
                if !(module.is_empty() && level > 0) {
                    qualified.push('.');
                }
                qualified.push_str(name);
                (
                    alias
                        .asname
                        .as_ref()
                        .map_or_else(|| alias.name.id.clone(), |a| a.id.clone()),
                    qualified,
                )
            }
        };
        self.model.bind(
            &name,
            Binding {
                kind: Kind::Unknown,
                source: BindingSource::Import(qualified.into()),
                value: None,
            },
        );
    }

    /// What a tuple literal gives, element by element (nested tuples kept).
    fn returned(&self, value: &Expr) -> Returned {
        match value {
            Expr::Tuple(tuple) => Returned::Tuple(tuple.elts.iter().map(|elt| self.returned(elt)).collect()),
            value => Returned::Value(self.model.kind_of(value)),
        }
    }

    /// The tuple a call returns, if it returns one: a function of this file (`f(x)`,
    /// `self.m(x)`) as analysed here, else a project function as the project tells it.
    fn returned_by(&self, call: &ast::ExprCall) -> Option<Box<[Returned]>> {
        let local = match call.func.as_ref() {
            Expr::Name(name) => match self.model.lookup(name.id.as_str()) {
                Some(Binding {
                    source: BindingSource::Function(id),
                    ..
                }) => Some(*id),
                _ => None,
            },
            Expr::Attribute(attribute) if on_self(attribute) => {
                self.model.method_of_current_class(attribute.attr.as_str())
            }
            _ => None,
        };
        if let Some(id) = local {
            return self.model.functions[id as usize].returns_tuple.clone();
        }
        // A method of a class of this file through an object (`self.assigner(x)` running
        // `forward`), each override it may reach joined.
        let sites = self.model.sites_of(call);
        let local_targets: Option<Vec<(FunctionId, usize)>> =
            sites.iter().map(|site| self.local_target(&site.callee)).collect();
        if let Some(targets) = local_targets.filter(|targets| !targets.is_empty()) {
            return targets
                .iter()
                .map(|&(id, _)| self.model.functions[id as usize].returns_tuple.clone())
                .reduce(|a, b| Returned::join_elements(&a?, &b?))
                .flatten();
        }
        self.model.project_returned_tuple(call)
    }

    /// Binds a target to what a returned tuple holds: `(mask, idx), loss = self.assign(x)`;
    /// what each name is depends on `call`.
    fn bind_returned(&mut self, target: &Expr, returned: &Returned, call: &'a Expr) {
        match (target, returned) {
            (
                Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }),
                Returned::Tuple(elements),
            ) if elts.len() == elements.len() => {
                for (element, returned) in elts.iter().zip(elements.iter()) {
                    self.bind_returned(element, returned, call);
                }
            }
            (target, Returned::Value(kind)) => {
                // An element of a module's output its `forward` cannot tell is a tensor, as the
                // output is.
                let kind = match call {
                    Expr::Call(module_call) if *kind == Kind::Unknown && self.model.calls_a_module(module_call) => {
                        Kind::element(self.model.kind_of(call))
                    }
                    _ => *kind,
                };
                self.bind_unpacked(target, kind, call);
            }
            (target, Returned::Tuple(_)) => self.bind_target(target, Kind::Tuple, None),
        }
    }

    /// Binds a target unpacked from `whole` (`(mask, idx), loss = f(x)`, `b, n = x.shape[:2]`):
    /// what its names are depends on it.
    fn bind_unpacked(&mut self, target: &Expr, kind: Kind, whole: &'a Expr) {
        match target {
            Expr::Name(name) => self.model.bind_unpacked(&name.id, kind, whole),
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                for element in elts {
                    self.bind_unpacked(element, Kind::element(kind), whole);
                }
            }
            target => self.bind_target(target, kind, None),
        }
    }

    /// Binds an assignment target to the kind of what is assigned.
    fn bind_target(&mut self, target: &Expr, kind: Kind, value: Option<&'a Expr>) {
        match target {
            Expr::Name(name) => self.model.bind_value(&name.id, kind, value),
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. })
                if let Some(value @ Expr::Call(call)) = value
                    && let Some(elements) = self.returned_by(call)
                    && elements.len() == elts.len() =>
            {
                self.bind_returned(target, &Returned::Tuple(elements), value);
            }
            // `x, w = ctx.saved_tensors` in an autograd Function's `backward`: what `forward`
            // saved, in order (`ctx.save_for_backward(x.cpu(), w)`: a CPU tensor first).
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. })
                if let Some(saved) = value.and_then(|value| self.saved_for_backward(value))
                    && saved.len() == elts.len() =>
            {
                // `save_for_backward` takes tensors (or `None`): what is not copied to the CPU is
                // a tensor of unknown device.
                for (element, on_the_cpu) in elts.iter().zip(saved) {
                    let device = if on_the_cpu { Device::Cpu } else { Device::Unknown };
                    self.bind_target(element, Kind::Tensor(TensorFacts::on(device)), None);
                }
            }
            // `x, y = item` of an item a loop took from `zip(xs, ys)`.
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. })
                if let Some(Expr::Name(item)) = value
                    && let Some(Binding {
                        value: Some(Expr::Call(zipped)),
                        ..
                    }) = self.model.lookup(item.id.as_str())
                    && zipped.arguments.args.len() == elts.len()
                    && self.zips(zipped) =>
            {
                for (element, iterated) in elts.iter().zip(zipped.arguments.args.iter()) {
                    let kind = self.iteration_kind(iterated);
                    self.bind_target(element, kind, None);
                }
            }
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                let values: Option<&'a [Expr]> = match value {
                    Some(Expr::Tuple(tuple)) => Some(&tuple.elts),
                    Some(Expr::List(list)) => Some(&list.elts),
                    _ => None,
                };
                // `a, *rest, z = x, y, w, v`: the names before the star take values from the
                // front, those after it from the back, the star the rest.
                let star = elts.iter().position(Expr::is_starred_expr);
                let matched = values.filter(|values| match star {
                    None => values.len() == elts.len(),
                    Some(_) => values.len() >= elts.len() - 1 && !values.iter().any(Expr::is_starred_expr),
                });
                // What the elements of a value unpacked are depends on it (a call's result,
                // `x[:2]`).
                let whole = value;
                for (index, element) in elts.iter().enumerate() {
                    let value = matched.and_then(|values| match star {
                        Some(star) if index == star => None,
                        Some(star) if index > star => values.get(values.len() - (elts.len() - index)),
                        _ => values.get(index),
                    });
                    match (value, whole) {
                        (Some(value), _) => {
                            let element_kind = self.model.kind_of(value);
                            self.bind_target(element, element_kind, Some(value));
                        }
                        // `b, n, c = x.shape` whatever `x` is: sizes are host numbers.
                        (None, Some(whole)) if is_a_size(whole) => self.bind_target(element, Kind::Number, None),
                        (None, Some(whole)) => self.bind_unpacked(element, Kind::element(kind), whole),
                        (None, None) => self.bind_target(element, Kind::element(kind), None),
                    }
                }
            }
            Expr::Starred(starred) => self.bind_target(&starred.value, Kind::List, None),
            Expr::Attribute(attribute) => {
                if on_self(attribute) {
                    self.bind_self_attribute(&attribute.attr.id, kind, value);
                } else if let Expr::Name(name) = attribute.value.as_ref()
                    && let Some(Binding {
                        source: BindingSource::Function(id),
                        ..
                    }) = self.model.lookup(name.id.as_str())
                {
                    // A function's own attribute: a buffer it keeps between calls.
                    let held = self
                        .model
                        .function_attributes
                        .entry((*id, attribute.attr.id.clone()))
                        .or_insert(kind);
                    *held = held.join(kind);
                    self.model.invalidate_kinds();
                } else {
                    // An instance of a class of this file (made by a factory, `o = Head()`):
                    // what it holds joins what the class's methods assign.
                    let receiver = self.model.kind_of(&attribute.value);
                    if let Some(class) = self.model.local_class_of(receiver) {
                        self.join_class_attribute(class, &attribute.attr.id, kind, value, false);
                    }
                    self.attributes_set_outside.push(attribute.attr.id.clone());
                }
            }
            _ => {}
        }
    }

    /// For `ctx.saved_tensors` in a method of an autograd Function, the arguments its
    /// `forward` passes to `ctx.save_for_backward(...)`, each `true` where it is copied to the
    /// CPU there (`x.cpu()`, `x.to("cpu")`); `None` elsewhere, or where `forward` saves in
    /// several places.
    fn saved_for_backward(&self, value: &Expr) -> Option<Vec<bool>> {
        let Expr::Attribute(attribute) = value else { return None };
        if attribute.attr.as_str() != "saved_tensors" || !attribute.value.is_name_expr() {
            return None;
        }
        let class = self.model.flow.class?;
        if !is_autograd_function(&self.model.classes[class as usize]) {
            return None;
        }
        let forward = self.model.method_of(class, "forward")?;
        let mut saves = Vec::new();
        any_expr(&self.model.functions[forward as usize].def.body, |expr| {
            if let Expr::Call(call) = expr
                && let Expr::Attribute(method) = call.func.as_ref()
                && method.attr.as_str() == "save_for_backward"
            {
                saves.push(call);
            }
            false
        });
        let [save] = saves.as_slice() else { return None };
        let copied_to_the_cpu = |argument: &Expr| {
            let Expr::Call(call) = argument else { return false };
            let Expr::Attribute(method) = call.func.as_ref() else {
                return false;
            };
            match method.attr.as_str() {
                "cpu" => call.arguments.is_empty(),
                "to" => matches!(
                    call.arguments.args.first(),
                    Some(Expr::StringLiteral(device)) if literal_text(&device.value) == Some("cpu")
                ),
                _ => false,
            }
        };
        Some(save.arguments.args.iter().map(copied_to_the_cpu).collect())
    }

    /// `self.<attr> = value` in a method of the class being analysed: the attribute holds the
    /// join of what its methods assign.
    fn bind_self_attribute(&mut self, attr: &Name, kind: Kind, value: Option<&Expr>) {
        let Some(class) = self.model.flow.class else {
            return;
        };
        // `self.sigmas = self.sigmas.to("cpu")` outside any arm: what the attribute held a line
        // before is gone (EDM Euler's sigmas, moved to the CPU after each schedule is built).
        let replaces = self.model.branch_logs.is_empty()
            && value.is_some_and(|value| {
                any_expr_in(
                    value,
                    |expr| matches!(expr, Expr::Attribute(read) if on_self(read) && read.attr.id == *attr),
                )
            });
        self.join_class_attribute(class, attr, kind, value, replaces);
        // `self.clip_func = torch.nn.utils.clip_grad_norm_`: calls through it give a tensor.
        if let Some(qualified) = value
            .filter(|value| matches!(value, Expr::Attribute(_) | Expr::Name(_)))
            .and_then(|value| self.model.qualified_name(value))
            .filter(|qualified| api::returns_tensor(qualified))
        {
            let stored = self.model.classes[class as usize]
                .stored_callables
                .entry(attr.clone())
                .or_default();
            let callable = StoredCallable::Library(qualified.into());
            if !stored.contains(&callable) {
                stored.push(callable);
            }
        }
    }

    /// What `class`'s instances hold in `attr`, joined with `kind` (or replaced by it).
    fn join_class_attribute(&mut self, class: ClassId, attr: &Name, kind: Kind, value: Option<&Expr>, replaces: bool) {
        let placeholder = value.is_some_and(|value| self.model.is_empty_placeholder(value));
        // The project calls an unknown value is made of (`to_tensor(w) if w is not None else
        // None`), for what a later question asks of the attribute.
        let calls: Vec<Rc<str>> = match value {
            Some(value) if kind.is_opaque() => {
                let mut calls = Vec::new();
                self.project_calls_of(value, &mut calls);
                calls
            }
            _ => Vec::new(),
        };
        let class = &mut self.model.classes[class as usize];
        if !calls.is_empty() {
            let known = class.attribute_calls.entry(attr.clone()).or_default();
            for call in calls {
                if !known.contains(&call) {
                    known.push(call);
                }
            }
        }
        let joined = match class.attrs.get(attr.as_str()) {
            None => {
                if placeholder {
                    class.placeholders.insert(attr.clone());
                }
                kind
            }
            // An empty placeholder holds nothing later code reads: what replaces it is what the
            // attribute holds.
            Some(_) if placeholder => return,
            Some(_) if class.placeholders.remove(attr.as_str()) || replaces => kind,
            Some(earlier) => earlier.join(kind),
        };
        class.attrs.insert(attr.clone(), joined);
        self.model.invalidate_kinds();
    }

    /// The project functions `value` is the result of: a call of one, or an arm of a
    /// conditional or `or` that is.
    fn project_calls_of(&self, value: &Expr, calls: &mut Vec<Rc<str>>) {
        match value {
            Expr::Call(call) => {
                if let Some(callee) = self.model.callee(call).filter(|callee| !is_library(callee)) {
                    calls.push(callee);
                }
            }
            Expr::If(if_expr) => {
                self.project_calls_of(&if_expr.body, calls);
                self.project_calls_of(&if_expr.orelse, calls);
            }
            Expr::BoolOp(bool_op) => bool_op.values.iter().for_each(|v| self.project_calls_of(v, calls)),
            _ => {}
        }
    }

    /// The kind of one element produced by iterating over `iter`.
    fn iteration_kind(&self, iter: &Expr) -> Kind {
        if let Expr::Call(call) = iter
            && let Expr::Name(func) = call.func.as_ref()
        {
            let first = call.arguments.args.first();
            if self.model.is_builtin(func.id.as_str()) {
                match func.id.as_str() {
                    "range" | "len" => return Kind::Number,
                    "enumerate" | "zip" => return Kind::Tuple,
                    "iter" | "reversed" | "list" | "sorted" | "tuple" => {
                        return first.map_or(Kind::Unknown, |arg| self.iteration_kind(arg));
                    }
                    _ => {}
                }
            } else if names_a_progress_wrapper(func.id.as_str()) {
                return first.map_or(Kind::Unknown, |arg| self.iteration_kind(arg));
            }
        }
        match self.model.kind_of(iter) {
            kind @ Kind::DataLoader { .. } => Kind::element(kind),
            Kind::Unknown if names_a_loader(iter) => Kind::Tensor(TensorFacts {
                batch: BatchSource::UnknownLoader,
                ..TensorFacts::on(Device::Cpu)
            }),
            // The rows of a parameter named as a mask are masks too.
            Kind::Tensor(facts) if self.model.is_mask_parameter(iter) => {
                Kind::Tensor(TensorFacts { boolean: true, ..facts })
            }
            kind => Kind::element(kind),
        }
    }

    /// Binds the target of `for target in iter` (with `enumerate` and `zip` unpacked).
    fn bind_loop_target(&mut self, target: &'a Expr, iter: &'a Expr) {
        // `for key, value in d.items()`: the key is no tensor, whatever the values are.
        if let (Expr::Tuple(tuple), Expr::Call(call)) = (target, iter)
            && let [key, value] = tuple.elts.as_slice()
            && call.arguments.is_empty()
            && matches!(call.func.as_ref(), Expr::Attribute(items) if items.attr.as_str() == "items")
        {
            self.bind_target(key, Kind::Unknown, None);
            let kind = self.iteration_kind(iter);
            self.bind_element(value, kind, iter);
            return;
        }
        if let (Expr::Tuple(tuple), Expr::Call(call)) = (target, iter)
            && let Expr::Name(func) = call.func.as_ref()
            && self.model.is_builtin(func.id.as_str())
        {
            match (func.id.as_str(), tuple.elts.as_slice()) {
                ("enumerate", [index, item]) => {
                    self.bind_target(index, Kind::Number, None);
                    match call.arguments.args.first() {
                        // `for i, (a, b) in enumerate(zip(xs, ys))`: the item as `zip` gives it.
                        Some(iterated) if item.is_tuple_expr() || item.is_list_expr() => {
                            self.bind_loop_target(item, iterated);
                        }
                        iterated => {
                            let kind = iterated.map_or(Kind::Unknown, |a| self.iteration_kind(a));
                            self.bind_target(item, kind, iterated.filter(|a| self.is_zip_call(a)));
                        }
                    }
                    return;
                }
                ("zip", items) if items.len() == call.arguments.args.len() => {
                    for (item, arg) in items.iter().zip(call.arguments.args.iter()) {
                        let kind = self.iteration_kind(arg);
                        self.bind_target(item, kind, None);
                    }
                    return;
                }
                _ => {}
            }
        }
        // `pbar = tqdm(enumerate(loader))`; `for i, batch in pbar:`
        if let (
            Expr::Tuple(tuple),
            Kind::DataLoader {
                pinned,
                constructor,
                enumerated: true,
            },
        ) = (target, self.model.kind_of(iter))
            && let [index, item] = tuple.elts.as_slice()
        {
            self.bind_target(index, Kind::Number, None);
            let batches = Kind::DataLoader {
                pinned,
                constructor,
                enumerated: false,
            };
            self.bind_target(item, Kind::element(batches), None);
            return;
        }
        let kind = self.iteration_kind(iter);
        // `for item in zip(xs, ys)`: the item keeps the `zip` it came from, so unpacking it
        // later (`x, y = item`) binds each name as `zip` gives it.
        if target.is_name_expr() && self.is_zip_call(iter) {
            self.bind_target(target, kind, Some(iter));
        } else {
            self.bind_element(target, kind, iter);
        }
    }

    /// Binds a loop's target to an element of `iter`. Where the element's kind is not known and
    /// a parameter is iterated (`for t in batch:`, `for k, v in batch.items():`), the element
    /// depends on it: a question about the element is a question about the parameter, which
    /// the callers of another file can answer (`v.to(device)` asks what `batch` is). Other
    /// iterables are not traced: what they depend on is rarely a parameter, and each question
    /// traced costs the project pass.
    fn bind_element(&mut self, target: &'a Expr, kind: Kind, iter: &'a Expr) {
        match target {
            Expr::Name(name) if kind.is_opaque() && self.iterates_a_parameter(iter) => {
                self.model.bind_unpacked(&name.id, kind, iter)
            }
            target => self.bind_target(target, kind, None),
        }
    }

    /// `param`, `param.items()` or `param.values()` of a parameter of the function analysed.
    fn iterates_a_parameter(&self, iter: &Expr) -> bool {
        let iterated: &Expr = match iter {
            Expr::Call(call) if call.arguments.is_empty() => match call.func.as_ref() {
                Expr::Attribute(method) if matches!(method.attr.as_str(), "items" | "values") => &method.value,
                _ => return false,
            },
            iter => iter,
        };
        matches!(iterated, Expr::Name(name) if matches!(
            self.model.lookup(name.id.as_str()),
            Some(Binding { source: BindingSource::Parameter(_), .. })
        ))
    }

    /// `zip(...)` of the builtin, without starred arguments.
    fn is_zip_call(&self, expr: &Expr) -> bool {
        matches!(expr, Expr::Call(call) if self.zips(call))
    }

    fn zips(&self, call: &ast::ExprCall) -> bool {
        matches!(call.func.as_ref(), Expr::Name(func) if func.id == "zip" && self.model.is_builtin("zip"))
            && !call.arguments.args.iter().any(Expr::is_starred_expr)
    }

    // ---- epochs --------------------------------------------------------------------------

    /// Does this code hold a step loop (outside nested definitions): a loop over a data loader,
    /// or one that runs a backward pass? A function that does runs whole epochs, and a loop that
    /// does is an epoch loop: the lines outside the step loop run once per call or epoch.
    /// `in_step`: the body is a step already (a loop over batches): a loop in it that runs
    /// backward splits the step into micro-batches (`for micro in batch.chunk(4):`) and makes
    /// it no epoch loop.
    fn runs_epochs(&self, body: &[Stmt], in_step: bool) -> bool {
        // Most functions hold no loop: they are told without inferring anything.
        let Some(iterated) = loop_iterables(body) else {
            return false;
        };
        // Inside a step, a loop that runs backward splits it; elsewhere it is a step loop.
        if !in_step && runs_backward_in_a_loop(body) {
            return true;
        }
        let mut finder = StepLoopFinder {
            checker: self,
            found: false,
            iterated,
            batch_names: Vec::new(),
        };
        finder.visit_body(body);
        finder.found
    }

    /// `for batch in loader`, `for i, (x, y) in enumerate(tqdm(train_loader))`; `batch_names`
    /// hold what iterates batches too.
    fn iterates_batches(&self, iter: &Expr, batch_names: &[Name]) -> bool {
        match iter {
            Expr::Name(name) if batch_names.contains(&name.id) => true,
            Expr::Call(call) if self.wraps_an_iterable(call) => call
                .arguments
                .args
                .iter()
                .any(|arg| self.iterates_batches(arg, batch_names)),
            iter => match self.model.kind_of(iter) {
                Kind::DataLoader { .. } => true,
                Kind::Unknown => names_a_loader(iter),
                _ => false,
            },
        }
    }

    /// `enumerate(x)`, `zip(x, y)`, `iter(x)`, `tqdm(x)`: iterating it iterates `x`.
    fn wraps_an_iterable(&self, call: &ast::ExprCall) -> bool {
        let Expr::Name(func) = call.func.as_ref() else {
            return false;
        };
        let name = func.id.as_str();
        if self.model.is_builtin(name) {
            matches!(name, "enumerate" | "zip" | "iter")
        } else {
            names_a_progress_wrapper(name)
        }
    }

    // ---- calls ---------------------------------------------------------------------------

    /// Resolves what a call calls (analysing a local function first if needed, with the kinds
    /// this call passes, so its return kind is known), and records the call site for the
    /// project-wide call graph.
    fn note_call(&mut self, call: &ast::ExprCall) {
        let context = self.model.context();
        self.note_method_called_on_attribute(call, context);
        // Calls in code that never runs hot (module level, setup, `except`) cannot make anything
        // hot: only the call graph's full picture (`synclint graph`) wants them.
        if context == HotContext::Cold && !self.options.every_call {
            // What a function of this file returns still tells what a cold call of it gives
            // (`self.table = build_table(n)` in `__init__`, read by `forward`).
            if let Expr::Name(name) = call.func.as_ref()
                && let Some(Binding {
                    source: BindingSource::Function(id),
                    ..
                }) = self.model.lookup(name.id.as_str())
            {
                self.analyse_local_callees(call, &[Callee::Local(*id)]);
            }
            self.note_construction(call, context);
            self.note_state_change(call);
            return;
        }
        let callees = match self.project_callee(call) {
            Some(callee) => vec![callee],
            None => self.stored_method_callees(call),
        };
        if !callees.is_empty() {
            self.record_call_sites(call, callees, context);
        }
        self.record_passed_functions(call, context);
        self.note_state_change(call);
    }

    /// `self.augmentations._set_seed()`, run anywhere (setup too): a method called on what an
    /// attribute of `self` holds (see [`ClassInfo::methods_called_on`]); and whether code that
    /// may run hot calls it (`self.augmentations(X, y)` in a loop), for which alone the project
    /// is asked (each answer checks the file again).
    fn note_method_called_on_attribute(&mut self, call: &ast::ExprCall, context: HotContext) {
        let Some(class) = self.model.flow.class else {
            return;
        };
        let (held, method) = match call.func.as_ref() {
            Expr::Attribute(method) => match method.value.as_ref() {
                Expr::Attribute(held) if on_self(held) => (held, Some(&method.attr.id)),
                // `self.step(x)` of a method of the class holds nothing to type.
                _ if on_self(method) && self.model.method_of(class, method.attr.as_str()).is_none() => (method, None),
                _ => return,
            },
            _ => return,
        };
        let hot = method.is_none() && context != HotContext::Cold;
        let called = self.model.classes[class as usize]
            .methods_called_on
            .entry(held.attr.id.clone())
            .or_default();
        called.1 |= hot;
        if let Some(method) = method.filter(|method| !method.as_str().starts_with("__"))
            && !called.0.contains(method)
        {
            called.0.push(method.clone());
        }
    }

    /// A construction of a project class in code that runs once (`self.down =
    /// Downsample(ch, use_conv=False)` in `__init__`, `super().__init__(...)`): an edge with the
    /// arguments it gives, for the flags the instance's methods test. Nothing runs hot by it.
    fn note_construction(&mut self, call: &ast::ExprCall, context: HotContext) {
        let constructs = |callee: &Callee| match callee {
            Callee::Method { method, .. } | Callee::Super { method, .. } => &**method == "__init__",
            Callee::Imported { name, .. } => name.starts_with(|c: char| c.is_ascii_uppercase()),
            Callee::Local(_) | Callee::Property { .. } => false,
        };
        let Some(callee) = self.project_callee(call).filter(constructs) else {
            return;
        };
        // Which parameters it gives, not what: a construction's kinds reach nothing hot.
        let given = |expr: &Expr| Argument {
            given: self.model.given_by(expr),
            ..Argument::default()
        };
        let arguments = describe_arguments(&call.arguments, given);
        let line = self.line(call.start());
        self.push_call_site(
            callee,
            context,
            line,
            call.start(),
            Some(Box::new(arguments)),
            CallArity::of(&call.arguments),
        );
    }

    /// `xs.append(t)`, `xs.insert(i, t)`, `xs.extend(ts)` of tensors on a list this function
    /// made: it holds tensors from here on (`torch.stack(xs)`, `xs[i]`, `for t in xs` read them);
    /// of Python numbers on a list made empty, it holds numbers (`x[xs]` is a host index).
    fn note_list_growth(&mut self, call: &ast::ExprCall) {
        let Expr::Attribute(attribute) = call.func.as_ref() else {
            return;
        };
        let Expr::Name(list) = attribute.value.as_ref() else {
            return;
        };
        let added = match (attribute.attr.as_str(), &*call.arguments.args) {
            ("append", [element]) | ("insert", [_, element]) => self.model.kind_of(element),
            ("extend", [elements]) => match self.model.kind_of(elements) {
                Kind::TensorSequence(facts) => Kind::Tensor(facts),
                Kind::NumberList => Kind::Number,
                _ => return,
            },
            _ => return,
        };
        let Some(Binding {
            kind,
            source: BindingSource::Value,
            value,
        }) = self.model.lookup(list.id.as_str()).cloned()
        else {
            return;
        };
        let made_empty = matches!(value, Some(Expr::List(display)) if display.elts.is_empty());
        let grown = match (kind, added) {
            (Kind::List, Kind::Tensor(facts)) => Kind::TensorSequence(facts),
            (Kind::TensorSequence(held), Kind::Tensor(facts)) => Kind::TensorSequence(held.join(facts)),
            (Kind::TensorSequence(_), _) => Kind::List,
            (Kind::List, Kind::Number) if made_empty => Kind::NumberList,
            (Kind::NumberList, Kind::Number) => Kind::NumberList,
            (Kind::NumberList, _) => Kind::List,
            _ => return,
        };
        if grown != kind {
            self.model.bind_value(&list.id, grown, value);
        }
    }

    /// `batch_to_device(batch, device)` with its result dropped: a function given a loader's
    /// batch and a device can only have moved the batch's tensors in place, so what the batch
    /// holds is on that device from here on (its fields tensors, the device unknown).
    fn note_moved_in_place(&mut self, call: &ast::ExprCall) {
        let arguments = &call.arguments;
        // The batch first: few calls pass one, and only then is what names a device worth
        // inferring.
        let batches: Vec<&Name> = arguments
            .args
            .iter()
            .filter_map(|argument| match argument {
                Expr::Name(name) if matches!(self.model.kind_of(argument), Kind::Tensor(facts) if facts.is_batch()) => {
                    Some(&name.id)
                }
                _ => None,
            })
            .collect();
        if batches.is_empty() {
            return;
        }
        let names_a_device = |expr: &Expr| match expr {
            Expr::StringLiteral(device) => {
                literal_text(&device.value).is_some_and(|device| device_from_str(device) == Device::Cuda)
            }
            _ => {
                matches!(self.model.kind_of(expr), Kind::Device(device) if device != Device::Cpu)
                    || last_name(expr).is_some_and(|name| ends_with_ignoring_ascii_case(name, "device"))
            }
        };
        let mut values = arguments
            .args
            .iter()
            .chain(arguments.keywords.iter().map(|keyword| &keyword.value));
        if !values.any(names_a_device) {
            return;
        }
        let moved = TensorFacts {
            batch: BatchSource::Output,
            ..TensorFacts::on(Device::Unknown)
        };
        for name in batches {
            self.model.bind_value(name, Kind::Tensor(moved), None);
        }
    }

    /// Finds, for each class of the file, the functions that assign attributes of an instance
    /// of it they made (`positions = Positions()` or, in a class method, `cls(...)`; then
    /// `positions.table = t`), for [`Checker::analyse_setters`]: the instance's attribute
    /// holds what they store as well as what the class's own methods assign.
    fn note_instance_setters(&mut self) {
        /// The instances a function makes, by name, and the attributes it assigns on them.
        struct Stores<'m, 'a> {
            model: &'m SemanticModel<'a>,
            /// The class of the function read (for `cls`).
            class: Option<ClassId>,
            instances: Vec<(&'a Name, ClassId)>,
            found: Vec<(ClassId, Name)>,
        }
        impl<'a> Visitor<'a> for Stores<'_, 'a> {
            fn visit_expr(&mut self, _: &'a Expr) {}
            fn visit_stmt(&mut self, stmt: &'a Stmt) {
                match stmt {
                    Stmt::ClassDef(_) | Stmt::FunctionDef(_) => {}
                    Stmt::Assign(assign) => {
                        if let [Expr::Name(instance)] = &*assign.targets
                            && let Expr::Call(call) = assign.value.as_ref()
                            && let Expr::Name(made) = call.func.as_ref()
                        {
                            let class = match self.class {
                                Some(class) if made.id.as_str() == "cls" => Some(class),
                                _ => self.model.local_class(made.id.as_str()),
                            };
                            self.instances.retain(|(name, _)| **name != instance.id);
                            self.instances.extend(class.map(|class| (&instance.id, class)));
                            return;
                        }
                        for target in &assign.targets {
                            if let Expr::Attribute(attribute) = target
                                && let Expr::Name(receiver) = attribute.value.as_ref()
                                && let Some(&(_, class)) = self.instances.iter().find(|(name, _)| **name == receiver.id)
                            {
                                self.found.push((class, attribute.attr.id.clone()));
                            }
                        }
                    }
                    _ => visitor::walk_stmt(self, stmt),
                }
            }
        }
        let mut found: Vec<(ClassId, Name, FunctionId)> = Vec::new();
        for (id, function) in self.model.functions.iter().enumerate() {
            let mut stores = Stores {
                model: &self.model,
                class: function.class,
                instances: Vec::new(),
                found: Vec::new(),
            };
            stores.visit_body(&function.def.body);
            found.extend(
                stores
                    .found
                    .into_iter()
                    .map(|(class, attr)| (class, attr, id as FunctionId)),
            );
        }
        for (class, attr, function) in found {
            let setters = self.model.classes[class as usize]
                .instance_setters
                .entry(attr)
                .or_default();
            if !setters.contains(&function) {
                setters.push(function);
            }
        }
    }

    /// Before `self.<attr>` is read where nothing has assigned it yet (or only `None`, or an
    /// empty placeholder), the methods of the class that assign it are analysed: a step method
    /// defined before the setup method that builds its scaler and optimizer still sees them.
    fn analyse_setters(&mut self, attr: &str) {
        let Some(class) = self.model.flow.class else {
            return;
        };
        let placeholder = self
            .model
            .lineage(class)
            .any(|id| self.model.classes[id as usize].placeholders.contains(attr));
        if !placeholder
            && !matches!(
                self.model.local_class_attribute(class, attr),
                None | Some(Kind::NoneValue | Kind::Unknown)
            )
        {
            return;
        }
        let lineage: Vec<ClassId> = self.model.lineage(class).collect();
        let classes = &self.model.classes;
        let methods = lineage
            .iter()
            .filter_map(|&id| classes[id as usize].attribute_setters.get(attr))
            .flatten()
            .filter_map(|method| self.model.method_of(class, method));
        let outside = lineage
            .iter()
            .filter_map(|&id| classes[id as usize].instance_setters.get(attr))
            .flatten()
            .copied();
        let setters: Vec<FunctionId> = methods
            .chain(outside)
            .filter(|&id| self.model.functions[id as usize].analysis == Analysis::Pending)
            .collect();
        for id in setters {
            self.ensure_analyzed(id);
        }
    }

    /// Does the arm where `test` comes out `holds` run on no CUDA step? It never runs (`if False:`,
    /// `if 0:`, `if TYPE_CHECKING:`), or only on another backend: a device compared with one
    /// (`x.device.type == "mps"`, `device.type in ("npu", "xla")`, `str(device).startswith("mps")`,
    /// `x.device.type != "cuda"`), a flag or check named for one (`x.is_mps`, `is_torch_npu_available()`,
    /// `torch.backends.mps.is_available()`, `if self.is_tpu:`), or only while a model is traced for
    /// export (`torch.jit.is_tracing()`, `torch.onnx.is_in_onnx_export()`), or what it tests is
    /// decided by what the value is (`if not torch.is_tensor(t):` of a tensor, `if isinstance(t,
    /// torch.Tensor):` of a number). Syncs there cost nothing on a GPU step. With `callers`, also
    /// an arm decided by what the hot callers give the function's parameters or what every
    /// construction gives a flag (see [`Checker::callers_never_take`]); not where the test is
    /// read outside its function.
    fn runs_on_no_cuda_step(&self, test: &Expr, holds: bool, callers: bool) -> bool {
        // A string, or an enum's member (`DistributedType.XLA`, `DeviceType.MULTI_NPU`).
        let string = |expr: &Expr| match expr {
            Expr::StringLiteral(literal) => literal_text(&literal.value).map(str::to_ascii_lowercase),
            Expr::Attribute(member)
                if !member.attr.as_str().bytes().any(|b| b.is_ascii_lowercase())
                    && last_name(&member.value)
                        .is_some_and(|enum_name| enum_name.starts_with(|c: char| c.is_ascii_uppercase())) =>
            {
                Some(member.attr.as_str().to_ascii_lowercase())
            }
            _ => None,
        };
        match test {
            Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::Not => {
                self.runs_on_no_cuda_step(&unary.operand, !holds, callers)
            }
            // `a and b` holds only where both do; `a or b` fails only where both do.
            Expr::BoolOp(bool_op) => match (bool_op.op, holds) {
                (ast::BoolOp::And, true) | (ast::BoolOp::Or, false) => bool_op
                    .values
                    .iter()
                    .any(|value| self.runs_on_no_cuda_step(value, holds, callers)),
                _ => bool_op
                    .values
                    .iter()
                    .all(|value| self.runs_on_no_cuda_step(value, holds, callers)),
            },
            Expr::BooleanLiteral(literal) => literal.value != holds,
            Expr::NumberLiteral(number) => matches!(&number.value, ast::Number::Int(n) if *n == 0u8) == holds,
            Expr::Name(name) if name.id.as_str() == "TYPE_CHECKING" => holds,
            Expr::Name(name) if holds => {
                mentions_another_backend(name.id.as_str()) || (callers && self.callers_never_take(test, holds))
            }
            // The arm where `flag` is false, where every caller passes a true literal.
            Expr::Name(_) => callers && self.callers_never_take(test, holds),
            Expr::Attribute(attribute) if holds => {
                mentions_another_backend(attribute.attr.as_str())
                    || (callers
                        && self.constructions_never_take(attribute, Given::Falsy, |default| {
                            matches!(default, ParamDefault::None | ParamDefault::Falsy)
                        }))
            }
            // The `else` of `if self.scale_rope:` where every construction passes `True`.
            Expr::Attribute(attribute) => callers && self.constructions_never_take(attribute, Given::Truthy, |_| true),
            Expr::Call(call) if let Some(tensor) = self.tests_for_a_tensor(call) => tensor != holds,
            // `if mask is None:` where every hot caller passes a mask; `if guidance is not
            // None:` (or `if guidance:`, above) where none passes it.
            Expr::Compare(compare)
                if callers
                    && let ([op], [Expr::NoneLiteral(_)]) = (&*compare.ops, &*compare.comparators)
                    && let Some((dies_if, default_kills)) = none_test_kills(*op, holds) =>
            {
                match compare.left.as_ref() {
                    Expr::Attribute(attribute) => self.constructions_never_take(attribute, dies_if, default_kills),
                    _ => self.callers_never_take(test, holds),
                }
            }

            Expr::Call(call) if last_name(&call.func).is_some_and(is_trace_check) => holds,
            Expr::Call(call) => {
                let (Expr::Attribute(attribute), true) = (call.func.as_ref(), holds) else {
                    return holds
                        && matches!(call.func.as_ref(), Expr::Name(name) if is_backend_check(name.id.as_str()));
                };
                match attribute.attr.as_str() {
                    // `str(device).startswith("mps")`
                    "startswith" => call
                        .arguments
                        .args
                        .first()
                        .and_then(string)
                        .is_some_and(|s| names_another_backend(&s)),
                    // `torch.backends.mps.is_available()`, `torch.npu.is_available()`
                    "is_available" => {
                        matches!(attribute.value.as_ref(), Expr::Attribute(module) if names_another_backend(module.attr.as_str()))
                    }
                    method => is_backend_check(method),
                }
            }
            Expr::Compare(compare) => {
                let ([op], [right]) = (&*compare.ops, &*compare.comparators) else {
                    return false;
                };
                let (literal, equal) = match (string(&compare.left), string(right), op) {
                    // `"mps" in str(device)`
                    (Some(left), None, ast::CmpOp::In) => return holds && mentions_another_backend(&left),
                    (None, Some(right), ast::CmpOp::Eq) => (right, holds),
                    (None, Some(right), ast::CmpOp::NotEq) => (right, !holds),
                    (None, None, ast::CmpOp::In | ast::CmpOp::NotIn) => {
                        let inside = (*op == ast::CmpOp::In) == holds;
                        let elements = match right {
                            Expr::Tuple(tuple) => &tuple.elts,
                            Expr::List(list) => &list.elts,
                            Expr::Set(set) => &set.elts,
                            _ => return false,
                        };
                        let names: Option<Vec<String>> = elements.iter().map(string).collect();
                        return inside
                            && names.is_some_and(|names| {
                                !names.is_empty() && names.iter().all(|n| mentions_another_backend(n))
                            });
                    }
                    _ => return false,
                };
                if equal {
                    mentions_another_backend(&literal)
                } else {
                    // Anywhere but CUDA: another backend or the CPU.
                    literal == "cuda"
                }
            }
            _ => false,
        }
    }

    /// Whether the arm where `test` comes out `holds` is dead because of what the hot callers
    /// of the function analysed give the parameter it tests (see [`Checker::given_test`]), as
    /// the project found. Such a parameter is noted as consulted (see
    /// [`Checker::visit_tested_arm`]).
    fn callers_never_take(&self, test: &Expr, holds: bool) -> bool {
        let Some((slot, dies_if)) = self.given_test(test, holds) else {
            return false;
        };
        let Some(function) = self.model.current_function() else {
            return false;
        };
        let mut consulted = self.consulted_given.get();
        consulted.note(dies_if, slot);
        self.consulted_given.set(consulted);
        self.decided_by(function.given.get(slot).copied(), dies_if)
    }

    /// The parameter slot whose callers' arguments decide the arm where `test` comes out
    /// `holds`, and what they give it where that arm dies: `if use_conv:` dies where every one
    /// leaves a false default (`Falsy`), `if mask is None:` where every one gives a value
    /// (`Always`), `if guidance is not None:` where none does (`Never`). A function that
    /// returns early the value it tests (`if cached is not None: return cached`) skips the
    /// rest where every caller hands one over (`Passed`). A dict entry the test reads (`(n :=
    /// kwargs.pop("max_seqlen", None)) is not None`) is asked as a slot after the parameters.
    fn given_test(&self, test: &Expr, holds: bool) -> Option<(usize, Given)> {
        match test {
            Expr::Name(name) if holds => self
                .parameter_slot(name.id.as_str(), |default| {
                    matches!(default, ParamDefault::None | ParamDefault::Falsy)
                })
                .map(|slot| (slot, Given::Falsy)),
            Expr::Name(name) => self
                .parameter_slot(name.id.as_str(), |_| true)
                .map(|slot| (slot, Given::Truthy)),
            Expr::Compare(compare)
                if let ([op], [Expr::NoneLiteral(_)]) = (&*compare.ops, &*compare.comparators)
                    && let Some((mut dies_if, default_kills)) = none_test_kills(*op, holds) =>
            {
                let tested = compare.left.as_ref();
                let name = match tested {
                    Expr::Named(named) => named.target.as_name_expr(),
                    Expr::Name(name) => Some(name),
                    _ => None,
                }?;
                if dies_if == Given::Always && self.returned_early == Some(name.id.as_str()) {
                    dies_if = Given::Passed;
                }
                let slot = match self.entry_read(tested) {
                    Some(entry) => self.entry_slot(entry)?,
                    None if tested.is_name_expr() => self.parameter_slot(name.id.as_str(), default_kills)?,
                    None => return None,
                };
                Some((slot, dies_if))
            }
            _ => None,
        }
    }

    /// The slot of parameter `name` of the function analysed, where its default passes
    /// `default_kills`.
    fn parameter_slot(&self, name: &str, default_kills: impl Fn(ParamDefault) -> bool) -> Option<usize> {
        let Some(Binding {
            source: BindingSource::Parameter(slot),
            ..
        }) = self.model.lookup(name)
        else {
            return None;
        };
        let slot = *slot as usize;
        let param = self.model.current_function()?.params.get(slot)?;
        default_kills(param.default).then_some(slot)
    }

    /// The entry of a dict parameter (or of `**kwargs`) that `value` holds: `(n :=
    /// kwargs.pop(key, None))`, or a name now bound to `kwargs.get(key)`, where the key is a
    /// string or a parameter whose default is one.
    fn entry_read(&self, value: &Expr) -> Option<EntryAsked> {
        let read = match value {
            Expr::Named(named) => named.value.as_ref(),
            Expr::Name(name) => self.model.lookup(name.id.as_str())?.value?,
            _ => return None,
        };
        let Expr::Call(call) = read else { return None };
        let Expr::Attribute(method) = call.func.as_ref() else {
            return None;
        };
        let Expr::Name(dict) = method.value.as_ref() else {
            return None;
        };
        if !matches!(method.attr.as_str(), "get" | "pop") || !falls_back_on_none(call) {
            return None;
        }
        let function = self.model.current_function()?;
        let parameters = &function.def.parameters;
        let dict = match self.parameter_slot(dict.id.as_str(), |_| true) {
            Some(slot) => Some(slot as u16),
            None if parameters.kwarg.as_ref().is_some_and(|kwarg| kwarg.name.id == dict.id)
                && self
                    .model
                    .lookup(dict.id.as_str())
                    .is_some_and(|binding| binding.value.is_none()) =>
            {
                None
            }
            None => return None,
        };
        let (key, key_slot) = match call.arguments.args.first()? {
            Expr::StringLiteral(key) => (literal_text(&key.value)?, None),
            Expr::Name(key) => {
                let slot = self.parameter_slot(key.id.as_str(), |_| true)?;
                let default = parameters
                    .iter_non_variadic_params()
                    .find(|parameter| parameter.parameter.name.id == key.id)?
                    .default
                    .as_deref()?;
                (
                    literal_text(&default.as_string_literal_expr()?.value)?,
                    Some(slot as u16),
                )
            }
            _ => return None,
        };
        Some(EntryAsked {
            dict,
            key: key.into(),
            key_slot,
        })
    }

    /// The slot `entry` of the function analysed is asked as: after its parameters, in the
    /// order its tests first read them.
    fn entry_slot(&self, entry: EntryAsked) -> Option<usize> {
        let id = self.model.flow.function?;
        let params = self.model.functions[id as usize].params.len();
        let mut asked = self.entries_asked.borrow_mut();
        let of_function = asked.iter().filter(|(function, _)| *function == id);
        let index = match of_function.clone().position(|(_, known)| *known == entry) {
            Some(index) => index,
            None => {
                let index = of_function.count();
                asked.push((id, entry));
                index
            }
        };
        Some(params + index)
    }

    /// Whether what callers or constructions give a parameter (`given`, where the project told
    /// it) kills an arm that dies where they give it `dies_if`; noted in `decided_by_arguments`.
    fn decided_by(&self, given: Option<Given>, dies_if: Given) -> bool {
        let decided = given.is_some_and(|given| given.kills(dies_if));
        self.decided_by_arguments
            .set(self.decided_by_arguments.get() || decided);
        decided
    }

    /// [`Checker::callers_never_take`] of a flag on `self`, by every construction of the class
    /// in the project, where only `__init__` sets it, to its parameter as it is: the arm where
    /// it holds (`dies_if` `Falsy`) is dead where its default is false (`use_conv=False`,
    /// `drop_prob=0.0`) and every construction leaves it so (`Downsample(ch)`,
    /// `Downsample(ch, use_conv=False)`); the arm where it fails (`Truthy`), where every
    /// construction passes a true literal (`scale_rope=True`). `if self.remap is not None:` is
    /// dead where every construction leaves `remap=None`, `if self.head is None:` where every
    /// one passes a head. What `default_kills` says of the parameter's default decides where
    /// constructions leave it out.
    fn constructions_never_take(
        &self,
        attribute: &ast::ExprAttribute,
        dies_if: Given,
        default_kills: fn(ParamDefault) -> bool,
    ) -> bool {
        let Some(class) = self.model.flow.class.filter(|_| on_self(attribute)) else {
            return false;
        };
        let attr = attribute.attr.as_str();
        // The one class of the lineage that sets it, in its `__init__` alone.
        let mut setting = self
            .model
            .lineage(class)
            .filter(|&id| self.model.classes[id as usize].attribute_setters.contains_key(attr));
        let (Some(owner), None) = (setting.next(), setting.next()) else {
            return false;
        };
        let owner = &self.model.classes[owner as usize];
        let only_init = matches!(&*owner.attribute_setters[attr], [setter] if setter.as_str() == "__init__");
        let Some(&init) = owner.methods.get("__init__").filter(|_| only_init) else {
            return false;
        };
        let function = &self.model.functions[init as usize];
        // A false default decides the flag where constructions leave it out; where they must
        // all pass a true literal, any default will do.
        let Some((slot, _)) =
            init_parameter_assigned(function.def, attr).filter(|&(_, default)| default_kills(default))
        else {
            return false;
        };
        let mut all_asked = self.constructions_asked.borrow_mut();
        let index = all_asked
            .iter()
            .position(|asked| asked.init == init)
            .unwrap_or_else(|| {
                all_asked.push(ConstructionAsked {
                    init,
                    given: GivenAsked::default(),
                    stored_absent: Vec::new(),
                });
                all_asked.len() - 1
            });
        let asked = &mut all_asked[index];
        asked.given.note(dies_if, slot);
        // An optional part left `None` may be attached after construction
        // (`model.roi_heads.mask_head = head`), a flag turned on (`block.use_conv = True`): the
        // project gives up an arm that needs the value absent where code sets it from outside.
        if matches!(dies_if, Given::Falsy | Given::Never)
            && !asked.stored_absent.iter().any(|(at, _)| usize::from(*at) == slot)
        {
            asked.stored_absent.push((slot as u16, Box::from(attr)));
        }
        let given = self.options.facts.given.get(&*function.qualname);
        self.decided_by(given.and_then(|given| given.get(slot)).copied(), dies_if)
    }

    /// What a test for a tensor (`torch.is_tensor(t)`, `isinstance(t, torch.Tensor)`) comes out
    /// as: by what `t` is, a value the code does not show counting as a tensor; `None` for
    /// instances and other objects.
    fn tests_for_a_tensor(&self, call: &ast::ExprCall) -> Option<bool> {
        let subject = match (call.func.as_ref(), &*call.arguments.args) {
            (Expr::Name(name), [subject, class])
                if name.id.as_str() == "isinstance"
                    && self.model.is_builtin("isinstance")
                    && self.model.qualified_name(class).as_deref() == Some("torch.Tensor") =>
            {
                subject
            }
            (func, [subject]) if self.model.qualified_name(func).as_deref() == Some("torch.is_tensor") => subject,
            _ => return None,
        };
        match self.model.kind_of(subject) {
            // A value the code does not show is taken for the tensor a step passes: the arm for
            // anything else (`if not torch.is_tensor(timesteps): timesteps = torch.tensor(...)`)
            // converts other inputs, as hot parameters are taken for tensors.
            Kind::Unknown => {
                // Callers may say it is a number after all.
                self.model.note_demand(subject);
                Some(true)
            }
            Kind::Tensor(_) => Some(true),
            Kind::Number | Kind::Str | Kind::NoneValue | Kind::NumberList | Kind::List | Kind::Tuple | Kind::Dict => {
                Some(false)
            }
            _ => None,
        }
    }

    /// Inside a `generate`: its loops over steps or new tokens decode (see [`decodes`]).
    fn in_generate(&self) -> bool {
        self.model
            .current_function()
            .is_some_and(|function| function.name.as_str() == "generate")
    }

    /// Does a loop with this body do a step's work, so that it runs once per step (see
    /// [`Checker::reaches_step_work`])? A call of a function in another file counts where the
    /// project has found that it does one (`FileFacts::step_work`); where the loop's answer
    /// hangs on such calls, their names are kept for the project to answer. Until it has, the
    /// loop runs as often as the code around it: most loops that call only other files' helpers
    /// convert, load or save.
    fn starts_step_loop(&mut self, body: &[Stmt], over_steps: bool) -> bool {
        let mut elsewhere: Vec<Rc<str>> = Vec::new();
        let mut ask = |callee| {
            elsewhere.push(callee);
            false
        };
        // A loop around whole decodes (a long video's chunks, each encoded, then denoised to
        // the end) runs once per decode: a step loop only where its own lines train. Not one
        // over steps that repeats a corrector within each (`for _ in range(correct_steps):`).
        let decoding: Vec<bool> = if over_steps {
            Vec::new()
        } else {
            body.iter().map(|stmt| self.holds_a_decoding_loop(stmt)).collect()
        };
        let reaches = if decoding.contains(&true) {
            body.iter()
                .zip(&decoding)
                .filter(|(_, decodes)| !**decodes)
                .any(|(stmt, _)| trains(std::slice::from_ref(stmt)))
        } else {
            self.reaches_step_work(body, 0, &mut ask)
        };
        if reaches {
            return true;
        }
        let facts = self.model.facts;
        let reaches = elsewhere.iter().any(|callee| facts.does_step_work(callee));
        self.step_work_asked
            .extend(elsewhere.iter().map(|callee| Box::from(&**callee)));
        reaches
    }

    /// Does this code do a step's work (see [`does_step_work`]), itself or through the functions
    /// of this file it calls (three calls deep)? A held module (`self.block(x)`) or a method of
    /// a base in another file counts as step work; a call of project code in another file (an
    /// imported function) counts as `elsewhere` says of its qualified name. A loop over inputs
    /// that calls only the library and helpers that do no step's work is no step loop.
    fn reaches_step_work(&self, body: &[Stmt], depth: u32, elsewhere: &mut dyn FnMut(Rc<str>) -> bool) -> bool {
        // A loop that yields feeds its consumer's loop one item at a time (a generator of
        // batches): it runs as often as that loop.
        if self.does_step_work(body) || (depth == 0 && (yields(body) || calls_collectives(body))) {
            return true;
        }
        let in_another_file = |call: &ast::ExprCall, elsewhere: &mut dyn FnMut(Rc<str>) -> bool| {
            self.model
                .callee(call)
                .filter(|callee| !is_library(callee) && !is_host_library(callee))
                .is_some_and(elsewhere)
        };
        // Work in an arm for another backend (`if state.distributed_type == XLA: xm.mark_step()`)
        // is no CUDA step's.
        let off_step = |test: &Expr, holds: bool| self.runs_on_no_cuda_step(test, holds, false);
        any_expr_where(body, off_step, |expr| {
            let Expr::Call(call) = expr else {
                return false;
            };
            match call.func.as_ref() {
                Expr::Name(name) => match self.model.lookup(name.id.as_str()).map(|binding| &binding.source) {
                    Some(BindingSource::Function(id)) => {
                        depth < 3
                            && self.reaches_step_work(
                                &self.model.functions[*id as usize].def.body,
                                depth + 1,
                                elsewhere,
                            )
                    }
                    Some(BindingSource::Import(_)) => in_another_file(call, elsewhere),
                    _ => false,
                },
                Expr::Attribute(attribute) if on_self(attribute) => {
                    let Some(class) = self.model.flow.class else {
                        return true;
                    };
                    match self.model.method_of(class, attribute.attr.as_str()) {
                        Some(id) => {
                            depth < 3
                                && self.reaches_step_work(
                                    &self.model.functions[id as usize].def.body,
                                    depth + 1,
                                    elsewhere,
                                )
                        }
                        // A held instance (`self.block(x)`), or a method of a base in another file.
                        None => !matches!(
                            self.model.local_class_attribute(class, attribute.attr.as_str()),
                            Some(Kind::Number | Kind::Str | Kind::List | Kind::NumberList | Kind::Dict | Kind::Tuple)
                        ),
                    }
                }
                Expr::Attribute(_) => in_another_file(call, elsewhere),
                _ => false,
            }
        })
    }

    /// Does a function of this name and body run a whole decode: is it a `generate`, or does its
    /// body loop over timesteps or new tokens doing a step's work without training (`for i, t
    /// in enumerate(timesteps): noise = self.unet(x, t)`, `while not done: logits =
    /// self(ids)`)? Its setup before the loop and the output's handling after it run once per
    /// call.
    fn decodes(&self, name: &str, body: &[Stmt]) -> bool {
        name == "generate" || body.iter().any(|stmt| self.holds_a_decoding_loop(stmt))
    }

    /// Is this statement, or one it holds (outside nested definitions), a decoding loop (see
    /// [`Checker::decodes`])? A network runs where a call's name says so, or where it calls an
    /// attribute holding a module (`self.prior(x)` of a pipeline's registered prior). A loop
    /// decodes where its body does a step's work without training: the statement is walked
    /// once, each loop's body telling the loop around it what it calls (asking each loop's body
    /// in turn walked the innermost loop once for every loop around it).
    fn holds_a_decoding_loop(&self, stmt: &Stmt) -> bool {
        let mut scan = DecodeScan {
            checker: self,
            calls: LoopCalls::default(),
            calls_count: false,
        };
        scan.visit_stmt(stmt);
        scan.calls.decoding_loop
    }

    /// Does this call run a network or train (see [`Checker::holds_a_decoding_loop`])?
    fn call_in_a_decode(&self, call: &ast::ExprCall) -> LoopCalls {
        let held_module = self.model.flow.class.is_some_and(|class| {
            matches!(call.func.as_ref(), Expr::Attribute(attribute)
                if on_self(attribute)
                    && matches!(self.model.local_class_attribute(class, attribute.attr.as_str()), Some(Kind::Module(..) | Kind::Object(_))))
        });
        LoopCalls {
            trains: call_matches(call, is_training_call),
            works: held_module || self.is_step_call(call),
            decoding_loop: false,
        }
    }

    /// Does this code do a step's work (see [`is_step_call`])? Calls of host libraries (numpy,
    /// scipy) run no network whatever their names say.
    fn does_step_work(&self, body: &[Stmt]) -> bool {
        any_expr(body, |expr| matches!(expr, Expr::Call(call) if self.is_step_call(call)))
    }

    /// A call that does a step's work (see [`Checker::does_step_work`]).
    fn is_step_call(&self, call: &ast::ExprCall) -> bool {
        call_matches(call, is_step_call)
            && !self
                .model
                .qualified_name(&call.func)
                .is_some_and(|qualified| is_host_library(&qualified))
    }

    /// Project functions passed to a call (`multi_apply(self._targets_single, xs)`,
    /// `partial(f, x)`, `map(f, xs)`, `checkpoint(self._forward, x)`, `sorted(xs, key=f)`): the
    /// callee calls them, so they run where the call runs (as PyCG assumes of a function passed
    /// on). What they are called with comes from the callee: no arguments are recorded.
    fn record_passed_functions(&mut self, call: &ast::ExprCall, context: HotContext) {
        let arguments = call
            .arguments
            .args
            .iter()
            .chain(call.arguments.keywords.iter().map(|k| &k.value));
        for argument in arguments {
            let Some(callee) = self.referenced_function(argument) else {
                continue;
            };
            if let Some((id, _)) = self.local_target(&callee) {
                self.ensure_analyzed(id);
            }
            self.model.call_sites.push(CallSite {
                callee,
                context,
                caller: self.model.flow.function,
                line: self.line(argument.start()),
                at: argument.start().to_u32(),
                arguments: None,
                result_asked: Questions::default(),
                arity: CallArity::ANY,
            });
        }
    }

    /// The project function an expression names without calling it: a function of this file or
    /// an imported one (`f`, `losses.f`), or a method of this class (`self.m`, not an attribute
    /// its methods assign).
    fn referenced_function(&self, expr: &Expr) -> Option<Callee> {
        match expr {
            Expr::Name(name) => self.named_function(name.id.as_str()),
            Expr::Attribute(attribute) if on_self(attribute) => {
                let class = self.model.flow.class?;
                let attr = attribute.attr.as_str();
                (self.model.method_of(class, attr).is_some() && self.model.local_class_attribute(class, attr).is_none())
                    .then(|| Callee::Method {
                        class: ClassRef::Local(class),
                        method: attr.into(),
                        bound: true,
                    })
            }
            Expr::Attribute(_) => imported(&self.model.qualified_name(expr)?),
            _ => None,
        }
    }

    /// The project function a name is bound to here: one of this file, or an imported one.
    fn named_function(&self, name: &str) -> Option<Callee> {
        match &self.model.lookup(name)?.source {
            BindingSource::Function(id) => Some(Callee::Local(*id)),
            BindingSource::Import(_) => imported(&self.model.imported_name(name)?),
            _ => None,
        }
    }

    /// Records a call's sites, one per project function it may call (analysing those of this
    /// file first, with the kinds the call passes, so their return kinds are known).
    fn record_call_sites(&mut self, call: &ast::ExprCall, callees: Vec<Callee>, context: HotContext) {
        let arguments = self.analyse_local_callees(call, &callees);
        let line = self.line(call.start());
        // Arguments matter only where the call may run every step.
        let arguments = arguments.filter(|_| context != HotContext::Cold);
        // This call's sites, one after another (the functions analysed above recorded theirs).
        let first_site = self.model.call_sites.len();
        for callee in callees {
            self.push_call_site(
                callee,
                context,
                line,
                call.start(),
                arguments.clone(),
                CallArity::of(&call.arguments),
            );
        }
        self.model.note_sites_of(call, first_site);
    }

    /// A call-graph edge from the function being analysed, at `at` in the file.
    fn push_call_site(
        &mut self,
        callee: Callee,
        context: HotContext,
        line: u32,
        at: TextSize,
        arguments: Option<Box<CallArguments>>,
        arity: CallArity,
    ) {
        if context != HotContext::Cold {
            self.ask_given(self.model.flow.given_guards);
        }
        self.model.call_sites.push(CallSite {
            callee,
            context,
            caller: self.model.flow.function,
            line,
            at: at.to_u32(),
            arguments,
            result_asked: Questions::default(),
            arity,
        });
    }

    /// `self.size` or `cache.size`, where `size` is a `@property` of the instance's class, runs
    /// the property where the read runs: a call-graph edge, as a call is (torchtune's
    /// `KVCache.size` reads a CUDA scalar with `.item()`). A class of this file is told here;
    /// another file's, by the project pass.
    fn note_property_read(&mut self, attribute: &'a ast::ExprAttribute) {
        let context = self.model.context();
        if context == HotContext::Cold && !self.options.every_call {
            return;
        }
        // A name or `self.<attr>` holding an instance, or an attribute of one (`self.attn.
        // kv_cache`): what the model tracks kinds of cheaply.
        let receiver = attribute.value.as_ref();
        let tracked = match receiver {
            Expr::Name(_) => true,
            Expr::Attribute(inner) => match inner.value.as_ref() {
                Expr::Name(_) => true,
                Expr::Attribute(owner) => on_self(owner),
                _ => false,
            },
            _ => false,
        };
        if !tracked {
            return;
        }
        // What another file's instance holds there is the project's to tell: which object is it.
        if let Expr::Attribute(inner) = receiver {
            self.model.note_imported_attribute(inner, Question::Instance);
        }
        let name = attribute.attr.as_str();
        let class = if on_self(attribute) {
            self.model.flow.class.map(ClassRef::Local)
        } else {
            self.model
                .kind_of(receiver)
                .class()
                .map(|class| self.model.class_of_ref(class))
        };
        let callee = match class {
            Some(ClassRef::Local(class)) => {
                let Some(id) = self.model.method_of(class, name) else {
                    return;
                };
                if !self.model.functions[id as usize].property {
                    return;
                }
                self.ensure_analyzed(id);
                Callee::Method {
                    class: ClassRef::Local(class),
                    method: name.into(),
                    bound: true,
                }
            }
            Some(imported) => Callee::Property {
                class: imported,
                name: name.into(),
            },
            None => return,
        };
        let line = self.line(attribute.start());
        self.push_call_site(callee, context, line, attribute.start(), None, CallArity::NONE);
    }

    /// `with timer:` of a project class's instance runs its `__enter__` and `__exit__` where the
    /// statement runs: call-graph edges, as calls are (ultralytics' `Profile` synchronises the
    /// device in them).
    fn note_context_manager(&mut self, manager: &Expr) {
        let context = self.model.context();
        if context == HotContext::Cold && !self.options.every_call {
            return;
        }
        let Some(class) = self.model.kind_of(manager).class() else {
            return;
        };
        let class = self.model.class_of_ref(class);
        let line = self.line(manager.start());
        for method in ["__enter__", "__exit__"] {
            let callee = Callee::Method {
                class: class.clone(),
                method: method.into(),
                bound: true,
            };
            self.push_call_site(callee, context, line, manager.start(), None, CallArity::NONE);
        }
    }

    /// Analyses the functions of this file among `callees` (those not analysed yet), with the
    /// kinds `call` passes, so their return kinds are known; returns those kinds.
    fn analyse_local_callees(&mut self, call: &ast::ExprCall, callees: &[Callee]) -> Option<Box<CallArguments>> {
        let arguments = self.argument_kinds(call);
        for callee in callees {
            if let Some((id, skip)) = self.local_target(callee) {
                let passed = arguments
                    .as_deref()
                    .filter(|arguments| arguments.informative)
                    .map(|arguments| PassedArguments { arguments, skip });
                self.ensure_analyzed_with(id, passed);
            }
        }
        arguments
    }

    /// What a call calls in the project, where the source states it: a function of this file or
    /// an imported one, a method of a project class through an instance (`self.head.loss(x)`,
    /// `model.run(x)`, a parameter annotated `head: Head`) or through the class
    /// (`Head.loss(obj, x)`), or an instance called (`self.block(x)` runs `forward`).
    fn project_callee(&mut self, call: &ast::ExprCall) -> Option<Callee> {
        let method = |class: ClassRef, method: &str, bound: bool| Callee::Method {
            class,
            method: method.into(),
            bound,
        };
        match call.func.as_ref() {
            Expr::Name(name) => match self.model.lookup(name.id.as_str()) {
                Some(Binding {
                    source: BindingSource::Function(id),
                    ..
                }) => Some(Callee::Local(*id)),
                Some(Binding {
                    source: BindingSource::Import(_),
                    ..
                }) => self.imported_callee(call),
                Some(Binding {
                    source: BindingSource::Class(id),
                    ..
                }) => Some(method(ClassRef::Local(*id), "__init__", true)),
                Some(binding) => {
                    let class = binding.kind.class()?;
                    Some(method(self.model.class_of_ref(class), "__call__", true))
                }
                None => None,
            },
            Expr::Attribute(attribute) => {
                let attr = attribute.attr.as_str();
                // `super().forward(x)` (or `super(Net, self).forward(x)`).
                if let Expr::Call(inner) = attribute.value.as_ref()
                    && let Expr::Name(name) = inner.func.as_ref()
                    && name.id == "super"
                    && self.model.is_builtin("super")
                    && let Some(class) = self.model.flow.class
                {
                    return Some(Callee::Super {
                        class,
                        method: attr.into(),
                    });
                }
                if let Expr::Name(receiver) = attribute.value.as_ref()
                    && matches!(receiver.id.as_str(), "self" | "cls")
                    && let Some(class) = self.model.flow.class
                {
                    // A method of this class or of a base (perhaps in another file), else an
                    // attribute holding an instance (`self.block = Block()`).
                    if self.model.method_of(class, attr).is_none()
                        && let Some(held) = self.model.local_class_attribute(class, attr)
                    {
                        // An attribute the class assigns: its instance's `__call__`, when it is
                        // a project class's (`self.norm = nn.LayerNorm(...)` calls no project code).
                        let held = held.class()?;
                        return Some(method(self.model.class_of_ref(held), "__call__", true));
                    }
                    return Some(method(ClassRef::Local(class), attr, true));
                }
                if let Expr::Name(receiver) = attribute.value.as_ref()
                    && let Some(Binding {
                        source: BindingSource::Class(id),
                        ..
                    }) = self.model.lookup(receiver.id.as_str())
                {
                    return Some(method(ClassRef::Local(*id), attr, false));
                }
                if self.model.callee(call).is_some() {
                    return self.imported_callee(call);
                }
                let receiver = self.model.kind_of(&attribute.value);
                if let Some(class) = receiver.class() {
                    return Some(method(self.model.class_of_ref(class), attr, true));
                }
                // `self.head.proj(x)`: an attribute of an instance holding an instance.
                let held = self.model.kind_of(&call.func).class()?;
                Some(method(self.model.class_of_ref(held), "__call__", true))
            }
            _ => None,
        }
    }

    /// The functions a call through an attribute holding them runs: `self.loss_method(x)`,
    /// `self.losses[kind](x)`, `self.criterion(x)` (see [`ClassInfo::stored_callables`]).
    fn stored_method_callees(&self, call: &ast::ExprCall) -> Vec<Callee> {
        let func = match call.func.as_ref() {
            Expr::Subscript(subscript) => subscript.value.as_ref(),
            func => func,
        };
        let Expr::Attribute(attribute) = func else {
            return Vec::new();
        };
        let (true, Some(class)) = (on_self(attribute), self.model.flow.class) else {
            return Vec::new();
        };
        let Some(stored) = self.model.lineage(class).find_map(|id| {
            self.model.classes[id as usize]
                .stored_callables
                .get(attribute.attr.as_str())
        }) else {
            return self.constructed_callees(class, attribute.attr.as_str());
        };
        stored
            .iter()
            .filter_map(|callable| match callable {
                StoredCallable::Method(method) => Some(Callee::Method {
                    class: ClassRef::Local(class),
                    method: method.as_str().into(),
                    bound: true,
                }),
                StoredCallable::Function(name) => self.named_function(name),
                StoredCallable::Library(_) => None,
            })
            .collect()
    }

    /// `self.base_loss(x)` where the `__init__` the class runs stores its parameter `base_loss`
    /// and the file constructs the class with a function for it (`PitWrapper(cal_si_snr)`, in
    /// any function of the file): those functions, as a stored default names one.
    fn constructed_callees(&self, class: ClassId, attr: &str) -> Vec<Callee> {
        let key = (class, Name::from(attr));
        if let Some(callees) = self.constructed.borrow().get(&key) {
            return callees.clone();
        }
        let callees = self.callees_by_constructions(class, attr);
        self.constructed.borrow_mut().insert(key, callees.clone());
        callees
    }

    fn callees_by_constructions(&self, class: ClassId, attr: &str) -> Vec<Callee> {
        let Some(init) = self.model.method_of(class, "__init__") else {
            return Vec::new();
        };
        let def = self.model.functions[init as usize].def;
        let Some((slot, _)) = init_parameter_assigned(def, attr) else {
            return Vec::new();
        };
        let parameters = &def.parameters;
        let positional = (parameters.posonlyargs.len() + parameters.args.len()).saturating_sub(1);
        let Some(parameter) = parameters
            .posonlyargs
            .iter()
            .chain(&parameters.args)
            .chain(&parameters.kwonlyargs)
            .nth(slot + 1)
            .map(|parameter| parameter.parameter.name.as_str())
        else {
            return Vec::new();
        };
        let initialised = self.model.functions[init as usize].class;
        let mut callees = Vec::new();
        for call in constructions_in(self.module_body)
            .into_iter()
            .filter(|call| matches!(call.func.as_ref(), Expr::Name(name) if self.model.local_class(name.id.as_str()).is_some_and(|made| made == class || Some(made) == initialised)))
        {
            let argument = (slot < positional)
                .then(|| call.arguments.args.get(slot))
                .flatten()
                .or_else(|| call.arguments.find_keyword(parameter).map(|keyword| &keyword.value));
            if let Some(Expr::Name(function)) = argument
                && let Some(callee) = self.named_function(function.id.as_str())
                && !callees.contains(&callee)
            {
                callees.push(callee);
            }
        }
        callees
    }

    /// A project name reached through an import (`losses.f`, `.heads.Head.loss`); the project
    /// pass tells a module's function from a class's method.
    fn imported_callee(&mut self, call: &ast::ExprCall) -> Option<Callee> {
        imported(&self.model.callee(call)?)
    }

    /// The function of this file a call runs, with how many of its leading positional arguments
    /// are not parameters (the instance passed to `Class.method(obj, x)`).
    fn local_target(&self, callee: &Callee) -> Option<(FunctionId, usize)> {
        match callee {
            Callee::Local(id) => Some((*id, 0)),
            Callee::Super { class, method } => {
                let id = self
                    .model
                    .lineage(*class)
                    .skip(1)
                    .find_map(|base| self.model.classes[base as usize].methods.get(&**method).copied())?;
                Some((id, 0))
            }
            Callee::Method {
                class: ClassRef::Local(class),
                method,
                bound,
            } => {
                let id = match &**method {
                    "__call__" => self
                        .model
                        .method_of(*class, "__call__")
                        .or_else(|| self.model.method_of(*class, "forward")),
                    name => self.model.method_of(*class, name),
                }?;
                let skip = self.model.functions[id as usize].receiver.leading_arguments(!bound);
                Some((id, skip))
            }
            _ => None,
        }
    }

    /// The kinds of a call's arguments, `None` when none says anything and none passes on a
    /// parameter of the caller.
    fn argument_kinds(&self, call: &ast::ExprCall) -> Option<Box<CallArguments>> {
        let argument = |expr: &Expr| {
            let parameter = match expr {
                Expr::Name(name) => match self.model.lookup(name.id.as_str()) {
                    Some(Binding {
                        source: BindingSource::Parameter(slot),
                        ..
                    }) => Some(*slot),
                    _ => None,
                },
                _ => None,
            };
            let kind = self.model.kind_of(expr);
            // An argument the file cannot tell (`valid = labels >= 0` of an unknown `labels`) may
            // become known once the project says what the caller's parameters are.
            let depends = match parameter {
                None if kind.is_opaque() => self.model.dependence_of(expr),
                _ => None,
            };
            let entries = self.model.entries_given(expr);
            Argument {
                kind: self.model.to_project(kind),
                given: self.model.given_by(expr),
                parameter,
                made_from: match parameter {
                    None => self.model.parameter_root(expr, 0),
                    Some(_) => None,
                },
                detail: (depends.is_some() || entries.is_some()).then(|| Box::new(ArgumentDetail { depends, entries })),
            }
        };
        let mut described = describe_arguments(&call.arguments, argument);
        // Kept where a callee could use it (every file's call sites stay in memory until the
        // project pass): a tensor, an instance, a container, a numpy array (which overrides a
        // tensor annotation), a data loader (whose batches a callee's loop moves), or a parameter
        // passed on.
        let says = |argument: &Argument| {
            argument.parameter.is_some()
                || argument.depends().is_some()
                || argument.kind.class.is_some()
                || matches!(
                    argument.kind.kind,
                    Kind::Tensor(_)
                        | Kind::TensorSequence(_)
                        | Kind::Module(..)
                        | Kind::Dict
                        | Kind::NdArray
                        | Kind::DataLoader { .. }
                )
        };
        // Also kept where it tells which parameters the call gives a value (or `None`), for the
        // arms that test them (`if mask is None:`); a call not kept may give any. An argument
        // merely handed over (`cached=self.cache`) is not worth a site of its own: most calls
        // pass one, and every file's sites stay in memory until the project pass.
        let gives = |argument: &Argument| {
            !matches!(argument.given, Given::Sometimes | Given::Passed) || argument.entries().is_some()
        };
        let informative = described.all().any(says);
        described.informative = informative;
        let tells_given = described.all().any(gives);
        (described.informative || tells_given).then(|| Box::new(described))
    }

    /// Calls that change what later code means: the default device, module buffers, batches
    /// leaving for the GPU.
    fn note_state_change(&mut self, call: &ast::ExprCall) {
        self.note_list_growth(call);
        if let Expr::Attribute(attribute) = call.func.as_ref()
            && matches!(attribute.attr.as_str(), "to" | "cuda")
            && let Kind::Tensor(facts) = self.model.kind_of(&attribute.value)
        {
            let to_gpu = attribute.attr.as_str() == "cuda"
                || self.model.target_device_of_to(call).is_some_and(|d| d != Device::Cpu);
            let context = self.model.context();
            if facts.is_batch() && to_gpu && context != HotContext::Cold {
                self.findings.loaders.copied_to_gpu(facts.batch, context);
            }
        }
        let qualified = self.model.callee(call);
        if let Some(qualified) = qualified.as_deref() {
            if qualified == "torch.distributions.Distribution.set_default_validate_args" {
                let disabled = matches!(call.arguments.args.first(), Some(Expr::BooleanLiteral(b)) if !b.value);
                if self.model.flow.function.is_some() {
                    self.model.flow.validation_disabled = disabled;
                } else {
                    self.model.validation_disabled = disabled;
                }
                return;
            }
            if api::is_data_loader(qualified) {
                self.findings.loaders.constructed(call);
            }
            if matches!(qualified, "torch.distributed.all_reduce" | "torch.distributed.reduce")
                && call.arguments.find_keyword("async_op").is_none()
                && let Some(Expr::Name(name)) = call.arguments.args.first()
            {
                self.model.flow.all_reduced.push(name.id.clone());
            }
        }
        if qualified.as_deref() == Some("torch.set_default_device") {
            if let Some(device) = call.arguments.args.first().and_then(|arg| self.model.device_of(arg)) {
                self.model.default_device = device;
                self.model.invalidate_kinds();
            }
            return;
        }
        if let Expr::Attribute(attribute) = call.func.as_ref() {
            let on_self = on_self(attribute);
            if on_self
                && matches!(attribute.attr.as_str(), "register_buffer" | "register_parameter")
                && let (Some(Expr::StringLiteral(name)), Some(class)) =
                    (call.arguments.args.first(), self.model.flow.class)
                && let Some(name) = literal_text(&name.value)
            {
                // It moves with the module (`model.to("cuda")`): its dtype is known, its
                // device is not.
                let facts = match call.arguments.args.get(1).map(|value| self.model.kind_of(value)) {
                    Some(Kind::Tensor(facts)) => TensorFacts {
                        pinned: false,
                        batch: BatchSource::NotABatch,
                        ..facts
                    },
                    _ => TensorFacts::on(Device::Unknown),
                };
                self.model.classes[class as usize]
                    .attrs
                    .insert(Name::new(name), Kind::Tensor(facts.with_device(Device::Unknown)));
                self.model.invalidate_kinds();
            }
        }
    }

    /// Whether `stmt` always stops the program's normal flow with an error: `raise`, `assert
    /// False`, `torch._assert(False, ...)`, `sys.exit(...)`.
    fn always_fails(&self, stmt: Option<&Stmt>) -> bool {
        match stmt {
            Some(Stmt::Raise(_)) => true,
            Some(Stmt::Assert(assert)) => is_false_literal(&assert.test),
            Some(Stmt::Expr(expr)) => {
                let Expr::Call(call) = expr.value.as_ref() else {
                    return false;
                };
                match self.model.callee(call).as_deref() {
                    Some("torch._assert") => call.arguments.args.first().is_some_and(is_false_literal),
                    Some("sys.exit" | "os._exit") => true,
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// Whether a block ending in `last` never reaches the line after it: it returns, leaves
    /// the loop or fails.
    fn leaves_the_block(&self, last: Option<&Stmt>) -> bool {
        self.always_fails(last) || matches!(last, Some(Stmt::Return(_) | Stmt::Continue(_) | Stmt::Break(_)))
    }

    /// One arm of a conditional, visited from the state before the conditional. An arm that
    /// ends in an error (`raise`, `assert False`) runs at most once, so it is cold.
    fn visit_arm(&mut self, body: &'a [Stmt]) -> ArmOutcome<'a> {
        self.visit_narrowed_arm(body, None)
    }

    /// An arm in which `isinstance` narrowed a name (`if isinstance(v, np.generic):`).
    fn visit_narrowed_arm(&mut self, body: &'a [Stmt], narrowed: Option<(Narrowed<'a>, Kind)>) -> ArmOutcome<'a> {
        let last = body.last();
        let raises = self.always_fails(last);
        let falls_through = !self.leaves_the_block(last);
        self.model.begin_arm();
        let narrowed_attribute = match narrowed {
            Some((Narrowed::Name(name), kind)) => {
                self.model.bind_value(name, kind, None);
                false
            }
            Some((Narrowed::SelfAttribute(attr), kind)) => {
                self.model.flow.narrowed_attributes.push((attr.clone(), kind));
                self.model.invalidate_kinds();
                true
            }
            None => false,
        };
        self.model.flow.except_depth += u32::from(raises);
        self.visit_body(body);
        self.model.flow.except_depth -= u32::from(raises);
        if narrowed_attribute {
            self.model.flow.narrowed_attributes.pop();
            self.model.invalidate_kinds();
        }
        self.model.end_arm(falls_through)
    }

    /// A block that may or may not run (a loop's `else`).
    fn visit_optional(&mut self, body: &'a [Stmt]) {
        if !body.is_empty() {
            let arm = self.visit_arm(body);
            self.model.merge_arms(vec![arm], false);
        }
    }

    /// The body of an `if` / `elif` clause: periodic when its test is a periodic guard (the
    /// outermost guard is the one named).
    fn visit_guarded_arm(&mut self, test: &'a Expr, start: TextSize, body: &'a [Stmt]) -> ArmOutcome<'a> {
        let saved = self.model.flow.periodic_guard;
        // `if (i + 1) % accumulation == 0:` around the optimizer step runs with every step it
        // makes (`accumulation` is often 1): not a logging guard.
        if saved.is_none() && is_periodic_guard(test) && !trains(body) {
            self.model.flow.periodic_guard = Some(self.line(start));
        }
        let narrowed = self
            .isinstance_narrowing(test)
            .or_else(|| self.device_narrowing(test, true));
        let lazily = initialises_lazily(test, body) || tests_first_step(test);
        let type_arm = self.parameter_type_test(test);
        self.type_arms.extend(type_arm);
        let arm = self.visit_tested_arm(test, true, lazily, body, narrowed);
        if type_arm.is_some() {
            self.type_arms.pop();
        }
        self.model.flow.periodic_guard = saved;
        arm
    }

    /// Visits the arm where `test` comes out `holds`, off the step where it runs on no CUDA step
    /// (or `lazily`, on the first call only), knowing the names the test finds are not `None`.
    /// Where callers' arguments decided it, the project is asked to keep telling them: always
    /// where they made it dead, else where the arm reports or calls something.
    fn visit_tested_arm(
        &mut self,
        test: &'a Expr,
        holds: bool,
        lazily: bool,
        body: &'a [Stmt],
        narrowed: Option<(Narrowed<'a>, Kind)>,
    ) -> ArmOutcome<'a> {
        let mut decided = self.arm_off_step(test, holds);
        let off_step = decided.off_step;
        let dead = off_step && self.decided_by_arguments.take();
        let guards = decided.guards;
        decided.off_step |= lazily;
        let entered = self.enter_arm(decided);
        let not_none = self.model.flow.not_none.len();
        self.model.flow.not_none.extend(names_not_none(test, holds));
        let mut arm = self.visit_narrowed_arm(body, narrowed);
        self.model.flow.not_none.truncate(not_none);
        self.leave_arm(entered);
        // What an arm the callers' arguments leave dead binds reaches no later line (`if
        // guidance is not None: guidance = guidance.to(dtype)` where no caller gives one), so
        // the project is asked where an arm they decide binds anything. An arm for another
        // backend, for type checkers or for a value not taken for a tensor still binds what
        // later lines may read.
        arm.falls_through &= !dead;
        if !off_step && arm.binds_anything() {
            self.ask_given(guards);
        }
        arm
    }

    /// Does the arm where `test` comes out `holds` run on no CUDA step, and which parameters'
    /// given arguments (see [`Checker::callers_never_take`]) decided it? Where they made it
    /// dead, the project is asked to keep telling them; whether what callers or constructions
    /// give made it dead is left in `decided_by_arguments`. Also what a call gives where the
    /// arm does not run there (see [`DeadWhere`]).
    fn arm_off_step(&mut self, test: &Expr, holds: bool) -> ArmDecided {
        self.consulted_given.take();
        self.decided_by_arguments.take();
        let off_step = self.runs_on_no_cuda_step(test, holds, true);
        let guards = self.consulted_given.take();
        if off_step {
            self.ask_given(guards);
        }
        ArmDecided {
            off_step,
            guards,
            dead_where: if off_step {
                Vec::new()
            } else {
                self.dead_where(test, holds)
            },
        }
    }

    /// What calls give where the arm `test` coming out `holds` decides does not run there:
    /// any part of an `and` that fails kills it, all parts of one that holds must.
    fn dead_where(&self, test: &Expr, holds: bool) -> Vec<DeadWhere> {
        match test {
            Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::Not => self.dead_where(&unary.operand, !holds),
            Expr::BoolOp(bool_op) if (bool_op.op == ast::BoolOp::And) == holds => bool_op
                .values
                .iter()
                .flat_map(|value| self.dead_where(value, holds))
                .collect(),
            Expr::BoolOp(bool_op) => {
                let mut all: Vec<DeadWhere> = vec![Box::default()];
                for value in &bool_op.values {
                    let each = self.dead_where(value, holds);
                    // Few parts decide a test; a product past a handful is given up.
                    if each.is_empty() || all.len() * each.len() > 8 {
                        return Vec::new();
                    }
                    all = all
                        .iter()
                        .flat_map(|these| {
                            each.iter()
                                .map(move |those| these.iter().chain(those).copied().collect())
                        })
                        .collect();
                }
                all
            }
            _ => self
                .given_test(test, holds)
                .map(|(slot, dies_if)| vec![Box::from([(slot as u16, dies_if)])])
                .unwrap_or_default(),
        }
    }

    /// Enters code that runs where a test decided (see [`Checker::arm_off_step`]): off the step,
    /// or where the parameters in `guards` are given what they were, and not at calls that
    /// give what `dead_where` says; returns what [`Checker::leave_arm`] restores.
    fn enter_arm(&mut self, decided: ArmDecided) -> EnteredArm {
        let entered = EnteredArm {
            off_step: decided.off_step,
            saved_guards: self.model.flow.given_guards,
            dead_where: self.model.flow.dead_where.len(),
        };
        if !decided.off_step {
            self.model.flow.given_guards = entered.saved_guards.union(decided.guards);
        }
        self.model.flow.dead_where.extend(decided.dead_where);
        self.model.flow.off_step_arm_depth += u32::from(decided.off_step);
        entered
    }

    fn leave_arm(&mut self, entered: EnteredArm) {
        self.model.flow.off_step_arm_depth -= u32::from(entered.off_step);
        self.model.flow.given_guards = entered.saved_guards;
        self.model.flow.dead_where.truncate(entered.dead_where);
    }

    /// `t.is_cuda`, `t.device.type == "cuda"` (and their negations) tell where `t` lives: in
    /// the arm where the test holds (`holds`), or in the one where it does not.
    fn device_narrowing(&self, test: &'a Expr, holds: bool) -> Option<(Narrowed<'a>, Kind)> {
        let (name, on_cuda) = match test {
            Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::Not => {
                return self.device_narrowing(&unary.operand, !holds);
            }
            // t.is_cuda
            Expr::Attribute(attribute) if attribute.attr.as_str() == "is_cuda" => match attribute.value.as_ref() {
                Expr::Name(name) => (name, true),
                _ => return None,
            },
            // t.is_cpu
            Expr::Attribute(attribute) if attribute.attr.as_str() == "is_cpu" => match attribute.value.as_ref() {
                Expr::Name(name) => (name, false),
                _ => return None,
            },
            // t.device.type == "cuda" / != "cpu", t.device == torch.device("cpu"), either way round
            Expr::Compare(compare) => {
                let ([op], [right]) = (&*compare.ops, &*compare.comparators) else {
                    return None;
                };
                let (name, is_cuda) = self
                    .device_compared(&compare.left, right)
                    .or_else(|| self.device_compared(right, &compare.left))?;
                match op {
                    ast::CmpOp::Eq | ast::CmpOp::Is => (name, is_cuda),
                    ast::CmpOp::NotEq | ast::CmpOp::IsNot => (name, !is_cuda),
                    _ => return None,
                }
            }
            _ => return None,
        };
        let Kind::Tensor(facts) = self.model.kind_of(&Expr::Name(name.clone())) else {
            return None;
        };
        let device = if on_cuda == holds { Device::Cuda } else { Device::Cpu };
        Some((Narrowed::Name(&name.id), Kind::Tensor(facts.with_device(device))))
    }

    /// `t.device.type` compared with `"cuda"` or `"cpu"`, or `t.device` with `torch.device(...)`
    /// of one: the tensor, and whether the device named is a GPU.
    fn device_compared<'e>(&self, side: &'e Expr, device: &Expr) -> Option<(&'e ast::ExprName, bool)> {
        let named = |text: &str| match device_from_str(text) {
            Device::Cpu => Some(false),
            Device::Cuda => Some(true),
            _ => None,
        };
        let Expr::Attribute(attribute) = side else { return None };
        match (attribute.attr.as_str(), attribute.value.as_ref(), device) {
            ("type", Expr::Attribute(device_attr), Expr::StringLiteral(literal))
                if device_attr.attr.as_str() == "device" =>
            {
                let Expr::Name(name) = device_attr.value.as_ref() else {
                    return None;
                };
                Some((name, named(literal_text(&literal.value)?)?))
            }
            ("device", Expr::Name(name), Expr::Call(call))
                if self.model.qualified_name(&call.func).as_deref() == Some("torch.device") =>
            {
                let [Expr::StringLiteral(literal)] = &*call.arguments.args else {
                    return None;
                };
                Some((name, named(literal_text(&literal.value)?)?))
            }
            _ => None,
        }
    }

    /// `isinstance(x, (list, tuple))` of a parameter `x` still as given: its slot, and the
    /// types the arm takes.
    fn parameter_type_test(&self, test: &Expr) -> Option<(u16, TypeSet)> {
        let (Expr::Name(subject), classes) = self.isinstance_test(test)? else {
            return None;
        };
        let Some(Binding {
            source: BindingSource::Parameter(slot),
            ..
        }) = self.model.lookup(subject.id.as_str())
        else {
            return None;
        };
        let types = classes.into_iter().map(|class| {
            self.common_class_types(class)
                .unwrap_or_else(|| match self.model.qualified_name(class).as_deref() {
                    Some("torch.nn.Parameter" | "torch.nn.parameter.Parameter") => TypeSet::TENSOR,
                    Some(q) if q.starts_with("numbers.") => TypeSet::NUMBER,
                    Some("collections.abc.Sequence" | "typing.Sequence") => TypeSet::LIST.union(TypeSet::TUPLE),
                    _ => TypeSet::OTHER,
                })
        });
        Some((*slot, types.reduce(TypeSet::union)?))
    }

    /// `isinstance(subject, T)` or `isinstance(subject, (T, U))` with the builtin: the subject
    /// and each class named.
    fn isinstance_test<'e>(&self, test: &'e Expr) -> Option<(&'e Expr, Vec<&'e Expr>)> {
        let Expr::Call(call) = test else { return None };
        let (Expr::Name(func), [subject, classes]) = (call.func.as_ref(), &*call.arguments.args) else {
            return None;
        };
        if func.id.as_str() != "isinstance" || !self.model.is_builtin("isinstance") {
            return None;
        }
        let classes = match classes {
            Expr::Tuple(tuple) => tuple.elts.iter().collect(),
            other => vec![other],
        };
        Some((subject, classes))
    }

    /// The types a class an `isinstance` test names stands for, where both of its readers (a
    /// parameter's type test, a narrowing) know it alike: a builtin (any other builtin is
    /// `OTHER`), `torch.Tensor`, a numpy type, a mapping; `None` for other classes.
    fn common_class_types(&self, class: &Expr) -> Option<TypeSet> {
        if let Expr::Name(builtin) = class
            && self.model.is_builtin(builtin.id.as_str())
        {
            return Some(match builtin.id.as_str() {
                "int" | "float" | "bool" | "complex" => TypeSet::NUMBER,
                "str" => TypeSet::STR,
                "list" => TypeSet::LIST,
                "tuple" => TypeSet::TUPLE,
                "dict" => TypeSet::DICT,
                _ => TypeSet::OTHER,
            });
        }
        match self.model.qualified_name(class).as_deref()? {
            "torch.Tensor" => Some(TypeSet::TENSOR),
            "collections.abc.Mapping"
            | "collections.abc.MutableMapping"
            | "typing.Mapping"
            | "typing.MutableMapping" => Some(TypeSet::DICT),
            q if q.starts_with("numpy.") => Some(TypeSet::NDARRAY),
            _ => None,
        }
    }

    /// `isinstance(name, T)` and `isinstance(self.attr, T)` tell what it is inside the arm (a
    /// project class's instance: its methods are what calls on it reach).
    fn isinstance_narrowing(&self, test: &'a Expr) -> Option<(Narrowed<'a>, Kind)> {
        let (subject, classes) = self.isinstance_test(test)?;
        let narrowed = match subject {
            Expr::Name(name) => Narrowed::Name(&name.id),
            Expr::Attribute(attribute) if on_self(attribute) => Narrowed::SelfAttribute(&attribute.attr.id),
            _ => return None,
        };
        let current = self.model.kind_of(subject);
        // A loader's batch (or a network's output) is a tensor or a container of tensors like
        // it: found to be a dict, list or tuple (`for k, v in batch.items(): if isinstance(v,
        // dict):`), its fields are still the batch's.
        let container = |kind: Kind| match current {
            Kind::Tensor(facts) if facts.has_tensor_fields() => current,
            _ => kind,
        };
        let kinds = classes.into_iter().map(|class| match self.common_class_types(class) {
            Some(TypeSet::NUMBER) => Kind::Number,
            Some(TypeSet::STR) => Kind::Str,
            Some(TypeSet::LIST) => container(Kind::List),
            Some(TypeSet::TUPLE) => container(Kind::Tuple),
            Some(TypeSet::DICT) => container(Kind::Dict),
            Some(TypeSet::TENSOR) => match current {
                Kind::Tensor(_) => current,
                _ => Kind::Tensor(TensorFacts::on(Device::Unknown)),
            },
            Some(TypeSet::NDARRAY) => Kind::NdArray,
            Some(_) => Kind::Unknown,
            None => match self.model.annotation_kind(class) {
                instance @ (Kind::Object(_) | Kind::Module(..)) => instance,
                _ => Kind::Unknown,
            },
        });
        let kind = kinds.reduce(Kind::join)?;
        (kind != Kind::Unknown).then_some((narrowed, kind))
    }
}

/// What a class's methods assign to `self.<attr>`: the functions an attribute may hold (`self.m`,
/// a name of the module's scope, a parameter whose default is such a name, either arm of a
/// conditional, the values of a dict, the items of a list or tuple), and which methods assign
/// each attribute.
fn class_attributes(class_body: &[Stmt]) -> (FxHashMap<Name, Vec<StoredCallable>>, FxHashMap<Name, Vec<Name>>) {
    struct Finder<'b> {
        stored: FxHashMap<Name, Vec<StoredCallable>>,
        setters: FxHashMap<Name, Vec<Name>>,
        /// The method being read, and its parameters with their defaults.
        method: &'b Name,
        parameters: &'b ast::Parameters,
    }
    impl Finder<'_> {
        /// `self.<attr>` (also inside a tuple target) is assigned by this method.
        fn note_setter(&mut self, target: &Expr) {
            match target {
                Expr::Attribute(attribute) if on_self(attribute) => self.note_set(&attribute.attr.id),
                Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                    elts.iter().for_each(|element| self.note_setter(element));
                }
                _ => {}
            }
        }

        fn note_set(&mut self, attr: &Name) {
            let setters = self.setters.entry(attr.clone()).or_default();
            if !setters.contains(self.method) {
                setters.push(self.method.clone());
            }
        }

        fn callables_of(&self, value: &Expr, found: &mut Vec<StoredCallable>) {
            let callable = match value {
                Expr::Attribute(attribute) if on_self(attribute) => StoredCallable::Method(attribute.attr.id.clone()),
                Expr::Name(name) => {
                    let parameter = self
                        .parameters
                        .iter_non_variadic_params()
                        .find(|parameter| parameter.parameter.name.id == name.id);
                    match parameter {
                        Some(parameter) => match parameter.default.as_deref() {
                            Some(Expr::Name(default)) => StoredCallable::Function(default.id.clone()),
                            _ => return,
                        },
                        None => StoredCallable::Function(name.id.clone()),
                    }
                }
                Expr::If(if_expr) => {
                    self.callables_of(&if_expr.body, found);
                    self.callables_of(&if_expr.orelse, found);
                    return;
                }
                Expr::Dict(dict) => {
                    dict.items.iter().for_each(|item| self.callables_of(&item.value, found));
                    return;
                }
                Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. }) => {
                    elts.iter().for_each(|elt| self.callables_of(elt, found));
                    return;
                }
                _ => return,
            };
            if !found.contains(&callable) {
                found.push(callable);
            }
        }
    }
    impl<'b> Visitor<'b> for Finder<'_> {
        fn visit_expr(&mut self, _: &'b Expr) {}
        fn visit_stmt(&mut self, stmt: &'b Stmt) {
            match stmt {
                Stmt::ClassDef(_) | Stmt::FunctionDef(_) => {}
                Stmt::Assign(assign) => {
                    for target in &assign.targets {
                        if let Expr::Attribute(attribute) = target
                            && on_self(attribute)
                        {
                            let mut found = self.stored.remove(&attribute.attr.id).unwrap_or_default();
                            self.callables_of(&assign.value, &mut found);
                            self.stored.insert(attribute.attr.id.clone(), found);
                        }
                        self.note_setter(target);
                    }
                }
                Stmt::AnnAssign(assign) => self.note_setter(&assign.target),
                Stmt::Expr(ast::StmtExpr { value, .. }) if let Expr::Call(call) = value.as_ref() => {
                    for (attr, _) in registered_modules(call) {
                        self.note_set(attr);
                    }
                }
                _ => visitor::walk_stmt(self, stmt),
            }
        }
    }
    let (mut stored, mut setters) = (FxHashMap::default(), FxHashMap::default());
    for stmt in class_body {
        if let Stmt::FunctionDef(def) = stmt {
            let mut finder = Finder {
                stored,
                setters,
                method: &def.name.id,
                parameters: &def.parameters,
            };
            finder.visit_body(&def.body);
            (stored, setters) = (finder.stored, finder.setters);
        }
    }
    stored.retain(|_, callables: &mut Vec<StoredCallable>| !callables.is_empty());
    (stored, setters)
}

/// A method left to subclasses: `@abstractmethod`, or a body of nothing but a docstring,
/// `pass`, `...` and `raise NotImplementedError`.
fn is_stub(def: &ast::StmtFunctionDef) -> bool {
    let abstract_method = def.decorator_list.iter().any(|decorator| {
        matches!(&decorator.expression, Expr::Name(name) if name.id.as_str() == "abstractmethod")
            || matches!(&decorator.expression, Expr::Attribute(attribute) if attribute.attr.as_str() == "abstractmethod")
    });
    abstract_method
        || def.body.iter().all(|stmt| match stmt {
            Stmt::Pass(_) => true,
            Stmt::Expr(expr) => matches!(expr.value.as_ref(), Expr::StringLiteral(_) | Expr::EllipsisLiteral(_)),
            Stmt::Raise(raise) => raise.exc.as_deref().is_some_and(|exc| {
                let raised = match exc {
                    Expr::Call(call) => call.func.as_ref(),
                    other => other,
                };
                matches!(raised, Expr::Name(name) if name.id.as_str() == "NotImplementedError")
            }),
            _ => false,
        })
}

/// Every call of a name in the module (`Head(...)`, in any function): the constructions of the
/// file's classes among them.
fn constructions_in(body: &[Stmt]) -> Vec<&ast::ExprCall> {
    struct Finder<'b> {
        calls: Vec<&'b ast::ExprCall>,
    }
    impl<'b> Visitor<'b> for Finder<'b> {
        fn visit_expr(&mut self, expr: &'b Expr) {
            if let Expr::Call(call) = expr
                && let Expr::Name(name) = call.func.as_ref()
                && name.id.starts_with(|c: char| c.is_ascii_uppercase())
            {
                self.calls.push(call);
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut finder = Finder { calls: Vec::new() };
    finder.visit_body(body);
    finder.calls
}

/// The callee a qualified name of another module is (`pkg.losses.bce`); `None` for a library's.
fn imported(qualified: &str) -> Option<Callee> {
    if is_library(qualified) {
        return None;
    }
    let (module, name) = qualified.rsplit_once('.')?;
    Some(Callee::Imported {
        module: module.into(),
        name: name.into(),
    })
}

/// `self.<attr>`.
fn on_self(attribute: &ast::ExprAttribute) -> bool {
    matches!(attribute.value.as_ref(), Expr::Name(n) if n.id.as_str() == "self")
}

/// What a test narrows inside an arm.
#[derive(Clone, Copy)]
enum Narrowed<'a> {
    Name(&'a Name),
    /// `self.<attr>`.
    SelfAttribute(&'a Name),
}

/// Looks for a loop over a data loader (see [`Checker::runs_epochs`]).
struct StepLoopFinder<'c, 'a> {
    checker: &'c Checker<'a>,
    found: bool,
    /// Names the body binds to what iterates batches (`pbar = tqdm(enumerate(loader))`,
    /// `with tqdm(loader) as it:`): the function is scanned before it is analysed, so its
    /// bindings are not known yet.
    batch_names: Vec<Name>,
    /// The names a loop of the body iterates over (alone or inside `enumerate(...)` and the
    /// like): only what they are bound to can make a loop a step loop.
    iterated: FxHashSet<Name>,
}

impl StepLoopFinder<'_, '_> {
    fn iterates_batches(&self, iter: &Expr) -> bool {
        self.checker.iterates_batches(iter, &self.batch_names)
    }

    fn bind(&mut self, target: &Expr, value: &Expr) {
        if let Expr::Name(name) = target
            && self.iterated.contains(&name.id)
        {
            let batches = self.iterates_batches(value);
            self.batch_names.retain(|held| *held != name.id);
            if batches {
                self.batch_names.push(name.id.clone());
            }
        }
    }
}

impl<'b> Visitor<'b> for StepLoopFinder<'_, '_> {
    /// Only a `for` or `while` statement is a step loop here (comprehensions over a loader are
    /// not, lambdas are definitions), so expressions are not walked.
    fn visit_expr(&mut self, _: &'b Expr) {}

    fn visit_stmt(&mut self, stmt: &'b Stmt) {
        if self.found {
            return;
        }
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::Assign(assign) => {
                if let [target] = assign.targets.as_slice() {
                    self.bind(target, &assign.value);
                }
            }
            Stmt::With(with_stmt) => {
                for item in &with_stmt.items {
                    if let Some(target) = &item.optional_vars {
                        self.bind(target, &item.context_expr);
                    }
                }
                visitor::walk_stmt(self, stmt);
            }
            Stmt::For(for_stmt) if self.iterates_batches(&for_stmt.iter) => self.found = true,
            _ => visitor::walk_stmt(self, stmt),
        }
    }
}

/// Does a loop of `body` (outside nested definitions) run backward: a `while` loop, or a `for`
/// loop over anything but `range(...)`, whose body calls `.backward()`? (A loop over
/// `range(...)` that runs backward splits one step: truncated BPTT chunks, accumulation by
/// index.) One walk for the whole body, however deep its loops nest: asking each loop's body
/// in turn would walk the innermost loop once for every loop around it.
fn runs_backward_in_a_loop(body: &[Stmt]) -> bool {
    /// The walk, with how many loops that may be step loops are around where it is.
    struct Finder {
        around: usize,
        found: bool,
    }
    impl Finder {
        fn in_loop(&mut self, counts: bool, body: &[Stmt]) {
            self.around += usize::from(counts);
            self.visit_body(body);
            self.around -= usize::from(counts);
        }
    }
    impl<'b> Visitor<'b> for Finder {
        fn visit_stmt(&mut self, stmt: &'b Stmt) {
            if self.found {
                return;
            }
            match stmt {
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                Stmt::For(for_stmt) => {
                    self.visit_expr(&for_stmt.target);
                    self.visit_expr(&for_stmt.iter);
                    self.in_loop(!is_range_call(&for_stmt.iter), &for_stmt.body);
                    self.visit_body(&for_stmt.orelse);
                }
                Stmt::While(while_stmt) => {
                    self.visit_expr(&while_stmt.test);
                    self.in_loop(true, &while_stmt.body);
                    self.visit_body(&while_stmt.orelse);
                }
                _ => visitor::walk_stmt(self, stmt),
            }
        }
        fn visit_expr(&mut self, expr: &'b Expr) {
            if self.around > 0 && !self.found {
                self.found = any_expr_in(
                    expr,
                    |expr| matches!(expr, Expr::Call(call) if call_matches(call, |receiver, method| method == "backward" && receiver.is_some())),
                );
            }
        }
    }
    let mut finder = Finder {
        around: 0,
        found: false,
    };
    finder.visit_body(body);
    finder.found
}

/// The names the loops of `body` (outside nested definitions) iterate over, anywhere in their
/// `for ... in` expression; `None` where it holds no loop.
fn loop_iterables(body: &[Stmt]) -> Option<FxHashSet<Name>> {
    #[derive(Default)]
    struct Loops {
        any: bool,
        names: FxHashSet<Name>,
        in_iterable: bool,
    }
    impl<'b> Visitor<'b> for Loops {
        fn visit_stmt(&mut self, stmt: &'b Stmt) {
            match stmt {
                Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
                Stmt::For(for_stmt) => {
                    self.any = true;
                    self.in_iterable = true;
                    self.visit_expr(&for_stmt.iter);
                    self.in_iterable = false;
                    self.visit_body(&for_stmt.body);
                    self.visit_body(&for_stmt.orelse);
                }
                Stmt::While(_) => {
                    self.any = true;
                    visitor::walk_stmt(self, stmt);
                }
                _ => visitor::walk_stmt(self, stmt),
            }
        }
        fn visit_expr(&mut self, expr: &'b Expr) {
            if !self.in_iterable {
                return;
            }
            if let Expr::Name(name) = expr {
                self.names.insert(name.id.clone());
            }
            visitor::walk_expr(self, expr);
        }
    }
    let mut loops = Loops::default();
    loops.visit_body(body);
    loops.any.then_some(loops.names)
}

/// What code calls, for [`Checker::holds_a_decoding_loop`]: a training call (`.backward()`,
/// an optimizer's step), a call that does a step's work or calls a held module, and whether it
/// holds a decoding loop.
#[derive(Default, Clone, Copy)]
struct LoopCalls {
    trains: bool,
    works: bool,
    decoding_loop: bool,
}

impl LoopCalls {
    /// What the code around code that calls `inner` calls: its calls, not its loops.
    fn calls_of(&mut self, inner: LoopCalls) {
        self.trains |= inner.trains;
        self.works |= inner.works;
    }

    /// A loop whose body calls this decodes: it does a step's work without training.
    fn decodes(self) -> bool {
        self.works && !self.trains
    }
}

/// The walk of [`Checker::holds_a_decoding_loop`]: calls are those of every expression outside
/// nested definitions and lambdas; decoding loops are looked for in the bodies of loops, `if`,
/// `with` and `try` (not in `except` clauses, `else` clauses of `while` and `try`, or `match`
/// cases).
struct DecodeScan<'c, 'a> {
    checker: &'c Checker<'a>,
    calls: LoopCalls,
    /// Inside the body of a loop that decodes if its body does (a `while` loop, or a `for` loop
    /// over steps): only there do calls count. Elsewhere the walk only looks for such loops, so
    /// code outside them (most of a function) costs no judgement of its calls.
    calls_count: bool,
}

impl<'c, 'a> DecodeScan<'c, 'a> {
    /// A scan of nested code, that tells this one what it found.
    fn inner(&self, calls_count: bool) -> DecodeScan<'c, 'a> {
        DecodeScan {
            checker: self.checker,
            calls: LoopCalls::default(),
            calls_count,
        }
    }

    fn body(&self, body: &[Stmt], calls_count: bool) -> LoopCalls {
        let mut scan = self.inner(calls_count);
        scan.visit_body(body);
        scan.calls
    }

    /// Takes the calls of the code `walk` visits, where calls count, but not its decoding
    /// loops (those of an `except` clause or a `match` case).
    fn calls_only(&mut self, walk: impl FnOnce(&mut DecodeScan<'c, 'a>)) {
        if self.calls_count {
            let mut scan = self.inner(true);
            walk(&mut scan);
            self.calls.calls_of(scan.calls);
        }
    }

    /// Takes the calls of `body`, and its decoding loops where they count.
    fn nested(&mut self, body: &[Stmt], loops_count: bool) -> LoopCalls {
        self.nested_in(body, loops_count, self.calls_count)
    }

    /// [`DecodeScan::nested`] for the body of a loop, whose calls count where `calls_count`.
    fn nested_in(&mut self, body: &[Stmt], loops_count: bool, calls_count: bool) -> LoopCalls {
        let inner = self.body(body, calls_count);
        self.calls.calls_of(inner);
        self.calls.decoding_loop |= loops_count && inner.decoding_loop;
        inner
    }
}

impl<'b> Visitor<'b> for DecodeScan<'_, '_> {
    fn visit_stmt(&mut self, stmt: &'b Stmt) {
        match stmt {
            Stmt::FunctionDef(_) | Stmt::ClassDef(_) => {}
            Stmt::For(for_stmt) => {
                self.visit_expr(&for_stmt.target);
                self.visit_expr(&for_stmt.iter);
                let over_steps = names_steps(&for_stmt.target) || iterates_steps(&for_stmt.iter);
                let body = self.nested_in(&for_stmt.body, true, self.calls_count || over_steps);
                self.calls.decoding_loop |= over_steps && body.decodes();
                self.nested(&for_stmt.orelse, true);
            }
            Stmt::While(while_stmt) => {
                self.visit_expr(&while_stmt.test);
                let body = self.nested_in(&while_stmt.body, true, true);
                self.calls.decoding_loop |= body.decodes();
                self.nested(&while_stmt.orelse, false);
            }
            Stmt::If(if_stmt) => {
                self.visit_expr(&if_stmt.test);
                self.nested(&if_stmt.body, true);
                for clause in &if_stmt.elif_else_clauses {
                    if let Some(test) = &clause.test {
                        self.visit_expr(test);
                    }
                    self.nested(&clause.body, true);
                }
            }
            Stmt::With(with_stmt) => {
                for item in &with_stmt.items {
                    self.visit_with_item(item);
                }
                self.nested(&with_stmt.body, true);
            }
            Stmt::Try(try_stmt) => {
                self.nested(&try_stmt.body, true);
                for handler in &try_stmt.handlers {
                    self.calls_only(|scan| scan.visit_except_handler(handler));
                }
                self.nested(&try_stmt.orelse, false);
                self.nested(&try_stmt.finalbody, false);
            }
            // Statements of no other kind hold a decoding loop that counts.
            _ => self.calls_only(|scan| visitor::walk_stmt(scan, stmt)),
        }
    }

    fn visit_expr(&mut self, expr: &'b Expr) {
        // An expression holds no loop statement, so outside a counted body it tells nothing.
        if !self.calls_count || matches!(expr, Expr::Lambda(_)) {
            return;
        }
        if let Expr::Call(call) = expr {
            self.calls.calls_of(self.checker.call_in_a_decode(call));
        }
        visitor::walk_expr(self, expr);
    }
}

/// `range(...)`.
fn is_range_call(iter: &Expr) -> bool {
    matches!(iter, Expr::Call(call) if matches!(call.func.as_ref(), Expr::Name(name) if name.id.as_str() == "range"))
}

/// `torch.jit.is_tracing()`, `torchvision._is_tracing()`, `torch.onnx.is_in_onnx_export()`:
/// true only while a model is traced for export.
fn is_trace_check(name: &str) -> bool {
    name.trim_start_matches('_') == "is_tracing" || name == "is_in_onnx_export"
}

/// `is_torch_npu_available`, `is_xla_available`, `is_mps_available`: a check that another
/// backend is present.
fn is_backend_check(name: &str) -> bool {
    let name = name.trim_start_matches('_');
    name.starts_with("is_") && name.ends_with("_available") && mentions_another_backend(name)
}

/// A name with a word for another backend in it: `is_mps`, `IS_NPU`, `use_xla`.
fn mentions_another_backend(name: &str) -> bool {
    name.split('_').any(names_another_backend)
}

/// A backend other than CUDA that a branch may be written for.
fn names_another_backend(word: &str) -> bool {
    ["mps", "npu", "xla", "tpu", "hpu", "mlu", "neuron"]
        .iter()
        .any(|backend| word.eq_ignore_ascii_case(backend))
}

/// A test that holds on the first step alone: a step counter compared equal to 0 (`if step ==
/// 0:`, `if self.ivars["istep"] == 0:`, `if batch_idx == 0:`); a count of steps (`num_steps`,
/// `max_iter`) is no counter.
fn tests_first_step(test: &Expr) -> bool {
    let Expr::Compare(compare) = test else {
        return false;
    };
    let ([ast::CmpOp::Eq], [right]) = (&*compare.ops, &*compare.comparators) else {
        return false;
    };
    let counter = match (compare.left.as_ref(), right) {
        (counter, zero) | (zero, counter) if is_zero_int(zero) => counter,
        _ => return false,
    };
    let name = match counter {
        Expr::Subscript(subscript) => match subscript.slice.as_ref() {
            Expr::StringLiteral(key) => literal_text(&key.value),
            _ => None,
        },
        other => last_name(other),
    };
    name.is_some_and(|name| {
        let has_word = |words: &[&str]| {
            name.split('_')
                .any(|part| words.iter().any(|word| part.eq_ignore_ascii_case(word)))
        };
        let counts = has_word(&["num", "n", "max", "min", "total", "warmup"]);
        let steps = has_word(&["step", "istep", "iter", "iteration"]) || matches!(name, "batch_idx" | "batch_index");
        steps && !counts
    })
}

/// A lazy initialisation: the test asks whether an attribute of `self` is still unset
/// (`self._index is None`, `not hasattr(self, "_index")`, `getattr(self, "_index", None) is
/// None`, a flag not yet set: `not self._checked`, also first in an `or`: `self._grid is None
/// or self._grid.shape != x.shape`), or whether it has been outgrown (`max_pos >
/// self.weights.size(0)`, also in an `and`) and the
/// body sets it (`self._index = ...`, `self.register_buffer("_index", ...)`, `setattr(self,
/// "_index", ...)`, a method of `self` named for initialising: `if self.step_index is None:
/// self._init_step_index(t)`), or whether a container is still empty (`len(state) == 0`, `not
/// state`) and the body fills it (`state["step"] = ...`, an optimizer's per-parameter state):
/// the body runs on the first call, not on every step.
fn initialises_lazily(test: &Expr, body: &[Stmt]) -> bool {
    /// What a test finds unset: an attribute of `self`, or an empty container by name.
    enum Unset<'e> {
        Attribute(&'e str),
        Container(&'e str),
    }
    fn unset(test: &Expr) -> Option<Unset<'_>> {
        match test {
            Expr::BoolOp(bool_op) if bool_op.op == ast::BoolOp::Or => unset(bool_op.values.first()?),
            // `... and max_pos > self.weights.size(0)`: the arm needs every part.
            Expr::BoolOp(bool_op) => bool_op.values.iter().find_map(outgrown).map(Unset::Attribute),
            test @ Expr::Compare(_) if let Some(attribute) = outgrown(test) => Some(Unset::Attribute(attribute)),
            Expr::Compare(compare) => match (&*compare.ops, &*compare.comparators, compare.left.as_ref()) {
                ([ast::CmpOp::Is], [Expr::NoneLiteral(_)], Expr::Attribute(attribute)) if on_self(attribute) => {
                    Some(Unset::Attribute(attribute.attr.as_str()))
                }
                ([ast::CmpOp::Is], [Expr::NoneLiteral(_)], Expr::Call(call)) => {
                    named_on_self(call, "getattr").map(Unset::Attribute)
                }
                // `len(state) == 0`
                ([ast::CmpOp::Eq], [zero], Expr::Call(call)) if is_zero_int(zero) => {
                    match (call.func.as_ref(), &*call.arguments.args) {
                        (Expr::Name(len), [Expr::Name(container)]) if len.id == "len" => {
                            Some(Unset::Container(container.id.as_str()))
                        }
                        _ => None,
                    }
                }
                _ => None,
            },
            Expr::UnaryOp(unary) if unary.op == ast::UnaryOp::Not => match unary.operand.as_ref() {
                // `not hasattr(self, "_x")`, and a flag set once it is done: `not
                // self._checked`, `not getattr(self, "_checked", False)`.
                Expr::Call(call) => named_on_self(call, "hasattr")
                    .or_else(|| named_on_self(call, "getattr"))
                    .map(Unset::Attribute),
                Expr::Attribute(attribute) if on_self(attribute) => Some(Unset::Attribute(attribute.attr.as_str())),
                Expr::Name(container) => Some(Unset::Container(container.id.as_str())),
                _ => None,
            },
            _ => None,
        }
    }
    /// `max_pos > self.weights.size(0)`, `n > len(self._cache)`: a cache outgrown, rebuilt
    /// larger (then it fits again): the attribute.
    fn outgrown(test: &Expr) -> Option<&str> {
        let Expr::Compare(compare) = test else { return None };
        let ([ast::CmpOp::Gt | ast::CmpOp::GtE | ast::CmpOp::Lt | ast::CmpOp::LtE], [right]) =
            (&*compare.ops, &*compare.comparators)
        else {
            return None;
        };
        size_of_self_attribute(right).or_else(|| size_of_self_attribute(&compare.left))
    }
    /// `builtin(self, "name", ...)`: the name.
    fn named_on_self<'e>(call: &'e ast::ExprCall, builtin: &str) -> Option<&'e str> {
        let (Expr::Name(func), [Expr::Name(receiver), Expr::StringLiteral(name), ..]) =
            (call.func.as_ref(), &*call.arguments.args)
        else {
            return None;
        };
        (func.id == builtin && receiver.id == "self")
            .then(|| literal_text(&name.value))
            .flatten()
    }
    // `self._step_index = ...` sets what the property `self.step_index` reads.
    let sets = |target: &Expr, unset: &Unset| match (target, unset) {
        (Expr::Attribute(a), Unset::Attribute(attribute)) => {
            on_self(a) && a.attr.as_str().trim_start_matches('_') == attribute.trim_start_matches('_')
        }
        (Expr::Subscript(subscript), Unset::Container(container)) => {
            matches!(subscript.value.as_ref(), Expr::Name(name) if name.id.as_str() == *container)
        }
        _ => false,
    };
    let Some(unset) = unset(test) else {
        return false;
    };
    // Also in every arm of a conditional (`if self.begin_index is not None: self._step_index =
    // self.begin_index else: self._step_index = ...`).
    fn flattened(body: &[Stmt]) -> Vec<&Stmt> {
        body.iter()
            .flat_map(|stmt| match stmt {
                Stmt::If(if_stmt) => {
                    let mut nested = flattened(&if_stmt.body);
                    for clause in &if_stmt.elif_else_clauses {
                        nested.extend(flattened(&clause.body));
                    }
                    nested
                }
                other => vec![other],
            })
            .collect()
    }
    flattened(body).into_iter().any(|stmt| match stmt {
        Stmt::Assign(assign) => assign.targets.iter().any(|target| sets(target, &unset)),
        Stmt::AnnAssign(assign) => sets(&assign.target, &unset),
        Stmt::Expr(expr) => match (expr.value.as_ref(), &unset) {
            (Expr::Call(call), Unset::Attribute(attribute)) => {
                let registers = matches!(call.func.as_ref(), Expr::Attribute(f)
                    if on_self(f) && f.attr.as_str() == "register_buffer")
                    && matches!(call.arguments.args.first(), Some(Expr::StringLiteral(name)) if literal_text(&name.value) == Some(*attribute));
                // `self._init_step_index(t)`, `self.make_weights(n)`: a method that initialises
                // it, or one named for it.
                let initialises = matches!(call.func.as_ref(), Expr::Attribute(f)
                    if on_self(f) && (contains_ignoring_ascii_case(f.attr.as_str(), "init")
                        || f.attr.as_str().contains(attribute.trim_start_matches('_'))));
                registers || initialises || named_on_self(call, "setattr") == Some(*attribute)
            }
            _ => false,
        },
        _ => false,
    })
}

/// `self.register_modules(unet=unet, scheduler=scheduler)` (a diffusers pipeline's `__init__`)
/// sets `self.unet` and `self.scheduler` to the values.
fn registered_modules(call: &ast::ExprCall) -> impl Iterator<Item = (&Name, &Expr)> {
    let registers = matches!(call.func.as_ref(), Expr::Attribute(method)
        if on_self(method) && method.attr.as_str() == "register_modules");
    call.arguments
        .keywords
        .iter()
        .filter(move |_| registers)
        .filter_map(|keyword| Some((&keyword.arg.as_ref()?.id, &keyword.value)))
}

/// The attribute of `self` whose size `expr` reads: `self.weights.size(0)`,
/// `self.pe.shape[1]`, `len(self._cache)`.
fn size_of_self_attribute(expr: &Expr) -> Option<&str> {
    let sized = match expr {
        Expr::Call(call) => match call.func.as_ref() {
            Expr::Attribute(method) if method.attr.as_str() == "size" => method.value.as_ref(),
            Expr::Name(len) if len.id.as_str() == "len" => call.arguments.args.first()?,
            _ => return None,
        },
        Expr::Subscript(subscript) => match subscript.value.as_ref() {
            Expr::Attribute(shape) if shape.attr.as_str() == "shape" => shape.value.as_ref(),
            _ => return None,
        },
        _ => return None,
    };
    match sized {
        Expr::Attribute(attribute) if on_self(attribute) => Some(attribute.attr.as_str()),
        _ => None,
    }
}

/// A loop over a fixed collection of the program: a dict's items, keys or values, a module's
/// parameters, buffers or submodules, a state dict, or the devices (`range(torch.cuda.
/// device_count())`), also through `enumerate`, `zip`, `sorted` or `list`. It repeats setup or
/// bookkeeping (copying weights, counting parameters, probing devices), not a training step.
fn iterates_a_fixed_collection(iter: &Expr) -> bool {
    let Expr::Call(call) = iter else {
        return false;
    };
    match call.func.as_ref() {
        Expr::Attribute(attribute) => matches!(
            attribute.attr.as_str(),
            "items"
                | "keys"
                | "values"
                | "parameters"
                | "named_parameters"
                | "buffers"
                | "named_buffers"
                | "modules"
                | "named_modules"
                | "children"
                | "named_children"
                | "state_dict"
        ),
        Expr::Name(func) => match func.id.as_str() {
            "enumerate" | "zip" | "sorted" | "list" | "reversed" => {
                call.arguments.args.iter().any(iterates_a_fixed_collection)
            }
            "range" => call.arguments.args.iter().any(|arg| {
                matches!(arg, Expr::Call(inner) if matches!(inner.func.as_ref(),
                    Expr::Attribute(a) if a.attr.as_str() == "device_count"))
            }),
            _ => false,
        },
        _ => false,
    }
}

/// A loop target that counts steps (`for step in range(n)`, `for i, batch in ...`,
/// `for it in range(max_iters)`): the loop is a step loop whatever its body calls.
fn names_steps(target: &Expr) -> bool {
    let mut names = Vec::new();
    collect_names(target, &mut names);
    names.iter().any(|name| {
        let name = name.as_str().trim_start_matches('_').to_ascii_lowercase();
        name == "step"
            || name.ends_with("_step")
            || name.starts_with("step_")
            || matches!(
                name.as_str(),
                "it" | "iter" | "itr" | "iteration" | "i_iter" | "batch_idx" | "batch_i" | "batch" | "batches"
            )
            || name.starts_with("batch_")
    })
}

/// An iterable that names steps: `timesteps`, `enumerate(self.scheduler.timesteps)`,
/// `reversed(range(num_inference_steps))`, or a range of new tokens: `range(max_new_tokens)`,
/// `range(max_generated_tokens - 1)`, `range(max_length)`.
fn iterates_steps(iter: &Expr) -> bool {
    fn names(expr: &Expr, words: &[&str]) -> bool {
        match expr {
            Expr::Call(call) => call.arguments.args.iter().any(|argument| names(argument, words)),
            Expr::BinOp(operation) => names(&operation.left, words) || names(&operation.right, words),
            expr => {
                last_name(expr).is_some_and(|name| words.iter().any(|word| contains_ignoring_ascii_case(name, word)))
            }
        }
    }
    let counts_tokens = matches!(iter, Expr::Call(call) if matches!(call.func.as_ref(), Expr::Name(range) if range.id.as_str() == "range"));
    names(iter, &["step"]) || (counts_tokens && names(iter, &["token", "max_len"]))
}

/// Does this code call a collective (`all_reduce`, `broadcast`, `all_gather`, ...) by its
/// name? A loop of them is SYNC601's serial collectives, which cost wherever the loop runs.
/// `gather`, `scatter` and `reduce` are also tensor methods and `functools.reduce`: they count
/// only on a receiver that names the distributed package or a launcher (`dist.gather`,
/// `torch.distributed.reduce`, `accelerator.gather`, `fabric.all_gather`).
fn calls_collectives(body: &[Stmt]) -> bool {
    calls_any(body, |receiver, called| match called {
        "all_reduce" | "broadcast" | "all_gather" | "reduce_scatter" | "all_to_all" => true,
        "gather" | "scatter" | "reduce" => receiver.is_some_and(|receiver| {
            let receiver = receiver.to_ascii_lowercase();
            ["dist", "accelerator", "fabric", "comm"]
                .iter()
                .any(|word| receiver.contains(word))
        }),
        _ => false,
    })
}

/// Does this code (outside nested definitions) `yield`?
fn yields(body: &[Stmt]) -> bool {
    any_expr(body, |expr| matches!(expr, Expr::Yield(_) | Expr::YieldFrom(_)))
}

/// Does any expression of this code (outside nested definitions and lambdas, visited before
/// its parts) satisfy `found`?
fn any_expr<'b>(body: &'b [Stmt], found: impl FnMut(&'b Expr) -> bool) -> bool {
    any_expr_where(body, |_, _| false, found)
}

/// Does `expr` or any expression inside it (outside lambdas, visited before its parts)
/// satisfy `found`?
fn any_expr_in<'b>(expr: &'b Expr, found: impl FnMut(&'b Expr) -> bool) -> bool {
    let mut finder = ExprFinder {
        skip_arm: |_: &'b Expr, _| false,
        found,
        done: false,
    };
    finder.visit_expr(expr);
    finder.done
}

/// [`any_expr`], leaving out the arms of `if` statements that `skip_arm` says never run (the
/// test, and whether it holds there).
fn any_expr_where<'b>(
    body: &'b [Stmt],
    skip_arm: impl Fn(&'b Expr, bool) -> bool,
    found: impl FnMut(&'b Expr) -> bool,
) -> bool {
    let mut finder = ExprFinder {
        skip_arm,
        found,
        done: false,
    };
    finder.visit_body(body);
    finder.done
}

/// Walks code until an expression satisfies `found`, leaving out nested definitions, lambdas
/// and the arms `skip_arm` says never run.
struct ExprFinder<S, F> {
    skip_arm: S,
    found: F,
    done: bool,
}

impl<'b, S: Fn(&'b Expr, bool) -> bool, F: FnMut(&'b Expr) -> bool> Visitor<'b> for ExprFinder<S, F> {
    fn visit_stmt(&mut self, stmt: &'b Stmt) {
        if self.done || matches!(stmt, Stmt::FunctionDef(_) | Stmt::ClassDef(_)) {
            return;
        }
        let Stmt::If(if_stmt) = stmt else {
            return visitor::walk_stmt(self, stmt);
        };
        self.visit_expr(&if_stmt.test);
        if !(self.skip_arm)(&if_stmt.test, true) {
            self.visit_body(&if_stmt.body);
        }
        let single_else = if_stmt.elif_else_clauses.len() == 1;
        for clause in &if_stmt.elif_else_clauses {
            match &clause.test {
                Some(test) => {
                    self.visit_expr(test);
                    if !(self.skip_arm)(test, true) {
                        self.visit_body(&clause.body);
                    }
                }
                None if single_else && (self.skip_arm)(&if_stmt.test, false) => {}
                None => self.visit_body(&clause.body),
            }
        }
    }

    fn visit_expr(&mut self, expr: &'b Expr) {
        if self.done || matches!(expr, Expr::Lambda(_)) {
            return;
        }
        if (self.found)(expr) {
            self.done = true;
            return;
        }
        visitor::walk_expr(self, expr);
    }
}

/// A call that does a step's work: trains (backward, an optimizer step) or runs a network
/// (`model(x)`, `self.unet(x)`, `self.backbone.forward(x)`).
fn is_step_call(receiver: Option<&str>, called: &str) -> bool {
    is_training_call(receiver, called)
        || calls_a_network(called)
        // A module calling itself runs its `forward` (a decoding loop's `self(x)`).
        || (called == "self" && receiver.is_none())
        || (called == "forward" && receiver.is_some_and(names_a_network))
}

/// Does this code train: call `.backward()` or step an optimizer (`opt.step()`,
/// `self._optimizer.step()`, `scaler.step(opt)`)?
fn trains(body: &[Stmt]) -> bool {
    calls_any(body, is_training_call)
}

/// `.backward()` or an optimizer's (or a gradient scaler's) `.step()`.
fn is_training_call(receiver: Option<&str>, method: &str) -> bool {
    match method {
        "backward" => receiver.is_some(),
        "step" => receiver.is_some_and(|name| {
            let name = name.trim_start_matches('_').to_ascii_lowercase();
            name.contains("optim") || name == "opt" || name.ends_with("_opt") || name.ends_with("scaler")
        }),
        _ => false,
    }
}

/// Does this code (outside nested definitions) call a method that `matches` (the receiver's
/// last name, if it is a name or an attribute; the method), or a function by name (no receiver:
/// `matches(None, name)`)?
fn calls_any(body: &[Stmt], matches: impl Fn(Option<&str>, &str) -> bool) -> bool {
    any_expr(
        body,
        |expr| matches!(expr, Expr::Call(call) if call_matches(call, &matches)),
    )
}

/// Does the call call a method that `matches` (see [`calls_any`])?
fn call_matches(call: &ast::ExprCall, matches: impl Fn(Option<&str>, &str) -> bool) -> bool {
    match call.func.as_ref() {
        Expr::Attribute(attribute) => {
            let receiver = match attribute.value.as_ref() {
                Expr::Name(name) => Some(name.id.as_str()),
                Expr::Attribute(inner) => Some(inner.attr.as_str()),
                _ => Some(""),
            };
            matches(receiver, attribute.attr.as_str())
        }
        Expr::Name(name) => matches(None, name.id.as_str()),
        _ => false,
    }
}

/// A subclass of `torch.autograd.Function`.
fn is_autograd_function(class: &ClassInfo) -> bool {
    class.bases.iter().any(|base| {
        matches!(
            base.as_str(),
            "torch.autograd.Function" | "torch.autograd.function.Function"
        )
    })
}

/// The parts as one string, in one allocation of exactly their length (a function's qualified
/// name is kept for the whole run).
fn joined(parts: &[&str]) -> Box<str> {
    let mut text = String::with_capacity(parts.iter().map(|part| part.len()).sum());
    parts.iter().for_each(|part| text.push_str(part));
    text.into_boxed_str()
}

/// The names an assignment target binds.
fn collect_names(target: &Expr, names: &mut Vec<Name>) {
    match target {
        Expr::Name(name) => names.push(name.id.clone()),
        Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
            elts.iter().for_each(|elt| collect_names(elt, names));
        }
        Expr::Starred(starred) => collect_names(&starred.value, names),
        _ => {}
    }
}

/// `for step in range(10)` inside `if step % 100 == 0:` is periodic.
fn is_periodic_guard(test: &Expr) -> bool {
    match test {
        Expr::Compare(compare) => compares_a_period(compare, ast::CmpOp::Eq),
        Expr::UnaryOp(unary) => unary.op == ast::UnaryOp::Not && is_a_period(&unary.operand),
        // `step % log_every == 0 and rank == 0`; `step % n == 0 or last_batch` (every n steps,
        // and once more at the end): not `step % 2 == 0 or sync_each_batch`.
        Expr::BoolOp(bool_op) => match bool_op.op {
            ast::BoolOp::And => bool_op.values.iter().any(is_periodic_guard),
            ast::BoolOp::Or => bool_op
                .values
                .iter()
                .all(|value| is_periodic_guard(value) || names_the_last_step(value)),
        },
        Expr::Name(_) | Expr::Attribute(_) | Expr::Call(_) => names_a_logging_switch(test),
        _ => false,
    }
}

/// `step % n` of a period (`step % 2` alternates: it, or its `else`, runs every other step).
fn is_a_period(expr: &Expr) -> bool {
    let every_other = |divisor: &Expr| matches!(divisor, Expr::NumberLiteral(n) if n.value.as_int().and_then(|i| i.as_u64()).is_some_and(|i| i <= 2));
    matches!(expr, Expr::BinOp(b) if b.op == ast::Operator::Mod && !every_other(&b.right))
}

/// `step % n == 0` (with `op` `==`), `step % n != 0` (with `!=`).
fn compares_a_period(compare: &ast::ExprCompare, op: ast::CmpOp) -> bool {
    compare.ops.iter().all(|compared| *compared == op)
        && (is_a_period(&compare.left) || compare.comparators.iter().any(is_a_period))
}

/// A test that, where it holds, skips the rest of the block on most steps (`if not should_log:
/// return`, `if step % n != 0: continue`, `if step % n: continue`): the rest runs periodically.
/// Not where the period accumulates gradients (`% accumulate_grad_batches`): the rest then runs
/// once per optimizer step, every step where nothing accumulates.
fn skips_off_period(test: &Expr) -> bool {
    let accumulates = |expr: &Expr| {
        any_expr_in(expr, |part| {
            matches!(part, Expr::BinOp(b) if b.op == ast::Operator::Mod
                && last_name(&b.right).is_some_and(|name| contains_ignoring_ascii_case(name, "accum")))
        })
    };
    !accumulates(test)
        && match test {
            Expr::UnaryOp(unary) => unary.op == ast::UnaryOp::Not && is_periodic_guard(&unary.operand),
            Expr::Compare(compare) => compares_a_period(compare, ast::CmpOp::NotEq),
            other => is_a_period(other),
        }
}

/// `last_batch`, `is_last_step`, `step == total_steps - 1`, `final_step`: true once, at the end.
fn names_the_last_step(test: &Expr) -> bool {
    let name = match test {
        Expr::Name(name) => name.id.as_str(),
        Expr::Attribute(attribute) => attribute.attr.as_str(),
        Expr::Compare(compare) => return compare.ops.iter().all(|op| *op == ast::CmpOp::Eq),
        _ => return false,
    };
    name.split('_')
        .any(|word| word.eq_ignore_ascii_case("last") || word.eq_ignore_ascii_case("final"))
}

/// `should_log`, `self.should_log(step)`, `args.verbose`, `self.collect_stats`, `debug`: a switch
/// for logging, statistics or debugging, off on most steps (or off by default).
fn names_a_logging_switch(test: &Expr) -> bool {
    let Some(name) = last_name(test) else {
        return false;
    };
    let words = || name.split('_').filter(|word| !word.is_empty());
    words().any(|word| {
        word.eq_ignore_ascii_case("log")
            || word.eq_ignore_ascii_case("logging")
            || word.eq_ignore_ascii_case("verbose")
            || word.eq_ignore_ascii_case("debug")
            || word.eq_ignore_ascii_case("stats")
            || word.eq_ignore_ascii_case("profile")
            || word.eq_ignore_ascii_case("profiling")
    })
}

/// `x.shape`, `x.shape[1:]`, `x.size()`: a `torch.Size`, whose elements are host numbers.
fn is_a_size(expr: &Expr) -> bool {
    match expr {
        Expr::Attribute(attribute) => attribute.attr.as_str() == "shape",
        Expr::Subscript(subscript) => matches!(subscript.slice.as_ref(), Expr::Slice(_)) && is_a_size(&subscript.value),
        Expr::Call(call) => {
            call.arguments.is_empty()
                && matches!(call.func.as_ref(), Expr::Attribute(method) if method.attr.as_str() == "size")
        }
        _ => false,
    }
}

/// A call's arguments as `argument` describes each (the positional ones up to the first
/// `*args`), and whether it spreads `*args` or `**kwargs`.
fn describe_arguments(arguments: &ast::Arguments, argument: impl Fn(&Expr) -> Argument) -> CallArguments {
    let positional = arguments.args.iter().take_while(|arg| !arg.is_starred_expr());
    let keywords = arguments
        .keywords
        .iter()
        .filter_map(|keyword| Some((keyword.arg.as_ref()?.as_str().into(), argument(&keyword.value))));
    CallArguments {
        positional: positional.map(&argument).collect(),
        keywords: keywords.collect(),
        spread: arguments.args.iter().any(Expr::is_starred_expr)
            || arguments.keywords.iter().any(|keyword| keyword.arg.is_none()),
        informative: false,
    }
}

/// What a class's methods assign to `self.<attr>`, for other files, where it says what a rule
/// asks: a tensor, an array, a device, an instance of a project class (sorted by name).
fn told_attributes(model: &SemanticModel, class: &ClassInfo) -> Box<[(Box<str>, ProjectKind)]> {
    let mut attributes: Vec<(Box<str>, ProjectKind)> = class
        .attrs
        .iter()
        .filter(|(_, kind)| match kind {
            Kind::Tensor(_) | Kind::TensorSequence(_) | Kind::NdArray | Kind::Device(_) | Kind::Object(_) => true,
            Kind::Module(_, class) => class.is_some(),
            _ => false,
        })
        .map(|(name, kind)| (name.as_str().into(), model.to_project(*kind)))
        .collect();
    attributes.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    attributes.into_boxed_slice()
}

/// What a function returns by the type of one parameter, from its `return`s and the
/// `isinstance` test of a parameter around each: where tests of one parameter pick some of them
/// (a `return` outside any test is taken for any type).
fn returns_by_type(returns: &[(Option<(u16, TypeSet)>, Kind)], params: &[ParamSummary]) -> Option<ReturnsByType> {
    let mut slots = returns.iter().filter_map(|(test, _)| test.map(|(slot, _)| slot));
    let slot = slots.next()?;
    if slots.any(|other| other != slot) {
        return None;
    }
    let arms = returns
        .iter()
        .map(|(test, kind)| (test.map_or(TypeSet::ANY, |(_, types)| types), *kind))
        .collect();
    Some(ReturnsByType {
        slot,
        parameter: params.get(usize::from(slot))?.name.clone(),
        arms,
    })
}

/// The name `test` finds not `None` (`x is not None`): where it fails, the name is `None`.
fn none_unless(test: &Expr) -> Option<&Name> {
    match test {
        Expr::Compare(compare) => match (compare.left.as_ref(), &*compare.ops, &*compare.comparators) {
            (Expr::Name(name), [ast::CmpOp::IsNot], [Expr::NoneLiteral(_)]) => Some(&name.id),
            _ => None,
        },
        _ => None,
    }
}

/// The names the arm where `test` comes out `holds` knows are not `None`: `x is not None`
/// (also as a part of an `and`), or the other arm of `x is None` (of an `or`).
fn names_not_none(test: &Expr, holds: bool) -> Vec<Name> {
    match test {
        Expr::Compare(compare)
            if let (Expr::Name(name), [op @ (ast::CmpOp::Is | ast::CmpOp::IsNot)], [Expr::NoneLiteral(_)]) =
                (compare.left.as_ref(), &*compare.ops, &*compare.comparators)
                && (*op == ast::CmpOp::IsNot) == holds =>
        {
            vec![name.id.clone()]
        }
        Expr::BoolOp(bool_op) if (bool_op.op == ast::BoolOp::And) == holds => bool_op
            .values
            .iter()
            .flat_map(|value| names_not_none(value, holds))
            .collect(),
        _ => Vec::new(),
    }
}

/// The parameter of `__init__` (its slot after `self`, and its default) that a statement of its
/// own body assigns to `self.<attr>` as it is (`self.use_conv = use_conv`).
fn init_parameter_assigned(init: &ast::StmtFunctionDef, attr: &str) -> Option<(usize, ParamDefault)> {
    let assigned = init.body.iter().find_map(|stmt| {
        let (target, value) = match stmt {
            Stmt::Assign(assign) if assign.targets.len() == 1 => (&assign.targets[0], &*assign.value),
            Stmt::AnnAssign(assign) => (&*assign.target, assign.value.as_deref()?),
            _ => return None,
        };
        match (target, value) {
            (Expr::Attribute(target), Expr::Name(value)) if on_self(target) && target.attr.as_str() == attr => {
                Some(&value.id)
            }
            _ => None,
        }
    })?;
    let parameters = &init.parameters;
    let all = parameters
        .posonlyargs
        .iter()
        .chain(&parameters.args)
        .chain(&parameters.kwonlyargs);
    let (index, parameter) = all.enumerate().find(|(_, p)| p.parameter.name.id == *assigned)?;
    // Slot 0 is the first parameter after `self`.
    let slot = index.checked_sub(1)?;
    Some((slot, param_default(parameter.default.as_deref())))
}

/// Whether a parameter's default, where callers leave it out, kills an arm.
type DefaultKills = fn(ParamDefault) -> bool;

/// The attributes of `class` that hold what the file cannot tell, with the methods called on
/// them (see [`ClassSummary::duck_typed`]), sorted.
fn attributes_to_type(class: &ClassInfo) -> Box<[MethodsCalledOn]> {
    let mut typed: Vec<MethodsCalledOn> = class
        .methods_called_on
        .iter()
        .filter(|(attr, (methods, hot))| {
            *hot && !methods.is_empty() && class.attrs.get(*attr).is_some_and(|kind| *kind == Kind::Unknown)
        })
        .map(|(attr, (methods, _))| {
            let mut methods: Vec<Box<str>> = methods.iter().map(|m| Box::from(m.as_str())).collect();
            methods.sort_unstable();
            (Box::from(attr.as_str()), methods.into_boxed_slice())
        })
        .collect();
    typed.sort_unstable();
    typed.into_boxed_slice()
}

/// What callers give the value `x is None` (`op` `Is`) or `x is not None` tests, where the
/// arm the test comes out `holds` in dies, and which defaults leaving it out kills it with: a
/// value, where the arm needs `None` (any default); none, where it needs a value (a `None`
/// default).
fn none_test_kills(op: ast::CmpOp, holds: bool) -> Option<(Given, DefaultKills)> {
    match op {
        ast::CmpOp::Is | ast::CmpOp::IsNot if (op == ast::CmpOp::Is) == holds => Some((Given::Always, |_| true)),
        ast::CmpOp::Is | ast::CmpOp::IsNot => Some((Given::Never, |default| default == ParamDefault::None)),
        _ => None,
    }
}

fn param_default(default: Option<&Expr>) -> ParamDefault {
    match default {
        None => ParamDefault::Required,
        Some(Expr::NoneLiteral(_)) => ParamDefault::None,
        Some(literal) if is_false_literal(literal) => ParamDefault::Falsy,
        Some(_) => ParamDefault::Other,
    }
}

/// A string built from values: an f-string, `"..." % args`, `"...".format(...)`, a sum of strings.
fn builds_a_message(expr: &Expr) -> bool {
    match expr {
        Expr::FString(_) | Expr::StringLiteral(_) => true,
        Expr::BinOp(binop) => {
            matches!(binop.op, ast::Operator::Mod | ast::Operator::Add) && builds_a_message(&binop.left)
        }
        Expr::Call(call) => matches!(call.func.as_ref(), Expr::Attribute(format)
            if format.attr.as_str() == "format" && format.value.is_string_literal_expr()),
        _ => false,
    }
}

impl<'a> Visitor<'a> for Checker<'a> {
    fn visit_body(&mut self, body: &'a [Stmt]) {
        let saved = self.model.flow.except_depth;
        let saved_guard = self.model.flow.periodic_guard;
        let mut rest_entered = Vec::new();
        for (index, stmt) in body.iter().enumerate() {
            self.levels += 1;
            self.visit_stmt(stmt);
            self.levels -= 1;
            if let Stmt::Expr(ast::StmtExpr { value, .. }) = stmt
                && let Expr::Call(call) = value.as_ref()
            {
                self.note_moved_in_place(call);
            }
            if let Stmt::If(if_stmt) = stmt
                && if_stmt.elif_else_clauses.is_empty()
                && self.leaves_the_block(if_stmt.body.last())
            {
                // After `if torch.is_tensor(x): return x` (or `raise`, `continue`), the rest of
                // the block is the test's `else`: off the step where that arm would be, and not
                // at calls that take the early return.
                self.returned_early = match if_stmt.body.as_slice() {
                    [Stmt::Return(ast::StmtReturn { value: Some(value), .. })] => {
                        value.as_name_expr().map(|name| name.id.as_str())
                    }
                    _ => None,
                };
                let mut decided = self.arm_off_step(&if_stmt.test, false);
                self.returned_early = None;
                if !decided.off_step {
                    decided.guards = GivenAsked::default();
                }
                if decided.off_step || !decided.dead_where.is_empty() {
                    rest_entered.push(self.enter_arm(decided));
                }
                // After `if not should_log: return` (or `continue`), the rest of the block runs
                // as the body of `if should_log:` would: periodically.
                if self.model.flow.periodic_guard.is_none()
                    && matches!(if_stmt.body.last(), Some(Stmt::Return(_) | Stmt::Continue(_)))
                    && skips_off_period(&if_stmt.test)
                    && !trains(&body[index + 1..])
                {
                    self.model.flow.periodic_guard = Some(self.line(if_stmt.start()));
                }
            }
            // After a `try` whose body always returns or raises, the rest of the block runs
            // only when a handler caught something: a fallback, as the handler is.
            if let Stmt::Try(try_stmt) = stmt
                && !try_stmt.handlers.is_empty()
                && matches!(try_stmt.body.last(), Some(Stmt::Return(_) | Stmt::Raise(_)))
            {
                self.model.flow.except_depth += 1;
            }
        }
        for entered in rest_entered.into_iter().rev() {
            self.leave_arm(entered);
        }
        self.model.flow.except_depth = saved;
        self.model.flow.periodic_guard = saved_guard;
    }

    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        self.model.invalidate_kinds();
        match stmt {
            Stmt::FunctionDef(def) => self.define_function(def),
            Stmt::ClassDef(class_def) => self.define_class(class_def),
            Stmt::Import(import) => {
                for alias in &import.names {
                    self.bind_import(alias, None, 0);
                }
            }
            Stmt::ImportFrom(import) => {
                let module = import.module.as_ref().map_or("", |m| m.id.as_str());
                for alias in &import.names {
                    if alias.name.id.as_str() != "*" {
                        self.bind_import(alias, Some(module), import.level);
                    }
                }
            }
            Stmt::Assign(assign) => {
                self.visit_expr(&assign.value);
                for target in &assign.targets {
                    self.visit_expr(target);
                }
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                let kind = self.model.kind_of(&assign.value);
                for target in &assign.targets {
                    self.bind_target(target, kind, Some(&assign.value));
                }
            }
            Stmt::AnnAssign(assign) => {
                if let Some(value) = &assign.value {
                    self.visit_expr(value);
                }
                self.visit_expr(&assign.target);
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                let kind = match &assign.value {
                    Some(value) => self.model.kind_of(value),
                    None => self.model.annotation_kind(&assign.annotation),
                };
                self.bind_target(&assign.target, kind, assign.value.as_deref());
            }
            Stmt::AugAssign(assign) => {
                self.visit_expr(&assign.value);
                self.visit_expr(&assign.target);
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                let target = self.model.kind_of(&assign.target);
                let value = self.model.kind_of(&assign.value);
                // `keep &= score > t` of masks is a mask.
                let logical = matches!(
                    assign.op,
                    ast::Operator::BitAnd | ast::Operator::BitOr | ast::Operator::BitXor
                );
                let kind = match (target, value) {
                    (Kind::Tensor(a), Kind::Tensor(b)) if logical && a.boolean && b.boolean => {
                        Kind::Tensor(TensorFacts {
                            device: a.device.combine(b.device),
                            data_dependent: false,
                            ..a
                        })
                    }
                    (target, Kind::Tensor(b)) if logical && b.boolean && target.is_opaque() => {
                        Kind::Tensor(TensorFacts {
                            data_dependent: false,
                            ..b
                        })
                    }
                    (Kind::Tensor(a), Kind::Tensor(b)) => Kind::Tensor(TensorFacts {
                        device: a.device.combine(b.device),
                        ..a.numeric()
                    }),
                    (Kind::Tensor(facts), _) | (_, Kind::Tensor(facts)) => Kind::Tensor(facts.numeric()),
                    // `total = 0; total += loss` with a loss of unknown kind: a tensor if the
                    // loss is one, so no longer known to be a number.
                    (Kind::Number, value) if value.is_opaque() => Kind::Unknown,
                    (kind, _) => kind,
                };
                if matches!(*assign.target, Expr::Name(_) | Expr::Attribute(_)) {
                    self.bind_target(&assign.target, kind, None);
                }
            }
            Stmt::For(for_stmt) => {
                self.visit_expr(&for_stmt.iter);
                self.bind_loop_target(&for_stmt.target, &for_stmt.iter);
                self.visit_expr(&for_stmt.target);
                let line = self.line(for_stmt.start());
                let mut targets = Vec::new();
                collect_names(&for_stmt.target, &mut targets);
                self.note_loop();
                let over_batches = self.iterates_batches(&for_stmt.iter, &[]);
                let epoch = self.runs_epochs(&for_stmt.body, over_batches);
                // `keys = list(sd.keys()); for k in keys:` iterates what the name was bound to.
                let iterated = match for_stmt.iter.as_ref() {
                    Expr::Name(name) => self.model.lookup(name.id.as_str()).and_then(|b| b.value),
                    _ => None,
                };
                let fixed =
                    iterates_a_fixed_collection(&for_stmt.iter) || iterated.is_some_and(iterates_a_fixed_collection);
                let starts_hotness = if fixed {
                    self.does_step_work(&for_stmt.body)
                } else {
                    over_batches
                        || names_steps(&for_stmt.target)
                        || (self.in_generate() && iterates_steps(&for_stmt.iter))
                        || self.starts_step_loop(&for_stmt.body, iterates_steps(&for_stmt.iter))
                };
                self.model.flow.loops.push(crate::semantic::LoopInfo {
                    line,
                    targets,
                    epoch,
                    starts_hotness,
                });
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                self.visit_body(&for_stmt.body);
                self.model.flow.loops.pop();
                self.visit_optional(&for_stmt.orelse);
            }
            Stmt::While(while_stmt) => {
                self.note_loop();
                let line = self.line(while_stmt.start());
                let epoch = self.runs_epochs(&while_stmt.body, false);
                let starts_hotness = self.starts_step_loop(&while_stmt.body, false);
                self.model.flow.loops.push(crate::semantic::LoopInfo {
                    line,
                    targets: Vec::new(),
                    epoch,
                    starts_hotness,
                });
                self.visit_expr(&while_stmt.test);
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                self.visit_body(&while_stmt.body);
                self.model.flow.loops.pop();
                self.visit_optional(&while_stmt.orelse);
            }
            Stmt::If(if_stmt) => {
                self.visit_expr(&if_stmt.test);
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                let mut arms = vec![self.visit_guarded_arm(&if_stmt.test, if_stmt.start(), &if_stmt.body)];
                // The clauses after it run where every earlier test failed: on no step where
                // one holds on every step (`if not force_not_quantize:` that no hot caller
                // turns off). Not by a type test that takes an unseen value for a tensor: a
                // chain of them dispatches on types (`elif is_list_of(v, torch.Tensor):`).
                let mut earlier = ArmDecided::default();
                // Each clause's previous test: the `if`'s, then each `elif`'s (only the last
                // clause may be an `else`).
                let tests = std::iter::once(&*if_stmt.test).chain(
                    if_stmt
                        .elif_else_clauses
                        .iter()
                        .filter_map(|clause| clause.test.as_ref()),
                );
                for (clause, previous) in if_stmt.elif_else_clauses.iter().zip(tests) {
                    let type_test = matches!(previous, Expr::Call(call) if self.tests_for_a_tensor(call).is_some());
                    if (clause.test.is_some() || if_stmt.elif_else_clauses.len() > 1) && !type_test {
                        let decided = self.arm_off_step(previous, false);
                        earlier.off_step |= decided.off_step;
                        earlier.guards = earlier.guards.union(decided.guards);
                        earlier.dead_where.extend(decided.dead_where);
                    }
                    match &clause.test {
                        Some(test) => {
                            let entered = self.enter_arm(earlier.clone());
                            self.visit_expr(test);
                            self.run_rules(|context| rules::dispatch::check_elif(context, test));
                            arms.push(self.visit_guarded_arm(test, clause.start(), &clause.body));
                            self.leave_arm(entered);
                        }
                        // `else` after a single `if t.is_cuda:` knows the opposite.
                        None if if_stmt.elif_else_clauses.len() == 1 => {
                            let narrowed = self.device_narrowing(&if_stmt.test, false);
                            arms.push(self.visit_tested_arm(&if_stmt.test, false, false, &clause.body, narrowed));
                        }
                        None => {
                            let entered = self.enter_arm(earlier.clone());
                            arms.push(self.visit_arm(&clause.body));
                            self.leave_arm(entered);
                        }
                    }
                }
                let mut exhaustive = if_stmt
                    .elif_else_clauses
                    .last()
                    .is_some_and(|clause| clause.test.is_none());
                // `if x is not None: x = f(x)` with no `else`: where the test fails, `x` is
                // `None`, so after the `if` it is what the arm made it or `None` (not what it
                // was before the test, a value of any kind). It is still the same value there,
                // a parameter for one: what its callers pass may tell the arm's.
                if let (Some(name), [arm]) = (none_unless(&if_stmt.test), arms.as_slice())
                    && if_stmt.elif_else_clauses.is_empty()
                    && arm.binds(name.as_str())
                    && let Some(before) = self.model.lookup(name.as_str())
                {
                    let none = Binding {
                        kind: Kind::NoneValue,
                        ..before.clone()
                    };
                    self.model.begin_arm();
                    self.model.bind(name, none);
                    arms.push(self.model.end_arm(true));
                    exhaustive = true;
                }
                self.model.merge_arms(arms, exhaustive);
            }
            Stmt::Try(try_stmt) => {
                // The body usually runs to the end; handlers may run instead of its rest.
                self.visit_body(&try_stmt.body);
                let mut arms = Vec::new();
                for handler in &try_stmt.handlers {
                    let ast::ExceptHandler::ExceptHandler(handler) = handler;
                    if let Some(type_) = &handler.type_ {
                        self.visit_expr(type_);
                    }
                    self.model.flow.except_depth += 1;
                    self.model.begin_arm();
                    if let Some(name) = &handler.name {
                        self.model.bind_value(&name.id, Kind::Unknown, None);
                    }
                    self.visit_body(&handler.body);
                    let falls_through = !matches!(
                        handler.body.last(),
                        Some(Stmt::Return(_) | Stmt::Raise(_) | Stmt::Continue(_) | Stmt::Break(_))
                    );
                    arms.push(self.model.end_arm(falls_through));
                    self.model.flow.except_depth -= 1;
                }
                self.model.merge_arms(arms, false);
                self.visit_body(&try_stmt.orelse);
                self.visit_body(&try_stmt.finalbody);
            }
            Stmt::With(with_stmt) => {
                let mut pushed = 0;
                for item in &with_stmt.items {
                    self.visit_expr(&item.context_expr);
                    self.note_context_manager(&item.context_expr);
                    if let Kind::Device(device) = self.model.kind_of(&item.context_expr) {
                        self.model.flow.default_device_stack.push(device);
                        pushed += 1;
                    }
                    if let Some(target) = &item.optional_vars {
                        let kind = self.model.kind_of(&item.context_expr);
                        let kind = if matches!(kind, Kind::Device(_)) {
                            Kind::Unknown
                        } else {
                            kind
                        };
                        self.bind_target(target, kind, None);
                        self.visit_expr(target);
                    }
                }
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                self.visit_body(&with_stmt.body);
                for _ in 0..pushed {
                    self.model.flow.default_device_stack.pop();
                }
            }
            Stmt::Return(ret) => {
                if let Some(value) = &ret.value {
                    self.visit_expr(value);
                }
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                let kind = ret.value.as_deref().map_or(Kind::NoneValue, |v| self.model.kind_of(v));
                // What it returns (or the elements of the tuple it returns) may become known
                // with what its callers pass.
                if let Some(value) = ret.value.as_deref()
                    && (kind.is_opaque() || value.is_tuple_expr())
                    && let Some(depends) = self.model.dependence_of(value)
                {
                    self.return_depends = Some(match self.return_depends.take() {
                        Some(before) => before.union(&depends),
                        None => depends,
                    });
                }
                self.returns = Some(self.returns.map_or(kind, |k| k.join(kind)));
                // Kept for other files too: an instance's class is numbered in this one.
                let portable = match self.model.to_project(kind).kind {
                    Kind::Object(_) => Kind::Unknown,
                    other => other,
                };
                self.returns_by_arm.push((self.type_arms.last().copied(), portable));
                // `return None` on a path the caller's unpacking never takes says nothing, nor
                // does a value the file cannot tell (`return results`): where a caller unpacks
                // it, it is a tuple like the others.
                let returned = match ret.value.as_deref() {
                    _ if kind == Kind::NoneValue => None,
                    Some(value @ Expr::Tuple(_)) => Some(Ok(self.returned(value))),
                    // `return self._forward(x)`: the tuple the function called returns.
                    Some(Expr::Call(call)) if let Some(elements) = self.returned_by(call) => {
                        Some(Ok(Returned::Tuple(elements)))
                    }
                    // A tuple whose elements the file cannot tell (`tuple(gen)`) either.
                    _ if matches!(kind, Kind::Unknown | Kind::Tuple) => None,
                    _ => Some(Err(())),
                };
                if let Some(returned) = returned {
                    self.returns_tuple = Some(match (self.returns_tuple.take(), returned) {
                        (None, returned) => returned,
                        (Some(Ok(a)), Ok(b)) if matches!((&a, &b), (Returned::Tuple(x), Returned::Tuple(y)) if x.len() == y.len()) => {
                            Ok(a.join(&b))
                        }
                        _ => Err(()),
                    });
                }
            }
            Stmt::Assert(assert) => {
                self.visit_expr(&assert.test);
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
                // The message is built only when the assertion fails: once, not every step.
                if let Some(msg) = &assert.msg {
                    self.model.flow.except_depth += 1;
                    self.visit_expr(msg);
                    self.model.flow.except_depth -= 1;
                }
            }
            Stmt::Global(global) => {
                for name in &global.names {
                    self.model.declare_global(name.id.clone());
                }
            }
            _ => {
                visitor::walk_stmt(self, stmt);
                self.run_rules(|context| rules::dispatch::check_stmt(context, stmt));
            }
        }
    }

    #[inline]
    fn visit_expr(&mut self, expr: &'a Expr) {
        // Names and literals, most of the nodes, bind nothing, hold nothing to walk and no rule
        // looks at them: skip them before the costly entry into the full visit.
        if !matches!(
            expr,
            Expr::Name(_)
                | Expr::NumberLiteral(_)
                | Expr::StringLiteral(_)
                | Expr::BytesLiteral(_)
                | Expr::BooleanLiteral(_)
                | Expr::NoneLiteral(_)
                | Expr::EllipsisLiteral(_)
        ) {
            self.levels += 1;
            self.visit_compound_expr(expr);
            self.levels -= 1;
        }
    }
}

impl<'a> Checker<'a> {
    #[inline(never)]
    fn visit_compound_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Lambda(lambda) => {
                let scope = self.model.push_scope(ScopeKind::Lambda, self.model.flow.scope);
                let saved = std::mem::replace(&mut self.model.flow.scope, scope);
                if let Some(parameters) = &lambda.parameters {
                    for parameter in parameters.iter() {
                        self.model.bind_value(&parameter.name().id, Kind::Unknown, None);
                    }
                }
                // `lambda: f"got {int(n)} tokens"` handed to a check builds its message only
                // when the check fails, as an assertion's message is.
                let message = lambda.parameters.is_none() && builds_a_message(&lambda.body);
                self.model.flow.except_depth += u32::from(message);
                self.visit_expr(&lambda.body);
                self.model.flow.except_depth -= u32::from(message);
                self.model.flow.scope = saved;
                self.model.invalidate_kinds();
            }
            Expr::ListComp(ast::ExprListComp { elt, generators, .. })
            | Expr::Generator(ast::ExprGenerator { elt, generators, .. }) => {
                self.visit_comprehension(generators, |checker| {
                    checker.visit_expr(elt);
                    checker.model.note_comprehension_element(expr, elt);
                });
            }
            Expr::SetComp(ast::ExprSetComp { elt, generators, .. }) => {
                self.visit_comprehension(generators, |checker| checker.visit_expr(elt));
            }
            Expr::DictComp(comp) => {
                self.visit_comprehension(&comp.generators, |checker| {
                    if let Some(key) = &comp.key {
                        checker.visit_expr(key);
                    }
                    checker.visit_expr(&comp.value);
                });
            }
            Expr::Named(named) => {
                self.visit_expr(&named.value);
                let kind = self.model.kind_of(&named.value);
                self.bind_target(&named.target, kind, Some(&named.value));
            }
            Expr::Call(call) => {
                // The attribute a call names is a method called, not a property read.
                self.called = call.func.range();
                visitor::walk_expr(self, expr);
                self.note_call(call);
                for (attr, value) in registered_modules(call) {
                    let kind = self.model.kind_of(value);
                    self.bind_self_attribute(attr, kind, Some(value));
                }
                if let (Expr::Name(func), [object, Expr::StringLiteral(attr), _]) =
                    (call.func.as_ref(), &*call.arguments.args)
                    && func.id.as_str() == "setattr"
                    && !matches!(object, Expr::Name(name) if name.id.as_str() == "self")
                    && let Some(attr) = literal_text(&attr.value)
                {
                    self.attributes_set_outside.push(Name::new(attr));
                }
                if let Some(id) = self.model.flow.function
                    && !self.model.functions[id as usize].step_work
                    && self.is_step_call(call)
                {
                    self.model.functions[id as usize].step_work = true;
                }
            }
            Expr::Attribute(attribute) if attribute.ctx == ast::ExprContext::Load => {
                if on_self(attribute) {
                    self.analyse_setters(attribute.attr.as_str());
                }
                visitor::walk_expr(self, expr);
                if attribute.range != self.called {
                    self.note_property_read(attribute);
                }
            }
            Expr::Yield(_) | Expr::YieldFrom(_) => {
                self.yields = true;
                visitor::walk_expr(self, expr);
            }
            _ => visitor::walk_expr(self, expr),
        }
        let reported = self.findings.diagnostics.len();
        self.run_rules(|context| rules::dispatch::check_expr(context, expr));
        self.start_at_the_method(expr, reported);
    }
}

impl<'a> Checker<'a> {
    fn visit_comprehension(&mut self, generators: &'a [ast::Comprehension], body: impl FnOnce(&mut Self)) {
        let scope = self.model.push_scope(ScopeKind::Comprehension, self.model.flow.scope);
        let saved = std::mem::replace(&mut self.model.flow.scope, scope);
        for generator in generators {
            self.visit_expr(&generator.iter);
            self.bind_loop_target(&generator.target, &generator.iter);
            for condition in &generator.ifs {
                self.visit_expr(condition);
            }
        }
        body(self);
        self.model.flow.scope = saved;
        self.model.invalidate_kinds();
    }
}

/// What a decorator calls: `f` of `@f` and of `@f(...)`.
fn decorator_callee(decorator: &ast::Decorator) -> &Expr {
    match &decorator.expression {
        Expr::Call(call) => &call.func,
        expression => expression,
    }
}
