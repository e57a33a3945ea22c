//! Project-wide: which functions are hot because a hot line calls them, across files, and
//! what each finding's note says about why its line is hot.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::collections::hash_map::Entry;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::parse::SourceKind;
use crate::semantic::ClassId;
use crate::semantic::facts::merged_with_callers;
use crate::semantic::facts::{CalleeSync, InstancesByClass};
use crate::semantic::names::names_a_step;
use crate::semantic::{
    Argument, CallArguments, CallSite, Callee, ClassRef, DeadWhere, Dependence, Device, Export, FileFacts,
    FileSemantics, FunctionId, FunctionSummary, Given, HotContext, HotReason, IntrinsicHot, Kind, ModuleKind,
    PeriodicInner, ProjectKind, ProjectReturns, Question, Questions, Receiver, TensorFacts, refines_passed_on,
};

/// One linted file, as the call graph sees it.
pub struct ModuleInfo<'a> {
    /// Dotted module path (`pkg.sub.losses`), from the file's package folders.
    pub module: String,
    /// Whether the file is a package's `__init__.py`.
    pub is_package: bool,
    /// The path shown to users.
    pub display: &'a str,
    pub semantics: &'a FileSemantics,
}

impl ModuleInfo<'_> {
    /// Its name in the call graph: its module path, or a notebook's (which has none: nothing
    /// imports it) by its file name without `.ipynb`, as a script's top level is named.
    pub fn dotted_name(&self) -> std::borrow::Cow<'_, str> {
        if !self.module.is_empty() || self.is_package {
            return std::borrow::Cow::Borrowed(&self.module);
        }
        let stem = Path::new(self.display).file_stem().and_then(|stem| stem.to_str());
        std::borrow::Cow::Borrowed(stem.unwrap_or_default())
    }
}

/// Why a file's functions are hot through calls: the note of each one a hot line reaches
/// ("`masked_mean()` is called from the loop at train.py:12").
pub type FunctionNotes = FxHashMap<FunctionId, String>;

/// A function of the linted project: (file index, function id).
pub type ProjectFunction = (usize, FunctionId);

/// A call site of the project: (file, the site's index in the file).
type ProjectSite = (usize, usize);

/// What a call with `arguments` gives slot `slot` of `callee` (see [`Given`]), `skip` leading
/// arguments before its parameters: a parameter, or an entry of a dict parameter its tests
/// read (see [`EntryAsked`]). `**kwargs` cannot give again what a keyword gave.
fn given_at(arguments: &CallArguments, callee: &FunctionSummary, skip: usize, slot: usize) -> Given {
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

/// Whether a call with `arguments` gives `callee` what one of `dead_where` says: the code they
/// were found in does not run for it.
fn skips(arguments: Option<&CallArguments>, callee: &FunctionSummary, skip: usize, dead_where: &[DeadWhere]) -> bool {
    let Some(arguments) = arguments.filter(|_| !dead_where.is_empty()) else {
        return false;
    };
    dead_where.iter().any(|all| {
        all.iter()
            .all(|&(slot, dies_if)| given_at(arguments, callee, skip, usize::from(slot)).kills(dies_if))
    })
}

/// A finding of a function on a parameter: (function, index in its `syncs_on`).
type SyncOrigin = (ProjectFunction, usize);

/// A parameter slot of a function, and the finding that syncs on what it is given.
type SyncThrough = (u16, SyncOrigin);

/// Values passed on whose facts a question reaches (see [`Project::wanted`]).
#[derive(Default)]
struct Wanted<'m> {
    /// Parameters of a function that an argument or `return` value worth its facts is made from.
    passed_on: FxHashSet<(ProjectFunction, usize)>,
    /// The project calls such values are made from, by file (names as spelled).
    calls: FxHashMap<usize, FxHashSet<&'m str>>,
    /// The calls through objects such values are made from: (file, site index).
    sites: FxHashSet<(usize, usize)>,
}

/// What a question newly reached, still to follow.
enum Reached {
    Parameter(ProjectFunction, usize),
    Return(ProjectFunction),
}

/// The worklist of [`Project::wanted`].
struct Reach<'p, 'm> {
    project: &'p Project<'m>,
    wanted: Wanted<'m>,
    /// Parameters a question reaches (besides those asked about where they are).
    asked: FxHashSet<(ProjectFunction, usize)>,
    /// Functions whose `return` value a question reaches.
    returns: FxHashSet<ProjectFunction>,
    /// What a file's names call, resolved once.
    resolved: FxHashMap<(usize, &'m str), Option<ProjectFunction>>,
    pending: Vec<Reached>,
}

impl<'m> Reach<'_, 'm> {
    fn ask(&mut self, function: ProjectFunction, slot: usize) {
        if self.asked.insert((function, slot)) {
            self.pending.push(Reached::Parameter(function, slot));
        }
    }

    fn returned(&mut self, function: ProjectFunction) {
        if self.returns.insert(function) {
            self.pending.push(Reached::Return(function));
        }
    }

    /// A value of `function` a question reaches is made from `depends`.
    fn made_from(&mut self, function: ProjectFunction, depends: &'m Dependence) {
        for slot in depends.slots() {
            self.wanted.passed_on.insert((function, slot));
            self.ask(function, slot);
        }
        for call in &depends.calls {
            self.wanted.calls.entry(function.0).or_default().insert(call);
            self.call(function.0, call);
        }
        for &site in &depends.sites {
            self.wanted.sites.insert((function.0, site as usize));
            self.site(function.0, site as usize);
        }
    }

    /// The result of `spelled` called in `file` is asked about.
    fn call(&mut self, file: usize, spelled: &'m str) {
        let project = self.project;
        let callee =
            *self
                .resolved
                .entry((file, spelled))
                .or_insert_with(|| match project.resolve_spelled(file, spelled)? {
                    Resolved::Function(function) => Some(function),
                    Resolved::Class(_) => None,
                });
        if let Some(callee) = callee {
            self.returned(callee);
        }
    }

    /// The result of call site `index` of `file` is asked about.
    fn site(&mut self, file: usize, index: usize) {
        for &target in &self.project.targets[file][index].functions {
            self.returned(target);
        }
    }
}

/// A function hot through calls, for the hot call tree.
pub struct ReachedFunction {
    pub function: ProjectFunction,
    /// The function it is reached from; `None` for the first call of a chain.
    pub caller: Option<ProjectFunction>,
    /// Where its chain starts: "the loop at train.py:12".
    pub heading: String,
}

/// The most callers a note names one by one; a longer chain is spelled by its first
/// [`NOTE_HEAD`] and last [`NOTE_TAIL`].
const NOTE_LINKS: usize = 8;
const NOTE_HEAD: usize = 3;
const NOTE_TAIL: usize = 3;

/// Where a function sits in its hot chain: how many callers come before it (0 for the first
/// function called from the hot line), and the last function of the chain's head (the one at
/// depth `NOTE_HEAD - 1`, or itself where it is within the head).
#[derive(Clone, Copy)]
struct ChainPlace {
    depth: usize,
    head_end: ProjectFunction,
}

type ChainPlaces = FxHashMap<ProjectFunction, ChainPlace>;

/// Functions made hot by their callers, with the chain that explains it.
pub struct HotFunctions<'m> {
    modules: &'m [ModuleInfo<'m>],
    /// Each function reached from a hot line: the call at the start of its chain, and the
    /// function it was reached from (`None` for the first call of the chain).
    reached: FxHashMap<ProjectFunction, (RootCall, Option<ProjectFunction>)>,
}

impl HotFunctions<'_> {
    /// Whether a call site of `file` runs hot: on a hot line, or in a function a hot line
    /// reaches.
    fn runs_hot(&self, file: usize, site: &CallSite) -> bool {
        match site.context {
            HotContext::Hot(_) => true,
            HotContext::InFunction(caller) => self.reached.contains_key(&(file, caller)),
            _ => false,
        }
    }

    /// "`masked_mean()` is called from the loop at train.py:12 via `compute_loss()`", for a
    /// function of file `file`; `None` when no hot line reaches it. A chain of more than
    /// [`NOTE_LINKS`] callers is spelled by its first and last few, with how many are left out
    /// between: a note's length does not grow with its chain's. `places` remembers where each
    /// function asked about sits in its chain, so that the notes of every function of a chain
    /// cost its length once, not once per function.
    fn note(&self, file: usize, function: FunctionId, places: &mut ChainPlaces) -> Option<String> {
        let &(root, caller) = self.reached.get(&(file, function))?;
        let name = self.function_name((file, function));
        let root = describe_root(self.modules, root);
        let Some(caller) = caller else {
            return Some(format!("{name} is called from {root}"));
        };
        let place = self.place(caller, places);
        let callers = place.depth + 1;
        let via = if callers <= NOTE_LINKS {
            self.names_up(caller, callers)
        } else {
            let head = self.names_up(place.head_end, NOTE_HEAD);
            let tail = self.names_up(caller, NOTE_TAIL);
            let left_out = crate::nesting::with_thousands(callers - NOTE_HEAD - NOTE_TAIL);
            format!("{head} → … ({left_out} more) … → {tail}")
        };
        Some(format!("{name} is called from {root} via {via}"))
    }

    /// The names of `count` functions of a chain ending at `last`, from the chain's start side:
    /// "`a()` → `b()` → `last()`".
    fn names_up(&self, last: ProjectFunction, count: usize) -> String {
        let mut names = Vec::with_capacity(count);
        let mut link = Some(last);
        while let Some(node) = link.filter(|_| names.len() < count) {
            names.push(self.function_name(node));
            link = self.reached.get(&node).and_then(|(_, parent)| *parent);
        }
        names.reverse();
        names.join(" → ")
    }

    /// Where `node` sits in its chain: found by walking up to a function whose place is known
    /// (or to the chain's start), then remembered for every function on the way.
    fn place(&self, node: ProjectFunction, places: &mut ChainPlaces) -> ChainPlace {
        let mut path = Vec::new();
        let mut link = node;
        let mut above = loop {
            if let Some(&known) = places.get(&link) {
                break Some(known);
            }
            path.push(link);
            // Chains are paths of a tree; the bound only keeps a malformed one from looping.
            match self.reached.get(&link).and_then(|(_, parent)| *parent) {
                Some(parent) if path.len() <= self.reached.len() => link = parent,
                _ => break None,
            }
        };
        for &link in path.iter().rev() {
            let place = match above {
                None => ChainPlace {
                    depth: 0,
                    head_end: link,
                },
                Some(above) => ChainPlace {
                    depth: above.depth + 1,
                    head_end: if above.depth + 1 < NOTE_HEAD {
                        link
                    } else {
                        above.head_end
                    },
                },
            };
            places.insert(link, place);
            above = Some(place);
        }
        above.unwrap_or(ChainPlace {
            depth: 0,
            head_end: node,
        })
    }

    /// The note of every function reached from a hot line that `wanted` names (by file and
    /// function), by file (of `files`).
    pub fn notes(&self, files: usize, wanted: impl Fn(usize, FunctionId) -> bool) -> Vec<FunctionNotes> {
        let mut notes = vec![FunctionNotes::default(); files];
        let mut places = ChainPlaces::default();
        for &(file, function) in self.reached.keys() {
            if wanted(file, function)
                && let Some(note) = self.note(file, function, &mut places)
            {
                notes[file].insert(function, note);
            }
        }
        notes
    }

    /// The functions made hot by calls, each with the function it is reached from (`None`
    /// for the first call of a chain) and where its chain starts ("the loop at train.py:12").
    /// The heading names the chain's start: "the loop at train.py:12", or "`Net.forward()` at
    /// model.py:13: `forward` runs on every step" (a function hot by itself is not listed under
    /// its own heading).
    pub fn reached(&self) -> Vec<ReachedFunction> {
        let mut reached: Vec<_> = self
            .reached
            .iter()
            .filter_map(|(&node, &(root, caller))| {
                let heading = match root.reason {
                    HotReason::Loop { line } => {
                        let module = &self.modules[root.file];
                        format!("the loop at {}", module.semantics.place(module.display, line))
                    }
                    HotReason::Function { function, why } => {
                        if caller.is_none() && node == (root.file, function) {
                            return None;
                        }
                        let module = &self.modules[root.file];
                        let summary = &module.semantics.functions[function as usize];
                        format!(
                            "`{}()` at {}: {}",
                            summary.qualname,
                            module.semantics.place(module.display, summary.line),
                            why.describe()
                        )
                    }
                };
                Some(ReachedFunction {
                    function: node,
                    caller,
                    heading,
                })
            })
            .collect();
        reached.sort_by_key(|reached| reached.function);
        reached
    }

    fn function_name(&self, (file, function): ProjectFunction) -> String {
        format!(
            "`{}()`",
            self.modules[file].semantics.functions[function as usize].qualname
        )
    }
}

/// The dotted module path of a file: its stem, prefixed by every enclosing folder that holds an
/// `__init__.py`.
pub fn module_path(path: &Path) -> (String, bool) {
    ModulePaths::default().module_of(path)
}

/// Module paths of many files, looking each folder's `__init__.py` up once.
#[derive(Default)]
pub struct ModulePaths {
    /// Folder -> its dotted package path, or `None` when it is not a package.
    packages: FxHashMap<PathBuf, Option<String>>,
}

impl ModulePaths {
    /// The dotted module path of a file, and whether it is a package's `__init__.py`.
    pub fn module_of(&mut self, path: &Path) -> (String, bool) {
        // A notebook is run, never imported: no module name, so that `train.ipynb` beside
        // `train.py` does not stand for it.
        if SourceKind::of(path) == SourceKind::Notebook {
            return (String::new(), false);
        }
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let is_package = stem == "__init__";
        let package = path.parent().and_then(|dir| self.package_of(dir, 0));
        let module = match (package, is_package) {
            (Some(package), true) => package,
            (Some(package), false) => format!("{package}.{stem}"),
            (None, true) => String::new(),
            (None, false) => stem.to_string(),
        };
        (module, is_package)
    }

    fn package_of(&mut self, dir: &Path, depth: u32) -> Option<String> {
        if let Some(known) = self.packages.get(dir) {
            return known.clone();
        }
        let package = if depth < 32 && dir.join("__init__.py").is_file() {
            let name = dir.file_name().and_then(|n| n.to_str())?.to_string();
            match dir.parent().and_then(|parent| self.package_of(parent, depth + 1)) {
                Some(parent) => Some(format!("{parent}.{name}")),
                None => Some(name),
            }
        } else {
            None
        };
        self.packages.insert(dir.to_path_buf(), package.clone());
        package
    }
}

/// A call on a line hot by itself (`line` of `file`, hot for `reason`), where a chain of hot
/// calls starts: "the loop at train.py:12".
#[derive(Clone, Copy)]
struct RootCall {
    file: usize,
    reason: HotReason,
    line: u32,
}

/// A class of the project: (file index, class id).
type ProjectClass = (usize, ClassId);

/// The most classes a hierarchy walk visits (bases or subclasses): bounds a pathological or
/// cyclic hierarchy.
const HIERARCHY_LIMIT: usize = 256;

/// The project's classes: which file class each base names, which are `nn.Module`s through
/// bases anywhere in the project, and each class's subclasses (for overrides).
struct ClassIndex {
    /// Per file, per class: the project classes its bases name.
    bases: Vec<Vec<Vec<ProjectClass>>>,
    /// Per file, per class: what it is through its bases anywhere in the project.
    module: Vec<Vec<Option<ModuleKind>>>,
    subclasses: FxHashMap<ProjectClass, Subclasses>,
    /// The classes registered in each registry (`@MODELS.register_module()`), by where the
    /// registry is made: per file, by its name there.
    registered: Vec<FxHashMap<Box<str>, Vec<ProjectClass>>>,
}

/// A class's subclasses: the direct ones, and all of them once asked (each call of an
/// overridable method asks again).
struct Subclasses {
    direct: Vec<ProjectClass>,
    all: OnceLock<Box<[ProjectClass]>>,
}

/// The functions a call site may run.
#[derive(Clone, Default)]
pub struct Targets {
    functions: Vec<ProjectFunction>,
    /// A method called through its class (`Head.loss(obj, x)`): the first argument is the
    /// instance.
    unbound: bool,
    /// Reached through an instance a registry built (`MODELS.build(cfg)`), which may be any of
    /// its classes: the call runs each (hot, doing step work), but what it passes tells none of
    /// them (`self.detector.loss(x, samples)` is a detector's `loss`, not a box head's).
    registry: bool,
}

/// The classes a class reference names.
#[derive(Default)]
struct ClassesOf {
    classes: Vec<ProjectClass>,
    /// Some are a registry's (see [`Targets::registry`]).
    registry: bool,
}

/// What a project name resolves to.
#[derive(Clone, Copy)]
enum Resolved {
    Function(ProjectFunction),
    Class(ProjectClass),
}

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
enum Joined {
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

/// The call graph of the project, and what it knows about each file that the file alone does
/// not show.
pub struct Project<'m> {
    modules: &'m [ModuleInfo<'m>],
    index: ModuleIndex<'m>,
    classes: ClassIndex,
    /// Per file: each call site's targets (most have none or one).
    targets: Vec<Vec<Targets>>,
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
                // A file calls the same names and methods again and again: each resolved once.
                let mut resolved: FxHashMap<&Callee, Targets> = FxHashMap::default();
                module
                    .semantics
                    .call_sites
                    .iter()
                    .map(|site| match &site.callee {
                        Callee::Local(id) => Targets {
                            functions: vec![(file, *id)],
                            ..Targets::default()
                        },
                        callee => {
                            let mut targets = resolved
                                .entry(callee)
                                .or_insert_with(|| project.resolve_callee(file, callee))
                                .clone();
                            project.drop_overrides_not_run_from(file, site, &mut targets);
                            project.drop_those_not_taking(site, &mut targets);
                            targets
                        }
                    })
                    .collect()
            })
            .collect();
        project.targets = targets;
        project
    }

    /// Each file's resolved call targets, to build the next round's project with.
    pub fn into_targets(self) -> Vec<Vec<Targets>> {
        self.targets
    }

    /// The project functions a call may run.
    fn resolve_callee(&self, file: usize, callee: &Callee) -> Targets {
        let bound = |functions| Targets {
            functions,
            ..Targets::default()
        };
        match callee {
            Callee::Local(id) => bound(vec![(file, *id)]),
            Callee::Imported { module, name } => match self.resolve_name(file, module, name, 0) {
                Some(Resolved::Function(function)) => bound(vec![function]),
                Some(Resolved::Class(class)) => bound(self.methods(class, "__init__")),
                None => match self.class_named(file, module) {
                    // `Head.loss(obj, x)` where `Head` is imported.
                    Some(class) => Targets {
                        functions: self.methods(class, name),
                        unbound: true,
                        registry: false,
                    },
                    None => Targets::default(),
                },
            },
            Callee::Super { class, method } => bound(
                self.classes.bases[file][*class as usize]
                    .iter()
                    .find_map(|&base| self.lookup_method(base, method))
                    .into_iter()
                    .collect(),
            ),
            Callee::Method { class, method, bound } => {
                let ClassesOf { classes, registry } = self.classes_of(file, class);
                Targets {
                    functions: self.methods_of_all(&classes, method),
                    unbound: !bound,
                    registry,
                }
            }
            Callee::Property { class, name } => {
                let ClassesOf { classes, registry } = self.classes_of(file, class);
                let mut functions = self.methods_of_all(&classes, name);
                functions.retain(|&(file, id)| self.modules[file].semantics.functions[id as usize].property);
                Targets {
                    functions,
                    unbound: false,
                    registry,
                }
            }
        }
    }

    /// Of the functions `site` may run, those it runs on an instance of the class its receiver
    /// names (the method as that class resolves it), not a subclass's override reached by
    /// class-hierarchy analysis. An override runs, and reports, its own lines; its syncs are not
    /// the call's (`self.embed_tokens(ids)` of a `Gemma3TextScaledWordEmbedding` does not run
    /// the masked write of a subclass in another model). The method is looked up once per site,
    /// not once per target: a base class's `forward` may have hundreds of overrides.
    fn run_as_named<'t>(
        &self,
        file: usize,
        site: &CallSite,
        targets: &'t Targets,
    ) -> impl Iterator<Item = ProjectFunction> + 't {
        let named: Option<Vec<ProjectFunction>> = match &site.callee {
            Callee::Method { class, method, .. } => {
                let classes = self.classes_of(file, class).classes;
                (!classes.is_empty()).then(|| {
                    classes
                        .into_iter()
                        .filter_map(|class| self.lookup_method(class, self.called_method(class, method)?))
                        .collect()
                })
            }
            _ => None,
        };
        targets
            .functions
            .iter()
            .copied()
            .filter(move |target| named.as_ref().is_none_or(|named| named.contains(target)))
    }

    /// Of several functions a call may run (a registry's classes, overrides), those that cannot
    /// take its arguments are not what it runs (`self.bbox_head.loss(x, samples)` does not run
    /// a head's `loss` that requires seven); where none can, a decorator may have changed the
    /// signature, and all stay.
    fn drop_those_not_taking(&self, site: &CallSite, targets: &mut Targets) {
        if targets.functions.len() < 2 {
            return;
        }
        let accepts = |&(file, id): &ProjectFunction| {
            let function = &self.modules[file].semantics.functions[id as usize];
            let skip = function.receiver.leading_arguments(targets.unbound);
            function.signature.accepts(site.arity, skip)
        };
        if targets.functions.iter().any(accepts) {
            targets.functions.retain(accepts);
        }
    }

    /// `self.m()` in method `f` of class `C`: on an instance of a subclass that overrides `f`
    /// (and whose `f` does not call `super().f`), `C.f` does not run, so that subclass's `m` is
    /// not reached from here (class-hierarchy analysis, narrowed by the caller).
    fn drop_overrides_not_run_from(&self, file: usize, site: &CallSite, targets: &mut Targets) {
        let Callee::Method {
            class: ClassRef::Local(class),
            bound: true,
            ..
        } = &site.callee
        else {
            return;
        };
        let Some(caller) = site.caller else { return };
        let functions = &self.modules[file].semantics.functions;
        let caller_function = &functions[caller as usize];
        if caller_function.class != Some(*class)
            || caller_function.receiver != Receiver::Instance
            || targets.functions.len() < 2
        {
            return;
        }
        let caller_name = caller_function.name();
        let subclasses = self.classes.subclasses_of((file, *class));
        targets.functions.retain(|&(target_file, target)| {
            // Only a subclass's override: the class's own method, or a base's it inherits, is
            // what runs on an instance of the class itself.
            let Some(target_class) = self.modules[target_file].semantics.functions[target as usize].class else {
                return true;
            };
            if !subclasses.contains(&(target_file, target_class)) {
                return true;
            }
            match self.lookup_method((target_file, target_class), caller_name) {
                // The subclass runs this very `f`, or its own `f` hands over to it.
                Some(runs) if runs == (file, caller) => true,
                Some((override_file, override_id)) => {
                    self.modules[override_file].semantics.call_sites.iter().any(|call| {
                        call.caller == Some(override_id)
                            && matches!(&call.callee, Callee::Super { method, .. } if **method == *caller_name)
                    })
                }
                None => true,
            }
        });
    }

    /// What a qualified name as `file` spells it names (`.losses.f`, `pkg.heads.Head`).
    fn resolve_spelled(&self, file: usize, spelled: &str) -> Option<Resolved> {
        let (module, name) = spelled.rsplit_once('.')?;
        self.resolve_name(file, module, name, 0)
    }

    /// A module's name `name`: a function, a class, or what it re-exports.
    fn resolve_name(&self, file: usize, module: &str, name: &str, depth: u32) -> Option<Resolved> {
        if depth > 4 {
            return None;
        }
        let absolute = absolute_module(&self.modules[file], module)?;
        let target = self.index.find(self.modules, &absolute)?;
        match self.modules[target].semantics.exports.get(name)? {
            Export::Function(id) => Some(Resolved::Function((target, *id))),
            Export::Class(id) => Some(Resolved::Class((target, *id))),
            Export::Import { module, name } => self.resolve_name(target, module, name, depth + 1),
        }
    }

    /// The classes a file's reference names: one, or each of a union (`A|.beam.B`, an instance
    /// of either).
    fn classes_of(&self, file: usize, class: &ClassRef) -> ClassesOf {
        let mut classes = ClassesOf::default();
        match class {
            ClassRef::Local(id) => classes.classes.push((file, *id)),
            ClassRef::Imported(spelled) => {
                for spelled in spelled.split('|') {
                    match self.class_named(file, spelled) {
                        Some(class) => classes.classes.push(class),
                        None => {
                            let registered = self.registered_in(file, spelled);
                            classes.registry |= !registered.is_empty();
                            classes.classes.extend_from_slice(registered);
                        }
                    }
                }
            }
        }
        classes
    }

    /// The classes registered in the registry `spelled` names in `file` (an instance it builds
    /// is one of them); none where it names no registry of the project.
    fn registered_in(&self, file: usize, spelled: &str) -> &[ProjectClass] {
        registry_named(self.modules, &self.index, file, spelled)
            .and_then(|(owner, name)| self.classes.registered[owner].get(name))
            .map_or(&[], Vec::as_slice)
    }

    /// The class `spelled` names in `file`: a class of the file by name, or an imported one
    /// (`.heads.Head`, `pkg.heads.Head`).
    fn class_named(&self, file: usize, spelled: &str) -> Option<ProjectClass> {
        class_named(self.modules, &self.index, file, spelled)
    }

    /// What `self.<attr>` holds in instances of `class`, spelled for `file`: as the class's own
    /// methods assign it, else the nearest base's.
    fn attribute_of(&self, class: ProjectClass, attr: &str, file: usize) -> Option<ProjectKind> {
        self.first_in_lineage(class, |(owner, id)| {
            let kind = self.modules[owner].semantics.classes[id as usize].attribute(attr)?;
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

    /// What `class.method(...)` may run: the method as the class resolves it (its own, else the
    /// nearest base's), and every override in its subclasses. Calling an instance runs its
    /// `__call__`, which is `forward` for an `nn.Module`.
    fn methods(&self, class: ProjectClass, method: &str) -> Vec<ProjectFunction> {
        let Some(method) = self.called_method(class, method) else {
            return Vec::new();
        };
        let mut found: Vec<ProjectFunction> = self.lookup_method(class, method).into_iter().collect();
        for &sub in self.classes.subclasses_of(class) {
            let semantics = self.modules[sub.0].semantics;
            if let Some(id) = semantics.classes[sub.1 as usize].method(&semantics.functions, method) {
                found.push((sub.0, id));
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }

    /// The method a call of `method` on an instance of `class` runs: calling an instance runs
    /// its `__call__`, which is `forward` for an `nn.Module` (`None` for an instance of another
    /// class without one).
    fn called_method<'a>(&self, class: ProjectClass, method: &'a str) -> Option<&'a str> {
        if method != "__call__" || self.lookup_method(class, "__call__").is_some() {
            Some(method)
        } else {
            self.classes.module_kind(class).map(|_| "forward")
        }
    }

    /// The methods `method` names on instances of any of `classes` (see [`Self::methods`]).
    fn methods_of_all(&self, classes: &[ProjectClass], method: &str) -> Vec<ProjectFunction> {
        let mut functions: Vec<ProjectFunction> =
            classes.iter().flat_map(|&class| self.methods(class, method)).collect();
        // A union's or a registry's classes may share a base's method.
        if classes.len() > 1 {
            functions.sort_unstable();
            functions.dedup();
        }
        functions
    }

    /// The method `class` has: its own, else the first base's (depth first, as Python's order
    /// does for single inheritance).
    fn lookup_method(&self, class: ProjectClass, method: &str) -> Option<ProjectFunction> {
        self.first_in_lineage(class, |(owner, id)| {
            let semantics = self.modules[owner].semantics;
            let found = semantics.classes[id as usize].method(&semantics.functions, method)?;
            Some((owner, found))
        })
    }

    /// Which functions are hot because a hot line calls them, with the chain that explains it.
    pub fn hot_functions(&self) -> HotFunctions<'m> {
        let modules = self.modules;
        // Queued: (function, the root call of its chain, the function it is reached from).
        type Queued = (ProjectFunction, RootCall, Option<ProjectFunction>);
        let mut loop_roots: VecDeque<Queued> = VecDeque::new();
        let mut function_roots: VecDeque<Queued> = VecDeque::new();
        let mut edges = CallEdgesBuilder::new(modules);
        for (file, module) in modules.iter().enumerate() {
            for (site, targets) in module.semantics.call_sites.iter().zip(&self.targets[file]) {
                let root = |reason| RootCall {
                    file,
                    reason,
                    line: site.line,
                };
                for &target in &targets.functions {
                    match site.context {
                        HotContext::Hot(reason @ HotReason::Loop { .. }) => {
                            loop_roots.push_back((target, root(reason), None));
                        }
                        HotContext::Hot(reason @ HotReason::Function { function: caller, .. }) => {
                            function_roots.push_back((target, root(reason), None));
                            edges.add((file, caller), target);
                        }
                        HotContext::InFunction(caller) => edges.add((file, caller), target),
                        _ => {}
                    }
                }
            }
        }
        // Of the calls that start chains, those in the file of the function they call come first:
        // where a function is reached from several hot places at the same depth, its note names
        // one beside it (`Qwen2VLModel.forward`, not a model in another file that borrows the
        // method through a base).
        for queue in [&mut loop_roots, &mut function_roots] {
            queue
                .make_contiguous()
                .sort_by_key(|(target, root, _)| target.0 != root.file);
        }
        // Functions hot by themselves that no file of the project defines as such: `forward`
        // of a class that is an `nn.Module` only through a base in another file.
        for (file, module) in modules.iter().enumerate() {
            for (id, function) in module.semantics.functions.iter().enumerate() {
                if function.intrinsic.is_none()
                    && let Some(why) = self.intrinsic_through_bases(file, function)
                {
                    let root = RootCall {
                        file,
                        reason: HotReason::Function {
                            function: id as FunctionId,
                            why,
                        },
                        line: function.line,
                    };
                    function_roots.push_front(((file, id as FunctionId), root, None));
                }
            }
        }
        let edges = edges.build();
        // Breadth-first, so each note names the shortest chain. The loops go first: "called from
        // the loop at train.py:12 via `compute_loss()`" says more than "called from
        // `compute_loss()`", which may be hot only by its name.
        let mut hot = HotFunctions {
            modules,
            reached: FxHashMap::default(),
        };
        for mut queue in [loop_roots, function_roots] {
            while let Some((node, root, caller)) = queue.pop_front() {
                let summary = &modules[node.0].semantics.functions[node.1 as usize];
                if summary.never_hot || hot.reached.contains_key(&node) {
                    continue;
                }
                hot.reached.insert(node, (root, caller));
                for target in edges.of(node) {
                    queue.push_back((*target, root, Some(node)));
                }
            }
        }
        hot
    }

    /// `forward` / `__call__` of a class that is a module or a loss, or `update` of a metric,
    /// only through bases in other files (the file itself did not see it).
    fn intrinsic_through_bases(&self, file: usize, function: &FunctionSummary) -> Option<IntrinsicHot> {
        let class = function.class?;
        let local = self.modules[file].semantics.classes.get(class as usize)?.module;
        let global = self.classes.module[file][class as usize];
        if local == global {
            return None;
        }
        let name = function.name();
        match (global?, name) {
            (ModuleKind::Loss, "forward" | "__call__") => Some(IntrinsicHot::Loss),
            (ModuleKind::Metric, "update") => Some(IntrinsicHot::MetricUpdate),
            (_, "forward") => Some(IntrinsicHot::Forward),
            _ => None,
        }
    }

    /// Every call edge between project code, by dotted name relative to the project root
    /// (`pkg.model.Net.forward`, a module's own top level as `pkg.model`): each function and
    /// module is a key, with the sorted names it may call.
    pub fn call_graph(&self) -> std::collections::BTreeMap<String, Vec<String>> {
        let mut graph: std::collections::BTreeMap<String, Vec<String>> = Default::default();
        for (file, module) in self.modules.iter().enumerate() {
            graph.entry(module.dotted_name().into_owned()).or_default();
            for id in 0..module.semantics.functions.len() {
                graph.entry(self.dotted_name((file, id as FunctionId))).or_default();
            }
            for (site, targets) in module.semantics.call_sites.iter().zip(&self.targets[file]) {
                let caller = match site.caller {
                    Some(id) => self.dotted_name((file, id)),
                    None => module.dotted_name().into_owned(),
                };
                let callees = graph.entry(caller).or_default();
                callees.extend(targets.functions.iter().map(|&target| self.dotted_name(target)));
            }
        }
        for callees in graph.values_mut() {
            callees.sort_unstable();
            callees.dedup();
        }
        graph
    }

    /// Per function its hot calls reach that asked (or was told before, per `applied`), whether
    /// they give each parameter a value (see [`Given`]): a value the caller made gives one;
    /// leaving it to its default or passing `None` gives none; what the caller was given, or
    /// spreading `*args` or `**kwargs`, may.
    fn given(&self, sites: &[(usize, usize)], applied: &[&FileFacts]) -> FxHashMap<ProjectFunction, Vec<Given>> {
        let unknown = CallArguments {
            spread: true,
            ..CallArguments::default()
        };
        // What each site gives each of its targets' parameters, in parallel; joined after.
        let per_site: Vec<Vec<(ProjectFunction, Vec<Given>)>> = sites
            .par_iter()
            .map(|&(file, index)| {
                // A call whose arguments were not kept may give any parameter.
                let arguments = self.modules[file].semantics.call_sites[index]
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
                        let callee = &self.modules[target.0].semantics.functions[target.1 as usize];
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

    /// `pkg.model.Net.forward`; a nested function's `<locals>` step is left out.
    pub fn dotted_name(&self, (file, id): ProjectFunction) -> String {
        let module = self.modules[file].dotted_name();
        let qualname = self.modules[file].semantics.functions[id as usize]
            .qualname
            .replace(".<locals>.", ".");
        if module.is_empty() {
            qualname
        } else {
            format!("{module}.{qualname}")
        }
    }

    /// What the project knows about each file that the file alone does not show: parameter
    /// kinds from hot callers and what the project functions its hot code calls return. `applied` are the facts each file was last checked
    /// with: a function keeps its facts while they hold, so a file is checked again only when
    /// they change.
    pub fn facts(&self, hot: &HotFunctions, applied: &[&FileFacts]) -> Vec<FileFacts> {
        let modules = self.modules;
        // The hot call sites: (file, site index); and with constructions, also in setup code
        // (their arguments decide the flags the instance's methods test: `if self.use_conv:`)
        // outside tests.
        let (sites, given_sites): (Vec<Vec<ProjectSite>>, Vec<Vec<ProjectSite>>) = modules
            .par_iter()
            .enumerate()
            .map(|(file, module)| {
                let mut sites = Vec::new();
                let mut given_sites = Vec::new();
                // Tests construct a library's public classes as a user might, with some options
                // left out: the constructions that decide flags are the project's own.
                let constructions_count = !crate::linter::is_test_path(Path::new(module.display));
                for (index, site) in module.semantics.call_sites.iter().enumerate() {
                    let targets = &self.targets[file][index].functions;
                    if targets.is_empty() {
                        continue;
                    }
                    let runs_hot = hot.runs_hot(file, site);
                    let constructs = || {
                        targets.iter().any(|&(file, id)| {
                            modules[file].semantics.functions[id as usize]
                                .qualname
                                .ends_with(".__init__")
                        })
                    };
                    // Those that pass something a callee can use.
                    if runs_hot && site.arguments.as_deref().is_some_and(|arguments| arguments.informative) {
                        sites.push((file, index));
                    }
                    if runs_hot || (constructions_count && constructs()) {
                        given_sites.push((file, index));
                    }
                }
                (sites, given_sites)
            })
            .unzip();
        let (sites, given_sites) = (sites.concat(), given_sites.concat());
        // Per hot function: the join of what its hot callers pass each parameter, spelled in the
        // callee's file (see `passed_kinds`). Each site's arguments are spelled for its callees
        // in parallel: an argument nothing is known about says nothing, and one that is the
        // caller's own parameter becomes a forwarding edge.
        let contributions: Vec<Vec<Passing>> = sites
            .par_iter()
            .map(|&(file, index)| {
                let site = &modules[file].semantics.call_sites[index];
                let (Some(arguments), targets) = (site.arguments.as_deref(), &self.targets[file][index]) else {
                    return Vec::new();
                };
                if targets.registry {
                    return Vec::new();
                }
                let mut passing = Vec::new();
                for &target in &targets.functions {
                    let callee = &modules[target.0].semantics.functions[target.1 as usize];
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
            .collect();
        // What the sites pass that is not a parameter passed on, joined per callee's slot.
        let mut direct: FxHashMap<ProjectFunction, Vec<Joined>> = FxHashMap::default();
        // (caller, its slot) -> (callee, its slot), with the argument's kind at the site.
        let mut forwards: Vec<(ProjectFunction, usize, ProjectFunction, usize)> = Vec::new();
        let mut forwarded_kinds: Vec<&ProjectKind> = Vec::new();
        // Arguments made from what the caller cannot tell -> (callee, its slot).
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
        // The phases below read the summaries and nothing of each other: on two threads, what
        // one thread solves (the kinds passed, what is wanted of them) the other overlaps with
        // the rest.
        let ((passed, wanted), (given, (duck_typed, (step_work, syncs)))) = rayon::join(
            || {
                let passed = self.passed_kinds(direct, &forwards, &forwarded_kinds);
                let wanted = self.wanted(hot, &forwards, &passed_on);
                (passed, wanted)
            },
            || {
                rayon::join(
                    || self.given(&given_sites, applied),
                    || {
                        rayon::join(
                            || self.duck_typed(),
                            || rayon::join(|| self.step_work(), || self.parameter_syncs()),
                        )
                    },
                )
            },
        );
        let mut facts: Vec<FileFacts> = vec![FileFacts::default(); modules.len()];
        let set_outside: FxHashSet<&str> = modules
            .iter()
            .flat_map(|module| module.semantics.attributes_set_outside.iter().map(|name| &**name))
            .collect();
        for ((file, id), mut given) in given {
            let function = &modules[file].semantics.functions[id as usize];
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
        for ((file, id), slots) in passed {
            let function = &modules[file].semantics.functions[id as usize];
            // Given once, kept while they hold, so the file is not checked again for nothing.
            let kept = applied[file].parameters.contains_key(&*function.qualname);
            // Checked again only where a rule could tell more: it asked about a value the file
            // could not tell, or it reported something.
            let changes = function
                .params
                .iter()
                .zip(&slots)
                .enumerate()
                .any(|(slot, (param, from_callers))| {
                    function.details().demand.answered_by_callers(slot, param, from_callers)
                        || (wanted.passed_on.contains(&((file, id), slot)) && refines_passed_on(param, from_callers))
                });
            if kept || changes {
                facts[file]
                    .parameters
                    .insert(function.qualname.clone(), slots.into_boxed_slice());
            }
        }
        facts
            .par_iter_mut()
            .zip(modules)
            .enumerate()
            .for_each(|(file, (file_facts, module))| {
                if let Some(typed) = duck_typed.get(&file) {
                    file_facts.duck_typed = typed.clone();
                }
                // What was given stays while it holds: the file checked with it no longer asks.
                let mut asked: FxHashMap<&str, Option<Questions>> =
                    applied[file].returns.keys().map(|spelled| (&**spelled, None)).collect();
                let what_is_it = Questions::of(Question::Kind);
                let passed_on_calls = wanted
                    .calls
                    .get(&file)
                    .into_iter()
                    .flatten()
                    .map(|name| (*name, what_is_it));
                // Only what hot code calls can matter.
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
                for asked in &module.semantics.attributes_asked {
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
                let rules_asked = module
                    .semantics
                    .imports
                    .iter()
                    .filter(|call| runs_hot(modules, hot, file, call.caller))
                    .map(|call| (&*call.name, call.questions));
                for (name, questions) in rules_asked.chain(passed_on_calls) {
                    if let Some(asked) = asked.entry(name).or_insert(Some(Questions::default())) {
                        *asked = asked.union(questions);
                    }
                }
                for (spelled, questions) in asked {
                    if let Some(Resolved::Function(target)) = self.resolve_spelled(file, spelled) {
                        let returns = self.returns_of(target, file);
                        let passed_on = wanted.calls.get(&file).is_some_and(|calls| calls.contains(spelled));
                        let questions =
                            questions.map(|questions| narrowed_for_plain_tensor(questions, &returns, passed_on));
                        if questions.is_none_or(|questions| questions.answered_by_returns(&returns)) {
                            file_facts.returns.insert(spelled.into(), returns);
                        }
                    }
                }
                // Calls through objects, by where they are: those a rule asked about in hot code,
                // and those told before (kept while they hold).
                for (index, site) in module.semantics.call_sites.iter().enumerate() {
                    let told = applied[file].results.contains_key(&site.at);
                    // Asked by a rule in hot code, or made into a value passed on that is asked
                    // about where it goes.
                    let passed_on = wanted.sites.contains(&(file, index));
                    let asked = if passed_on {
                        site.result_asked.union(what_is_it)
                    } else if matches!(site.context, HotContext::Hot(_))
                        || site.caller.is_some_and(|caller| runs_hot(modules, hot, file, caller))
                    {
                        site.result_asked
                    } else {
                        Questions::default()
                    };
                    if !told && asked == Questions::default() {
                        continue;
                    }
                    let targets = &self.targets[file][index].functions;
                    if targets.is_empty() || matches!(site.callee, Callee::Local(_) | Callee::Imported { .. }) {
                        continue;
                    }
                    let returns = targets
                        .iter()
                        .map(|&target| self.returns_of(target, file))
                        .reduce(|a, b| a.join(&b))
                        .unwrap_or_default();
                    // One call may make several sites (overrides): they join.
                    let joined = match file_facts.results.get(&site.at) {
                        Some(earlier) => earlier.join(&returns),
                        None => returns,
                    };
                    let seen = module.semantics.result_seen(index).unwrap_or(&ProjectKind::UNKNOWN);
                    let asked = narrowed_for_plain_tensor(asked, &joined, passed_on);
                    if told || asked.answered_differently_by_returns(seen, &joined) {
                        file_facts.results.insert(site.at, joined);
                    }
                }
            });
        self.tell_callee_syncs(hot, &syncs, &mut facts);
        facts
            .par_iter_mut()
            .zip(modules)
            .enumerate()
            .for_each(|(file, (file_facts, module))| {
                let step_work_elsewhere: Vec<Box<str>> = module
                    .semantics
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
        facts
    }

    /// Per hot function, what its hot callers pass each parameter, spelled in its file: the
    /// join of what the sites pass (`direct`) and, for a parameter a caller passes on unchanged
    /// (`forwards`, with the argument's kind at the site), that parameter as the caller's own
    /// callers make it (their kind where it tells more than the caller's view: a `height` a
    /// `forward` takes for a tensor by its name is the number every caller passes). A slot is
    /// joined afresh from all it receives whenever a caller's slot changes, so the answer does
    /// not depend on the order of the sites or of the rounds.
    fn passed_kinds(
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
                let annotated = modules[caller.0].semantics.functions[caller.1 as usize]
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

    /// Per function, the syncs on what its parameters are given, by slot: its own findings on
    /// values made from them (`syncs_on`), and those of the functions it passes a parameter to
    /// unchanged from lines that run whenever it does (a fixpoint over the call graph). Each
    /// names the finding that syncs: (function, index in its `syncs_on`).
    fn parameter_syncs(&self) -> FxHashMap<ProjectFunction, Vec<SyncThrough>> {
        let modules = self.modules;
        let mut syncs: FxHashMap<ProjectFunction, Vec<SyncThrough>> = FxHashMap::default();
        for (file, module) in modules.iter().enumerate() {
            for (id, function) in module.semantics.functions.iter().enumerate() {
                let function_id = (file, id as FunctionId);
                for (index, sync) in function.details().syncs_on.iter().enumerate() {
                    syncs
                        .entry(function_id)
                        .or_default()
                        .push((sync.slot, (function_id, index)));
                }
            }
        }
        if syncs.is_empty() {
            return syncs;
        }
        // The calls that pass a parameter of their function on, by callee: each file's found
        // in parallel (resolving what a call runs as named looks classes up).
        let passing_per_file: Vec<Vec<(ProjectFunction, ProjectSite)>> = modules
            .par_iter()
            .enumerate()
            .map(|(file, module)| {
                let mut passing = Vec::new();
                for (index, site) in module.semantics.call_sites.iter().enumerate() {
                    let passes_a_parameter = site
                        .arguments
                        .as_deref()
                        .is_some_and(|arguments| arguments.all().any(|argument| argument.from_parameter().is_some()));
                    let targets = &self.targets[file][index];
                    if passes_a_parameter && matches!(site.context, HotContext::InFunction(_)) && !targets.registry {
                        passing.extend(
                            self.run_as_named(file, site, targets)
                                .map(|target| (target, (file, index))),
                        );
                    }
                }
                passing
            })
            .collect();
        let mut passing: FxHashMap<ProjectFunction, Vec<ProjectSite>> = FxHashMap::default();
        for (target, site) in passing_per_file.into_iter().flatten() {
            passing.entry(target).or_default().push(site);
        }
        let mut pending: Vec<ProjectFunction> = syncs.keys().copied().collect();
        while let Some(callee) = pending.pop() {
            let Some(sites) = passing.get(&callee) else { continue };
            let callee_syncs = syncs[&callee].clone();
            for &(file, index) in sites {
                let site = &modules[file].semantics.call_sites[index];
                let HotContext::InFunction(caller) = site.context else {
                    continue;
                };
                let caller = (file, caller);
                for &(slot, origin) in &callee_syncs {
                    let Some(parameter) = self
                        .argument_for(file, index, callee, slot)
                        .and_then(Argument::from_parameter)
                    else {
                        continue;
                    };
                    if origin.0 == callee && self.skips_sync(file, index, origin) {
                        continue;
                    }
                    let known = syncs.entry(caller).or_default();
                    // A few per function: a helper that hands its tensor to many syncs is
                    // reported once per sync kind at its callers anyway.
                    if known.len() < 8 && !known.contains(&(parameter, origin)) {
                        known.push((parameter, origin));
                        pending.push(caller);
                    }
                }
            }
        }
        syncs
    }

    /// Per file, what attributes of its classes whose kind it cannot tell hold, found by the
    /// methods called on them (see [`ClassSummary::duck_typed`]): instances of the classes of
    /// the project that have them all, where those are few and each method is had by few (a
    /// distinctive `_set_seed`, not `step` or `update`), as [`FileFacts::duck_typed`] keeps
    /// them.
    fn duck_typed(&self) -> FxHashMap<usize, FxHashMap<Box<str>, InstancesByClass>> {
        /// More classes than this having a method make it too common to tell anything.
        const FEW: usize = 3;
        let wanted: FxHashSet<&str> = self
            .modules
            .iter()
            .flat_map(|module| &module.semantics.classes)
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
            let functions = &module.semantics.functions;
            for (id, class) in module.semantics.classes.iter().enumerate() {
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
            for (id, class) in module.semantics.classes.iter().enumerate() {
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
                            self.qualified_in(owner, &self.modules[owner].semantics.classes[class as usize].name)
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

    /// A name of `file` qualified by its module's (as [`class_named`] reads it back).
    fn qualified_in(&self, file: usize, name: &str) -> String {
        let module = &self.modules[file].module;
        if module.is_empty() {
            name.to_string()
        } else {
            format!("{module}.{name}")
        }
    }

    /// Whether call site `index` of `file`, a call of the function that found `sync`, gives
    /// what skips the code it was found in (see [`ParameterSync::dead_where`]).
    fn skips_sync(&self, file: usize, index: usize, ((callee_file, callee), sync): SyncOrigin) -> bool {
        let function = &self.modules[callee_file].semantics.functions[callee as usize];
        let skip = function.receiver.leading_arguments(self.targets[file][index].unbound);
        let arguments = self.modules[file].semantics.call_sites[index].arguments.as_deref();
        skips(arguments, function, skip, &function.details().syncs_on[sync].dead_where)
    }

    /// Where parameter `slot` of `callee` stands among the positional arguments of call site
    /// `index` of `file` (after the instance, in `Head.loss(obj, x)`).
    fn position_of(&self, file: usize, index: usize, callee: ProjectFunction, slot: u16) -> u16 {
        let function = &self.modules[callee.0].semantics.functions[callee.1 as usize];
        slot + function.receiver.leading_arguments(self.targets[file][index].unbound) as u16
    }

    /// What call site `index` of `file` gives parameter `slot` of `callee`, where the file
    /// recorded its arguments.
    fn argument_for(&self, file: usize, index: usize, callee: ProjectFunction, slot: u16) -> Option<&'m Argument> {
        let site = &self.modules[file].semantics.call_sites[index];
        let arguments = site.arguments.as_deref()?;
        let function = &self.modules[callee.0].semantics.functions[callee.1 as usize];
        let parameter = function.params.get(usize::from(slot))?;
        let position = self.position_of(file, index, callee, slot);
        arguments.for_parameter(Some(usize::from(position)), &parameter.name)
    }

    /// Tells each file the syncs its hot calls pass a value into (see [`Self::parameter_syncs`]):
    /// where the call gives the parameter something that may be a GPU tensor, made there (a
    /// parameter passed on is told to the callers that give it, through the caller's own
    /// summary), the call is reported as the sync it leads to.
    fn tell_callee_syncs(
        &self,
        hot: &HotFunctions,
        syncs: &FxHashMap<ProjectFunction, Vec<SyncThrough>>,
        facts: &mut [FileFacts],
    ) {
        if syncs.is_empty() {
            return;
        }
        let modules = self.modules;
        facts
            .par_iter_mut()
            .zip(modules)
            .enumerate()
            .for_each(|(file, (file_facts, module))| {
                for (index, site) in module.semantics.call_sites.iter().enumerate() {
                    if !hot.runs_hot(file, site) {
                        continue;
                    }
                    let mut told: Vec<CalleeSync> = Vec::new();
                    let targets = &self.targets[file][index];
                    // A registry's classes report their own lines; the call would name any of them.
                    if targets.registry || !targets.functions.iter().any(|target| syncs.contains_key(target)) {
                        continue;
                    }
                    for target in self.run_as_named(file, site, targets) {
                        let Some(target_syncs) = syncs.get(&target) else {
                            continue;
                        };
                        let function = &modules[target.0].semantics.functions[target.1 as usize];
                        for &(slot, ((origin_file, origin), sync)) in target_syncs {
                            let origin_module = &modules[origin_file];
                            let found = &origin_module.semantics.functions[origin as usize].details().syncs_on[sync];
                            let Some(parameter) = function.params.get(usize::from(slot)) else {
                                continue;
                            };
                            let argument = self.argument_for(file, index, target, slot);
                            // Left to its default, given a host value, or passed on from the caller's
                            // own parameter (told where the caller is called).
                            let not_given = argument.is_none()
                                && site.arguments.as_deref().is_some_and(|arguments| !arguments.spread);
                            // As the call's file will judge it (`may_be_cuda`): a file told of a call
                            // it would not report is checked again for nothing.
                            let no_gpu_tensor = match argument.map(|argument| argument.kind.kind) {
                                Some(Kind::Tensor(facts)) => !facts.may_be_cuda(),
                                // Recorded without a tensor among the arguments, or told unknown.
                                None | Some(Kind::Unknown) => !found.unknown_counts,
                                Some(_) => true,
                            };
                            let passed_on = argument.is_some_and(|argument| argument.from_parameter().is_some())
                                && matches!(site.context, HotContext::InFunction(_));
                            let skipped = (origin_file, origin) == target
                                && self.skips_sync(file, index, ((origin_file, origin), sync));
                            // A helper of the call's own file is reported there already, with the
                            // call in its note.
                            let same_file = origin_file == file;
                            if same_file
                                || skipped
                                || not_given
                                || no_gpu_tensor
                                || passed_on
                                || told.iter().any(|told| told.rule == found.rule)
                            {
                                continue;
                            }
                            told.push(CalleeSync {
                                callee: format!("{}()", function.qualname).into(),
                                parameter: parameter.name.clone(),
                                position: self.position_of(file, index, target, slot),
                                rule: found.rule,
                                unknown_counts: found.unknown_counts,
                                sync: found.deeper.clone().unwrap_or_else(|| {
                                    let place = origin_module.semantics.place(origin_module.display, found.line);
                                    format!("{} ({place})", found.message).into()
                                }),
                            });
                        }
                    }
                    if !told.is_empty() {
                        file_facts.callee_syncs.insert(site.at, told.into_boxed_slice());
                    }
                }
            });
    }

    /// Per file and function: does it do a step's work, itself (it trains, runs a network, is
    /// hot by itself) or through the project functions it calls? A fixpoint over the call
    /// graph's edges, which only turns answers on.
    fn step_work(&self) -> Vec<Vec<bool>> {
        let mut step_work: Vec<Vec<bool>> = Vec::with_capacity(self.modules.len());
        let mut found: Vec<ProjectFunction> = Vec::new();
        for (file, module) in self.modules.iter().enumerate() {
            let functions = &module.semantics.functions;
            step_work.push(functions.iter().map(|function| function.step_work).collect());
            let itself = functions.iter().enumerate().filter(|(_, function)| function.step_work);
            found.extend(itself.map(|(id, _)| (file, id as FunctionId)));
        }
        // Backwards along the edges: who calls what.
        let mut callers: FxHashMap<ProjectFunction, Vec<ProjectFunction>> = FxHashMap::default();
        for (file, module) in self.modules.iter().enumerate() {
            for (site, targets) in module.semantics.call_sites.iter().zip(&self.targets[file]) {
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
            if self.modules[function.0].semantics.functions[function.1 as usize].never_hot {
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

    /// What `function` returns, spelled for `file`.
    fn returns_of(&self, (target, id): ProjectFunction, file: usize) -> ProjectReturns {
        let function = &self.modules[target].semantics.functions[id as usize];
        ProjectReturns {
            kind: self.respell(target, &function.returns, file),
            tuple: function.details().returns_tuple.clone(),
            by_type: function.details().returns_by_type.clone(),
        }
    }

    /// Which values passed on are worth their facts: the parameters and project calls an
    /// argument or a `return` value is made from, where what receives it asks about it (a
    /// question asked of the callee's parameter, or of the value it passes on in turn), solved
    /// over the call graph with a worklist (each parameter and function enters it once).
    fn wanted(
        &self,
        hot: &HotFunctions,
        forwards: &[(ProjectFunction, usize, ProjectFunction, usize)],
        passed_on: &[(ProjectFunction, &'m Dependence, ProjectFunction, usize)],
    ) -> Wanted<'m> {
        let modules = self.modules;
        let asks = |(file, id): ProjectFunction, slot: usize| {
            modules[file].semantics.functions[id as usize]
                .details()
                .demand
                .asks(slot)
        };
        // Edges by what they lead to: an argument made from the caller's values, a parameter
        // passed on unchanged, a function's `return` value.
        let mut made_into: FxHashMap<(ProjectFunction, usize), Vec<(ProjectFunction, &'m Dependence)>> =
            FxHashMap::default();
        let mut forwarded_into: FxHashMap<(ProjectFunction, usize), Vec<(ProjectFunction, usize)>> =
            FxHashMap::default();
        let mut reach = Reach {
            project: self,
            wanted: Wanted::default(),
            asked: FxHashSet::default(),
            returns: FxHashSet::default(),
            resolved: FxHashMap::default(),
            pending: Vec::new(),
        };
        for &(caller, depends, target, slot) in passed_on {
            if asks(target, slot) {
                reach.made_from(caller, depends);
            } else {
                made_into.entry((target, slot)).or_default().push((caller, depends));
            }
        }
        for &(caller, from, target, to) in forwards {
            if asks(target, to) {
                reach.ask(caller, from);
            } else {
                forwarded_into.entry((target, to)).or_default().push((caller, from));
            }
        }
        for (file, module) in modules.iter().enumerate() {
            for call in module
                .semantics
                .imports
                .iter()
                .filter(|call| runs_hot(modules, hot, file, call.caller))
            {
                reach.call(file, &call.name);
            }
            for (index, site) in module.semantics.call_sites.iter().enumerate() {
                if site.result_asked != Questions::default()
                    && site.caller.is_some_and(|caller| runs_hot(modules, hot, file, caller))
                {
                    reach.site(file, index);
                }
            }
        }
        while let Some(event) = reach.pending.pop() {
            match event {
                Reached::Parameter(function, slot) => {
                    for (caller, depends) in made_into.remove(&(function, slot)).unwrap_or_default() {
                        reach.made_from(caller, depends);
                    }
                    for (caller, from) in forwarded_into.remove(&(function, slot)).unwrap_or_default() {
                        reach.ask(caller, from);
                    }
                }
                Reached::Return((file, id)) => {
                    if let Some(depends) = modules[file].semantics.functions[id as usize]
                        .details()
                        .return_depends
                        .as_deref()
                    {
                        reach.made_from((file, id), depends);
                    }
                }
            }
        }
        reach.wanted
    }

    /// A kind from `from`'s point of view, with its class spelled as `to` can name it (an
    /// absolute dotted path); an instance of a class that is not the project's (`Path(...)`)
    /// says nothing.
    fn respell(&self, from: usize, kind: &ProjectKind, to: usize) -> ProjectKind {
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
                    Some((file, id)) => Some((file, &*self.modules[file].semantics.classes[id as usize].name)),
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

/// The questions about a project call's result that `returns` can answer usefully. A rule
/// asking what a call's result is, where the file could not tell, learns nothing it acts on from
/// "a tensor, device and dtype unknown": rules that count an unknown value as maybe on a GPU ask
/// that narrower question instead. A value passed on is another matter: the function it reaches
/// may ask anything.
fn narrowed_for_plain_tensor(asked: Questions, returns: &ProjectReturns, passed_on: bool) -> Questions {
    let plain_tensor = returns.kind.kind == Kind::Tensor(TensorFacts::on(Device::Unknown));
    if plain_tensor && returns.tuple.is_none() && !passed_on {
        asked.without(Question::Kind)
    } else {
        asked
    }
}

/// Whether function `caller` of `file` runs in hot code: hot by itself, holding a loop, or
/// reached from hot code.
fn runs_hot(modules: &[ModuleInfo], hot: &HotFunctions, file: usize, caller: FunctionId) -> bool {
    modules[file].semantics.functions[caller as usize].has_hot_lines || hot.reached.contains_key(&(file, caller))
}

/// The class `spelled` names in `file`: a class of the file by name, or an imported one.
fn class_named(modules: &[ModuleInfo], index: &ModuleIndex, file: usize, spelled: &str) -> Option<ProjectClass> {
    let Some((module, name)) = spelled.rsplit_once('.') else {
        return index.classes.get(&(file, spelled)).map(|&id| (file, id));
    };
    match defined(modules, index, file, module, name)? {
        (target, _, Some(Export::Class(id))) => Some((target, *id)),
        _ => None,
    }
}

/// The registry `spelled` names in `file` (see
/// [`SemanticModel::registry_spelled`](crate::semantic::SemanticModel)): the file whose
/// module-level value it is, and its name there.
fn registry_named<'m>(
    modules: &'m [ModuleInfo],
    index: &ModuleIndex,
    file: usize,
    spelled: &'m str,
) -> Option<(usize, &'m str)> {
    let Some((module, name)) = spelled.rsplit_once('.') else {
        return Some((file, spelled));
    };
    match defined(modules, index, file, module, name)? {
        (target, name, None) => Some((target, name)),
        _ => None,
    }
}

/// Where `module.name`, as `file` imports it, is defined in the project, through the modules
/// that import it on (re-exports): the file, the name there, and what it exports by that name
/// (`None`: a value, neither a function nor a class).
fn defined<'m>(
    modules: &'m [ModuleInfo],
    index: &ModuleIndex,
    file: usize,
    module: &'m str,
    name: &'m str,
) -> Option<(usize, &'m str, Option<&'m Export>)> {
    let (mut importer, mut module, mut name) = (file, module, name);
    for _ in 0..5 {
        let absolute = absolute_module(&modules[importer], module)?;
        let target = index.find(modules, &absolute)?;
        match modules[target].semantics.exports.get(name) {
            Some(Export::Import {
                module: next,
                name: next_name,
            }) => {
                (importer, module, name) = (target, next, next_name);
            }
            export => return Some((target, name, export)),
        }
    }
    None
}

impl ClassIndex {
    fn new(modules: &[ModuleInfo], index: &ModuleIndex) -> Self {
        let bases: Vec<Vec<Vec<ProjectClass>>> = modules
            .par_iter()
            .enumerate()
            .map(|(file, module)| {
                module
                    .semantics
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
            .map(|m| m.semantics.classes.iter().map(|c| c.module).collect())
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
            for (id, class) in info.semantics.classes.iter().enumerate() {
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

    fn module_kind(&self, (file, id): ProjectClass) -> Option<ModuleKind> {
        self.module[file][id as usize]
    }

    /// Every class that inherits from `class`, directly or not.
    fn subclasses_of(&self, class: ProjectClass) -> &[ProjectClass] {
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

fn describe_root(
    modules: &[ModuleInfo],
    RootCall {
        file,
        reason,
        line: call_line,
    }: RootCall,
) -> String {
    let module = &modules[file];
    match reason {
        HotReason::Loop { line } => format!("the loop at {}", module.semantics.place(module.display, line)),
        HotReason::Function { function, .. } => {
            let name = &module.semantics.functions[function as usize].qualname;
            format!("`{name}()` at {}", module.semantics.place(module.display, call_line))
        }
    }
}

/// The call edges out of every project function, gathered site by site (see [`CallEdges`]).
struct CallEdgesBuilder {
    /// Where each file's functions start in the numbering of all the project's functions.
    first_of_file: Vec<u32>,
    /// (caller's number, callee), in the order of the call sites.
    edges: Vec<(u32, ProjectFunction)>,
}

impl CallEdgesBuilder {
    fn new(modules: &[ModuleInfo]) -> Self {
        let mut first_of_file = Vec::with_capacity(modules.len() + 1);
        let mut functions = 0u32;
        for module in modules {
            first_of_file.push(functions);
            functions += module.semantics.functions.len() as u32;
        }
        first_of_file.push(functions);
        CallEdgesBuilder {
            first_of_file,
            edges: Vec::new(),
        }
    }

    fn add(&mut self, (file, caller): ProjectFunction, callee: ProjectFunction) {
        self.edges.push((self.first_of_file[file] + caller, callee));
    }

    /// The edges grouped by caller (a counting sort, which keeps the sites' order within each).
    fn build(self) -> CallEdges {
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
struct CallEdges {
    first_of_file: Vec<u32>,
    /// The callees of function `n` (numbered as in `first_of_file`) are
    /// `callees[starts[n]..starts[n + 1]]`.
    starts: Vec<u32>,
    callees: Vec<ProjectFunction>,
}

impl CallEdges {
    fn of(&self, (file, id): ProjectFunction) -> &[ProjectFunction] {
        let function = (self.first_of_file[file] + id) as usize;
        &self.callees[self.starts[function] as usize..self.starts[function + 1] as usize]
    }
}

/// Modules by dotted path, and by their last component for imports that name only a tail.
struct ModuleIndex<'m> {
    by_path: FxHashMap<&'m str, usize>,
    by_last: FxHashMap<&'m str, Vec<usize>>,
    /// The first class of each name in each file: every base class spelled by a bare name is
    /// looked up here, and a file may define thousands.
    classes: FxHashMap<(usize, &'m str), ClassId>,
}

impl<'m> ModuleIndex<'m> {
    fn new(modules: &'m [ModuleInfo]) -> Self {
        let mut by_path = FxHashMap::default();
        let mut by_last: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for (index, module) in modules.iter().enumerate() {
            // No name: a notebook, which nothing imports.
            if module.module.is_empty() && !module.is_package {
                continue;
            }
            by_path.insert(module.module.as_str(), index);
            let last = module.module.rsplit('.').next().unwrap_or_default();
            by_last.entry(last).or_default().push(index);
        }
        let mut classes = FxHashMap::default();
        for (file, module) in modules.iter().enumerate() {
            for (id, class) in module.semantics.classes.iter().enumerate() {
                classes.entry((file, &*class.name)).or_insert(id as ClassId);
            }
        }
        ModuleIndex {
            by_path,
            by_last,
            classes,
        }
    }

    /// The module `absolute` names: exactly, or the one module whose path ends with it
    /// (`from losses import f` run from a folder that is not a package root).
    fn find(&self, modules: &[ModuleInfo], absolute: &str) -> Option<usize> {
        if let Some(&index) = self.by_path.get(absolute) {
            return Some(index);
        }
        let last = absolute.rsplit('.').next().unwrap_or(absolute);
        // Most names not found are the library's (`numpy.linalg`): no module ends with them.
        let candidates = self.by_last.get(last)?;
        let suffix = format!(".{absolute}");
        let mut matches = candidates.iter().filter(|&&i| modules[i].module.ends_with(&suffix));
        let first = matches.next().copied();
        if matches.next().is_some() {
            return None;
        }
        first.or_else(|| self.find_in_namespace_folder(modules, absolute))
    }

    /// `pkg.tal` where the file `pkg/tal.py` is the module `tal`: its folder has no
    /// `__init__.py` (a namespace package), so its module path starts below it, but code run
    /// from the folder above imports it through the folder's name.
    fn find_in_namespace_folder(&self, modules: &[ModuleInfo], absolute: &str) -> Option<usize> {
        let parts: Vec<&str> = absolute.split('.').collect();
        (1..parts.len()).find_map(|skip| {
            let index = *self.by_path.get(parts[skip..].join(".").as_str())?;
            let module = &modules[index];
            let mut expected: PathBuf = parts.iter().collect();
            if module.is_package {
                expected.push("__init__.py");
            } else {
                expected.set_extension("py");
            }
            let path = std::path::absolute(module.display).ok()?;
            path.ends_with(&expected).then_some(index)
        })
    }
}

/// `..losses` seen from `pkg.sub.train` -> `pkg.losses`; an absolute name as it is (names are
/// resolved for every call site, every round: most are absolute and need no copy).
fn absolute_module<'a>(importer: &ModuleInfo, module: &'a str) -> Option<Cow<'a, str>> {
    let level = module.bytes().take_while(|c| *c == b'.').count();
    if level == 0 {
        return Some(Cow::Borrowed(module));
    }
    let mut package: Vec<&str> = importer.module.split('.').filter(|p| !p.is_empty()).collect();
    if !importer.is_package {
        package.pop();
    }
    for _ in 1..level {
        package.pop()?;
    }
    let rest = &module[level..];
    if !rest.is_empty() {
        package.push(rest);
    }
    Some(Cow::Owned(package.join(".")))
}

/// Whether a finding is reported, and what the user is told about why its line is hot: `None`
/// hides the finding, `Some(None)` reports it without a note (a finding about a comment, not
/// about a hot line). `functions` are the file's functions (as checked, perhaps after fixes),
/// `called_note` the call chain that makes one of them hot, if any.
pub fn hot_note(
    context: HotContext,
    display: &str,
    semantics: &FileSemantics,
    called_note: impl Fn(FunctionId) -> Option<String>,
    report_periodic: bool,
) -> Option<Option<String>> {
    let describe_inner = |inner: PeriodicInner| -> Option<String> {
        match inner {
            PeriodicInner::Hot(reason) => Some(describe_hot(display, semantics, reason)),
            PeriodicInner::InFunction(function) => called_note(function).map(|note| format!("hot: {note}")),
        }
    };
    let note = match context {
        HotContext::Anywhere => return Some(None),
        HotContext::Hot(reason) => describe_inner(PeriodicInner::Hot(reason)),
        HotContext::InFunction(function) => describe_inner(PeriodicInner::InFunction(function)),
        HotContext::Periodic { guard_line, inner } if report_periodic => describe_inner(inner).map(|note| {
            let guard = semantics.line_label(guard_line);
            format!("{note}; periodic: runs under the guard at {guard}, not every step")
        }),
        HotContext::Periodic { .. } | HotContext::Cold => None,
    };
    note.map(Some)
}

fn describe_hot(display: &str, semantics: &FileSemantics, reason: HotReason) -> String {
    match reason {
        HotReason::Loop { line } => format!("hot: inside the loop at {}", semantics.place(display, line)),
        HotReason::Function { function, why } => {
            let name = semantics.functions.get(function as usize).map_or("?", |f| &*f.qualname);
            format!("hot: `{name}`: {}", why.describe())
        }
    }
}

/// Paths shown relative to the working directory, with `/` separators.
pub fn display_path(path: &Path, cwd: &Path) -> String {
    let relative: PathBuf = path
        .strip_prefix(cwd)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.to_path_buf());
    let text = relative.to_string_lossy().replace('\\', "/");
    text.strip_prefix("./").map(str::to_string).unwrap_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantic::CallSite;

    fn function(qualname: &str, line: u32) -> FunctionSummary {
        FunctionSummary {
            qualname: qualname.into(),
            name_at: 0,
            line,
            intrinsic: None,
            never_hot: false,
            class: None,
            receiver: Receiver::None,
            property: false,
            signature: Default::default(),
            params: Box::default(),
            returns: ProjectKind::default(),
            has_hot_lines: false,
            step_work: false,
            details: None,
        }
    }

    /// A module of the project, as the call graph sees it.
    fn info<'a>(module: &str, display: &'a str, semantics: &'a FileSemantics) -> ModuleInfo<'a> {
        ModuleInfo {
            module: module.to_string(),
            is_package: false,
            display,
            semantics,
        }
    }

    fn call(callee: Callee, context: HotContext, line: u32) -> CallSite {
        let caller = match context {
            HotContext::InFunction(id) => Some(id),
            _ => None,
        };
        CallSite {
            callee,
            context,
            caller,
            line,
            at: line,
            arguments: None,
            result_asked: Questions::default(),
            arity: crate::semantic::CallArity::ANY,
        }
    }

    /// train.py's loop calls `step`, which calls `loss` from losses.py, which calls the local
    /// `masked_mean`: each note names the shortest chain, outermost caller first.
    #[test]
    fn notes_spell_the_chain_from_the_loop() {
        let train = FileSemantics {
            functions: vec![function("step", 1)],
            call_sites: vec![
                call(Callee::Local(0), HotContext::Hot(HotReason::Loop { line: 9 }), 10),
                call(
                    Callee::Imported {
                        module: "losses".into(),
                        name: "loss".into(),
                    },
                    HotContext::InFunction(0),
                    2,
                ),
            ],
            ..FileSemantics::default()
        };
        let losses = FileSemantics {
            functions: vec![function("loss", 1), function("masked_mean", 5)],
            call_sites: vec![call(Callee::Local(1), HotContext::InFunction(0), 2)],
            exports: [
                ("loss".into(), Export::Function(0)),
                ("masked_mean".into(), Export::Function(1)),
            ]
            .into_iter()
            .collect(),
            ..FileSemantics::default()
        };
        let unrelated = FileSemantics {
            functions: vec![function("setup", 1)],
            ..FileSemantics::default()
        };
        let modules = [
            info("train", "train.py", &train),
            info("losses", "losses.py", &losses),
            info("other", "other.py", &unrelated),
        ];
        let hot = Project::new(&modules).hot_functions();
        assert_eq!(
            hot.note(0, 0, &mut ChainPlaces::default()).as_deref(),
            Some("`step()` is called from the loop at train.py:9")
        );
        assert_eq!(
            hot.note(1, 0, &mut ChainPlaces::default()).as_deref(),
            Some("`loss()` is called from the loop at train.py:9 via `step()`")
        );
        assert_eq!(
            hot.note(1, 1, &mut ChainPlaces::default()).as_deref(),
            Some("`masked_mean()` is called from the loop at train.py:9 via `step()` → `loss()`")
        );
        assert_eq!(hot.note(2, 0, &mut ChainPlaces::default()), None);
    }

    /// A chain of `n` functions, each calling the next, the first called from a loop.
    fn chain(n: u32) -> FileSemantics {
        let mut call_sites = vec![call(Callee::Local(0), HotContext::Hot(HotReason::Loop { line: 1 }), 2)];
        call_sites.extend((1..n).map(|id| call(Callee::Local(id), HotContext::InFunction(id - 1), 3 + id)));
        FileSemantics {
            functions: (0..n).map(|id| function(&format!("f{id}"), 3 + id)).collect(),
            call_sites,
            ..FileSemantics::default()
        }
    }

    #[test]
    fn a_long_chain_is_spelled_by_its_ends() {
        let semantics = chain(9);
        let modules = [info("train", "train.py", &semantics)];
        let hot = Project::new(&modules).hot_functions();
        let mut places = ChainPlaces::default();
        // Eight callers are named one by one; nine are not.
        assert_eq!(
            hot.note(0, 8, &mut places).as_deref(),
            Some(
                "`f8()` is called from the loop at train.py:1 via `f0()` → `f1()` → `f2()` → `f3()` → `f4()` → `f5()` → `f6()` → `f7()`"
            )
        );
        let semantics = chain(40);
        let modules = [info("train", "train.py", &semantics)];
        let hot = Project::new(&modules).hot_functions();
        let notes = hot.notes(1, |_, _| true).pop().unwrap();
        assert_eq!(
            notes[&39],
            "`f39()` is called from the loop at train.py:1 via `f0()` → `f1()` → `f2()` → … (33 more) … → `f36()` → `f37()` → `f38()`"
        );
        assert_eq!(
            notes[&9],
            "`f9()` is called from the loop at train.py:1 via `f0()` → `f1()` → `f2()` → … (3 more) … → `f6()` → `f7()` → `f8()`"
        );
        assert_eq!(
            notes[&2],
            "`f2()` is called from the loop at train.py:1 via `f0()` → `f1()`"
        );
        // Every note is as short as the longest chain's ends make it.
        assert!(notes.values().all(|note| note.len() < 150), "{notes:?}");
    }

    /// A helper called from a loop in another file and from one beside it, both first in
    /// their chains: its note names the one beside it, whatever the files' order.
    #[test]
    fn notes_prefer_the_chain_beside_the_function() {
        let borrower = FileSemantics {
            call_sites: vec![call(
                Callee::Imported {
                    module: "ops".into(),
                    name: "mask".into(),
                },
                HotContext::Hot(HotReason::Loop { line: 3 }),
                4,
            )],
            ..FileSemantics::default()
        };
        let ops = FileSemantics {
            functions: vec![function("mask", 1)],
            call_sites: vec![call(Callee::Local(0), HotContext::Hot(HotReason::Loop { line: 8 }), 9)],
            exports: [("mask".into(), Export::Function(0))].into_iter().collect(),
            ..FileSemantics::default()
        };
        let modules = [info("borrower", "borrower.py", &borrower), info("ops", "ops.py", &ops)];
        let hot = Project::new(&modules).hot_functions();
        assert_eq!(
            hot.note(1, 0, &mut ChainPlaces::default()).as_deref(),
            Some("`mask()` is called from the loop at ops.py:8")
        );
    }

    /// `pkg.tal` names `pkg/tal.py` where `pkg` has no `__init__.py` (its module path is `tal`),
    /// and only that file: another `tal.py` elsewhere is not it.
    #[test]
    fn imports_through_a_namespace_folder() {
        let semantics = FileSemantics::default();
        let info = |module: &str, display: &'static str| ModuleInfo {
            module: module.to_string(),
            is_package: false,
            display,
            semantics: &semantics,
        };
        let modules = [info("tal", "work/pkg/tal.py"), info("loss", "work/pkg/loss.py")];
        let index = ModuleIndex::new(&modules);
        assert_eq!(index.find(&modules, "pkg.tal"), Some(0));
        assert_eq!(index.find(&modules, "tal"), Some(0));
        assert_eq!(index.find(&modules, "other.tal"), None);
        let elsewhere = [info("tal", "work/utils/tal.py")];
        assert_eq!(ModuleIndex::new(&elsewhere).find(&elsewhere, "pkg.tal"), None);
    }
}
