//! Which functions are hot because a hot line calls them, across files ([`HotFunctions`]: from
//! the calls on hot lines, breadth first through the call edges), and what each finding's note
//! says about why its line is hot: the chain from the loop (`HotFunctions::notes`) and the
//! note of a line hot by itself ([`hot_note`]).
//!
//! The fourth pass: it reads the call sites' hot contexts, their targets and the class index
//! (for functions hot through bases in other files). It imports from its parent,
//! [`super::modules`] and [`super::edges`].

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::edges::CallEdgesBuilder;
use super::modules::ModuleInfo;
use super::{Project, ProjectFunction};
use crate::semantic::{
    CallSite, FileSummary, FunctionId, FunctionSummary, HotContext, HotReason, IntrinsicHot, ModuleKind, PeriodicInner,
};

/// Why a file's functions are hot through calls: the note of each one a hot line reaches
/// ("`masked_mean()` is called from the loop at train.py:12").
pub type FunctionNotes = FxHashMap<FunctionId, String>;

/// A call on a line hot by itself (`line` of `file`, hot for `reason`), where a chain of hot
/// calls starts: "the loop at train.py:12".
#[derive(Clone, Copy)]
struct RootCall {
    file: usize,
    reason: HotReason,
    line: u32,
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
    pub(super) fn runs_hot(&self, file: usize, site: &CallSite) -> bool {
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
                        format!("the loop at {}", module.summary.place(module.display, line))
                    }
                    HotReason::Function { function, why } => {
                        if caller.is_none() && node == (root.file, function) {
                            return None;
                        }
                        let module = &self.modules[root.file];
                        let summary = &module.summary.functions[function as usize];
                        format!(
                            "`{}()` at {}: {}",
                            summary.qualname,
                            module.summary.place(module.display, summary.line),
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
            self.modules[file].summary.functions[function as usize].qualname
        )
    }
}

impl<'m> Project<'m> {
    /// Which functions are hot because a hot line calls them, with the chain that explains it.
    pub fn hot_functions(&self) -> HotFunctions<'m> {
        let modules = self.modules;
        // Queued: (function, the root call of its chain, the function it is reached from).
        type Queued = (ProjectFunction, RootCall, Option<ProjectFunction>);
        let mut loop_roots: VecDeque<Queued> = VecDeque::new();
        let mut function_roots: VecDeque<Queued> = VecDeque::new();
        let mut edges = CallEdgesBuilder::new(modules);
        for (file, module) in modules.iter().enumerate() {
            for (site, targets) in module.summary.call_sites.iter().zip(&self.targets[file]) {
                let root = |reason| RootCall {
                    file,
                    reason,
                    line: site.line,
                };
                for &target in targets.functions.iter().chain(targets.wrappers.iter().flatten()) {
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
            for (id, function) in module.summary.functions.iter().enumerate() {
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
                let summary = &modules[node.0].summary.functions[node.1 as usize];
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
        let local = self.modules[file].summary.classes.get(class as usize)?.module;
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
        HotReason::Loop { line } => format!("the loop at {}", module.summary.place(module.display, line)),
        HotReason::Function { function, .. } => {
            let name = &module.summary.functions[function as usize].qualname;
            format!("`{name}()` at {}", module.summary.place(module.display, call_line))
        }
    }
}

/// Whether function `caller` of `file` runs in hot code: hot by itself, holding a loop, or
/// reached from hot code.
pub(super) fn runs_hot(modules: &[ModuleInfo], hot: &HotFunctions, file: usize, caller: FunctionId) -> bool {
    modules[file].summary.functions[caller as usize].has_hot_lines || hot.reached.contains_key(&(file, caller))
}

/// Whether a finding is reported, and what the user is told about why its line is hot: `None`
/// hides the finding, `Some(None)` reports it without a note (a finding about a comment, not
/// about a hot line). `functions` are the file's functions (as checked, perhaps after fixes),
/// `called_note` the call chain that makes one of them hot, if any.
pub fn hot_note(
    context: HotContext,
    display: &str,
    summary: &FileSummary,
    called_note: impl Fn(FunctionId) -> Option<String>,
    report_periodic: bool,
) -> Option<Option<String>> {
    let describe_inner = |inner: PeriodicInner| -> Option<String> {
        match inner {
            PeriodicInner::Hot(reason) => Some(describe_hot(display, summary, reason)),
            PeriodicInner::InFunction(function) => called_note(function).map(|note| format!("hot: {note}")),
        }
    };
    let note = match context {
        HotContext::Anywhere => return Some(None),
        HotContext::Hot(reason) => describe_inner(PeriodicInner::Hot(reason)),
        HotContext::InFunction(function) => describe_inner(PeriodicInner::InFunction(function)),
        HotContext::Periodic { guard_line, inner } if report_periodic => describe_inner(inner).map(|note| {
            let guard = summary.line_label(guard_line);
            format!("{note}; periodic: runs under the guard at {guard}, not every step")
        }),
        HotContext::Periodic { .. } | HotContext::Cold => None,
    };
    note.map(Some)
}

fn describe_hot(display: &str, summary: &FileSummary, reason: HotReason) -> String {
    match reason {
        HotReason::Loop { line } => format!("hot: inside the loop at {}", summary.place(display, line)),
        HotReason::Function { function, why } => {
            let name = summary.functions.get(function as usize).map_or("?", |f| &*f.qualname);
            format!("hot: `{name}`: {}", why.describe())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::semantic::{Callee, Export, ProjectKind, Questions, Receiver};

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
    fn info<'a>(module: &str, display: &'a str, summary: &'a FileSummary) -> ModuleInfo<'a> {
        ModuleInfo {
            module: module.to_string(),
            is_package: false,
            display,
            summary,
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
            passed_to: None,
        }
    }

    /// train.py's loop calls `step`, which calls `loss` from losses.py, which calls the local
    /// `masked_mean`: each note names the shortest chain, outermost caller first.
    #[test]
    fn notes_spell_the_chain_from_the_loop() {
        let train = FileSummary {
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
            ..FileSummary::default()
        };
        let losses = FileSummary {
            functions: vec![function("loss", 1), function("masked_mean", 5)],
            call_sites: vec![call(Callee::Local(1), HotContext::InFunction(0), 2)],
            exports: [
                ("loss".into(), Export::Function(0)),
                ("masked_mean".into(), Export::Function(1)),
            ]
            .into_iter()
            .collect(),
            ..FileSummary::default()
        };
        let unrelated = FileSummary {
            functions: vec![function("setup", 1)],
            ..FileSummary::default()
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
    fn chain(n: u32) -> FileSummary {
        let mut call_sites = vec![call(Callee::Local(0), HotContext::Hot(HotReason::Loop { line: 1 }), 2)];
        call_sites.extend((1..n).map(|id| call(Callee::Local(id), HotContext::InFunction(id - 1), 3 + id)));
        FileSummary {
            functions: (0..n).map(|id| function(&format!("f{id}"), 3 + id)).collect(),
            call_sites,
            ..FileSummary::default()
        }
    }

    #[test]
    fn a_long_chain_is_spelled_by_its_ends() {
        let summary = chain(9);
        let modules = [info("train", "train.py", &summary)];
        let hot = Project::new(&modules).hot_functions();
        let mut places = ChainPlaces::default();
        // Eight callers are named one by one; nine are not.
        assert_eq!(
            hot.note(0, 8, &mut places).as_deref(),
            Some(
                "`f8()` is called from the loop at train.py:1 via `f0()` → `f1()` → `f2()` → `f3()` → `f4()` → `f5()` → `f6()` → `f7()`"
            )
        );
        let summary = chain(40);
        let modules = [info("train", "train.py", &summary)];
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
        let borrower = FileSummary {
            call_sites: vec![call(
                Callee::Imported {
                    module: "ops".into(),
                    name: "mask".into(),
                },
                HotContext::Hot(HotReason::Loop { line: 3 }),
                4,
            )],
            ..FileSummary::default()
        };
        let ops = FileSummary {
            functions: vec![function("mask", 1)],
            call_sites: vec![call(Callee::Local(0), HotContext::Hot(HotReason::Loop { line: 8 }), 9)],
            exports: [("mask".into(), Export::Function(0))].into_iter().collect(),
            ..FileSummary::default()
        };
        let modules = [info("borrower", "borrower.py", &borrower), info("ops", "ops.py", &ops)];
        let hot = Project::new(&modules).hot_functions();
        assert_eq!(
            hot.note(1, 0, &mut ChainPlaces::default()).as_deref(),
            Some("`mask()` is called from the loop at ops.py:8")
        );
    }
}
