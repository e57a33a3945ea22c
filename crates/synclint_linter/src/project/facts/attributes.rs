//! What attributes hold that a file cannot tell by itself: those of other files' instances that
//! its hot code reads, and those whose kind it found only by the methods called on them
//! (duck-typed, [`FileFacts::duck_typed`]).
//!
//! It imports only from the project's passes, none of its sibling steps.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::project::hotness::{HotFunctions, runs_hot};
use crate::project::modules::ModuleInfo;
use crate::project::{Project, ProjectClass};
use crate::semantic::facts::InstancesByClass;
use crate::semantic::{ClassId, FileFacts, Kind, ProjectKind};

impl<'m> Project<'m> {
    /// Per file, what attributes of its classes whose kind it cannot tell hold, found by the
    /// methods called on them (see [`ClassSummary::duck_typed`]): instances of the classes of
    /// the project that have them all, where those are few and each method is had by few (a
    /// distinctive `_set_seed`, not `step` or `update`), as [`FileFacts::duck_typed`] keeps
    /// them.
    pub(super) fn duck_typed(&self) -> FxHashMap<usize, FxHashMap<Box<str>, InstancesByClass>> {
        /// More classes than this having a method make it too common to tell anything.
        const FEW: usize = 3;
        let wanted: FxHashSet<&str> = self
            .modules
            .iter()
            .flat_map(|module| &module.summary.classes)
            .flat_map(|class| {
                class
                    .duck_typed
                    .iter()
                    .flat_map(|(_, methods)| methods.iter().map(|m| &**m))
            })
            .collect();
        if wanted.is_empty() {
            return FxHashMap::default();
        }
        let mut having: FxHashMap<&str, Vec<ProjectClass>> = FxHashMap::default();
        for (file, module) in self.modules.iter().enumerate() {
            let functions = &module.summary.functions;
            for (id, class) in module.summary.classes.iter().enumerate() {
                for &method in &class.methods {
                    let name = functions[method as usize].name();
                    if let Some(&wanted) = wanted.get(name) {
                        having.entry(wanted).or_default().push((file, id as ClassId));
                    }
                }
            }
        }
        // The classes that have every one of `methods`, where each is had by few.
        let having_all = |methods: &[Box<str>]| {
            let mut common: Option<Vec<ProjectClass>> = None;
            for method in methods {
                let classes = having.get(&**method).filter(|classes| classes.len() <= FEW)?;
                let common = common.get_or_insert_with(|| classes.clone());
                common.retain(|class| classes.contains(class));
            }
            common
        };
        let mut told: FxHashMap<usize, FxHashMap<Box<str>, InstancesByClass>> = FxHashMap::default();
        for (file, module) in self.modules.iter().enumerate() {
            for (id, class) in module.summary.classes.iter().enumerate() {
                for (attr, methods) in &class.duck_typed {
                    let Some(mut candidates) = having_all(methods) else {
                        continue;
                    };
                    candidates.retain(|&candidate| candidate != (file, id as ClassId));
                    if candidates.is_empty() {
                        continue;
                    }
                    let spelled: Vec<String> = candidates
                        .into_iter()
                        .map(|(owner, class)| {
                            self.qualified_in(owner, &self.modules[owner].summary.classes[class as usize].name)
                        })
                        .collect();
                    let instance = ProjectKind {
                        kind: Kind::Object(0),
                        class: Some(spelled.join("|").into()),
                    };
                    told.entry(file)
                        .or_default()
                        .entry(attr.clone())
                        .or_default()
                        .push((class.name.clone(), instance));
                }
            }
        }
        told
    }

    /// Tells `file` (of `module`) what the attributes of other files' instances hold that its hot
    /// code reads, where that answers what a rule asked, and those told before.
    pub(super) fn tell_attributes(
        &self,
        hot: &HotFunctions,
        applied: &[&FileFacts],
        file: usize,
        module: &ModuleInfo,
        file_facts: &mut FileFacts,
    ) {
        let modules = self.modules;
        // Attributes of other files' instances that hot code reads, and those told
        // before (kept while they hold: the file checked with them no longer asks).
        let held = |class: &str, attr: &str| {
            self.class_named(file, class)
                .and_then(|class| self.attribute_of(class, attr, file))
        };
        for (class, attr) in applied[file].attributes.keys() {
            if let Some(kind) = held(class, attr) {
                file_facts.attributes.insert((class.clone(), attr.clone()), kind);
            }
        }
        for asked in &module.summary.attributes_asked {
            let key = (asked.class.clone(), asked.attr.clone());
            if file_facts.attributes.contains_key(&key) || !runs_hot(modules, hot, file, asked.caller) {
                continue;
            }
            if let Some(kind) = held(&asked.class, &asked.attr)
                && asked.questions.answered_by(&kind)
            {
                file_facts.attributes.insert(key, kind);
            }
        }
    }
}
