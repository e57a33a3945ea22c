//! Callables as values: what a call of a parameter runs (`fn(x)` in `def apply(fn, x)`), solved
//! over the call graph as PyCG solves its assignment graph; what decorators put around the
//! functions they decorate; and what a call of a call's result runs (`get_fn(name)(x)`). A
//! parameter holds every project function its callers pass it, directly (`apply(relu, x)`) or passed on from their own
//! parameters (`def fit(cb): run_epoch(cb)`), to a fixpoint.
//!
//! The file pass records two kinds of site ([`CallSite::passed_to`], [`Callee::Parameter`]): a
//! callable handed to a call (a function, a parameter passed on, a function a decorator is
//! applied to), and a call of a parameter (also by a closure, of its enclosing function's). A
//! callable handed to a project function that calls or passes on that parameter is called
//! there, not where it was handed over: its site keeps no targets, and the receiver's call of
//! the parameter gets them; one handed to a project function that does neither is called
//! nowhere. Handed to anything else (a library function, `map`), the receiver is assumed to call
//! it where it is handed over; a decorator that only stores or returns the function calls
//! nothing.
//!
//! It runs after [`super::targets`], on every file's targets together (a callee's parameter is
//! reached from any file); the targets it changes are put back before the next round reuses
//! them ([`Project::into_targets`](super::Project::into_targets)).

use rustc_hash::{FxHashMap, FxHashSet};

use super::targets::Targets;
use super::{Project, ProjectFunction};
use crate::semantic::{ArgumentSlot, CallSite, Callee};

/// A site of the project: (file, index among the file's call sites).
type SiteId = (usize, usize);

/// A parameter of a project function: (function, slot after `self`). A closure's call of its
/// enclosing function's parameter is that function's parameter.
type ParameterId = (ProjectFunction, u16);

/// The most rounds of passing on the fixpoint takes (a chain of functions each passing its
/// parameter to the next is solved one link a round; real chains are short).
const MAX_ROUNDS: usize = 16;

/// What each decorated function's calls run besides it: the wrappers its decorators return
/// (see [`Project::wrappers`]).
type Wrappers = FxHashMap<ProjectFunction, Vec<ProjectFunction>>;

/// Targets the flow changed, with what they were: put back before the targets are reused.
pub(super) type Replaced = Vec<(SiteId, Targets)>;

impl Project<'_> {
    /// Solves what each parameter holds and moves each callable's call to the receiver that
    /// calls it.
    pub(super) fn flow_passed_callables(&mut self) -> Replaced {
        // The parameters each function calls or passes on.
        let mut used: FxHashSet<ParameterId> = FxHashSet::default();
        // Sites handing a callable to another call, and the targets of each call (by offset).
        let mut handed: Vec<SiteId> = Vec::new();
        let mut calls: FxHashMap<(usize, u32), Vec<usize>> = FxHashMap::default();
        let mut returned = false;
        for (file, module) in self.modules.iter().enumerate() {
            for (index, site) in module.summary.call_sites.iter().enumerate() {
                match site.callee {
                    Callee::Parameter { function, slot } => {
                        used.insert(((file, function), slot));
                    }
                    Callee::Returned { .. } => returned = true,
                    _ => {}
                }
                if site.passed_to.is_some() {
                    handed.push((file, index));
                } else {
                    calls.entry((file, site.at)).or_default().push(index);
                }
            }
        }
        if handed.is_empty() && !returned {
            return Vec::new();
        }
        let wrappers = self.wrappers(&handed, &calls);
        // Each handed callable's receivers: the parameters it lands in, where the receiver
        // uses them. One handed to a project function that neither calls nor passes on that
        // parameter is called nowhere.
        let mut lands: FxHashMap<SiteId, Vec<ParameterId>> = FxHashMap::default();
        let mut unused: FxHashSet<SiteId> = FxHashSet::default();
        for &(file, index) in &handed {
            let site = &self.modules[file].summary.call_sites[index];
            let passed = site.passed_to.as_deref().expect("a handed site");
            let Some(receivers) = calls.get(&(file, passed.call)) else {
                continue;
            };
            if receivers
                .iter()
                .any(|&receiver| !self.targets[file][receiver].functions.is_empty())
            {
                unused.insert((file, index));
            }
            let parameters: Vec<ParameterId> = receivers
                .iter()
                .flat_map(|&receiver| {
                    let targets = &self.targets[file][receiver];
                    targets
                        .functions
                        .iter()
                        .filter_map(|&function| Some((function, self.parameter_of(function, targets, &passed.slot)?)))
                })
                .filter(|parameter| used.contains(parameter))
                .collect();
            if !parameters.is_empty() {
                unused.remove(&(file, index));
                lands.insert((file, index), parameters);
            }
        }
        // What each parameter holds, to a fixpoint.
        let mut holds: FxHashMap<ParameterId, Vec<ProjectFunction>> = FxHashMap::default();
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            for (&(file, index), parameters) in &lands {
                let functions = self.handed_functions(&holds, file, index);
                for parameter in parameters {
                    let held = holds.entry(*parameter).or_default();
                    for function in &functions {
                        if !held.contains(function) {
                            held.push(*function);
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // The sites' new targets: a call of a parameter runs what it holds; a callable landing
        // in a receiver that uses it is not called where it is handed over; one handed to
        // anything else is, also when it is a parameter passed on; a call of what a call
        // returns runs the functions returned; a call of a decorated function runs the
        // decorators' wrappers beside it.
        let mut replaced = Replaced::new();
        for (file, module) in self.modules.iter().enumerate() {
            for (index, site) in module.summary.call_sites.iter().enumerate() {
                let decorated = site
                    .passed_to
                    .as_deref()
                    .is_some_and(|passed| passed.slot == ArgumentSlot::Decorated);
                let site_id = (file, index);
                let old = &self.targets[file][index];
                let targets = if decorated || lands.contains_key(&site_id) || unused.contains(&site_id) {
                    Targets::default()
                } else if matches!(site.callee, Callee::Parameter { .. }) {
                    Targets {
                        functions: self.handed_functions(&holds, file, index),
                        ..Targets::default()
                    }
                } else if let Callee::Returned { call } = site.callee {
                    Targets {
                        functions: self.returned_functions(&calls, file, call),
                        ..Targets::default()
                    }
                } else if let Some(wrapping) = wrapped(&wrappers, &old.functions) {
                    Targets {
                        wrappers: Some(wrapping.into_boxed_slice()),
                        ..old.clone()
                    }
                } else {
                    continue;
                };
                let old = std::mem::replace(&mut self.targets[file][index], targets);
                replaced.push(((file, index), old));
            }
        }
        replaced
    }

    /// The wrappers decorators put around the functions they decorate: `@timed def f` where
    /// `timed` always returns a function it defines (`return wrapper`). A call of `f` runs the
    /// wrapper and, through it, `f`; stacked decorators wrap one another, so each one's wrapper
    /// runs. The edges go from the call to each: the wrapper's own call of the function it
    /// closes over would otherwise reach every function the decorator decorates (a
    /// decorator on hundreds of `forward`s), so decorated functions do not flow into the
    /// decorator's parameter. A decorator that returns the function itself wraps nothing.
    fn wrappers(&self, handed: &[SiteId], calls: &FxHashMap<(usize, u32), Vec<usize>>) -> Wrappers {
        let mut wrappers = Wrappers::default();
        for &(file, index) in handed {
            let site = &self.modules[file].summary.call_sites[index];
            let (Callee::Local(decorated), Some(passed)) = (&site.callee, site.passed_to.as_deref()) else {
                continue;
            };
            if passed.slot != ArgumentSlot::Decorated {
                continue;
            }
            let returned = self.returned_functions(calls, file, passed.call);
            if !returned.is_empty() {
                wrappers.entry((file, *decorated)).or_default().extend(returned);
            }
        }
        wrappers
    }

    /// The functions the call at `call` in `file` returns by name (`return wrapper`; a
    /// conditional expression, `return relu if c else gelu`, names none).
    fn returned_functions(
        &self,
        calls: &FxHashMap<(usize, u32), Vec<usize>>,
        file: usize,
        call: u32,
    ) -> Vec<ProjectFunction> {
        let mut functions: Vec<ProjectFunction> = calls
            .get(&(file, call))
            .into_iter()
            .flatten()
            .flat_map(|&site| &self.targets[file][site].functions)
            .flat_map(|&(target_file, target)| {
                let details = self.modules[target_file].summary.functions[target as usize].details();
                details
                    .returns_functions
                    .iter()
                    .map(move |&returned| (target_file, returned))
            })
            .collect();
        functions.sort_unstable();
        functions.dedup();
        functions
    }

    /// The functions a site calls or hands over: its own targets, or, for a parameter, what
    /// the parameter holds.
    fn handed_functions(
        &self,
        holds: &FxHashMap<ParameterId, Vec<ProjectFunction>>,
        file: usize,
        index: usize,
    ) -> Vec<ProjectFunction> {
        let site: &CallSite = &self.modules[file].summary.call_sites[index];
        match site.callee {
            Callee::Parameter { function, slot } => holds.get(&((file, function), slot)).cloned().unwrap_or_default(),
            _ => self.targets[file][index].functions.clone(),
        }
    }

    /// The parameter of `function` an argument in `slot` binds, called as `targets` says (a
    /// method called through its class takes the instance first).
    fn parameter_of(&self, (file, id): ProjectFunction, targets: &Targets, slot: &ArgumentSlot) -> Option<u16> {
        let function = &self.modules[file].summary.functions[id as usize];
        let index = match slot {
            // Decorated functions do not flow into the decorator's parameter (see
            // [`Self::wrappers`]).
            ArgumentSlot::Decorated => return None,
            ArgumentSlot::Position(position) => {
                let position =
                    usize::from(*position).checked_sub(function.receiver.leading_arguments(targets.unbound))?;
                (position < usize::from(function.signature.positional)).then_some(position)?
            }
            ArgumentSlot::Keyword(name) => function.params.iter().position(|param| *param.name == **name)?,
        };
        u16::try_from(index).ok()
    }
}

/// The wrappers of those of `functions` that are decorated; `None` where none is.
fn wrapped(wrappers: &Wrappers, functions: &[ProjectFunction]) -> Option<Vec<ProjectFunction>> {
    let mut wrapping: Vec<ProjectFunction> = functions
        .iter()
        .filter_map(|function| wrappers.get(function))
        .flatten()
        .copied()
        .collect();
    if wrapping.is_empty() {
        return None;
    }
    wrapping.sort_unstable();
    wrapping.dedup();
    Some(wrapping)
}
