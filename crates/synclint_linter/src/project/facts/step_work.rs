//! Which functions do a step's work, themselves or through what they call, and each file told
//! which of the calls it asked about do ([`FileFacts::step_work`]).
//!
//! It imports only from the project's passes, none of its sibling steps.

use rustc_hash::FxHashMap;

use crate::project::modules::Resolved;
use crate::project::{Project, ProjectFunction};
use crate::semantic::names::names_a_step;
use crate::semantic::{FileFacts, FunctionId};

impl<'m> Project<'m> {
    /// Per file and function: does it do a step's work, itself (it trains, runs a network, is
    /// hot by itself) or through the project functions it calls? A fixpoint over the call
    /// graph's edges, which only turns answers on.
    pub(super) fn step_work(&self) -> Vec<Vec<bool>> {
        let mut step_work: Vec<Vec<bool>> = Vec::with_capacity(self.modules.len());
        let mut found: Vec<ProjectFunction> = Vec::new();
        for (file, module) in self.modules.iter().enumerate() {
            let functions = &module.summary.functions;
            step_work.push(functions.iter().map(|function| function.step_work).collect());
            let itself = functions.iter().enumerate().filter(|(_, function)| function.step_work);
            found.extend(itself.map(|(id, _)| (file, id as FunctionId)));
        }
        // Backwards along the edges: who calls what.
        let mut callers: FxHashMap<ProjectFunction, Vec<ProjectFunction>> = FxHashMap::default();
        for (file, module) in self.modules.iter().enumerate() {
            for (site, targets) in module.summary.call_sites.iter().zip(&self.targets[file]) {
                let Some(caller) = site.caller else { continue };
                if step_work[file][caller as usize] {
                    continue;
                }
                for &target in &targets.functions {
                    callers.entry(target).or_default().push((file, caller));
                }
            }
        }
        while let Some(function) = found.pop() {
            // Building an object or setting up (`__init__`, `configure_optimizers`) is no step,
            // whatever it runs: a loop that constructs something is no step loop.
            if self.modules[function.0].summary.functions[function.1 as usize].never_hot {
                continue;
            }
            for &(file, caller) in callers.get(&function).into_iter().flatten() {
                if !std::mem::replace(&mut step_work[file][caller as usize], true) {
                    found.push((file, caller));
                }
            }
        }
        step_work
    }

    /// Tells each file which of the calls it asked about do a step's work (`step_work`, see
    /// [`Self::step_work`]): a project function that does, a class whose `__init__` does, or a
    /// function the project does not have whose name says so.
    pub(super) fn tell_step_work(&self, step_work: &[Vec<bool>], facts: &mut [FileFacts]) {
        self.tell_each_file(facts, |file, file_facts, module| {
            let step_work_elsewhere: Vec<Box<str>> = module
                .summary
                .step_work_asked
                .iter()
                .filter(|spelled| {
                    let Some((_, name)) = spelled.rsplit_once('.') else {
                        return true;
                    };
                    // Constructing an instance in a loop does its `__init__`'s work.
                    let function = match self.resolve_spelled(file, spelled) {
                        Some(Resolved::Function(function)) => Some(function),
                        Some(Resolved::Class(class)) => self.lookup_method(class, "__init__"),
                        // A function of the standard library or an installed package (or one
                        // the project cannot find) does a step's work where its name says so
                        // (`train_one_epoch`).
                        None => return names_a_step(name),
                    };
                    function.is_some_and(|(file, id)| step_work[file][id as usize])
                })
                .cloned()
                .collect();
            file_facts.step_work = step_work_elsewhere.into_boxed_slice();
        });
    }
}
