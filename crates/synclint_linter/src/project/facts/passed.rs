//! What hot callers pass each parameter: what every hot call site passes its callees
//! ([`Passing`]), sorted into kinds passed directly and parameters passed on
//! ([`ArgumentsPassed`]), and the fixpoint that joins them per parameter
//! ([`Project::passed_kinds`]).
//!
//! It imports from [`super`] and the project's passes.

use std::collections::VecDeque;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use super::ProjectSite;
use crate::project::{Project, ProjectFunction};
use crate::semantic::facts::merged_with_callers;
use crate::semantic::{Dependence, ProjectKind};

/// What one hot call site tells its callees (see [`Project::facts`]).
enum Passing<'m> {
    /// The callee, with its number of parameters.
    Reaches(ProjectFunction, usize),
    /// An argument's kind, spelled in the callee's file, for its parameter.
    Kind(ProjectFunction, usize, ProjectKind),
    /// The caller's parameter passed on unchanged: (caller, its slot, callee, its slot, its
    /// kind at the site, spelled in the caller's file).
    Forward(ProjectFunction, usize, ProjectFunction, usize, &'m ProjectKind),
    /// An argument made from what the caller cannot tell: (caller, what, callee, its slot).
    MadeFrom(ProjectFunction, &'m Dependence, ProjectFunction, usize),
}

/// What the hot callers of a function pass one parameter, joined: nothing informative yet, a
/// kind, or kinds that disagree past telling (which no later caller revives, so the join is the
/// same in any order).
#[derive(Clone)]
pub(super) enum Joined {
    Nothing,
    Kind(ProjectKind),
    Disagree,
}

impl Joined {
    fn add(&mut self, kind: &ProjectKind) {
        if !kind.is_informative() {
            return;
        }
        *self = match std::mem::replace(self, Joined::Nothing) {
            Joined::Nothing => Joined::Kind(kind.clone()),
            Joined::Kind(current) => {
                let joined = current.join(kind);
                if joined.is_informative() {
                    Joined::Kind(joined)
                } else {
                    Joined::Disagree
                }
            }
            Joined::Disagree => Joined::Disagree,
        };
    }

    fn kind(&self) -> ProjectKind {
        match self {
            Joined::Kind(kind) => kind.clone(),
            Joined::Nothing | Joined::Disagree => ProjectKind::UNKNOWN,
        }
    }
}

/// What the hot sites pass their callees (see [`Project::passing_at_sites`]), sorted by what it
/// is.
pub(super) struct ArgumentsPassed<'m> {
    /// What the sites pass that is not a parameter passed on, joined per callee's slot.
    pub(super) direct: FxHashMap<ProjectFunction, Vec<Joined>>,
    /// (caller, its slot) -> (callee, its slot), with the argument's kind at the site.
    pub(super) forwards: Vec<(ProjectFunction, usize, ProjectFunction, usize)>,
    pub(super) forwarded_kinds: Vec<&'m ProjectKind>,
    /// Arguments made from what the caller cannot tell -> (callee, its slot).
    pub(super) passed_on: Vec<(ProjectFunction, &'m Dependence, ProjectFunction, usize)>,
}

impl<'m> ArgumentsPassed<'m> {
    /// The sites' contributions, sorted in the order of the sites.
    fn sorted(contributions: Vec<Vec<Passing<'m>>>) -> Self {
        let mut direct: FxHashMap<ProjectFunction, Vec<Joined>> = FxHashMap::default();
        let mut forwards: Vec<(ProjectFunction, usize, ProjectFunction, usize)> = Vec::new();
        let mut forwarded_kinds: Vec<&ProjectKind> = Vec::new();
        let mut passed_on: Vec<(ProjectFunction, &Dependence, ProjectFunction, usize)> = Vec::new();
        for passing in contributions.into_iter().flatten() {
            match passing {
                Passing::Reaches(target, params) => {
                    direct.entry(target).or_insert_with(|| vec![Joined::Nothing; params]);
                }
                Passing::Kind(target, slot, kind) => {
                    if let Some(slots) = direct.get_mut(&target) {
                        slots[slot].add(&kind);
                    }
                }
                Passing::Forward(caller, from, target, to, kind) => {
                    forwards.push((caller, from, target, to));
                    forwarded_kinds.push(kind);
                }
                Passing::MadeFrom(caller, depends, target, to) => passed_on.push((caller, depends, target, to)),
            }
        }
        ArgumentsPassed {
            direct,
            forwards,
            forwarded_kinds,
            passed_on,
        }
    }
}

impl<'m> Project<'m> {
    /// What the hot `sites` pass their callees, sorted by what it is.
    pub(super) fn arguments_passed(&self, sites: &[ProjectSite]) -> ArgumentsPassed<'m> {
        ArgumentsPassed::sorted(self.passing_at_sites(sites))
    }

    /// What each of the hot `sites` passes its callees (see [`Passing`]), by site. Each site's
    /// arguments are spelled for its callees in parallel: an argument nothing is known about
    /// says nothing, and one that is the caller's own parameter becomes a forwarding edge.
    fn passing_at_sites(&self, sites: &[ProjectSite]) -> Vec<Vec<Passing<'m>>> {
        let modules = self.modules;
        sites
            .par_iter()
            .map(|&(file, index)| {
                let site = &modules[file].summary.call_sites[index];
                let (Some(arguments), targets) = (site.arguments.as_deref(), &self.targets[file][index]) else {
                    return Vec::new();
                };
                if targets.registry {
                    return Vec::new();
                }
                let mut passing = Vec::new();
                for &target in &targets.functions {
                    let callee = &modules[target.0].summary.functions[target.1 as usize];
                    let skip = callee.receiver.leading_arguments(targets.unbound);
                    let by_position = arguments
                        .positional
                        .iter()
                        .skip(skip)
                        .enumerate()
                        .take(callee.params.len());
                    let by_keyword = arguments.keywords.iter().filter_map(|(name, argument)| {
                        Some((callee.params.iter().position(|p| p.name == *name)?, argument))
                    });
                    passing.push(Passing::Reaches(target, callee.params.len()));
                    for (slot, argument) in by_position.chain(by_keyword) {
                        // A parameter passed on passes what the caller's callers pass it, where
                        // they tell more than the caller's own view (see `passed_kinds`).
                        if let Some((parameter, caller)) = argument.parameter.zip(site.caller) {
                            let from = parameter as usize;
                            passing.push(Passing::Forward((file, caller), from, target, slot, &argument.kind));
                        } else if argument.kind.is_informative() {
                            let kind = self.respell(file, &argument.kind, target.0);
                            passing.push(Passing::Kind(target, slot, kind));
                        }
                        if let (Some(depends), Some(caller)) = (argument.depends(), site.caller) {
                            passing.push(Passing::MadeFrom((file, caller), depends, target, slot));
                        }
                    }
                }
                passing
            })
            .collect()
    }

    /// Per hot function, what its hot callers pass each parameter, spelled in its file: the
    /// join of what the sites pass (`direct`) and, for a parameter a caller passes on unchanged
    /// (`forwards`, with the argument's kind at the site), that parameter as the caller's own
    /// callers make it (their kind where it tells more than the caller's view: a `height` a
    /// `forward` takes for a tensor by its name is the number every caller passes). A slot is
    /// joined afresh from all it receives whenever a caller's slot changes, so the answer does
    /// not depend on the order of the sites or of the rounds.
    pub(super) fn passed_kinds(
        &self,
        direct: FxHashMap<ProjectFunction, Vec<Joined>>,
        forwards: &[(ProjectFunction, usize, ProjectFunction, usize)],
        forwarded_kinds: &[&ProjectKind],
    ) -> FxHashMap<ProjectFunction, Vec<ProjectKind>> {
        let modules = self.modules;
        let mut into: FxHashMap<ProjectFunction, Vec<usize>> = FxHashMap::default();
        let mut out_of: FxHashMap<ProjectFunction, Vec<ProjectFunction>> = FxHashMap::default();
        for (edge, &(caller, _, target, _)) in forwards.iter().enumerate() {
            into.entry(target).or_default().push(edge);
            out_of.entry(caller).or_default().push(target);
        }
        let mut passed: FxHashMap<ProjectFunction, Vec<ProjectKind>> = direct
            .iter()
            .map(|(&target, slots)| (target, slots.iter().map(Joined::kind).collect()))
            .collect();
        let mut queue: VecDeque<ProjectFunction> = into.keys().copied().collect();
        let mut queued: FxHashSet<ProjectFunction> = queue.iter().copied().collect();
        // Each recomputation reads only finished kinds; the bound guards against a cycle that
        // keeps trading kinds.
        let mut budget = 16 * (queue.len() + 1);
        while let Some(target) = queue.pop_front() {
            queued.remove(&target);
            let Some(mut slots) = direct.get(&target).cloned() else {
                continue;
            };
            for &edge in &into[&target] {
                let (caller, from, _, to) = forwards[edge];
                let Some(slot) = slots.get_mut(to) else {
                    continue;
                };
                let from_callers = passed
                    .get(&caller)
                    .and_then(|kinds| kinds.get(from))
                    .unwrap_or(&ProjectKind::UNKNOWN);
                let annotated = modules[caller.0].summary.functions[caller.1 as usize]
                    .params
                    .get(from)
                    .is_some_and(|param| param.annotated);
                let kind = merged_with_callers(forwarded_kinds[edge], annotated, from_callers);
                if kind.is_informative() {
                    slot.add(&self.respell(caller.0, &kind, target.0));
                }
            }
            let kinds: Vec<ProjectKind> = slots.iter().map(Joined::kind).collect();
            if passed.get(&target) == Some(&kinds) {
                continue;
            }
            passed.insert(target, kinds);
            for &next in out_of.get(&target).into_iter().flatten() {
                if queued.insert(next) {
                    queue.push_back(next);
                }
            }
            budget = budget.saturating_sub(1);
            if budget == 0 {
                break;
            }
        }
        passed
    }
}
