//! Whether the calls of a function give each of its parameters a value ([`Given`]): per call,
//! from its arguments, joined over the function's hot calls and constructions, and told to the
//! function's file where it asked.
//!
//! It imports only from the project's passes, none of its sibling steps.

use std::collections::hash_map::Entry;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::project::{Project, ProjectFunction};
use crate::semantic::{CallArguments, FileFacts, FunctionSummary, Given};

/// What a call with `arguments` gives slot `slot` of `callee` (see [`Given`]), `skip` leading
/// arguments before its parameters: a parameter, or an entry of a dict parameter its tests
/// read (see [`EntryAsked`]). `**kwargs` cannot give again what a keyword gave.
pub(super) fn given_at(arguments: &CallArguments, callee: &FunctionSummary, skip: usize, slot: usize) -> Given {
    let argument = |slot: usize| {
        let param = callee.params.get(slot)?;
        arguments.for_parameter(Some(slot + skip), &param.name)
    };
    let left_out = if arguments.spread {
        Given::Sometimes
    } else {
        Given::Never
    };
    if slot < callee.params.len() {
        return argument(slot).map_or(left_out, |argument| argument.given);
    }
    let Some(entry) = callee.details().entries.get(slot - callee.params.len()) else {
        return Given::Sometimes;
    };
    // A call that names another key reads another entry.
    if entry
        .key_slot
        .is_some_and(|key| argument(usize::from(key)).is_some() || arguments.spread)
    {
        return Given::Sometimes;
    }
    let Some(dict) = entry.dict else {
        // The `**kwargs`: the keyword of that name.
        return arguments
            .keywords
            .iter()
            .find(|(keyword, _)| **keyword == *entry.key)
            .map_or(left_out, |(_, argument)| argument.given);
    };
    match argument(usize::from(dict)) {
        None => left_out,
        Some(argument) => match argument.entries() {
            Some(entries) => entries
                .iter()
                .find(|(key, _)| *key == entry.key)
                .map_or(Given::Never, |&(_, given)| given),
            None if argument.given == Given::Never => Given::Never,
            None => Given::Sometimes,
        },
    }
}

impl<'m> Project<'m> {
    /// Per function its hot calls reach that asked (or was told before, per `applied`), whether
    /// they give each parameter a value (see [`Given`]): a value the caller made gives one;
    /// leaving it to its default or passing `None` gives none; what the caller was given, or
    /// spreading `*args` or `**kwargs`, may.
    pub(super) fn given(
        &self,
        sites: &[(usize, usize)],
        applied: &[&FileFacts],
    ) -> FxHashMap<ProjectFunction, Vec<Given>> {
        let unknown = CallArguments {
            spread: true,
            ..CallArguments::default()
        };
        // What each site gives each of its targets' parameters, in parallel; joined after.
        let per_site: Vec<Vec<(ProjectFunction, Vec<Given>)>> = sites
            .par_iter()
            .map(|&(file, index)| {
                // A call whose arguments were not kept may give any parameter.
                let arguments = self.modules[file].summary.call_sites[index]
                    .arguments
                    .as_deref()
                    .unwrap_or(&unknown);
                let targets = &self.targets[file][index];
                if targets.registry {
                    return Vec::new();
                }
                targets
                    .functions
                    .iter()
                    .filter_map(|&target| {
                        let callee = &self.modules[target.0].summary.functions[target.1 as usize];
                        // Only what a callee asked is told (or what it was told before, kept
                        // while it holds): most ask nothing.
                        let told_before = || {
                            let told = &applied[target.0].given;
                            !told.is_empty() && told.contains_key(&*callee.qualname)
                        };
                        if callee.details().demand.given.is_empty() && !told_before() {
                            return None;
                        }
                        let skip = callee.receiver.leading_arguments(targets.unbound);
                        let slots = (0..callee.params.len() + callee.details().entries.len())
                            .map(|slot| given_at(arguments, callee, skip, slot))
                            .collect();
                        Some((target, slots))
                    })
                    .collect()
            })
            .collect();
        let mut given: FxHashMap<ProjectFunction, Vec<Given>> = FxHashMap::default();
        for (target, slots) in per_site.into_iter().flatten() {
            match given.entry(target) {
                Entry::Occupied(mut joined) => {
                    for (joined, this) in joined.get_mut().iter_mut().zip(slots) {
                        *joined = joined.join(this);
                    }
                }
                Entry::Vacant(vacant) => {
                    vacant.insert(slots);
                }
            }
        }
        given
    }

    /// Tells each function's file what its hot calls and constructions give it (`given`, see
    /// [`Self::given`]), where it asked or was told so before; what a construction leaves out
    /// counts as sometimes given where the attribute it is stored in is set outside the class.
    pub(super) fn tell_given(
        &self,
        given: FxHashMap<ProjectFunction, Vec<Given>>,
        applied: &[&FileFacts],
        facts: &mut [FileFacts],
    ) {
        let modules = self.modules;
        let set_outside: FxHashSet<&str> = modules
            .iter()
            .flat_map(|module| module.summary.attributes_set_outside.iter().map(|name| &**name))
            .collect();
        for ((file, id), mut given) in given {
            let function = &modules[file].summary.functions[id as usize];
            // What a construction left out may be set on the instance later.
            for (slot, attr) in &function.details().stored_absent {
                if set_outside.contains(&**attr)
                    && let Some(given) = given.get_mut(usize::from(*slot))
                {
                    *given = Given::Sometimes;
                }
            }
            // What was told stays while it holds: the arm it made dead asks nothing now.
            let told_before = applied[file].given.get(&*function.qualname);
            let asked = function.details().demand.given;
            let told: Box<[Given]> = given
                .iter()
                .enumerate()
                .map(|(slot, &given)| {
                    let kept = told_before.is_some_and(|told| told.get(slot) == Some(&given));
                    if kept || asked.answered_by(slot, given) {
                        given
                    } else {
                        Given::Unseen
                    }
                })
                .collect();
            if told
                .iter()
                .any(|&given| !matches!(given, Given::Unseen | Given::Sometimes))
            {
                facts[file].given.insert(function.qualname.clone(), told);
            }
        }
    }
}
