//! What the project pass reads of a file: the contract between the pass over one file (the
//! [`Checker`](crate::checker::Checker) and its [`SemanticModel`](super::SemanticModel), which
//! write it) and the project-wide pass (the call graph, which reads it once the file's AST is
//! gone, or from the cache). A file's [`FileSummary`] holds its functions and their
//! parameters, its classes, its call sites with what they pass, its exports, and the questions
//! it could not answer alone.
//!
//! It may import what both passes speak of: the ids, kinds, hot contexts, questions (demand),
//! facts and rule codes. Never the model: a summary outlives the model that wrote it.

use ruff_python_ast::{self as ast, Expr};

use super::demand::{self, Demand, Dependence, Question, Questions};
use super::facts::{Given, ProjectKind, ReturnsByType};
use super::hot::{HotContext, IntrinsicHot};
use super::ids::{ClassId, FunctionId};
use super::kinds::{ModuleKind, Returned};
use crate::registry::Rule;

/// What the project-wide pass needs from a file once its AST is gone.
#[derive(Debug, Default, Clone, bincode::Encode, bincode::Decode)]
pub struct FileSummary {
    /// (qualname, name, line, intrinsic, setup) per function, indexed by [`FunctionId`].
    pub functions: Vec<FunctionSummary>,
    pub call_sites: Vec<CallSite>,
    /// Top-level names other modules can import: functions and re-exported imports.
    pub exports: Exports,
    pub classes: Vec<ClassSummary>,
    /// The project names the file's functions call, for what they return.
    pub imports: Box<[ImportedCall]>,
    /// The attributes of other files' classes the file's functions read, for what they hold.
    pub attributes_asked: Box<[ImportedAttribute]>,
    /// What the file made of the results of calls through objects a question reached, by site
    /// (sorted): the project tells a result only where it answers a question differently.
    pub results_seen: Box<[(u32, ProjectKind)]>,
    /// The project functions in other files (qualified names as spelled, sorted) whose step
    /// work decides whether a loop of this file is a step loop.
    pub step_work_asked: Box<[Box<str>]>,
    /// Attribute names the file sets on objects other than `self` (sorted).
    pub attributes_set_outside: Box<[Box<str>]>,
    /// In a notebook, each linted cell's first row in the joined source and its number, so
    /// that a row is shown as people find it: in its cell.
    pub cell_rows: Box<[(u32, u32)]>,
}

impl FileSummary {
    /// Where `line` is, for a note: `train.py:12`, in a notebook `train.ipynb:cell 6:2`.
    pub fn place(&self, display: &str, line: u32) -> String {
        match self.cell_of(line) {
            Some((cell, row)) => format!("{display}:cell {cell}:{row}"),
            None => format!("{display}:{line}"),
        }
    }

    /// The places a note names after ` at ` (each written by [`FileSummary::place`]), read
    /// back in order: where a hot chain starts, for an editor to link to.
    pub fn places_in_note(note: &str) -> impl Iterator<Item = NotePlace<'_>> {
        note.match_indices(" at ").filter_map(move |(at, _)| {
            let rest = &note[at + 4..];
            let end = |text: &str| text.find(char::is_whitespace).unwrap_or(text.len());
            let first = &rest[..end(rest)];
            // A notebook's place has a space in it: `train.ipynb:cell 6:2`.
            let (path, cell, row) = match first.strip_suffix(":cell") {
                Some(path) => {
                    let tail = rest[first.len()..].trim_start();
                    let (cell, row) = tail[..end(tail)].split_once(':')?;
                    (path, Some(cell.parse().ok()?), row)
                }
                None => {
                    let (path, row) = first.rsplit_once(':')?;
                    (path, None, row)
                }
            };
            let row = row
                .trim_end_matches([',', ';', ':', ')'])
                .parse()
                .ok()
                .filter(|&row| row > 0)?;
            Some(NotePlace { path, cell, row })
        })
    }

    /// Keeps the functions' [`FunctionDetails::syncs_on`] whose finding (rule, offset) is
    /// still reported.
    pub fn keep_syncs(&mut self, reported: impl Fn(Rule, u32) -> bool) {
        for function in &mut self.functions {
            let Some(details) = function.details.as_deref_mut() else {
                continue;
            };
            if details.syncs_on.iter().any(|sync| !reported(sync.rule, sync.at)) {
                let kept: Vec<ParameterSync> = details
                    .syncs_on
                    .iter()
                    .filter(|sync| reported(sync.rule, sync.at))
                    .cloned()
                    .collect();
                details.syncs_on = kept.into_boxed_slice();
                // Nothing may be left to keep apart.
                function.details = function.details.take().and_then(|details| details.boxed());
            }
        }
    }

    /// `line 12`, in a notebook `cell 6, line 2`.
    pub fn line_label(&self, line: u32) -> String {
        match self.cell_of(line) {
            Some((cell, row)) => format!("cell {cell}, line {row}"),
            None => format!("line {line}"),
        }
    }

    /// The cell `line` of a notebook's joined source is in, and its row there.
    fn cell_of(&self, line: u32) -> Option<(u32, u32)> {
        let index = self
            .cell_rows
            .partition_point(|&(first, _)| first <= line)
            .checked_sub(1)?;
        let (first, cell) = self.cell_rows[index];
        Some((cell, line - first + 1))
    }

    /// What the file made of the result of the call at `site`, where a question reached it.
    pub fn result_seen(&self, site: usize) -> Option<&ProjectKind> {
        let index = self
            .results_seen
            .binary_search_by_key(&(site as u32), |(site, _)| *site)
            .ok()?;
        Some(&self.results_seen[index].1)
    }
}

/// A place a note names, read back (see [`FileSummary::places_in_note`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotePlace<'n> {
    /// As the note shows it: relative to the folder checked.
    pub path: &'n str,
    /// In a notebook, the cell `row` counts in.
    pub cell: Option<u32>,
    pub row: u32,
}

/// A module's importable names, sorted by name: compact, as every file's stay in memory until
/// the project-wide pass.
#[derive(Debug, Default, Clone, bincode::Encode, bincode::Decode)]
pub struct Exports(Box<[(Box<str>, Export)]>);

impl Exports {
    pub fn get(&self, name: &str) -> Option<&Export> {
        let index = self.0.binary_search_by(|(n, _)| (**n).cmp(name)).ok()?;
        Some(&self.0[index].1)
    }
}

impl FromIterator<(Box<str>, Export)> for Exports {
    fn from_iter<I: IntoIterator<Item = (Box<str>, Export)>>(names: I) -> Self {
        let mut names: Vec<(Box<str>, Export)> = names.into_iter().collect();
        names.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        Exports(names.into_boxed_slice())
    }
}

#[derive(Debug, Clone, bincode::Encode, bincode::Decode)]
pub enum Export {
    Function(FunctionId),
    Class(ClassId),
    Import { module: Box<str>, name: Box<str> },
}

/// A call of a project name from a function, whose result the function could not tell.
#[derive(Debug, Clone, bincode::Encode, bincode::Decode)]
pub struct ImportedCall {
    /// The qualified name as spelled (`.masks.valid_mask`).
    pub name: Box<str>,
    pub caller: FunctionId,
    /// What was asked of its result.
    pub questions: Questions,
}

/// An attribute of an instance of another file's class that a function read without knowing
/// what it holds (`self.attn.kv_cache` with `self.attn` a `MultiHeadAttention`).
#[derive(Debug, Clone, bincode::Encode, bincode::Decode)]
pub struct ImportedAttribute {
    /// The class as spelled (`torchtune.modules.attention.MultiHeadAttention`).
    pub class: Box<str>,
    pub attr: Box<str>,
    pub caller: FunctionId,
    /// What was asked of it.
    pub questions: Questions,
}

/// A class, for the project's class hierarchy.
#[derive(Debug, Clone, bincode::Encode, bincode::Decode)]
pub struct ClassSummary {
    pub name: Box<str>,
    /// Bases as the file resolves them: a local class's name or an import's qualified name.
    pub bases: Box<[Box<str>]>,
    /// Its own methods, sorted by name (the last part of their qualified names).
    pub methods: Box<[FunctionId]>,
    /// What the file alone shows: an `nn.Module` (of which kind), or `None`.
    pub module: Option<ModuleKind>,
    /// What its methods assign to `self.<attr>`, by name (sorted), where that is a tensor, an
    /// array, a device or an instance of a project class: what other files read of its
    /// instances.
    pub attributes: Box<[(Box<str>, ProjectKind)]>,
    /// The registries it is registered in (`@MODELS.register_module()`), as the file spells
    /// them (`mmdet.registry.MODELS`, or `MODELS` for one of the file's own): an instance the
    /// registry builds may be one of it.
    pub registries: Box<[Box<str>]>,
    /// The attributes whose kind the file cannot tell and which code that may run hot calls,
    /// with the methods its methods call on them (see [`ClassInfo::methods_called_on`](super::ClassInfo::methods_called_on)): the
    /// project names the classes that have them all (a user's augmentation object, passed in, whose `_set_seed` only the package's
    /// augmentation classes define).
    pub duck_typed: Box<[MethodsCalledOn]>,
}

/// An attribute, and the methods called on what it holds.
pub type MethodsCalledOn = (Box<str>, Box<[Box<str>]>);

impl ClassSummary {
    /// What its own methods assign to `self.<attr>`, where the summary keeps it.
    pub fn attribute(&self, attr: &str) -> Option<&ProjectKind> {
        let index = self.attributes.binary_search_by(|(name, _)| (**name).cmp(attr)).ok()?;
        Some(&self.attributes[index].1)
    }
}

impl ClassSummary {
    /// Its own method `name`, given its file's functions.
    pub fn method(&self, functions: &[FunctionSummary], name: &str) -> Option<FunctionId> {
        let index = self
            .methods
            .binary_search_by(|&id| functions[id as usize].name().cmp(name))
            .ok()?;
        Some(self.methods[index])
    }
}

#[derive(Debug, Clone, bincode::Encode, bincode::Decode)]
pub struct FunctionSummary {
    pub qualname: Box<str>,
    /// Where its own name starts in `qualname`.
    pub name_at: u32,
    pub line: u32,
    pub intrinsic: Option<IntrinsicHot>,
    /// See [`FunctionInfo::never_hot`](super::FunctionInfo::never_hot).
    pub never_hot: bool,
    /// The class it is a method of.
    pub class: Option<ClassId>,
    /// What its first parameter is bound to by the call form (`self`, `cls`: not in `params`).
    pub receiver: Receiver,
    /// A `@property`: reading the attribute runs it.
    pub property: bool,
    pub signature: Signature,
    /// Its parameters (positional, then keyword-only), with the kinds they were bound to.
    pub params: Box<[ParamSummary]>,
    /// The join of its `return` kinds.
    pub returns: ProjectKind,
    /// Some of its lines are hot by themselves: it is hot by itself, or holds a loop.
    pub has_hot_lines: bool,
    /// It does a step's work itself: trains, runs a network, or is hot by itself (a `forward`,
    /// a loss, a step). The project adds what its callees do: a loop that calls it is a step
    /// loop.
    pub step_work: bool,
    /// What about a third of functions have besides; kept apart, so that the list of every
    /// function the project pass walks stays small (`None`: nothing, see [`Self::details`]).
    pub details: Option<Box<FunctionDetails>>,
}

impl FunctionSummary {
    /// What it has besides its signature and return kind (empty for most functions).
    pub fn details(&self) -> &FunctionDetails {
        self.details.as_deref().unwrap_or(&NO_DETAILS)
    }

    /// Its own name: `method` of `Class.method`.
    pub fn name(&self) -> &str {
        self.qualname.get(self.name_at as usize..).unwrap_or(&self.qualname)
    }
}

/// What a function's summary holds that most functions have none of.
#[derive(Debug, Clone, Default, bincode::Encode, bincode::Decode)]
pub struct FunctionDetails {
    /// The elements of the tuple every `return` gives, where those are one length (kinds
    /// without classes, for other files).
    pub returns_tuple: Option<Box<[Returned]>>,
    /// See [`FunctionInfo::returns_by_type`](super::FunctionInfo::returns_by_type).
    pub returns_by_type: Option<Box<ReturnsByType>>,
    /// The dict entries its tests read, told as the slots after `params` (see [`EntryAsked`]).
    pub entries: Box<[EntryAsked]>,
    /// The questions asked of its parameters that the file could not answer: by a rule, or
    /// about a value passed to a project function or returned. Facts that answer one
    /// differently can change what it reports.
    pub demand: Demand,
    /// What its `return` values depend on, where the file cannot tell what they are.
    pub return_depends: Option<Box<Dependence>>,
    /// The `self` attributes (by parameter slot) an `__init__` stores parameters in, where an
    /// arm needs them absent (`if self.remap is not None:`, `remap=None`): code that sets one
    /// on an instance from outside (`model.remap = table`) leaves the constructions undecided.
    pub stored_absent: Box<[(u16, Box<str>)]>,
    /// The findings in its own lines (outside any guard or loop) on values made from its
    /// parameters: a call that passes a tensor which may be on a GPU syncs there (issue 14's
    /// helper syncs, reported at hot calls).
    pub syncs_on: Box<[ParameterSync]>,
    /// The functions of its file it returns as they are (`return wrapper` of a function it
    /// defines, or of a module function): a decorator's wrapper is what calls of the
    /// decorated function run.
    pub returns_functions: Box<[FunctionId]>,
}

/// The details of a function that has none.
static NO_DETAILS: std::sync::LazyLock<FunctionDetails> = std::sync::LazyLock::new(FunctionDetails::default);

impl FunctionDetails {
    /// Boxed where there is anything to keep.
    pub fn boxed(self) -> Option<Box<FunctionDetails>> {
        let empty = self.returns_tuple.is_none()
            && self.returns_by_type.is_none()
            && self.entries.is_empty()
            && self.demand == Demand::default()
            && self.return_depends.is_none()
            && self.stored_absent.is_empty()
            && self.syncs_on.is_empty()
            && self.returns_functions.is_empty();
        (!empty).then(|| Box::new(self))
    }
}

#[derive(Debug, Clone, bincode::Encode, bincode::Decode)]
pub struct ParamSummary {
    pub name: Box<str>,
    pub kind: ProjectKind,
    /// Its kind comes from an annotation.
    pub annotated: bool,
    pub default: ParamDefault,
}

/// What a parameter's default is, for the arms that test it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub enum ParamDefault {
    Required,
    None,
    /// `False`, `0`, `""`: false as `None` is.
    Falsy,
    Other,
}

/// A finding of a function on a value made from one of its parameters (`length.max().item()`
/// of `length`), in lines that run whenever the function does.
#[derive(Debug, Clone, bincode::Encode, bincode::Decode)]
pub struct ParameterSync {
    pub slot: u16,
    pub rule: Rule,
    /// Where the finding starts in the file, and its 1-based line.
    pub at: u32,
    pub line: u32,
    /// What the finding says syncs.
    pub message: Box<str>,
    /// Where the finding is itself a call reaching a sync deeper down: that sync and its place
    /// ("`t.item()` waits for the GPU (utils.py:2)"), which callers name instead.
    pub deeper: Option<Box<str>>,
    /// The parameter's kind was unknown there: an argument nothing is known of syncs too, as
    /// the finding did (`.item()` of an unknown counts; `if x:` of one does not).
    pub unknown_counts: bool,
    /// The arguments of a call that skips the finding's line (any of them).
    pub dead_where: Box<[DeadWhere]>,
}

/// What calls give a function's parameters (slot, and the value that kills: see
/// [`Given::kills`]) where code of it does not run, all of them at once: a call that gives
/// `kwargs` a dict holding the entry `max_seqlen` skips what follows `if kwargs is not None and
/// (n := kwargs.pop("max_seqlen", None)) is not None: return n`.
pub type DeadWhere = Box<[(u16, Given)]>;

/// An entry of a dict a function's test reads (`(n := kwargs.pop(key, None)) is not None`):
/// what its callers give it is told as a parameter slot after the real ones.
#[derive(Debug, Clone, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct EntryAsked {
    /// The dict's parameter slot; `None` for the `**kwargs`, whose entries are the callers'
    /// keywords.
    pub dict: Option<u16>,
    pub key: Box<str>,
    /// The parameter whose default is the key (`kwarg_name: str = "max_seqlen"`): a call that
    /// gives it may read another entry.
    pub key_slot: Option<u16>,
}

/// What a function's first parameter is bound to by the way it is called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, bincode::Encode, bincode::Decode)]
pub enum Receiver {
    /// A plain function or a `staticmethod`: every parameter is passed.
    #[default]
    None,
    /// A method's `self`: the instance, passed explicitly through the class (`Head.loss(obj, x)`).
    Instance,
    /// A `classmethod`'s `cls`: the class, however it is called.
    Class,
}

impl Receiver {
    /// The first parameter is bound by the call form, not passed: signatures leave it out.
    pub fn is_implicit(self) -> bool {
        self != Receiver::None
    }

    /// How many leading positional arguments of a call are not parameters: the instance an
    /// instance method is given when called through its class (`Head.loss(obj, x)`, `unbound`).
    pub fn leading_arguments(self, unbound: bool) -> usize {
        usize::from(unbound && self == Receiver::Instance)
    }
}

/// The positional parameters a function takes (after `self`), for which calls it can bind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct Signature {
    pub positional: u8,
    /// Those without a default.
    pub required: u8,
    /// It takes `*args`.
    pub variadic: bool,
}

impl Signature {
    pub fn of(parameters: &ast::Parameters, receiver: Receiver) -> Signature {
        let skip = usize::from(receiver.is_implicit());
        let positional = parameters.posonlyargs.iter().chain(&parameters.args).skip(skip);
        Signature {
            positional: count(positional.clone().count()),
            required: count(positional.filter(|parameter| parameter.default.is_none()).count()),
            variadic: parameters.vararg.is_some(),
        }
    }

    /// Whether a call passing `arity` (the first `skip` positional arguments taken by `self`)
    /// can bind: not too many positional arguments, and as many arguments as it requires
    /// (keywords may give any of those).
    pub fn accepts(self, arity: CallArity, skip: usize) -> bool {
        if arity.spread {
            return true;
        }
        let positional = usize::from(arity.positional).saturating_sub(skip);
        (self.variadic || positional <= usize::from(self.positional))
            && positional + usize::from(arity.keywords) >= usize::from(self.required)
    }
}

#[derive(Debug, Clone, bincode::Encode, bincode::Decode)]
pub struct CallSite {
    pub callee: Callee,
    pub context: HotContext,
    /// The function the call is in (`None` at module level).
    pub caller: Option<FunctionId>,
    pub line: u32,
    /// The call's offset in the file: what the project says it returns is keyed by it.
    pub at: u32,
    /// The kinds of the arguments, where any says something or tells which parameters the call
    /// gives a value (most calls pass nothing known).
    pub arguments: Option<Box<CallArguments>>,
    /// What a rule asked of its result, where the file could not tell.
    pub result_asked: Questions,
    /// How many arguments it passes: of several functions it may call, those that cannot take
    /// them are not what it calls.
    pub arity: CallArity,
    /// A callable handed to another call as an argument (`fit(model, callback=log)`): which.
    /// The site stands for the receiver calling it; where the receiver is a project function
    /// that calls (or passes on) that parameter, the project pass makes the call the receiver's.
    pub passed_to: Option<Box<PassedTo>>,
}

/// Where a callable passed as an argument goes: the call it is an argument of (by offset, as
/// [`CallSite::at`]), and as which argument.
#[derive(Debug, Clone, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct PassedTo {
    pub call: u32,
    pub slot: ArgumentSlot,
}

/// An argument of a call: the `n`th positional one, the one passed by this keyword, or the
/// function a decorator is applied to (its first; a decorator that stores or returns it calls
/// nothing where it is applied).
#[derive(Debug, Clone, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub enum ArgumentSlot {
    Position(u16),
    Keyword(Box<str>),
    Decorated,
}

/// What a call site calls, for the project-wide call graph.
#[derive(Debug, Clone, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub enum Callee {
    Local(FunctionId),
    /// A name imported from another module: `(module, name)`, module relative if it starts with
    /// dots.
    Imported {
        module: Box<str>,
        name: Box<str>,
    },
    /// A method of a project class: `self.head.loss(x)`, `model(x)` (`__call__`, which is
    /// `forward` for a module), `Head.loss(self.head, x)` (`bound: false`: the instance is the
    /// first argument). The project pass resolves it through the class's bases and, for
    /// overrides, its subclasses.
    Method {
        class: ClassRef,
        method: Box<str>,
        bound: bool,
    },
    /// `super().forward(x)` in a method of `class`: the method as the class's bases resolve it.
    Super {
        class: ClassId,
        method: Box<str>,
    },
    /// `cache.size` of an instance of a class of another file: reading the attribute runs the
    /// class's method `name` where that method is a `@property` (the project pass tells).
    Property {
        class: ClassRef,
        name: Box<str>,
    },
    /// `fn(x)` of a parameter (in this slot, after `self`) of the caller or of a function
    /// enclosing it (a closure's), or that parameter passed on to another call
    /// ([`CallSite::passed_to`]): what it runs is whatever callable that function's callers
    /// pass there (the project pass solves it over the call graph).
    Parameter {
        function: FunctionId,
        slot: u16,
    },
    /// A call of what the call at this offset of the file returns (`get_fn(name)(x)`, or
    /// `fn = get_fn(name); fn(x)`): the functions its targets return by name.
    Returned {
        call: u32,
    },
}

/// A class of the project as one file refers to it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, bincode::Encode, bincode::Decode)]
pub enum ClassRef {
    Local(ClassId),
    /// A qualified name as the file spells it (`.heads.Head`, `pkg.heads.Head`).
    Imported(Box<str>),
}

/// The arguments a call passes, counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, bincode::Encode, bincode::Decode)]
pub struct CallArity {
    pub positional: u8,
    pub keywords: u8,
    /// It spreads `*args` or `**kwargs`, or the callee calls it as it likes (a function passed
    /// on): any parameters may be given.
    pub spread: bool,
}

impl CallArity {
    /// Any arguments at all.
    pub const ANY: CallArity = CallArity {
        positional: 0,
        keywords: 0,
        spread: true,
    };
    /// One positional argument (a decorator applied to a function).
    pub const ONE: CallArity = CallArity {
        positional: 1,
        keywords: 0,
        spread: false,
    };
    /// None (reading a property, entering a `with` block).
    pub const NONE: CallArity = CallArity {
        positional: 0,
        keywords: 0,
        spread: false,
    };

    pub fn of(arguments: &ast::Arguments) -> CallArity {
        CallArity {
            positional: count(arguments.args.len()),
            keywords: count(arguments.keywords.len()),
            spread: arguments.args.iter().any(Expr::is_starred_expr)
                || arguments.keywords.iter().any(|keyword| keyword.arg.is_none()),
        }
    }
}

/// A count, up to 255 (beyond that, arity tells nothing new).
fn count(n: usize) -> u8 {
    u8::try_from(n).unwrap_or(u8::MAX)
}

/// Argument kinds at a call site, for the callee's parameters.
#[derive(Debug, Clone, Default, bincode::Encode, bincode::Decode)]
pub struct CallArguments {
    /// Positional arguments up to the first `*args`.
    pub positional: Box<[Argument]>,
    pub keywords: Box<[(Box<str>, Argument)]>,
    /// It spreads `*args` or `**kwargs`: any parameter may be given.
    pub spread: bool,
    /// Some argument's kind can tell a callee something (else it was kept only for which
    /// parameters it gives a value).
    pub informative: bool,
}

impl CallArguments {
    /// Every argument, positional then by keyword.
    pub fn all(&self) -> impl Iterator<Item = &Argument> {
        self.positional
            .iter()
            .chain(self.keywords.iter().map(|(_, argument)| argument))
    }

    /// What the call gives the parameter `name`, at `position` among the arguments where it
    /// can be given by position.
    pub fn for_parameter(&self, position: Option<usize>, name: &str) -> Option<&Argument> {
        position.and_then(|position| self.positional.get(position)).or_else(|| {
            let keyword = self.keywords.iter().find(|(keyword, _)| **keyword == *name);
            keyword.map(|(_, argument)| argument)
        })
    }
}

/// One argument: its kind, and the caller's parameter it passes on unchanged, if it does (what
/// the caller's callers pass then reaches the callee without checking the caller again), or
/// what it is made from.
#[derive(Debug, Clone, Default, bincode::Encode, bincode::Decode)]
pub struct Argument {
    pub kind: ProjectKind,
    /// Whether it is a value (`Always`: made here, never `None`), `None` (`Never`), or what
    /// the caller was given (`Sometimes`: a parameter, an attribute, may be `None`).
    pub given: Given,
    pub parameter: Option<u16>,
    /// The caller's parameter it is made from by tensor operations (`scores > 0`,
    /// `values.mean()`), where it is not the parameter itself.
    pub made_from: Option<u16>,
    /// What few arguments tell besides (every file's call sites stay in memory until the
    /// project pass: one pointer for both).
    pub detail: Option<Box<ArgumentDetail>>,
}

impl Argument {
    /// The caller's parameter it is, or is made from by tensor operations.
    pub fn from_parameter(&self) -> Option<u16> {
        self.parameter.or(self.made_from)
    }

    /// What it depends on, where the file cannot tell what it is.
    pub fn depends(&self) -> Option<&Dependence> {
        self.detail.as_ref()?.depends.as_ref()
    }

    /// What a dict it spells out gives each of its keys (see [`ArgumentDetail::entries`]).
    pub fn entries(&self) -> Option<&[DictEntry]> {
        self.detail.as_ref()?.entries.as_deref()
    }
}

#[derive(Debug, Clone, Default, bincode::Encode, bincode::Decode)]
pub struct ArgumentDetail {
    /// What it depends on, where the file cannot tell what it is.
    pub depends: Option<Dependence>,
    /// What a dict it spells out (`{"max_seqlen": n}`, `dict(max_seqlen=n)`) gives each of its
    /// keys, for a callee whose test reads one (see [`EntryAsked`]).
    pub entries: Option<Box<[DictEntry]>>,
}

/// A key of a dict an argument spells out, and what it gives it.
pub type DictEntry = (Box<str>, Given);

impl Demand {
    /// Whether what hot callers pass (`from_callers`) answers a question asked of `param` (in
    /// slot `slot`) differently from the kind the file gave it. (Written here, beside the
    /// parameter's summary it reads: the questions know no summaries.)
    pub fn answered_by_callers(&self, slot: usize, param: &ParamSummary, from_callers: &ProjectKind) -> bool {
        demand::answered_by_callers(self.of(slot), &param.kind, param.annotated, from_callers)
    }
}

/// Whether what hot callers pass (`from_callers`) makes a parameter that a value passed on
/// depends on something a receiver could ask about: what it is.
pub fn refines_passed_on(param: &ParamSummary, from_callers: &ProjectKind) -> bool {
    demand::answered_by_callers(
        Questions::of(Question::Kind),
        &param.kind,
        param.annotated,
        from_callers,
    )
}

#[cfg(test)]
mod tests {
    use super::{CallArity, FileSummary, NotePlace, Receiver, Signature};

    /// Which calls a signature can bind, as Python would (the parameters of the `def` parsed).
    #[test]
    fn a_signature_takes_the_calls_python_would_bind() {
        let signature = |def: &str, receiver: Receiver| {
            let parsed = ruff_python_parser::parse_module(def).unwrap();
            let ruff_python_ast::Stmt::FunctionDef(function) = &parsed.syntax().body[0] else {
                panic!("{def}");
            };
            Signature::of(&function.parameters, receiver)
        };
        let call = |call: &str| {
            let parsed = ruff_python_parser::parse_expression(call).unwrap();
            let ruff_python_ast::Expr::Call(call) = parsed.expr() else {
                panic!("{call}");
            };
            CallArity::of(&call.arguments)
        };
        let loss = signature(
            "def loss(self, scores, boxes, labels, weights=None): ...",
            Receiver::Instance,
        );
        assert!(loss.accepts(call("head.loss(s, b, l)"), 0));
        assert!(loss.accepts(call("head.loss(s, b, labels=l, weights=w)"), 0));
        assert!(loss.accepts(call("Head.loss(head, s, b, l)"), 1));
        assert!(!loss.accepts(call("head.loss(x, samples)"), 0));
        assert!(!loss.accepts(call("head.loss(s, b, l, w, extra)"), 0));
        assert!(loss.accepts(call("head.loss(x, samples, **kwargs)"), 0));
        let variadic = signature("def f(x, *rest): ...", Receiver::None);
        assert!(variadic.accepts(call("f(a, b, c, d)"), 0));
        assert!(!variadic.accepts(call("f()"), 0));
        assert!(signature("def g(self): ...", Receiver::Instance).accepts(CallArity::NONE, 0));
    }

    #[test]
    fn the_places_a_note_names_read_back_as_they_were_written() {
        let script = FileSummary::default();
        let notebook = FileSummary {
            cell_rows: Box::new([(1, 2), (4, 6)]),
            ..FileSummary::default()
        };
        let note = format!(
            "`record()` is called from the loop at {} via `log()`; hot: `f()` at {}: a loss",
            script.place("pkg/train.py", 12),
            notebook.place("nb/train.ipynb", 5)
        );
        assert_eq!(
            note,
            "`record()` is called from the loop at pkg/train.py:12 via `log()`; hot: `f()` at nb/train.ipynb:cell 6:2: a loss"
        );
        let places: Vec<NotePlace> = FileSummary::places_in_note(&note).collect();
        assert_eq!(
            places,
            [
                NotePlace {
                    path: "pkg/train.py",
                    cell: None,
                    row: 12
                },
                NotePlace {
                    path: "nb/train.ipynb",
                    cell: Some(6),
                    row: 2
                },
            ]
        );
        assert_eq!(
            FileSummary::places_in_note("hot: `Net.forward`: runs at every step").count(),
            0
        );
    }
}
