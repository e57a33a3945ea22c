//! The project classes a file refers to, numbered per file (the [`ClassRefId`] of a
//! [`Kind::Module`] or [`Kind::Object`]), and kinds in the project's terms: with the class
//! spelled out as the file spells it, for other files ([`SemanticModel::to_project`]), and
//! back ([`SemanticModel::kind_from_project`]). Instances of different classes joined are
//! instances of either ([`join_instances`]).
//!
//! It may import the model (its parent) and its imports, the kinds, the facts (how a class is
//! spelled across files) and the summary's [`ClassRef`].

use std::cell::RefCell;

use rustc_hash::FxHashMap;

use super::{ClassInfo, SemanticModel};
use crate::semantic::facts::{ClassSpelled, ProjectKind, spelled_union};
use crate::semantic::ids::ClassId;
use crate::semantic::kinds::{BatchSource, ClassRefId, Kind, ModuleKind, Returned, TensorFacts};
use crate::semantic::names::is_library;
use crate::semantic::summary::ClassRef;

impl<'a> SemanticModel<'a> {
    /// The number of a class reference, given one on first use.
    pub(crate) fn class_ref(&self, class: ClassRef) -> ClassRefId {
        self.class_refs.borrow_mut().intern(class)
    }

    /// The number of the imported class `spelled`, allocating its name only the first time.
    pub(super) fn imported_class_ref(&self, spelled: &str) -> ClassRefId {
        let known = self.class_refs.borrow().imported.get(spelled).copied();
        known.unwrap_or_else(|| self.class_ref(ClassRef::Imported(spelled.into())))
    }

    pub fn class_of_ref(&self, id: ClassRefId) -> ClassRef {
        self.class_refs.borrow()[id as usize].clone()
    }

    /// The kind of an instance of this file's class `id`.
    pub fn instance_of_local(&self, id: ClassId) -> Kind {
        let class = &self.classes[id as usize];
        let reference = self.class_ref(ClassRef::Local(id));
        if class.is_loss {
            Kind::Module(ModuleKind::Loss, Some(reference))
        } else if class.is_metric {
            Kind::Module(ModuleKind::Metric, Some(reference))
        } else if class.is_module {
            Kind::Module(ModuleKind::Plain, Some(reference))
        } else {
            Kind::Object(reference)
        }
    }

    /// The kind of an instance of a class the file names (`Head`, `.heads.Head`), as the file
    /// or the project's facts know it.
    pub(crate) fn instance_of_named(&self, spelled: &str) -> Kind {
        if !spelled.contains('.')
            && let Some(id) = self.local_class(spelled)
        {
            return self.instance_of_local(id);
        }
        Kind::Object(self.imported_class_ref(spelled))
    }

    /// An instance of the project class a qualified name spells (`CamelCase` by convention; the
    /// project pass resolves it to the class, or finds none).
    pub(super) fn project_instance(&self, qualified: &str) -> Option<Kind> {
        let name = qualified.rsplit('.').next().unwrap_or(qualified);
        (!is_library(qualified) && name.starts_with(|c: char| c.is_ascii_uppercase()))
            .then(|| self.instance_of_named(qualified))
    }

    /// A kind from the project (a caller's argument, an imported function's return) in this
    /// file's terms.
    pub fn kind_from_project(&self, kind: &ProjectKind) -> Kind {
        match (&kind.class, kind.kind) {
            (Some(class), Kind::Module(module, _)) => match self.instance_of_named(class) {
                Kind::Module(_, reference) => Kind::Module(module, reference),
                Kind::Object(reference) => Kind::Module(module, Some(reference)),
                other => other,
            },
            (Some(class), Kind::Object(_)) => self.instance_of_named(class),
            (None, Kind::Object(_)) => Kind::Unknown,
            (_, other) => other,
        }
    }

    /// A returned tuple's elements for another file: kinds without class references.
    pub fn to_project_returned(&self, returned: &Returned) -> Returned {
        returned.map_kinds(&|kind| self.to_project(kind).kind)
    }

    /// A returned tuple's elements as the project tells them, in this file's terms.
    pub(super) fn returned_in_file(&self, returned: &Returned) -> Returned {
        returned.map_kinds(&|kind| self.kind_from_project(&ProjectKind { kind, class: None }))
    }

    /// A kind in the project's terms: a class reference spelled out as the file spells it
    /// (a local class by its name).
    pub fn to_project(&self, kind: Kind) -> ProjectKind {
        let class = kind
            .class()
            .map(|id| spelled_class(&self.class_refs, &self.classes, id));
        let kind = match kind {
            Kind::Module(module, _) => Kind::Module(module, None),
            Kind::Object(_) => Kind::Object(0),
            // A data-dependent shape synced where the op ran, in the code that made it; the
            // function it is passed to or returned to does not sync again by reading it. A
            // loader is known by its offset in this file: elsewhere, a loader's batch.
            Kind::Tensor(facts) => Kind::Tensor(TensorFacts {
                data_dependent: false,
                batch: match facts.batch {
                    BatchSource::Loader(_) => BatchSource::UnknownLoader,
                    other => other,
                },
                ..facts
            }),
            other => other,
        };
        ProjectKind {
            kind,
            class: class.map(ClassSpelled::from),
        }
    }

    /// The local class an instance kind is of.
    pub fn local_class_of(&self, kind: Kind) -> Option<ClassId> {
        match self.class_refs.borrow()[kind.class()? as usize] {
            ClassRef::Local(id) => Some(id),
            ClassRef::Imported(_) => None,
        }
    }

    /// The class an instance kind is of, where it is one class of another file (as spelled).
    pub(super) fn imported_class_of(&self, kind: Kind) -> Option<Box<str>> {
        match &self.class_refs.borrow()[kind.class()? as usize] {
            ClassRef::Imported(spelled) if !spelled.contains('|') => Some(spelled.clone()),
            _ => None,
        }
    }
}

/// Kinds joined, where instances of different project classes stay instances of either (`s =
/// BeamSearch(...) if beam else GreedySearch(...)`: `s.advance(x)` may run either's `advance`),
/// as a reference spelled with each class (see [`spelled_union`]).
pub(super) fn join_instances(class_refs: &RefCell<ClassRefs>, classes: &[ClassInfo], a: Kind, b: Kind) -> Kind {
    let union = |x: ClassRefId, y: ClassRefId| {
        let spelled = |id| spelled_class(class_refs, classes, id);
        let union = spelled_union(&spelled(x), &spelled(y))?;
        Some(class_refs.borrow_mut().intern(ClassRef::Imported(union)))
    };
    match (a, b) {
        (Kind::Object(x), Kind::Object(y)) if x != y => union(x, y).map_or(Kind::Unknown, Kind::Object),
        (Kind::Module(_, Some(x)), Kind::Module(_, Some(y))) if x != y => match a.join(b) {
            Kind::Module(module, _) => Kind::Module(module, union(x, y)),
            other => other,
        },
        _ => a.join(b),
    }
}

/// The project classes a file refers to, numbered in the order they are first met, with the
/// number of each found by a lookup (a file may name tens of thousands of classes: finding
/// one by a scan of the list made the file's check quadratic in them).
#[derive(Default)]
pub(super) struct ClassRefs {
    list: Vec<ClassRef>,
    local: FxHashMap<ClassId, ClassRefId>,
    imported: FxHashMap<Box<str>, ClassRefId>,
}

impl std::ops::Index<usize> for ClassRefs {
    type Output = ClassRef;

    fn index(&self, id: usize) -> &ClassRef {
        &self.list[id]
    }
}

impl ClassRefs {
    /// The number of a class reference in the list, given one on first use.
    fn intern(&mut self, class: ClassRef) -> ClassRefId {
        let known = match &class {
            ClassRef::Local(id) => self.local.get(id),
            ClassRef::Imported(spelled) => self.imported.get(spelled),
        };
        if let Some(&number) = known {
            return number;
        }
        let number = self.list.len() as ClassRefId;
        match &class {
            ClassRef::Local(id) => self.local.insert(*id, number),
            ClassRef::Imported(spelled) => self.imported.insert(spelled.clone(), number),
        };
        self.list.push(class);
        number
    }
}

/// A class reference spelled as the file spells it: a local class by its name.
fn spelled_class(class_refs: &RefCell<ClassRefs>, classes: &[ClassInfo], id: ClassRefId) -> Box<str> {
    match &class_refs.borrow()[id as usize] {
        ClassRef::Local(local) => Box::from(classes[*local as usize].name.as_str()),
        ClassRef::Imported(spelled) => spelled.clone(),
    }
}
