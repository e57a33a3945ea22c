//! Call-target resolution: the project functions each call site may run ([`Targets`]), from
//! what the file says it calls (a local function, an imported name, a method of a class or of a
//! registry's instances), narrowed to those the call runs as named and those that can take its
//! arguments.
//!
//! The third pass: it reads the call sites, the module index and the class index, and its
//! targets are kept between rounds for files not checked again. It imports from its parent,
//! [`super::modules`] and [`super::classes`].

use rustc_hash::FxHashMap;

use super::modules::{ModuleInfo, Resolved, registry_named};
use super::{Project, ProjectClass, ProjectFunction};
use crate::semantic::{CallSite, Callee, ClassRef, Receiver};

/// The functions a call site may run.
#[derive(Clone, Default)]
pub struct Targets {
    pub(super) functions: Vec<ProjectFunction>,
    /// A method called through its class (`Head.loss(obj, x)`): the first argument is the
    /// instance.
    pub(super) unbound: bool,
    /// Reached through an instance a registry built (`MODELS.build(cfg)`), which may be any of
    /// its classes: the call runs each (hot, doing step work), but what it passes tells none of
    /// them (`self.detector.loss(x, samples)` is a detector's `loss`, not a box head's).
    pub(super) registry: bool,
    /// Decorators' wrappers the call runs around its functions (see [`super::passed`]): they
    /// take whatever the decorated function does, so the call tells them nothing of its
    /// arguments; they are hot where it is, and edges of the graph.
    /// Boxed: almost no call has any, and every call site has targets.
    pub(super) wrappers: Option<Box<[ProjectFunction]>>,
}

/// The classes a class reference names.
#[derive(Default)]
struct ClassesOf {
    classes: Vec<ProjectClass>,
    /// Some are a registry's (see [`Targets::registry`]).
    registry: bool,
}

impl<'m> Project<'m> {
    /// The targets of each call site of `module` (file `file`).
    pub(super) fn file_targets(&self, file: usize, module: &ModuleInfo) -> Vec<Targets> {
        // A file calls the same names and methods again and again: each resolved once.
        let mut resolved: FxHashMap<&Callee, Targets> = FxHashMap::default();
        module
            .summary
            .call_sites
            .iter()
            .map(|site| match &site.callee {
                Callee::Local(id) => Targets {
                    functions: vec![(file, *id)],
                    ..Targets::default()
                },
                callee => {
                    let mut targets = resolved
                        .entry(callee)
                        .or_insert_with(|| self.resolve_callee(file, callee))
                        .clone();
                    self.drop_overrides_not_run_from(file, site, &mut targets);
                    self.drop_those_not_taking(site, &mut targets);
                    targets
                }
            })
            .collect()
    }

    /// The project functions a call may run.
    fn resolve_callee(&self, file: usize, callee: &Callee) -> Targets {
        let bound = |functions| Targets {
            functions,
            ..Targets::default()
        };
        match callee {
            Callee::Local(id) => bound(vec![(file, *id)]),
            Callee::Imported { module, name } => match self.resolve_name(file, module, name, 0) {
                Some(Resolved::Function(function)) => bound(vec![function]),
                Some(Resolved::Class(class)) => bound(self.methods(class, "__init__")),
                None => match self.class_named(file, module) {
                    // `Head.loss(obj, x)` where `Head` is imported.
                    Some(class) => Targets {
                        functions: self.methods(class, name),
                        unbound: true,
                        ..Targets::default()
                    },
                    None => Targets::default(),
                },
            },
            Callee::Super { class, method } => bound(
                self.classes.bases[file][*class as usize]
                    .iter()
                    .find_map(|&base| self.lookup_method(base, method))
                    .into_iter()
                    .collect(),
            ),
            Callee::Method { class, method, bound } => {
                let ClassesOf { classes, registry } = self.classes_of(file, class);
                Targets {
                    functions: self.methods_of_all(&classes, method),
                    unbound: !bound,
                    registry,
                    wrappers: None,
                }
            }
            // What callers pass there, what a call returns: see [`super::passed`].
            Callee::Parameter { .. } | Callee::Returned { .. } => Targets::default(),
            Callee::Property { class, name } => {
                let ClassesOf { classes, registry } = self.classes_of(file, class);
                let mut functions = self.methods_of_all(&classes, name);
                functions.retain(|&(file, id)| self.modules[file].summary.functions[id as usize].property);
                Targets {
                    functions,
                    registry,
                    ..Targets::default()
                }
            }
        }
    }

    /// Of the functions `site` may run, those it runs on an instance of the class its receiver
    /// names (the method as that class resolves it), not a subclass's override reached by
    /// class-hierarchy analysis. An override runs, and reports, its own lines; its syncs are not
    /// the call's (`self.embed_tokens(ids)` of a `Gemma3TextScaledWordEmbedding` does not run
    /// the masked write of a subclass in another model). The method is looked up once per site,
    /// not once per target: a base class's `forward` may have hundreds of overrides.
    pub(super) fn run_as_named<'t>(
        &self,
        file: usize,
        site: &CallSite,
        targets: &'t Targets,
    ) -> impl Iterator<Item = ProjectFunction> + 't {
        let named: Option<Vec<ProjectFunction>> = match &site.callee {
            Callee::Method { class, method, .. } => {
                let classes = self.classes_of(file, class).classes;
                (!classes.is_empty()).then(|| {
                    classes
                        .into_iter()
                        .filter_map(|class| self.lookup_method(class, self.called_method(class, method)?))
                        .collect()
                })
            }
            _ => None,
        };
        targets
            .functions
            .iter()
            .copied()
            .filter(move |target| named.as_ref().is_none_or(|named| named.contains(target)))
    }

    /// Of several functions a call may run (a registry's classes, overrides), those that cannot
    /// take its arguments are not what it runs (`self.bbox_head.loss(x, samples)` does not run
    /// a head's `loss` that requires seven); where none can, a decorator may have changed the
    /// signature, and all stay.
    fn drop_those_not_taking(&self, site: &CallSite, targets: &mut Targets) {
        if targets.functions.len() < 2 {
            return;
        }
        let accepts = |&(file, id): &ProjectFunction| {
            let function = &self.modules[file].summary.functions[id as usize];
            let skip = function.receiver.leading_arguments(targets.unbound);
            function.signature.accepts(site.arity, skip)
        };
        if targets.functions.iter().any(accepts) {
            targets.functions.retain(accepts);
        }
    }

    /// `self.m()` in method `f` of class `C`: on an instance of a subclass that overrides `f`
    /// (and whose `f` does not call `super().f`), `C.f` does not run, so that subclass's `m` is
    /// not reached from here (class-hierarchy analysis, narrowed by the caller).
    fn drop_overrides_not_run_from(&self, file: usize, site: &CallSite, targets: &mut Targets) {
        let Callee::Method {
            class: ClassRef::Local(class),
            bound: true,
            ..
        } = &site.callee
        else {
            return;
        };
        let Some(caller) = site.caller else { return };
        let functions = &self.modules[file].summary.functions;
        let caller_function = &functions[caller as usize];
        if caller_function.class != Some(*class)
            || caller_function.receiver != Receiver::Instance
            || targets.functions.len() < 2
        {
            return;
        }
        let caller_name = caller_function.name();
        let subclasses = self.classes.subclasses_of((file, *class));
        targets.functions.retain(|&(target_file, target)| {
            // Only a subclass's override: the class's own method, or a base's it inherits, is
            // what runs on an instance of the class itself.
            let Some(target_class) = self.modules[target_file].summary.functions[target as usize].class else {
                return true;
            };
            if !subclasses.contains(&(target_file, target_class)) {
                return true;
            }
            match self.lookup_method((target_file, target_class), caller_name) {
                // The subclass runs this very `f`, or its own `f` hands over to it.
                Some(runs) if runs == (file, caller) => true,
                Some((override_file, override_id)) => {
                    self.modules[override_file].summary.call_sites.iter().any(|call| {
                        call.caller == Some(override_id)
                            && matches!(&call.callee, Callee::Super { method, .. } if **method == *caller_name)
                    })
                }
                None => true,
            }
        });
    }

    /// The classes a file's reference names: one, or each of a union (`A|.beam.B`, an instance
    /// of either).
    fn classes_of(&self, file: usize, class: &ClassRef) -> ClassesOf {
        let mut classes = ClassesOf::default();
        match class {
            ClassRef::Local(id) => classes.classes.push((file, *id)),
            ClassRef::Imported(spelled) => {
                for spelled in spelled.split('|') {
                    match self.class_named(file, spelled) {
                        Some(class) => classes.classes.push(class),
                        None => {
                            let registered = self.registered_in(file, spelled);
                            classes.registry |= !registered.is_empty();
                            classes.classes.extend_from_slice(registered);
                        }
                    }
                }
            }
        }
        classes
    }

    /// The classes registered in the registry `spelled` names in `file` (an instance it builds
    /// is one of them); none where it names no registry of the project.
    fn registered_in(&self, file: usize, spelled: &str) -> &[ProjectClass] {
        registry_named(self.modules, &self.index, file, spelled)
            .and_then(|(owner, name)| self.classes.registered[owner].get(name))
            .map_or(&[], Vec::as_slice)
    }

    /// What `class.method(...)` may run: the method as the class resolves it (its own, else the
    /// nearest base's), and every override in its subclasses. Calling an instance runs its
    /// `__call__`, which is `forward` for an `nn.Module`.
    fn methods(&self, class: ProjectClass, method: &str) -> Vec<ProjectFunction> {
        let Some(method) = self.called_method(class, method) else {
            return Vec::new();
        };
        let mut found: Vec<ProjectFunction> = self.lookup_method(class, method).into_iter().collect();
        for &sub in self.classes.subclasses_of(class) {
            let summary = self.modules[sub.0].summary;
            if let Some(id) = summary.classes[sub.1 as usize].method(&summary.functions, method) {
                found.push((sub.0, id));
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The method a call of `method` on an instance of `class` runs: calling an instance runs
    /// its `__call__`, which is `forward` for an `nn.Module` (`None` for an instance of another
    /// class without one).
    fn called_method<'a>(&self, class: ProjectClass, method: &'a str) -> Option<&'a str> {
        if method != "__call__" || self.lookup_method(class, "__call__").is_some() {
            Some(method)
        } else {
            self.classes.module_kind(class).map(|_| "forward")
        }
    }

    /// The methods `method` names on instances of any of `classes` (see [`Self::methods`]).
    fn methods_of_all(&self, classes: &[ProjectClass], method: &str) -> Vec<ProjectFunction> {
        let mut functions: Vec<ProjectFunction> =
            classes.iter().flat_map(|&class| self.methods(class, method)).collect();
        // A union's or a registry's classes may share a base's method.
        if classes.len() > 1 {
            functions.sort_unstable();
            functions.dedup();
        }
        functions
    }
}
