//! The project's classes and their lineage: [`ClassIndex`] (which project class each base
//! names, what a class is through its bases anywhere in the project, each class's subclasses,
//! the classes each registry holds), and the lookups along a class's bases (a method, an
//! attribute's kind) and the spelling of a class for another file ([`Project::respell`]).
//!
//! The second pass: built from the files' class summaries through the module index. It imports
//! from its parent and from [`super::modules`].

use std::sync::OnceLock;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::modules::{ModuleIndex, ModuleInfo, class_named, registry_named};
use super::{Project, ProjectClass, ProjectFunction};
use crate::semantic::{ClassId, Kind, ModuleKind, ProjectKind};

/// The most classes a hierarchy walk visits (bases or subclasses): bounds a pathological or
/// cyclic hierarchy.
const HIERARCHY_LIMIT: usize = 256;

/// The project's classes: which file class each base names, which are `nn.Module`s through
/// bases anywhere in the project, and each class's subclasses (for overrides).
pub(super) struct ClassIndex {
    /// Per file, per class: the project classes its bases name.
    pub(super) bases: Vec<Vec<Vec<ProjectClass>>>,
    /// Per file, per class: what it is through its bases anywhere in the project.
    pub(super) module: Vec<Vec<Option<ModuleKind>>>,
    subclasses: FxHashMap<ProjectClass, Subclasses>,
    /// The classes registered in each registry (`@MODELS.register_module()`), by where the
    /// registry is made: per file, by its name there.
    pub(super) registered: Vec<FxHashMap<Box<str>, Vec<ProjectClass>>>,
}

/// A class's subclasses: the direct ones, and all of them once asked (each call of an
/// overridable method asks again).
struct Subclasses {
    direct: Vec<ProjectClass>,
    all: OnceLock<Box<[ProjectClass]>>,
}

impl ClassIndex {
    pub(super) fn new(modules: &[ModuleInfo], index: &ModuleIndex) -> Self {
        let bases: Vec<Vec<Vec<ProjectClass>>> = modules
            .par_iter()
            .enumerate()
            .map(|(file, module)| {
                module
                    .summary
                    .classes
                    .iter()
                    .map(|class| {
                        class
                            .bases
                            .iter()
                            .filter(|base| !crate::semantic::is_library(base))
                            .filter_map(|base| class_named(modules, index, file, base))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let mut module: Vec<Vec<Option<ModuleKind>>> = modules
            .iter()
            .map(|m| m.summary.classes.iter().map(|c| c.module).collect())
            .collect();
        // Module-ness flows from bases to subclasses: a few rounds reach any real hierarchy.
        for _ in 0..8 {
            let mut changed = false;
            for (file, classes) in bases.iter().enumerate() {
                for (id, parents) in classes.iter().enumerate() {
                    for parent in parents {
                        let inherited = module[parent.0][parent.1 as usize];
                        let current = module[file][id];
                        let joined = match (current, inherited) {
                            (_, Some(ModuleKind::Loss)) | (Some(ModuleKind::Loss), _) => Some(ModuleKind::Loss),
                            (_, Some(ModuleKind::Metric)) | (Some(ModuleKind::Metric), _) => Some(ModuleKind::Metric),
                            (Some(kind), _) => Some(kind),
                            (None, Some(_)) => Some(ModuleKind::Plain),
                            (None, None) => None,
                        };
                        if joined != current {
                            module[file][id] = joined;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        let mut subclasses: FxHashMap<ProjectClass, Vec<ProjectClass>> = FxHashMap::default();
        for (file, classes) in bases.iter().enumerate() {
            for (id, parents) in classes.iter().enumerate() {
                for parent in parents {
                    subclasses.entry(*parent).or_default().push((file, id as ClassId));
                }
            }
        }
        let mut registered: Vec<FxHashMap<Box<str>, Vec<ProjectClass>>> = vec![FxHashMap::default(); modules.len()];
        for (file, info) in modules.iter().enumerate() {
            for (id, class) in info.summary.classes.iter().enumerate() {
                for spelled in &class.registries {
                    if let Some((owner, name)) = registry_named(modules, index, file, spelled) {
                        registered[owner]
                            .entry(name.into())
                            .or_default()
                            .push((file, id as ClassId));
                    }
                }
            }
        }
        ClassIndex {
            bases,
            module,
            subclasses: subclasses
                .into_iter()
                .map(|(class, direct)| {
                    let all = OnceLock::new();
                    (class, Subclasses { direct, all })
                })
                .collect(),
            registered,
        }
    }

    pub(super) fn module_kind(&self, (file, id): ProjectClass) -> Option<ModuleKind> {
        self.module[file][id as usize]
    }

    /// Every class that inherits from `class`, directly or not.
    pub(super) fn subclasses_of(&self, class: ProjectClass) -> &[ProjectClass] {
        let Some(subclasses) = self.subclasses.get(&class) else {
            return &[];
        };
        subclasses.all.get_or_init(|| {
            let mut found = Vec::new();
            let mut seen: rustc_hash::FxHashSet<ProjectClass> = rustc_hash::FxHashSet::default();
            let mut stack = vec![class];
            while let Some(current) = stack.pop() {
                for &sub in self.subclasses.get(&current).into_iter().flat_map(|s| &s.direct) {
                    if found.len() >= HIERARCHY_LIMIT {
                        return found.into_boxed_slice();
                    }
                    if sub != class && seen.insert(sub) {
                        found.push(sub);
                        stack.push(sub);
                    }
                }
            }
            found.into_boxed_slice()
        })
    }
}

impl<'m> Project<'m> {
    /// The class `spelled` names in `file`: a class of the file by name, or an imported one
    /// (`.heads.Head`, `pkg.heads.Head`).
    pub(super) fn class_named(&self, file: usize, spelled: &str) -> Option<ProjectClass> {
        class_named(self.modules, &self.index, file, spelled)
    }

    /// What `self.<attr>` holds in instances of `class`, spelled for `file`: as the class's own
    /// methods assign it, else the nearest base's.
    pub(super) fn attribute_of(&self, class: ProjectClass, attr: &str, file: usize) -> Option<ProjectKind> {
        self.first_in_lineage(class, |(owner, id)| {
            let kind = self.modules[owner].summary.classes[id as usize].attribute(attr)?;
            Some(self.respell(owner, kind, file))
        })
    }

    /// What `found` finds first in `class` or its bases (depth first, as Python's order does
    /// for single inheritance).
    fn first_in_lineage<T>(&self, class: ProjectClass, found: impl Fn(ProjectClass) -> Option<T>) -> Option<T> {
        let mut stack = vec![class];
        let mut seen = 0;
        while let Some(current) = stack.pop() {
            seen += 1;
            if seen > HIERARCHY_LIMIT {
                return None;
            }
            if let Some(found) = found(current) {
                return Some(found);
            }
            stack.extend(self.classes.bases[current.0][current.1 as usize].iter().rev());
        }
        None
    }

    /// The method `class` has: its own, else the first base's (depth first, as Python's order
    /// does for single inheritance).
    pub(super) fn lookup_method(&self, class: ProjectClass, method: &str) -> Option<ProjectFunction> {
        self.first_in_lineage(class, |(owner, id)| {
            let summary = self.modules[owner].summary;
            let found = summary.classes[id as usize].method(&summary.functions, method)?;
            Some((owner, found))
        })
    }

    /// A name of `file` qualified by its module's (as [`class_named`] reads it back).
    pub(super) fn qualified_in(&self, file: usize, name: &str) -> String {
        let module = &self.modules[file].module;
        if module.is_empty() {
            name.to_string()
        } else {
            format!("{module}.{name}")
        }
    }

    /// A kind from `from`'s point of view, with its class spelled as `to` can name it (an
    /// absolute dotted path); an instance of a class that is not the project's (`Path(...)`)
    /// says nothing.
    pub(super) fn respell(&self, from: usize, kind: &ProjectKind, to: usize) -> ProjectKind {
        let Some(spelled) = &kind.class else {
            return kind.clone();
        };
        // Each class of a union respelled (a registry's instances by the registry's own
        // name); those the project does not have are left out.
        let mut parts = 0;
        let named: Vec<(usize, &str)> = spelled
            .split('|')
            .filter_map(|spelled| {
                parts += 1;
                match self.class_named(from, spelled) {
                    Some((file, id)) => Some((file, &*self.modules[file].summary.classes[id as usize].name)),
                    None => registry_named(self.modules, &self.index, from, spelled)
                        .filter(|&(owner, name)| self.classes.registered[owner].contains_key(name)),
                }
            })
            .collect();
        if named.is_empty() {
            return match kind.kind {
                Kind::Module(module, _) => ProjectKind {
                    kind: Kind::Module(module, None),
                    class: None,
                },
                _ => ProjectKind::UNKNOWN,
            };
        }
        if from == to && named.len() == parts {
            return kind.clone();
        }
        let respelled: Vec<String> = named
            .into_iter()
            .map(|(file, name)| self.qualified_in(file, name))
            .collect();
        ProjectKind {
            kind: kind.kind,
            class: Some(respelled.join("|").into()),
        }
    }
}
