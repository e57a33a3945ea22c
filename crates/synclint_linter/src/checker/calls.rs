//! Call resolution: what a call reaches in this file or in the project (a local function, a
//! method through the receiver's class or through the constructions that give it, an import),
//! and the kinds of what it passes.

use ruff_python_ast::name::Name;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

use super::functions::init_parameter_assigned;
use super::{Checker, PassedArguments};
use crate::semantic::{
    Argument, ArgumentDetail, Binding, BindingSource, CallArguments, Callee, ClassId, ClassRef, FunctionId, Given,
    Kind, StoredCallable, is_library,
};
use crate::syntax::{constructions_in, on_self};

impl<'a> Checker<'a> {
    /// The project function an expression names without calling it: a function of this file or
    /// an imported one (`f`, `losses.f`), or a method of this class (`self.m`, not an attribute
    /// its methods assign).
    pub(super) fn referenced_function(&self, expr: &Expr) -> Option<Callee> {
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

    /// The parameter (of this function, or of one enclosing it) that an expression names as it
    /// is, where nothing tells what it holds: it may be a callable, called here (`fn(x)`) or
    /// passed on to a callee that calls it.
    pub(super) fn passed_parameter(&self, argument: &Expr) -> Option<Callee> {
        let Expr::Name(name) = argument else { return None };
        let binding = self.model.lookup(name.id.as_str())?;
        match (&binding.source, binding.kind) {
            (BindingSource::Parameter(slot), Kind::Unknown) => Some(Callee::Parameter {
                function: self.model.binding_function(name.id.as_str())?,
                slot: *slot,
            }),
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

    /// Analyses the functions of this file among `callees` (those not analysed yet), with the
    /// kinds `call` passes, so their return kinds are known; returns those kinds.
    pub(super) fn analyse_local_callees(
        &mut self,
        call: &ast::ExprCall,
        callees: &[Callee],
    ) -> Option<Box<CallArguments>> {
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
    pub(super) fn project_callee(&mut self, call: &ast::ExprCall) -> Option<Callee> {
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
                Some(binding) => match (&binding.source, binding.kind) {
                    // `fn(x)` of a parameter nothing tells the kind of: what callers pass.
                    (BindingSource::Parameter(_), Kind::Unknown) => self.passed_parameter(&call.func),
                    // `fn = get_activation(name); fn(x)`: what that call returns.
                    (BindingSource::Value, Kind::Unknown) => match binding.value {
                        Some(Expr::Call(made)) => self.returned_callee(made),
                        _ => None,
                    },
                    (_, kind) => Some(method(self.model.class_of_ref(kind.class()?), "__call__", true)),
                },
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
            // `get_activation(name)(x)`.
            Expr::Call(made) => self.returned_callee(made),
            _ => None,
        }
    }

    /// A call of what the call `made` returns, where `made` calls a project function (which
    /// may return a function it defines: the project pass tells).
    fn returned_callee(&self, made: &ast::ExprCall) -> Option<Callee> {
        self.referenced_function(&made.func)?;
        Some(Callee::Returned {
            call: made.start().to_u32(),
        })
    }

    /// The functions a call through an attribute holding them runs: `self.loss_method(x)`,
    /// `self.losses[kind](x)`, `self.criterion(x)` (see [`ClassInfo::stored_callables`]).
    pub(super) fn stored_method_callees(&self, call: &ast::ExprCall) -> Vec<Callee> {
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
    pub(super) fn local_target(&self, callee: &Callee) -> Option<(FunctionId, usize)> {
        match callee {
            Callee::Local(id) => Some((*id, 0)),
            Callee::Parameter { .. } | Callee::Returned { .. } => None,
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
}

/// The callee a qualified name of another module is (`pkg.losses.bce`); `None` for a library's.
pub(super) fn imported(qualified: &str) -> Option<Callee> {
    if is_library(qualified) {
        return None;
    }
    let (module, name) = qualified.rsplit_once('.')?;
    Some(Callee::Imported {
        module: module.into(),
        name: name.into(),
    })
}

/// A call's arguments as `argument` describes each (the positional ones up to the first
/// `*args`), and whether it spreads `*args` or `**kwargs`.
pub(super) fn describe_arguments(arguments: &ast::Arguments, argument: impl Fn(&Expr) -> Argument) -> CallArguments {
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
