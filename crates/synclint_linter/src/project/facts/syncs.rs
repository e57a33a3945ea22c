//! The syncs on what a function's parameters are given (its own findings on them, and those of
//! the functions it hands them to), and the calls told of the sync they lead to
//! ([`CalleeSync`]).
//!
//! It imports from [`super`], [`super::given`] and the project's passes.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::ProjectSite;
use super::given::given_at;
use crate::project::hotness::HotFunctions;
use crate::project::{Project, ProjectFunction};
use crate::semantic::facts::CalleeSync;
use crate::semantic::{Argument, CallArguments, DeadWhere, FileFacts, FunctionId, FunctionSummary, HotContext, Kind};

/// A finding of a function on a parameter: (function, index in its `syncs_on`).
type SyncOrigin = (ProjectFunction, usize);

/// A parameter slot of a function, and the finding that syncs on what it is given.
pub(super) type SyncThrough = (u16, SyncOrigin);

/// Whether a call with `arguments` gives `callee` what one of `dead_where` says: the code they
/// were found in does not run for it.
fn skips(arguments: Option<&CallArguments>, callee: &FunctionSummary, skip: usize, dead_where: &[DeadWhere]) -> bool {
    let Some(arguments) = arguments.filter(|_| !dead_where.is_empty()) else {
        return false;
    };
    dead_where.iter().any(|all| {
        all.iter()
            .all(|&(slot, dies_if)| given_at(arguments, callee, skip, usize::from(slot)).kills(dies_if))
    })
}

impl<'m> Project<'m> {
    /// Per function, the syncs on what its parameters are given, by slot: its own findings on
    /// values made from them (`syncs_on`), and those of the functions it passes a parameter to
    /// unchanged from lines that run whenever it does (a fixpoint over the call graph). Each
    /// names the finding that syncs: (function, index in its `syncs_on`).
    pub(super) fn parameter_syncs(&self) -> FxHashMap<ProjectFunction, Vec<SyncThrough>> {
        let modules = self.modules;
        let mut syncs: FxHashMap<ProjectFunction, Vec<SyncThrough>> = FxHashMap::default();
        for (file, module) in modules.iter().enumerate() {
            for (id, function) in module.summary.functions.iter().enumerate() {
                let function_id = (file, id as FunctionId);
                for (index, sync) in function.details().syncs_on.iter().enumerate() {
                    syncs
                        .entry(function_id)
                        .or_default()
                        .push((sync.slot, (function_id, index)));
                }
            }
        }
        if syncs.is_empty() {
            return syncs;
        }
        // The calls that pass a parameter of their function on, by callee: each file's found
        // in parallel (resolving what a call runs as named looks classes up).
        let passing_per_file: Vec<Vec<(ProjectFunction, ProjectSite)>> = modules
            .par_iter()
            .enumerate()
            .map(|(file, module)| {
                let mut passing = Vec::new();
                for (index, site) in module.summary.call_sites.iter().enumerate() {
                    let passes_a_parameter = site
                        .arguments
                        .as_deref()
                        .is_some_and(|arguments| arguments.all().any(|argument| argument.from_parameter().is_some()));
                    let targets = &self.targets[file][index];
                    if passes_a_parameter && matches!(site.context, HotContext::InFunction(_)) && !targets.registry {
                        passing.extend(
                            self.run_as_named(file, site, targets)
                                .map(|target| (target, (file, index))),
                        );
                    }
                }
                passing
            })
            .collect();
        let mut passing: FxHashMap<ProjectFunction, Vec<ProjectSite>> = FxHashMap::default();
        for (target, site) in passing_per_file.into_iter().flatten() {
            passing.entry(target).or_default().push(site);
        }
        let mut pending: Vec<ProjectFunction> = syncs.keys().copied().collect();
        while let Some(callee) = pending.pop() {
            let Some(sites) = passing.get(&callee) else { continue };
            let callee_syncs = syncs[&callee].clone();
            for &(file, index) in sites {
                let site = &modules[file].summary.call_sites[index];
                let HotContext::InFunction(caller) = site.context else {
                    continue;
                };
                let caller = (file, caller);
                for &(slot, origin) in &callee_syncs {
                    let Some(parameter) = self
                        .argument_for(file, index, callee, slot)
                        .and_then(Argument::from_parameter)
                    else {
                        continue;
                    };
                    if origin.0 == callee && self.skips_sync(file, index, origin) {
                        continue;
                    }
                    let known = syncs.entry(caller).or_default();
                    // A few per function: a helper that hands its tensor to many syncs is
                    // reported once per sync kind at its callers anyway.
                    if known.len() < 8 && !known.contains(&(parameter, origin)) {
                        known.push((parameter, origin));
                        pending.push(caller);
                    }
                }
            }
        }
        syncs
    }

    /// Whether call site `index` of `file`, a call of the function that found `sync`, gives
    /// what skips the code it was found in (see [`ParameterSync::dead_where`]).
    fn skips_sync(&self, file: usize, index: usize, ((callee_file, callee), sync): SyncOrigin) -> bool {
        let function = &self.modules[callee_file].summary.functions[callee as usize];
        let skip = function.receiver.leading_arguments(self.targets[file][index].unbound);
        let arguments = self.modules[file].summary.call_sites[index].arguments.as_deref();
        skips(arguments, function, skip, &function.details().syncs_on[sync].dead_where)
    }

    /// Where parameter `slot` of `callee` stands among the positional arguments of call site
    /// `index` of `file` (after the instance, in `Head.loss(obj, x)`).
    fn position_of(&self, file: usize, index: usize, callee: ProjectFunction, slot: u16) -> u16 {
        let function = &self.modules[callee.0].summary.functions[callee.1 as usize];
        slot + function.receiver.leading_arguments(self.targets[file][index].unbound) as u16
    }

    /// What call site `index` of `file` gives parameter `slot` of `callee`, where the file
    /// recorded its arguments.
    fn argument_for(&self, file: usize, index: usize, callee: ProjectFunction, slot: u16) -> Option<&'m Argument> {
        let site = &self.modules[file].summary.call_sites[index];
        let arguments = site.arguments.as_deref()?;
        let function = &self.modules[callee.0].summary.functions[callee.1 as usize];
        let parameter = function.params.get(usize::from(slot))?;
        let position = self.position_of(file, index, callee, slot);
        arguments.for_parameter(Some(usize::from(position)), &parameter.name)
    }

    /// Tells each file the syncs its hot calls pass a value into (see [`Self::parameter_syncs`]):
    /// where the call gives the parameter something that may be a GPU tensor, made there (a
    /// parameter passed on is told to the callers that give it, through the caller's own
    /// summary), the call is reported as the sync it leads to.
    pub(super) fn tell_callee_syncs(
        &self,
        hot: &HotFunctions,
        syncs: &FxHashMap<ProjectFunction, Vec<SyncThrough>>,
        facts: &mut [FileFacts],
    ) {
        if syncs.is_empty() {
            return;
        }
        let modules = self.modules;
        self.tell_each_file(facts, |file, file_facts, module| {
            for (index, site) in module.summary.call_sites.iter().enumerate() {
                if !hot.runs_hot(file, site) {
                    continue;
                }
                let mut told: Vec<CalleeSync> = Vec::new();
                let targets = &self.targets[file][index];
                // A registry's classes report their own lines; the call would name any of them.
                if targets.registry || !targets.functions.iter().any(|target| syncs.contains_key(target)) {
                    continue;
                }
                for target in self.run_as_named(file, site, targets) {
                    let Some(target_syncs) = syncs.get(&target) else {
                        continue;
                    };
                    let function = &modules[target.0].summary.functions[target.1 as usize];
                    for &(slot, ((origin_file, origin), sync)) in target_syncs {
                        let origin_module = &modules[origin_file];
                        let found = &origin_module.summary.functions[origin as usize].details().syncs_on[sync];
                        let Some(parameter) = function.params.get(usize::from(slot)) else {
                            continue;
                        };
                        let argument = self.argument_for(file, index, target, slot);
                        // Left to its default, given a host value, or passed on from the caller's
                        // own parameter (told where the caller is called).
                        let not_given =
                            argument.is_none() && site.arguments.as_deref().is_some_and(|arguments| !arguments.spread);
                        // As the call's file will judge it (`may_be_cuda`): a file told of a call
                        // it would not report is checked again for nothing.
                        let no_gpu_tensor = match argument.map(|argument| argument.kind.kind) {
                            Some(Kind::Tensor(facts)) => !facts.may_be_cuda(),
                            // Recorded without a tensor among the arguments, or told unknown.
                            None | Some(Kind::Unknown) => !found.unknown_counts,
                            Some(_) => true,
                        };
                        let passed_on = argument.is_some_and(|argument| argument.from_parameter().is_some())
                            && matches!(site.context, HotContext::InFunction(_));
                        let skipped = (origin_file, origin) == target
                            && self.skips_sync(file, index, ((origin_file, origin), sync));
                        // A helper of the call's own file is reported there already, with the
                        // call in its note.
                        let same_file = origin_file == file;
                        if same_file
                            || skipped
                            || not_given
                            || no_gpu_tensor
                            || passed_on
                            || told.iter().any(|told| told.rule == found.rule)
                        {
                            continue;
                        }
                        told.push(CalleeSync {
                            callee: format!("{}()", function.qualname).into(),
                            parameter: parameter.name.clone(),
                            position: self.position_of(file, index, target, slot),
                            rule: found.rule,
                            unknown_counts: found.unknown_counts,
                            sync: found.deeper.clone().unwrap_or_else(|| {
                                let place = origin_module.summary.place(origin_module.display, found.line);
                                format!("{} ({place})", found.message).into()
                            }),
                        });
                    }
                }
                if !told.is_empty() {
                    file_facts.callee_syncs.insert(site.at, told.into_boxed_slice());
                }
            }
        });
    }
}
