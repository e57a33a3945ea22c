//! The call edges between project functions, from the resolved call targets: [`CallEdges`] (the
//! callees of every function, in one list, for the hotness pass to walk) and the call graph by
//! dotted name that `graph` prints ([`Project::call_graph`]).
//!
//! It reads each call site's targets; it imports from its parent and from [`super::modules`].

use super::modules::ModuleInfo;
use super::{Project, ProjectFunction};
use crate::semantic::FunctionId;

/// The call edges out of every project function, gathered site by site (see [`CallEdges`]).
pub(super) struct CallEdgesBuilder {
    /// Where each file's functions start in the numbering of all the project's functions.
    first_of_file: Vec<u32>,
    /// (caller's number, callee), in the order of the call sites.
    edges: Vec<(u32, ProjectFunction)>,
}

impl CallEdgesBuilder {
    pub(super) fn new(modules: &[ModuleInfo]) -> Self {
        let mut first_of_file = Vec::with_capacity(modules.len() + 1);
        let mut functions = 0u32;
        for module in modules {
            first_of_file.push(functions);
            functions += module.summary.functions.len() as u32;
        }
        first_of_file.push(functions);
        CallEdgesBuilder {
            first_of_file,
            edges: Vec::new(),
        }
    }

    pub(super) fn add(&mut self, (file, caller): ProjectFunction, callee: ProjectFunction) {
        self.edges.push((self.first_of_file[file] + caller, callee));
    }

    /// The edges grouped by caller (a counting sort, which keeps the sites' order within each).
    pub(super) fn build(self) -> CallEdges {
        let functions = *self.first_of_file.last().unwrap_or(&0) as usize;
        let mut starts = vec![0u32; functions + 1];
        for &(caller, _) in &self.edges {
            starts[caller as usize + 1] += 1;
        }
        for index in 1..starts.len() {
            starts[index] += starts[index - 1];
        }
        let mut next = starts.clone();
        let mut callees = vec![(0, 0); self.edges.len()];
        for (caller, callee) in self.edges {
            callees[next[caller as usize] as usize] = callee;
            next[caller as usize] += 1;
        }
        CallEdges {
            first_of_file: self.first_of_file,
            starts,
            callees,
        }
    }
}

/// The functions each project function calls, one list for all of them (a list per function
/// would cost an allocation for each of the project's functions, every round).
pub(super) struct CallEdges {
    first_of_file: Vec<u32>,
    /// The callees of function `n` (numbered as in `first_of_file`) are
    /// `callees[starts[n]..starts[n + 1]]`.
    starts: Vec<u32>,
    callees: Vec<ProjectFunction>,
}

impl CallEdges {
    pub(super) fn of(&self, (file, id): ProjectFunction) -> &[ProjectFunction] {
        let function = (self.first_of_file[file] + id) as usize;
        &self.callees[self.starts[function] as usize..self.starts[function + 1] as usize]
    }
}

impl<'m> Project<'m> {
    /// Every call edge between project code, by dotted name relative to the project root
    /// (`pkg.model.Net.forward`, a module's own top level as `pkg.model`): each function and
    /// module is a key, with the sorted names it may call.
    pub fn call_graph(&self) -> std::collections::BTreeMap<String, Vec<String>> {
        let mut graph: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for (file, module) in self.modules.iter().enumerate() {
            graph.entry(module.dotted_name().into_owned()).or_default();
            for id in 0..module.summary.functions.len() {
                graph.entry(self.dotted_name((file, id as FunctionId))).or_default();
            }
            for (site, targets) in module.summary.call_sites.iter().zip(&self.targets[file]) {
                let caller = match site.caller {
                    Some(id) => self.dotted_name((file, id)),
                    None => module.dotted_name().into_owned(),
                };
                let callees = graph.entry(caller).or_default();
                let functions = targets.functions.iter().chain(targets.wrappers.iter().flatten());
                callees.extend(functions.map(|&target| self.dotted_name(target)));
            }
        }
        for callees in graph.values_mut() {
            callees.sort_unstable();
            callees.dedup();
        }
        graph
    }

    /// `pkg.model.Net.forward`; a nested function's `<locals>` step is left out.
    pub fn dotted_name(&self, (file, id): ProjectFunction) -> String {
        let module = self.modules[file].dotted_name();
        let qualname = self.modules[file].summary.functions[id as usize]
            .qualname
            .replace(".<locals>.", ".");
        if module.is_empty() {
            qualname
        } else {
            format!("{module}.{qualname}")
        }
    }
}
