//! The facts pass: what the project knows about each file that the file alone does not show
//! ([`FileFacts`]), derived from the call targets, the hot functions and the files' summaries,
//! in these steps (see [`Project::facts`]):
//!
//! 1. the hot call sites, and those that construct (`hot_sites`);
//! 2. what those sites pass their callees ([`passed`]: kinds, forwarded parameters, arguments
//!    made from the caller's values);
//! 3. on parallel threads: the kinds each parameter is passed (`passed`) and which values passed
//!    on are worth their facts ([`wanted`]); whether calls give each parameter a value
//!    ([`given`]); what duck-typed attributes hold ([`attributes`]); which functions do a step's
//!    work ([`step_work`]); the syncs on what parameters are given ([`syncs`]);
//! 4. each file told what concerns it: given parameters, parameter kinds, attributes, returns
//!    and results of project calls ([`returns`]), syncs its hot calls lead to, step work done
//!    elsewhere.
//!
//! The last pass of a round: it imports from every pass before it. Its steps' modules import
//! from this one and from each other only in the order above (`syncs` reads `given`,
//! `returns` reads `wanted`).

mod attributes;
mod given;
mod passed;
mod returns;
mod step_work;
mod syncs;
mod wanted;

use std::path::Path;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use self::passed::ArgumentsPassed;
use self::wanted::Wanted;
use super::hotness::HotFunctions;
use super::modules::ModuleInfo;
use super::{Project, ProjectFunction};
use crate::semantic::facts::InstancesByClass;
use crate::semantic::{FileFacts, ProjectKind, refines_passed_on};

/// A call site of the project: (file, the site's index in the file).
type ProjectSite = (usize, usize);

impl<'m> Project<'m> {
    /// What the project knows about each file that the file alone does not show: parameter
    /// kinds from hot callers and what the project functions its hot code calls return.
    /// `applied` are the facts each file was last checked with: a function keeps its facts while
    /// they hold, so a file is checked again only when they change. The steps run in the order
    /// the module's doc lists them.
    pub fn facts(&self, hot: &HotFunctions, applied: &[&FileFacts]) -> Vec<FileFacts> {
        let (sites, given_sites) = self.hot_sites(hot);
        // Per hot function: the join of what its hot callers pass each parameter, spelled in the
        // callee's file (see `passed_kinds`).
        let ArgumentsPassed {
            direct,
            forwards,
            forwarded_kinds,
            passed_on,
        } = self.arguments_passed(&sites);
        // The phases below read the summaries and nothing of each other: on two threads, what
        // one thread solves (the kinds passed, what is wanted of them) the other overlaps with
        // the rest.
        let ((passed, wanted), (given, (duck_typed, (step_work, syncs)))) = rayon::join(
            || {
                let passed = self.passed_kinds(direct, &forwards, &forwarded_kinds);
                let wanted = self.wanted(hot, &forwards, &passed_on);
                (passed, wanted)
            },
            || {
                rayon::join(
                    || self.given(&given_sites, applied),
                    || {
                        rayon::join(
                            || self.duck_typed(),
                            || rayon::join(|| self.step_work(), || self.parameter_syncs()),
                        )
                    },
                )
            },
        );
        let mut facts: Vec<FileFacts> = vec![FileFacts::default(); self.modules.len()];
        self.tell_given(given, applied, &mut facts);
        self.tell_parameters(passed, &wanted, applied, &mut facts);
        self.tell_asked(hot, applied, &wanted, &duck_typed, &mut facts);
        self.tell_callee_syncs(hot, &syncs, &mut facts);
        self.tell_step_work(&step_work, &mut facts);
        facts
    }

    /// The hot call sites that pass something a callee can use, and those whose arguments say
    /// what a callee is given: the hot ones and, with constructions, also those in setup code
    /// (their arguments decide the flags the instance's methods test: `if self.use_conv:`)
    /// outside tests. Each as (file, site index), in the order of the files and their sites.
    fn hot_sites(&self, hot: &HotFunctions) -> (Vec<ProjectSite>, Vec<ProjectSite>) {
        let modules = self.modules;
        let (sites, given_sites): (Vec<Vec<ProjectSite>>, Vec<Vec<ProjectSite>>) = modules
            .par_iter()
            .enumerate()
            .map(|(file, module)| {
                let mut sites = Vec::new();
                let mut given_sites = Vec::new();
                // Tests construct a library's public classes as a user might, with some options
                // left out: the constructions that decide flags are the project's own.
                let constructions_count = !crate::discovery::is_test_path(Path::new(module.display));
                for (index, site) in module.summary.call_sites.iter().enumerate() {
                    let targets = &self.targets[file][index].functions;
                    if targets.is_empty() {
                        continue;
                    }
                    let runs_hot = hot.runs_hot(file, site);
                    let constructs = || {
                        targets.iter().any(|&(file, id)| {
                            modules[file].summary.functions[id as usize]
                                .qualname
                                .ends_with(".__init__")
                        })
                    };
                    // Those that pass something a callee can use.
                    if runs_hot && site.arguments.as_deref().is_some_and(|arguments| arguments.informative) {
                        sites.push((file, index));
                    }
                    if runs_hot || (constructions_count && constructs()) {
                        given_sites.push((file, index));
                    }
                }
                (sites, given_sites)
            })
            .unzip();
        (sites.concat(), given_sites.concat())
    }

    /// Tells each function's file the kinds its hot callers pass its parameters (`passed`, see
    /// [`Self::passed_kinds`]), where they were told before or a rule could tell more with them:
    /// the function asked about a value the file could not tell, or a value it passes on is
    /// wanted where it goes (`wanted`).
    fn tell_parameters(
        &self,
        passed: FxHashMap<ProjectFunction, Vec<ProjectKind>>,
        wanted: &Wanted,
        applied: &[&FileFacts],
        facts: &mut [FileFacts],
    ) {
        let modules = self.modules;
        for ((file, id), slots) in passed {
            let function = &modules[file].summary.functions[id as usize];
            // Given once, kept while they hold, so the file is not checked again for nothing.
            let kept = applied[file].parameters.contains_key(&*function.qualname);
            // Checked again only where a rule could tell more: it asked about a value the file
            // could not tell, or it reported something.
            let changes = function
                .params
                .iter()
                .zip(&slots)
                .enumerate()
                .any(|(slot, (param, from_callers))| {
                    function.details().demand.answered_by_callers(slot, param, from_callers)
                        || (wanted.passed_on.contains(&((file, id), slot)) && refines_passed_on(param, from_callers))
                });
            if kept || changes {
                facts[file]
                    .parameters
                    .insert(function.qualname.clone(), slots.into_boxed_slice());
            }
        }
    }

    /// Tells each file, in parallel, what it asked about other files' values that hot code
    /// reaches: the duck-typed attributes of its classes (`duck_typed`, see
    /// [`Self::duck_typed`]), the attributes of other files' instances, the returns of the
    /// project functions it calls by name and the results of its calls through objects.
    fn tell_asked(
        &self,
        hot: &HotFunctions,
        applied: &[&FileFacts],
        wanted: &Wanted,
        duck_typed: &FxHashMap<usize, FxHashMap<Box<str>, InstancesByClass>>,
        facts: &mut [FileFacts],
    ) {
        self.tell_each_file(facts, |file, file_facts, module| {
            if let Some(typed) = duck_typed.get(&file) {
                file_facts.duck_typed = typed.clone();
            }
            self.tell_attributes(hot, applied, file, module, file_facts);
            self.tell_returns(hot, applied, wanted, file, module, file_facts);
            self.tell_results(hot, applied, wanted, file, module, file_facts);
        });
    }

    /// Runs `tell` on each file's facts (with the file's index and module), the files in
    /// parallel.
    fn tell_each_file(
        &self,
        facts: &mut [FileFacts],
        tell: impl Fn(usize, &mut FileFacts, &ModuleInfo<'m>) + Send + Sync,
    ) {
        facts
            .par_iter_mut()
            .zip(self.modules)
            .enumerate()
            .for_each(|(file, (file_facts, module))| tell(file, file_facts, module));
    }
}
