//! Functions and classes: defining them where the walk meets them, binding a function's
//! parameters (to what the project says its callers pass, or to what a call asking first
//! passes), and analysing a body once, in its own frame, in order or on demand.

use ruff_python_ast::name::Name;
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;
use rustc_hash::FxHashMap;

use super::{Checker, ON_DEMAND_LEVELS, PassedArguments};
use crate::semantic::facts::{self, ReturnsByType, TypeSet};
use crate::semantic::names::{contains_ignoring_ascii_case, last_name};
use crate::semantic::torch_api as api;
use crate::semantic::{
    Analysis, Binding, BindingSource, ClassId, ClassInfo, Demand, Device, FunctionId, FunctionInfo, IntrinsicHot, Kind,
    ParamDefault, ParamSummary, Receiver, ScopeKind, StoredCallable, TensorFacts, is_false_literal,
};
use crate::syntax::{decorator_callee, is_stub, joined, on_self, registered_modules};

impl<'a> Checker<'a> {
    pub(super) fn ensure_analyzed(&mut self, id: u32) {
        self.ensure_analyzed_with(id, None);
    }

    /// Analyses a function if it was not yet, its parameters bound to what `passed` gives them
    /// when a call asks first (the project's facts, where there are any, come first). A call
    /// asks inside its own visit, so a chain of functions each calling the next would nest
    /// as many analyses on the stack: past [`ON_DEMAND_LEVELS`] the function is left for the
    /// file's own pass over the functions nobody analysed (the call learns nothing of what it
    /// returns), which keeps the stack within what a tree of [`MAX_NESTING`] levels needs.
    pub(super) fn ensure_analyzed_with(&mut self, id: u32, passed: Option<PassedArguments>) {
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
        let caller = self.model.enter_function(id, parent, class);
        let saved_frame = std::mem::take(&mut self.frame);

        self.bind_parameters(id, def, class.is_some(), intrinsic, passed);
        self.model.functions[id as usize].runs_whole_loops = self.runs_epochs(&def.body, false)
            || (intrinsic.is_none() && self.decodes(def.name.id.as_str(), &def.body));
        // The scan resolved calls before the body's own imports ran.
        self.model.forget_callees();
        self.visit_body(&def.body);
        let mut frame = std::mem::replace(&mut self.frame, saved_frame);

        // A stub's implicit `None` is no answer: what an override returns is (the project's,
        // asked where the call's result matters).
        let returns = if frame.yields() || def.is_async || is_stub(def) {
            Kind::Unknown
        } else {
            frame.returns().unwrap_or(Kind::NoneValue)
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
        let demand = self.model.leave_function(caller);
        self.recorder.note_imports_asked(id, &demand);
        let returns_tuple = frame.take_returned_tuple();
        let returns_by_type = match frame.take_returns_by_arm() {
            _ if frame.yields() || def.is_async => None,
            arms => returns_by_type(&arms, &self.model.functions[id as usize].params),
        };
        let function = &mut self.model.functions[id as usize];
        function.returns = Some(returns);
        function.returns_tuple = returns_tuple;
        function.returns_by_type = returns_by_type.map(Box::new);
        function.demand = demand.parameters;
        for (site, questions) in demand.sites {
            let asked = &mut self.model.call_sites[site as usize].result_asked;
            *asked = asked.union(questions);
        }
        function.return_depends = frame.take_return_depends().map(Box::new);
        function.analysis = Analysis::Done;
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

    pub(super) fn define_function(&mut self, def: &'a ast::StmtFunctionDef) {
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
        self.record_decorations(def, id);
    }

    pub(super) fn define_class(&mut self, class_def: &'a ast::StmtClassDef) {
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

    /// Before `self.<attr>` is read where nothing has assigned it yet (or only `None`, or an
    /// empty placeholder), the methods of the class that assign it are analysed: a step method
    /// defined before the setup method that builds its scaler and optimizer still sees them.
    pub(super) fn analyse_setters(&mut self, attr: &str) {
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

/// A subclass of `torch.autograd.Function`.
pub(super) fn is_autograd_function(class: &ClassInfo) -> bool {
    class.bases.iter().any(|base| {
        matches!(
            base.as_str(),
            "torch.autograd.Function" | "torch.autograd.function.Function"
        )
    })
}

/// What a function returns by the type of one parameter, from its `return`s and the
/// `isinstance` test of a parameter around each: where tests of one parameter pick some of them
/// (a `return` outside any test is taken for any type).
pub(super) fn returns_by_type(
    returns: &[(Option<(u16, TypeSet)>, Kind)],
    params: &[ParamSummary],
) -> Option<ReturnsByType> {
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

/// The parameter of `__init__` (its slot after `self`, and its default) that a statement of its
/// own body assigns to `self.<attr>` as it is (`self.use_conv = use_conv`).
pub(super) fn init_parameter_assigned(init: &ast::StmtFunctionDef, attr: &str) -> Option<(usize, ParamDefault)> {
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

fn param_default(default: Option<&Expr>) -> ParamDefault {
    match default {
        None => ParamDefault::Required,
        Some(Expr::NoneLiteral(_)) => ParamDefault::None,
        Some(literal) if is_false_literal(literal) => ParamDefault::Falsy,
        Some(_) => ParamDefault::Other,
    }
}
