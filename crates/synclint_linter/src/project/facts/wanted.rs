//! Which values passed on are worth their facts ([`Wanted`]): the parameters, project calls and
//! calls through objects that an argument or a `return` value is made from, where what receives
//! it asks about it, solved with a worklist over the call graph ([`Reach`]).
//!
//! It imports only from the project's passes, none of its sibling steps.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::project::hotness::{HotFunctions, runs_hot};
use crate::project::modules::Resolved;
use crate::project::{Project, ProjectFunction};
use crate::semantic::{Dependence, Questions};

/// Values passed on whose facts a question reaches (see [`Project::wanted`]).
#[derive(Default)]
pub(super) struct Wanted<'m> {
    /// Parameters of a function that an argument or `return` value worth its facts is made from.
    pub(super) passed_on: FxHashSet<(ProjectFunction, usize)>,
    /// The project calls such values are made from, by file (names as spelled).
    pub(super) calls: FxHashMap<usize, FxHashSet<&'m str>>,
    /// The calls through objects such values are made from: (file, site index).
    pub(super) sites: FxHashSet<(usize, usize)>,
}

/// What a question newly reached, still to follow.
enum Reached {
    Parameter(ProjectFunction, usize),
    Return(ProjectFunction),
}

/// The worklist of [`Project::wanted`].
struct Reach<'p, 'm> {
    project: &'p Project<'m>,
    wanted: Wanted<'m>,
    /// Parameters a question reaches (besides those asked about where they are).
    asked: FxHashSet<(ProjectFunction, usize)>,
    /// Functions whose `return` value a question reaches.
    returns: FxHashSet<ProjectFunction>,
    /// What a file's names call, resolved once.
    resolved: FxHashMap<(usize, &'m str), Option<ProjectFunction>>,
    pending: Vec<Reached>,
}

impl<'m> Reach<'_, 'm> {
    fn ask(&mut self, function: ProjectFunction, slot: usize) {
        if self.asked.insert((function, slot)) {
            self.pending.push(Reached::Parameter(function, slot));
        }
    }

    fn returned(&mut self, function: ProjectFunction) {
        if self.returns.insert(function) {
            self.pending.push(Reached::Return(function));
        }
    }

    /// A value of `function` a question reaches is made from `depends`.
    fn made_from(&mut self, function: ProjectFunction, depends: &'m Dependence) {
        for slot in depends.slots() {
            self.wanted.passed_on.insert((function, slot));
            self.ask(function, slot);
        }
        for call in &depends.calls {
            self.wanted.calls.entry(function.0).or_default().insert(call);
            self.call(function.0, call);
        }
        for &site in &depends.sites {
            self.wanted.sites.insert((function.0, site as usize));
            self.site(function.0, site as usize);
        }
    }

    /// The result of `spelled` called in `file` is asked about.
    fn call(&mut self, file: usize, spelled: &'m str) {
        let project = self.project;
        let callee =
            *self
                .resolved
                .entry((file, spelled))
                .or_insert_with(|| match project.resolve_spelled(file, spelled)? {
                    Resolved::Function(function) => Some(function),
                    Resolved::Class(_) => None,
                });
        if let Some(callee) = callee {
            self.returned(callee);
        }
    }

    /// The result of call site `index` of `file` is asked about.
    fn site(&mut self, file: usize, index: usize) {
        for &target in &self.project.targets[file][index].functions {
            self.returned(target);
        }
    }
}

impl<'m> Project<'m> {
    /// Which values passed on are worth their facts: the parameters and project calls an
    /// argument or a `return` value is made from, where what receives it asks about it (a
    /// question asked of the callee's parameter, or of the value it passes on in turn), solved
    /// over the call graph with a worklist (each parameter and function enters it once).
    pub(super) fn wanted(
        &self,
        hot: &HotFunctions,
        forwards: &[(ProjectFunction, usize, ProjectFunction, usize)],
        passed_on: &[(ProjectFunction, &'m Dependence, ProjectFunction, usize)],
    ) -> Wanted<'m> {
        let modules = self.modules;
        let asks = |(file, id): ProjectFunction, slot: usize| {
            modules[file].summary.functions[id as usize].details().demand.asks(slot)
        };
        // Edges by what they lead to: an argument made from the caller's values, a parameter
        // passed on unchanged, a function's `return` value.
        let mut made_into: FxHashMap<(ProjectFunction, usize), Vec<(ProjectFunction, &'m Dependence)>> =
            FxHashMap::default();
        let mut forwarded_into: FxHashMap<(ProjectFunction, usize), Vec<(ProjectFunction, usize)>> =
            FxHashMap::default();
        let mut reach = Reach {
            project: self,
            wanted: Wanted::default(),
            asked: FxHashSet::default(),
            returns: FxHashSet::default(),
            resolved: FxHashMap::default(),
            pending: Vec::new(),
        };
        for &(caller, depends, target, slot) in passed_on {
            if asks(target, slot) {
                reach.made_from(caller, depends);
            } else {
                made_into.entry((target, slot)).or_default().push((caller, depends));
            }
        }
        for &(caller, from, target, to) in forwards {
            if asks(target, to) {
                reach.ask(caller, from);
            } else {
                forwarded_into.entry((target, to)).or_default().push((caller, from));
            }
        }
        for (file, module) in modules.iter().enumerate() {
            for call in module
                .summary
                .imports
                .iter()
                .filter(|call| runs_hot(modules, hot, file, call.caller))
            {
                reach.call(file, &call.name);
            }
            for (index, site) in module.summary.call_sites.iter().enumerate() {
                if site.result_asked != Questions::default()
                    && site.caller.is_some_and(|caller| runs_hot(modules, hot, file, caller))
                {
                    reach.site(file, index);
                }
            }
        }
        while let Some(event) = reach.pending.pop() {
            match event {
                Reached::Parameter(function, slot) => {
                    for (caller, depends) in made_into.remove(&(function, slot)).unwrap_or_default() {
                        reach.made_from(caller, depends);
                    }
                    for (caller, from) in forwarded_into.remove(&(function, slot)).unwrap_or_default() {
                        reach.ask(caller, from);
                    }
                }
                Reached::Return((file, id)) => {
                    if let Some(depends) = modules[file].summary.functions[id as usize]
                        .details()
                        .return_depends
                        .as_deref()
                    {
                        reach.made_from((file, id), depends);
                    }
                }
            }
        }
        reach.wanted
    }
}
