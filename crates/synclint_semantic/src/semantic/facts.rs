//! What the project knows about a file that the file alone does not show: the kinds its
//! functions' hot callers pass them, and what the project functions it imports return. The
//! first check of a file has none; the project pass derives them from every file's summary, and
//! files whose facts changed are checked again.
//!
//! It may import the kinds and the rule codes; not the summary, the questions or the model.

use std::hash::{Hash, Hasher};

use rustc_hash::FxHashMap;

use super::kinds::{Kind, Returned};
use crate::registry::Rule;

/// A kind as it crosses files: the class of an instance spelled out as an absolute dotted path
/// (`pkg.heads.Head`), since class references are numbered per file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, bincode::Encode, bincode::Decode)]
pub struct ProjectKind {
    /// The kind, with any class reference left out (`Module(kind, None)`; an `Object` holds 0).
    pub kind: Kind,
    pub class: Option<ClassSpelled>,
}

/// The class of an instance as a file spells it (`pkg.heads.Head`, or several: see
/// [`spelled_union`]), behind one thin pointer: few kinds name a class, and the kind every
/// argument and parameter of a summary keeps stays 32 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub struct ClassSpelled(Box<Box<str>>);

impl std::ops::Deref for ClassSpelled {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<Box<str>> for ClassSpelled {
    fn from(spelled: Box<str>) -> Self {
        ClassSpelled(Box::new(spelled))
    }
}

impl From<String> for ClassSpelled {
    fn from(spelled: String) -> Self {
        ClassSpelled(Box::new(spelled.into_boxed_str()))
    }
}

impl ProjectKind {
    pub const UNKNOWN: ProjectKind = ProjectKind {
        kind: Kind::Unknown,
        class: None,
    };

    /// Says something a rule or the call graph can use.
    pub fn is_informative(&self) -> bool {
        !matches!(self.kind, Kind::Unknown | Kind::NoneValue)
    }

    /// Kinds joined; instances of different classes are instances of either (spelled with
    /// each, see [`spelled_union`]).
    pub fn join(&self, other: &ProjectKind) -> ProjectKind {
        let class = match (&self.class, &other.class) {
            (Some(a), Some(b)) if a != b => spelled_union(a, b).map(ClassSpelled::from),
            (a, b) if a == b => a.clone(),
            _ => None,
        };
        // Across files a kind holds no class reference (`Object(0)`, `Module(kind, None)`): the
        // kinds join as they are.
        ProjectKind {
            kind: self.kind.join(other.kind),
            class,
        }
    }
}

/// The classes of two class references spelled as a file spells them (`.beam.BeamSearch`, a
/// local class's name), each once, in order, separated by `|`: an instance of either. More
/// than four say nothing.
pub fn spelled_union(a: &str, b: &str) -> Option<Box<str>> {
    let mut classes: Vec<&str> = a.split('|').chain(b.split('|')).collect();
    classes.sort_unstable();
    classes.dedup();
    (classes.len() <= 4).then(|| classes.join("|").into_boxed_str())
}

/// What a parameter is, given what it was without callers (its annotation, default or name) and
/// what the callers pass. Callers refine a tensor (device, dtype) and fill in an unknown; a
/// tensor guessed from the parameter's name in a `forward` gives way to a known non-tensor
/// argument, and so does a tensor annotation to a host value (a number, a tuple); any other
/// annotation stands.
pub fn parameter_kind(base: Kind, annotated: bool, from_callers: Kind) -> Kind {
    match (base, from_callers) {
        (_, Kind::Unknown | Kind::NoneValue) => base,
        (Kind::Unknown, callers) => callers,
        (Kind::Tensor(_), Kind::Tensor(_)) => from_callers,
        (Kind::Tensor(_), callers) if !annotated => callers,
        // Every hot caller passes a host value where the annotation says tensor (`shape:
        // torch.Tensor` given `x.shape`, `in_sigmas: torch.Tensor` given a numpy schedule):
        // the callers are right.
        (
            Kind::Tensor(_),
            callers @ (Kind::Number | Kind::NumberList | Kind::Tuple | Kind::List | Kind::Str | Kind::NdArray),
        ) => callers,
        // And `list[Tensor]` to a tensor: a stacked batch iterates and indexes alike.
        (Kind::TensorSequence(_), callers @ Kind::Tensor(_)) => callers,
        // A list or tuple the annotation says nothing of the elements of (`list[tuple]`) holds
        // the tensors the callers pass (a matcher's index pairs).
        (Kind::List | Kind::Tuple, callers @ Kind::TensorSequence(_)) => callers,
        _ => base,
    }
}

/// [`parameter_kind`] of a parameter the file made `base` (annotated or not), with the class
/// of whichever kind wins.
pub fn merged_with_callers(base: &ProjectKind, annotated: bool, from_callers: &ProjectKind) -> ProjectKind {
    let kind = parameter_kind(base.kind, annotated, from_callers.kind);
    let class = if kind == from_callers.kind && kind != base.kind {
        &from_callers.class
    } else {
        &base.class
    };
    ProjectKind {
        kind,
        class: class.clone(),
    }
}

/// What the project functions a call may reach return, as the project tells the calling file:
/// their kind, and the elements of the tuple every `return` gives where those are one length
/// (`fg_mask` in `_, boxes, fg_mask = self.assigner(...)`). Elements are tensors and other
/// values without a class: an instance of a project class in a tuple is left unknown.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, bincode::Encode, bincode::Decode)]
pub struct ProjectReturns {
    pub kind: ProjectKind,
    pub tuple: Option<Box<[Returned]>>,
    /// Where the type of an argument picks the `return`s (one function's only).
    pub by_type: Option<Box<ReturnsByType>>,
}

impl ProjectReturns {
    /// The join over the functions a call may reach (an override each): kinds join, tuples
    /// element by element where all have one length.
    pub fn join(&self, other: &ProjectReturns) -> ProjectReturns {
        let tuple = match (&self.tuple, &other.tuple) {
            (Some(a), Some(b)) => Returned::join_elements(a, b),
            // A function that returns what the file cannot tell (`return super().forward(x)`
            // before the project knows) says nothing against the other's tuple.
            (Some(a), None) if other.kind.kind == Kind::Unknown => Some(a.clone()),
            (None, Some(b)) if self.kind.kind == Kind::Unknown => Some(b.clone()),
            _ => None,
        };
        ProjectReturns {
            kind: self.kind.join(&other.kind),
            tuple,
            by_type: None,
        }
    }
}

/// What a function returns where `isinstance` tests of one parameter pick the `return`
/// (`to_tensor(x)`: the tensor given, or one it makes on the CPU from a list or an array): a
/// call passing a list there gets what the list's arm returns, not the join of every arm.
#[derive(Debug, Clone, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub struct ReturnsByType {
    /// The parameter tested: its slot (after `self`), and its name for a call by keyword.
    pub slot: u16,
    pub parameter: Box<str>,
    /// Per `return`: the types of argument it can return for (see [`TypeSet`]; one outside the
    /// parameter's tests, for any) and what it returns.
    pub arms: Box<[(TypeSet, Kind)]>,
}

impl ReturnsByType {
    /// What a call whose argument for the tested parameter is `argument` returns, where its
    /// type picks some `return`s (`None` where nothing is known of it, or it matches none).
    pub fn for_argument(&self, argument: Kind) -> Option<Kind> {
        let given = TypeSet::of(argument);
        if given == TypeSet::ANY {
            return None;
        }
        self.arms
            .iter()
            .filter(|(types, _)| types.0 & given.0 != 0)
            .map(|(_, kind)| *kind)
            .reduce(Kind::join)
    }
}

/// The Python types an `isinstance` test names, as bits: a tensor, a numpy array, a list, a
/// tuple, a number, a string, a dict, or anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub struct TypeSet(pub u8);

impl TypeSet {
    pub const TENSOR: TypeSet = TypeSet(1);
    pub const NDARRAY: TypeSet = TypeSet(1 << 1);
    pub const LIST: TypeSet = TypeSet(1 << 2);
    pub const TUPLE: TypeSet = TypeSet(1 << 3);
    pub const NUMBER: TypeSet = TypeSet(1 << 4);
    pub const STR: TypeSet = TypeSet(1 << 5);
    pub const DICT: TypeSet = TypeSet(1 << 6);
    pub const OTHER: TypeSet = TypeSet(1 << 7);
    pub const ANY: TypeSet = TypeSet(u8::MAX);

    pub fn union(self, other: TypeSet) -> TypeSet {
        TypeSet(self.0 | other.0)
    }

    /// The types a value of `kind` may have (any, where nothing is known of it).
    pub fn of(kind: Kind) -> TypeSet {
        match kind {
            Kind::Tensor(_) => TypeSet::TENSOR,
            Kind::TensorSequence(_) => TypeSet::LIST.union(TypeSet::TUPLE),
            Kind::NdArray => TypeSet::NDARRAY,
            Kind::List | Kind::NumberList => TypeSet::LIST,
            Kind::Tuple => TypeSet::TUPLE,
            Kind::Number => TypeSet::NUMBER,
            Kind::Str => TypeSet::STR,
            Kind::Dict => TypeSet::DICT,
            Kind::Unknown => TypeSet::ANY,
            _ => TypeSet::OTHER,
        }
    }
}

/// Whether the hot callers of a function give a parameter a value, joined over them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, bincode::Encode, bincode::Decode)]
pub enum Given {
    /// No hot call seen.
    #[default]
    Unseen,
    /// Every one passes a value known not to be `None` (a tensor, a number, an instance).
    Always,
    /// Every one passes a true literal (`True`, `1`, `"rope"`): a value, true as a test.
    Truthy,
    /// Every one passes an argument, some of them what they were given themselves (a
    /// parameter, an attribute, a value of unknown kind): a value the caller means to supply,
    /// which may still be `None`.
    Passed,
    /// Every one leaves it to its default or passes `None`.
    Never,
    /// Every one leaves it to its default, or passes `None` or a false literal (`False`, `0`):
    /// false as a test, but not `None`.
    Falsy,
    /// Some do, some do not, or some pass what they cannot tell.
    Sometimes,
}

impl Given {
    pub fn join(self, other: Given) -> Given {
        match (self, other) {
            (Given::Unseen, other) | (other, Given::Unseen) => other,
            (a, b) if a == b => a,
            (Given::Never | Given::Falsy, Given::Never | Given::Falsy) => Given::Falsy,
            (Given::Always | Given::Truthy, Given::Always | Given::Truthy) => Given::Always,
            (Given::Always | Given::Truthy | Given::Passed, Given::Always | Given::Truthy | Given::Passed) => {
                Given::Passed
            }
            _ => Given::Sometimes,
        }
    }

    /// Whether, so given, a parameter is never `None`.
    pub fn is_value(self) -> bool {
        matches!(self, Given::Always | Given::Truthy)
    }

    /// Whether, so given, a parameter with a false default always tests false.
    pub fn is_false(self) -> bool {
        matches!(self, Given::Never | Given::Falsy)
    }

    /// Whether so giving a parameter makes an arm dead that dies where callers give it
    /// `dies_if` (`Falsy`: a test of its truth, which `None` fails too; `Always`: any value, a
    /// true literal too; `Passed`: any argument meant as the value, as a function that returns
    /// the value it was handed early (`if cached is not None: return cached`) takes it).
    pub fn kills(self, dies_if: Given) -> bool {
        match dies_if {
            Given::Falsy => self.is_false(),
            Given::Always => self.is_value(),
            Given::Passed => self.is_value() || self == Given::Passed,
            _ => self == dies_if,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default, bincode::Encode, bincode::Decode)]
pub struct FileFacts {
    /// Parameter kinds of the file's functions (by qualified name, one per parameter in the
    /// order of [`FunctionSummary::params`](super::FunctionSummary)), joined over the hot call
    /// sites that pass them.
    pub parameters: FxHashMap<Box<str>, Box<[ProjectKind]>>,
    /// What the project functions the file's hot code calls by name return, by the qualified
    /// name the file spells (`.losses.f`).
    pub returns: FxHashMap<Box<str>, ProjectReturns>,
    /// What the project functions reached through an object return (`self.head.loss(x)`,
    /// `self.assigner(x)` running `forward`, overrides joined), by the call's offset in the
    /// file.
    pub results: FxHashMap<u32, ProjectReturns>,
    /// The functions in other files (by the qualified name the file spells, sorted) that do a
    /// step's work, themselves or through what they call, or may (the project cannot find
    /// them): a loop of this file that calls one is a step loop.
    pub step_work: Box<[Box<str>]>,
    /// Whether hot callers give the parameters the file tests for `None` or truth a value (by
    /// the function's qualified name, per parameter), where every one does or none does.
    pub given: FxHashMap<Box<str>, Box<[Given]>>,
    /// The syncs in project functions that hot calls of the file pass a value into (a helper's
    /// `.item()` of its parameter), by the call's offset in the file.
    pub callee_syncs: FxHashMap<u32, Box<[CalleeSync]>>,
    /// What the methods of another file's class assign to `self.<attr>`, by (the class as the
    /// file spells it, attribute), where the file read it from an instance.
    pub attributes: FxHashMap<(Box<str>, Box<str>), ProjectKind>,
    /// What the project found an attribute of a class of the file holds, where the file cannot
    /// tell, by the methods called on it (see
    /// [`ClassSummary::duck_typed`](super::ClassSummary)): by attribute, (class, instance).
    pub duck_typed: FxHashMap<Box<str>, InstancesByClass>,
}

/// What an attribute of each of several classes (by name) holds: an instance.
pub type InstancesByClass = Vec<(Box<str>, ProjectKind)>;

/// A sync in a project function on what one of its parameters is given (see
/// [`FunctionSummary::syncs_on`](super::FunctionSummary)), as a call's file sees it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub struct CalleeSync {
    /// The function, as the note names it (`length_to_mask()`).
    pub callee: Box<str>,
    /// The parameter: by name, and by its position among the call's positional arguments.
    pub parameter: Box<str>,
    pub position: u16,
    pub rule: Rule,
    /// An argument nothing is known of syncs as well.
    pub unknown_counts: bool,
    /// What syncs there, and where: "`length.max().item()` waits for the GPU (data.py:850)".
    pub sync: Box<str>,
}

impl FileFacts {
    /// The project found that the function the file spells `callee` does a step's work.
    pub fn does_step_work(&self, callee: &str) -> bool {
        self.step_work.binary_search_by(|name| (**name).cmp(callee)).is_ok()
    }

    /// The facts for an edit of the text they were found for: `moved` says where a call at an
    /// offset of that text is now, `None` where the edit replaced it. The facts about calls are
    /// keyed by the call's offset, so they move with it (or are forgotten); the rest are keyed
    /// by name and stay.
    pub fn with_calls_moved(&self, moved: impl Fn(u32) -> Option<u32>) -> FileFacts {
        let mut facts = self.clone();
        facts.results = std::mem::take(&mut facts.results)
            .into_iter()
            .filter_map(|(at, returns)| Some((moved(at)?, returns)))
            .collect();
        facts.callee_syncs = std::mem::take(&mut facts.callee_syncs)
            .into_iter()
            .filter_map(|(at, syncs)| Some((moved(at)?, syncs)))
            .collect();
        facts
    }
}

/// In a stable order (the maps' own order varies), for the cache's key.
impl Hash for FileFacts {
    fn hash<H: Hasher>(&self, state: &mut H) {
        fn sorted<K: Ord + Hash, V: Hash>(map: &FxHashMap<K, V>, state: &mut impl Hasher) {
            let mut entries: Vec<(&K, &V)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            entries.hash(state);
        }
        sorted(&self.parameters, state);
        sorted(&self.returns, state);
        sorted(&self.results, state);
        self.step_work.hash(state);
        sorted(&self.given, state);
        sorted(&self.callee_syncs, state);
        sorted(&self.attributes, state);
        sorted(&self.duck_typed, state);
    }
}

#[cfg(test)]
const _: () = assert!(std::mem::size_of::<ProjectKind>() == 32);
