//! The project pass: joins the files' summaries into a call graph, finds which functions are hot
//! because a hot line calls them, across files, and derives what each file cannot see by itself.
//! One module per pass, in the order the pipeline runs them each round:
//!
//! 1. [`modules`]: which module each file is ([`ModuleInfo`](modules::ModuleInfo),
//!    [`ModulePaths`](modules::ModulePaths)) and how imports resolve; reads the files' module
//!    paths and exports, gives the module index.
//! 2. [`classes`]: the project's classes and their lineage; reads the files' classes and their
//!    bases, gives the class index.
//! 3. [`targets`]: what each call site may run ([`Targets`]); reads the call sites and both
//!    indexes, gives each file's targets (kept between rounds for files not checked again).
//!    Then [`passed`]: what a call of a parameter runs, from the callables callers pass it,
//!    over every file's targets.
//! 4. [`edges`]: the call edges between project functions; reads the targets, gives the edges
//!    the hotness pass walks and the call graph `graph` prints.
//! 5. [`hotness`]: the functions hot through calls and the notes that spell the chain from the
//!    hot line ([`HotFunctions`](hotness::HotFunctions)); reads the hot lines, targets and edges.
//! 6. [`facts`]: what each file is told ([`FileFacts`](crate::semantic::FileFacts)); reads all
//!    of the above and what each file was last checked with.
//!
//! This module holds [`Project`], what the passes share, and its constructors, which run the
//! first three passes; the pipeline then asks for [`Project::hot_functions`],
//! [`Project::facts`], [`Project::call_graph`] and [`Project::into_targets`]. Each pass imports
//! from this module and from the passes before it, never after.

mod classes;
mod edges;
mod facts;
pub mod hotness;
pub mod modules;
mod passed;
pub mod targets;

use rayon::prelude::*;

use self::classes::ClassIndex;
use self::modules::{ModuleIndex, ModuleInfo};
use self::targets::Targets;
use crate::semantic::{ClassId, FunctionId};

/// A function of the linted project: (file index, function id).
pub type ProjectFunction = (usize, FunctionId);

/// A class of the project: (file index, class id).
type ProjectClass = (usize, ClassId);

/// The call graph of the project, and what it knows about each file that the file alone does
/// not show.
pub struct Project<'m> {
    modules: &'m [ModuleInfo<'m>],
    index: ModuleIndex<'m>,
    classes: ClassIndex,
    /// Per file: each call site's targets (most have none or one).
    targets: Vec<Vec<Targets>>,
    /// The targets [`passed`] changed, as [`targets`] resolved them.
    replaced: passed::Replaced,
}

impl<'m> Project<'m> {
    pub fn new(modules: &'m [ModuleInfo<'m>]) -> Self {
        Self::with_targets(modules, Vec::new())
    }

    /// The project, reusing each file's resolved call targets where `known` has them (a file
    /// not checked again since calls the same functions).
    pub fn with_targets(modules: &'m [ModuleInfo<'m>], mut known: Vec<Option<Vec<Targets>>>) -> Self {
        known.resize_with(modules.len(), || None);
        let index = ModuleIndex::new(modules);
        let classes = ClassIndex::new(modules, &index);
        let mut project = Project {
            modules,
            index,
            classes,
            targets: Vec::new(),
            replaced: Vec::new(),
        };
        // Each file's calls resolved in parallel.
        let targets = modules
            .par_iter()
            .zip(known)
            .enumerate()
            .map(|(file, (module, known))| {
                if let Some(targets) = known {
                    return targets;
                }
                project.file_targets(file, module)
            })
            .collect();
        project.targets = targets;
        project.replaced = project.flow_passed_callables();
        project
    }

    /// Each file's resolved call targets, to build the next round's project with (as each
    /// file's own calls resolve: what callers pass is solved again each round).
    pub fn into_targets(mut self) -> Vec<Vec<Targets>> {
        for ((file, index), targets) in std::mem::take(&mut self.replaced) {
            self.targets[file][index] = targets;
        }
        self.targets
    }
}
