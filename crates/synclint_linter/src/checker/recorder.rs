//! The file's summary for the project pass, recorded as the walk goes: call sites with their
//! context and arguments, construction and property edges, what classes' attributes hold and
//! are called with, the findings on values made from parameters; [`Checker::finish`] turns it,
//! with the model's tables, into the [`FileSummary`] the project reads.

use std::cell::RefCell;

use ruff_python_ast::name::Name;
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::{Ranged, TextSize};
use rustc_hash::FxHashMap;

use super::calls::describe_arguments;
use super::{CheckResult, Checker};
use crate::diagnostic::Diagnostic;
use crate::registry::Rule;
use crate::rules;
use crate::semantic::{
    Argument, ArgumentSlot, Asked, Binding, BindingSource, CallArguments, CallArity, CallSite, Callee, ClassId,
    ClassInfo, ClassRef, ClassSummary, DeadWhere, EntryAsked, FileSummary, FunctionDetails, FunctionId, FunctionInfo,
    FunctionSummary, Given, GivenAsked, HotContext, ImportedAttribute, ImportedCall, Kind, MethodsCalledOn, ModuleKind,
    ParameterSync, PassedTo, ProjectKind, Question, Questions, Returned, SemanticModel, Signature, slot_bit,
};
use crate::syntax::{joined, on_self, returned_names};

/// The parts of the file's summary the walk records as it goes (the rest is read off the
/// model's tables when the file is done).
#[derive(Default)]
pub(super) struct SummaryRecorder {
    /// Qualified names of the project names the file calls.
    project_imports: Vec<ImportedCall>,
    /// Attributes of other files' classes' instances the file's functions read.
    attributes_asked: Vec<ImportedAttribute>,
    /// Qualified names of project functions in other files whose step work decides whether a
    /// loop of this file is a step loop.
    step_work_asked: Vec<Box<str>>,
    /// What tests of `self.<attr>` asked of the parameters of `__init__`s (by function), for
    /// their summaries: the constructions decide them.
    constructions_asked: RefCell<Vec<ConstructionAsked>>,
    /// The dict entries functions' tests read (see [`EntryAsked`]), in the order first read.
    entries_asked: RefCell<Vec<(FunctionId, EntryAsked)>>,
    /// Attributes the file sets on objects other than `self` (`model.roi_heads.mask_head = m`,
    /// `setattr(vq, "remap", r)`): parts attached from outside the class.
    attributes_set_outside: Vec<Name>,
    /// Findings on values made from parameters, for [`FunctionSummary::syncs_on`].
    parameter_syncs: Vec<ParameterSyncFound>,
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

/// What tests of `self.<attr>` asked of one `__init__`'s parameters.
struct ConstructionAsked {
    init: FunctionId,
    given: GivenAsked,
    /// The attributes those parameters are stored in, where an arm needs them absent (see
    /// [`FunctionSummary::stored_absent`]).
    stored_absent: Vec<(u16, Box<str>)>,
}

impl<'a> Checker<'a> {
    /// The findings from `reported` on, in the lines of function `id` that run whenever it does
    /// (no loop, no guard), on values made from its parameters: its callers' arguments go
    /// through them.
    pub(super) fn note_parameter_syncs(&mut self, id: FunctionId, reported: usize) {
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
                self.recorder.parameter_syncs.push(ParameterSyncFound {
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

    pub(super) fn finish(mut self) -> CheckResult {
        rules::dispatch::end_of_file(self.options.rules, &mut self.findings);
        let mut model = self.model;
        for asked in self.recorder.constructions_asked.into_inner() {
            let function = &mut model.functions[asked.init as usize];
            function.demand.given = function.demand.given.union(asked.given);
            function.stored_absent = asked.stored_absent.into_boxed_slice();
        }
        let mut entries: Vec<Vec<EntryAsked>> = vec![Vec::new(); model.functions.len()];
        for (function, entry) in self.recorder.entries_asked.into_inner() {
            entries[function as usize].push(entry);
        }
        let mut syncs_on: Vec<Vec<ParameterSync>> = vec![Vec::new(); model.functions.len()];
        // The first finding of each rule ending at each offset, and the first deeper sync of
        // each: looked up once per parameter sync, of which a file may have thousands.
        let mut reported: FxHashMap<(Rule, TextSize), &Diagnostic> = FxHashMap::default();
        let mut deeper: FxHashMap<(Rule, TextSize), &Box<str>> = FxHashMap::default();
        if !self.recorder.parameter_syncs.is_empty() {
            for diagnostic in &self.findings.diagnostics {
                reported
                    .entry((diagnostic.rule, diagnostic.range.end()))
                    .or_insert(diagnostic);
            }
            for (rule, end, sync) in &self.findings.deeper_syncs {
                deeper.entry((*rule, *end)).or_insert(sync);
            }
        }
        for found in &self.recorder.parameter_syncs {
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
        let by_qualname = FunctionsByQualname::of(&model.functions);
        let returns_functions: Vec<Box<[FunctionId]>> =
            model.functions.iter().map(|f| by_qualname.returned_by(f)).collect();
        // A new list of exactly the summaries' size: collected in place, it would keep the
        // larger `FunctionInfo` list's memory until the project-wide pass.
        let functions: Vec<FunctionSummary> = model
            .functions
            .iter_mut()
            .zip(returns)
            .zip(syncs_on)
            .zip(entries)
            .zip(returns_functions)
            .map(
                |((((f, returns), syncs_on), entries), returns_functions)| FunctionSummary {
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
                        returns_functions,
                    }
                    .boxed(),
                },
            )
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
        let mut attributes_asked = std::mem::take(&mut self.recorder.attributes_asked);
        attributes_asked.sort_unstable_by(|a, b| (&a.class, &a.attr, a.caller).cmp(&(&b.class, &b.attr, b.caller)));
        let mut imports = std::mem::take(&mut self.recorder.project_imports);
        imports.sort_unstable_by(|a, b| (&a.name, a.caller).cmp(&(&b.name, b.caller)));
        let mut results_seen: Vec<(u32, ProjectKind)> = model
            .results_seen
            .take()
            .into_iter()
            .map(|(site, kind)| (site, model.to_project(kind)))
            .collect();
        results_seen.sort_unstable_by_key(|(site, _)| *site);
        let mut step_work_asked = std::mem::take(&mut self.recorder.step_work_asked);
        step_work_asked.sort_unstable();
        step_work_asked.dedup();
        let mut attributes_set_outside: Vec<Box<str>> = self
            .recorder
            .attributes_set_outside
            .iter()
            .map(|name| Box::from(name.as_str()))
            .collect();
        attributes_set_outside.sort_unstable();
        attributes_set_outside.dedup();

        CheckResult {
            diagnostics: self.findings.diagnostics,
            summary: FileSummary {
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

    /// Resolves what a call calls (analysing a local function first if needed, with the kinds
    /// this call passes, so its return kind is known), and records the call site for the
    /// project-wide call graph.
    pub(super) fn note_call(&mut self, call: &ast::ExprCall) {
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
            // `metric(preds, labels)` of `metric=accuracy`: what callers pass, or the default.
            Some(callee @ Callee::Parameter { function, slot }) => {
                let mut callees = vec![callee];
                callees.extend(self.default_callees(function, slot));
                callees
            }
            Some(callee) => vec![callee],
            None => match self.stored_method_callees(call) {
                // A method call (`x.mean()`, most calls) holds nothing: the project's methods
                // are resolved through the receiver above.
                stored if stored.is_empty() && !call.func.is_attribute_expr() => self.held_callees(&call.func),
                stored => stored,
            },
        };
        let calls_project = !callees.is_empty();
        if calls_project {
            self.record_call_sites(call, callees, context);
        }
        self.record_passed_functions(call, context, calls_project);
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
            Callee::Local(_) | Callee::Property { .. } | Callee::Parameter { .. } | Callee::Returned { .. } => false,
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

    /// Finds, for each class of the file, the functions that assign attributes of an instance
    /// of it they made (`positions = Positions()` or, in a class method, `cls(...)`; then
    /// `positions.table = t`), for [`Checker::analyse_setters`]: the instance's attribute
    /// holds what they store as well as what the class's own methods assign.
    pub(super) fn note_instance_setters(&mut self) {
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

    /// Project functions passed to a call (`multi_apply(self._targets_single, xs)`,
    /// `partial(f, x)`, `map(f, xs)`, `checkpoint(self._forward, x)`, `sorted(xs, key=f)`), and
    /// this function's own parameters passed on where nothing says what they hold (`fit(model,
    /// callback)`): the callee calls them, so they run where the call runs (as PyCG assumes of
    /// a function passed on). Each site says which argument it is, so that where the callee is
    /// a project function that calls that parameter, the project pass makes the call its own.
    /// What they are called with comes from the callee: no arguments are recorded. A parameter
    /// is recorded only where the call may run it: a project function's, or a builtin that
    /// calls what it is given (most calls pass parameters to torch ops, which call none).
    fn record_passed_functions(&mut self, call: &ast::ExprCall, context: HotContext, calls_project: bool) {
        // `functools.wraps(fn)` copies the function's name and docstring; it calls nothing.
        if matches!(
            self.model.qualified_name(&call.func).as_deref(),
            Some("functools.wraps" | "functools.update_wrapper")
        ) {
            return;
        }
        // Past a `*args`, no argument's position is known.
        let positional = call
            .arguments
            .args
            .iter()
            .take_while(|argument| !argument.is_starred_expr());
        let positional = positional.enumerate().map(|(position, argument)| {
            let position = u16::try_from(position).unwrap_or(u16::MAX);
            (ArgumentSlot::Position(position), argument)
        });
        let keywords = call.arguments.keywords.iter().filter_map(|keyword| {
            let name = keyword.arg.as_ref()?;
            Some((ArgumentSlot::Keyword(name.as_str().into()), &keyword.value))
        });
        for (slot, argument) in positional.chain(keywords) {
            let Some(callee) = self.referenced_function(argument).or_else(|| {
                (calls_project || self.calls_what_it_is_given(call))
                    .then(|| self.passed_parameter(argument))
                    .flatten()
            }) else {
                continue;
            };
            if let Some((id, _)) = self.local_target(&callee) {
                self.ensure_analyzed(id);
            }
            let passed = PassedTo {
                call: call.start().to_u32(),
                slot,
            };
            self.push_handed_site(callee, context, argument.start(), passed);
        }
    }

    /// A site handing the callable `callee` (at `at`) to another call, as `passed` says.
    fn push_handed_site(&mut self, callee: Callee, context: HotContext, at: TextSize, passed: PassedTo) {
        self.model.call_sites.push(CallSite {
            callee,
            context,
            caller: self.model.flow.function,
            line: self.line(at),
            at: at.to_u32(),
            arguments: None,
            result_asked: Questions::default(),
            arity: CallArity::ANY,
            passed_to: Some(Box::new(passed)),
        });
    }

    /// A builtin or standard-library function that calls the callables it is given: `map`,
    /// `filter`, `sorted`/`min`/`max` (their `key=`), `functools.reduce` and `functools.partial`
    /// (whose result is called).
    fn calls_what_it_is_given(&self, call: &ast::ExprCall) -> bool {
        match call.func.as_ref() {
            Expr::Name(name) if matches!(name.id.as_str(), "map" | "filter" | "sorted" | "min" | "max") => {
                self.model.is_builtin(name.id.as_str())
            }
            func => matches!(
                self.model.qualified_name(func).as_deref(),
                Some("functools.reduce" | "functools.partial")
            ),
        }
    }

    /// `@timed def f(...)`: the decorator (a project function named, not a call) is called with
    /// `f` where `f` is defined, and what it does with `f` (calls it in a wrapper, passes it
    /// on) is what a parameter holding `f` does (see `project::passed`). A decorator that is
    /// itself a call (`@retry(3)`) returns what is applied: that call is an ordinary one.
    pub(super) fn record_decorations(&mut self, def: &ast::StmtFunctionDef, id: FunctionId) {
        for decorator in &def.decorator_list {
            let expression = &decorator.expression;
            let Some(callee) = self.referenced_function(expression) else {
                continue;
            };
            let context = self.model.context();
            let at = expression.start();
            let line = self.line(at);
            self.push_call_site(callee, context, line, at, None, CallArity::ONE);
            let passed = PassedTo {
                call: at.to_u32(),
                slot: ArgumentSlot::Decorated,
            };
            self.push_handed_site(Callee::Local(id), context, at, passed);
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
            self.model.ask_given_guards();
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
            passed_to: None,
        });
    }

    /// `self.size` or `cache.size`, where `size` is a `@property` of the instance's class, runs
    /// the property where the read runs: a call-graph edge, as a call is (torchtune's
    /// `KVCache.size` reads a CUDA scalar with `.item()`). A class of this file is told here;
    /// another file's, by the project pass.
    pub(super) fn note_property_read(&mut self, attribute: &'a ast::ExprAttribute) {
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
    pub(super) fn note_context_manager(&mut self, manager: &Expr) {
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

impl SummaryRecorder {
    /// Where `entry` stands among the dict entries the tests of function `id` read, in the
    /// order first read (a new entry is added last).
    pub(super) fn entry_index(&self, id: FunctionId, entry: EntryAsked) -> usize {
        let mut asked = self.entries_asked.borrow_mut();
        let of_function = asked.iter().filter(|(function, _)| *function == id);
        match of_function.clone().position(|(_, known)| *known == entry) {
            Some(index) => index,
            None => {
                let index = of_function.count();
                asked.push((id, entry));
                index
            }
        }
    }

    /// A test of `self.<attr>` that dies where every construction gives parameter `slot` of
    /// `init` (which stores it in `attr`) `dies_if`.
    pub(super) fn note_construction_asked(&self, init: FunctionId, slot: usize, dies_if: Given, attr: &str) {
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
    }

    /// What function `id`'s reads asked of other files' functions and classes.
    pub(super) fn note_imports_asked(&mut self, id: FunctionId, demand: &Asked) {
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
    }

    /// Project functions of other files whose step work decided whether a loop is a step loop.
    pub(super) fn note_step_work_asked<'n>(&mut self, names: impl Iterator<Item = &'n str>) {
        self.step_work_asked.extend(names.map(Box::from));
    }

    /// An attribute set on an object other than `self`.
    pub(super) fn note_set_outside(&mut self, attr: Name) {
        self.attributes_set_outside.push(attr);
    }
}

/// The file's functions by qualified name, the first of each name: a file of many thousand
/// functions asks for each function's returns, so a scan of the list per name would be
/// quadratic.
struct FunctionsByQualname<'a> {
    functions: &'a [FunctionInfo<'a>],
    first: FxHashMap<&'a str, FunctionId>,
}

impl<'a> FunctionsByQualname<'a> {
    fn of(functions: &'a [FunctionInfo<'a>]) -> Self {
        let mut first = FxHashMap::default();
        for (position, function) in functions.iter().enumerate() {
            if let Ok(id) = FunctionId::try_from(position) {
                first.entry(&*function.qualname).or_insert(id);
            }
        }
        Self { functions, first }
    }

    /// The functions of the file `function` always returns by name: ones it defines (`return
    /// wrapper`), or module-level ones. None where any `return` gives something else (a call, a
    /// parameter: a decorator returning the function it was given).
    fn returned_by(&self, function: &FunctionInfo) -> Box<[FunctionId]> {
        let Some(names) = returned_names(&function.def.body) else {
            return Box::default();
        };
        let returned: Option<Vec<FunctionId>> = names
            .into_iter()
            .map(|name| {
                let nested = joined(&[&function.qualname, ".<locals>.", name.as_str()]);
                self.first.get(&*nested).copied().or_else(|| {
                    let id = *self.first.get(name.as_str())?;
                    self.functions[id as usize].class.is_none().then_some(id)
                })
            })
            .collect();
        let mut returned = returned.unwrap_or_default();
        returned.sort_unstable();
        returned.dedup();
        returned.into_boxed_slice()
    }
}
