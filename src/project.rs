//! Project-wide: which functions are hot because a hot line calls them, across files, and
//! what each finding's note says about why its line is hot.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::semantic::{
    Callee, Export, FileSemantics, FunctionId, FunctionSummary, HotContext, HotReason, PeriodicInner,
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

/// A function of the linted project: (file index, function id).
type ProjectFunction = (usize, FunctionId);

/// Functions made hot by their callers, with the chain that explains it.
pub struct HotFunctions<'m> {
    modules: &'m [ModuleInfo<'m>],
    /// Each function reached from a hot line: the call at the start of its chain, and the
    /// function it was reached from (`None` for the first call of the chain).
    reached: FxHashMap<ProjectFunction, (RootCall, Option<ProjectFunction>)>,
}

impl HotFunctions<'_> {
    /// "`masked_mean()` is called from the loop at train.py:12 via `compute_loss()`", for a
    /// function of file `file`; `None` when no hot line reaches it. Built only for the few
    /// functions with findings: a chain's text repeats its callers' names.
    pub fn note(&self, file: usize, function: FunctionId) -> Option<String> {
        let &(root, mut caller) = self.reached.get(&(file, function))?;
        let mut via = Vec::new();
        while let Some(node) = caller {
            via.push(self.function_name(node));
            caller = self.reached.get(&node).and_then(|(_, parent)| *parent);
        }
        let name = self.function_name((file, function));
        let root = describe_root(self.modules, root);
        Some(if via.is_empty() {
            format!("{name} is called from {root}")
        } else {
            via.reverse();
            format!("{name} is called from {root} via {}", via.join(" → "))
        })
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

/// A call from a function or a hot line to a function of the project.
struct ResolvedCall {
    context: HotContext,
    line: u32,
    target: ProjectFunction,
}

/// Follows every call site from a hot line to the function it calls, in the same file or an
/// imported one, until nothing new becomes hot.
pub fn resolve_hot_functions<'m>(modules: &'m [ModuleInfo<'m>]) -> HotFunctions<'m> {
    let index = ModuleIndex::new(modules);
    // Each file's calls resolved in parallel; a file calls the same imported names again and
    // again, so each (module, name) is resolved once per file.
    let resolved: Vec<Vec<ResolvedCall>> = modules
        .par_iter()
        .enumerate()
        .map(|(file, module)| {
            let mut imports: FxHashMap<(&str, &str), Option<ProjectFunction>> = FxHashMap::default();
            let sites = module
                .semantics
                .call_sites
                .iter()
                .filter(|site| matches!(site.context, HotContext::Hot(_) | HotContext::InFunction(_)));
            sites
                .filter_map(|site| {
                    let target = match &site.callee {
                        Callee::Local(id) => Some((file, *id)),
                        Callee::Imported { module, name } => *imports
                            .entry((module, name))
                            .or_insert_with(|| resolve_import(modules, &index, file, module, name, 0)),
                    }?;
                    Some(ResolvedCall {
                        context: site.context,
                        line: site.line,
                        target,
                    })
                })
                .collect()
        })
        .collect();
    // Edges from a function to what it calls (per file, by function id), and the roots: calls
    // on lines hot by themselves, from loops and from functions hot by themselves (which are
    // also edges, so a chain from a loop can pass through them).
    let mut edges: Vec<Vec<Vec<ProjectFunction>>> = modules
        .iter()
        .map(|module| vec![Vec::new(); module.semantics.functions.len()])
        .collect();
    // Queued: (function, the root call of its chain, the function it is reached from).
    type Queued = (ProjectFunction, RootCall, Option<ProjectFunction>);
    let mut loop_roots: VecDeque<Queued> = VecDeque::new();
    let mut function_roots: VecDeque<Queued> = VecDeque::new();
    for (file, calls) in resolved.iter().enumerate() {
        for call in calls {
            let root = |reason| RootCall {
                file,
                reason,
                line: call.line,
            };
            match call.context {
                HotContext::Hot(reason @ HotReason::Loop { .. }) => {
                    loop_roots.push_back((call.target, root(reason), None));
                }
                HotContext::Hot(reason @ HotReason::Function { function: caller, .. }) => {
                    function_roots.push_back((call.target, root(reason), None));
                    edges[file][caller as usize].push(call.target);
                }
                HotContext::InFunction(caller) => edges[file][caller as usize].push(call.target),
                _ => {}
            }
        }
    }
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
            if summary.setup || hot.reached.contains_key(&node) {
                continue;
            }
            hot.reached.insert(node, (root, caller));
            for target in &edges[node.0][node.1 as usize] {
                queue.push_back((*target, root, Some(node)));
            }
        }
    }
    hot
}

fn describe_root(
    modules: &[ModuleInfo],
    RootCall {
        file,
        reason,
        line: call_line,
    }: RootCall,
) -> String {
    let path = modules[file].display;
    match reason {
        HotReason::Loop { line } => format!("the loop at {path}:{line}"),
        HotReason::Function { function, .. } => {
            let name = &modules[file].semantics.functions[function as usize].qualname;
            format!("`{name}()` at {path}:{call_line}")
        }
    }
}

/// Modules by dotted path, and by their last component for imports that name only a tail.
struct ModuleIndex<'m> {
    by_path: FxHashMap<&'m str, usize>,
    by_last: FxHashMap<&'m str, Vec<usize>>,
}

impl<'m> ModuleIndex<'m> {
    fn new(modules: &'m [ModuleInfo]) -> Self {
        let mut by_path = FxHashMap::default();
        let mut by_last: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for (index, module) in modules.iter().enumerate() {
            by_path.insert(module.module.as_str(), index);
            let last = module.module.rsplit('.').next().unwrap_or_default();
            by_last.entry(last).or_default().push(index);
        }
        ModuleIndex { by_path, by_last }
    }

    /// The module `absolute` names: exactly, or the one module whose path ends with it
    /// (`from losses import f` run from a folder that is not a package root).
    fn find(&self, modules: &[ModuleInfo], absolute: &str) -> Option<usize> {
        if let Some(&index) = self.by_path.get(absolute) {
            return Some(index);
        }
        let last = absolute.rsplit('.').next().unwrap_or(absolute);
        let suffix = format!(".{absolute}");
        let mut matches = self
            .by_last
            .get(last)?
            .iter()
            .filter(|&&i| modules[i].module.ends_with(&suffix));
        let first = matches.next().copied();
        if matches.next().is_some() { None } else { first }
    }
}

fn resolve_import(
    modules: &[ModuleInfo],
    by_module: &ModuleIndex,
    file: usize,
    module: &str,
    name: &str,
    depth: u32,
) -> Option<ProjectFunction> {
    if depth > 4 {
        return None;
    }
    let absolute = absolute_module(&modules[file], module)?;
    let target = by_module.find(modules, &absolute);
    match target {
        Some(target) => match modules[target].semantics.exports.get(name)? {
            Export::Function(id) => Some((target, *id)),
            Export::Import { module, name } => resolve_import(modules, by_module, target, module, name, depth + 1),
        },
        // `from pkg import losses; losses.f()`: the "module" is `pkg.losses` itself.
        None => None,
    }
}

/// `..losses` seen from `pkg.sub.train` -> `pkg.losses`.
fn absolute_module(importer: &ModuleInfo, module: &str) -> Option<String> {
    let level = module.chars().take_while(|c| *c == '.').count();
    if level == 0 {
        return Some(module.to_string());
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
    Some(package.join("."))
}

/// What the user is told about why a finding's line is hot; `None` hides the finding.
/// `functions` are the file's functions (as checked, perhaps after fixes), `called_note` the call
/// chain that makes one of them hot, if any.
pub fn hot_note(
    context: HotContext,
    display: &str,
    functions: &[FunctionSummary],
    called_note: impl Fn(FunctionId) -> Option<String>,
    report_periodic: bool,
) -> Option<String> {
    let describe_inner = |inner: PeriodicInner| -> Option<String> {
        match inner {
            PeriodicInner::Hot(reason) => Some(describe_hot(display, functions, reason)),
            PeriodicInner::InFunction(function) => called_note(function).map(|note| format!("hot: {note}")),
        }
    };
    match context {
        HotContext::Hot(reason) => describe_inner(PeriodicInner::Hot(reason)),
        HotContext::InFunction(function) => describe_inner(PeriodicInner::InFunction(function)),
        HotContext::Periodic { guard_line, inner } if report_periodic => describe_inner(inner)
            .map(|note| format!("{note}; periodic: runs under the guard at line {guard_line}, not every step")),
        HotContext::Periodic { .. } | HotContext::Cold => None,
    }
}

fn describe_hot(display: &str, functions: &[FunctionSummary], reason: HotReason) -> String {
    match reason {
        HotReason::Loop { line } => format!("hot: inside the loop at {display}:{line}"),
        HotReason::Function { function, why } => {
            let name = functions.get(function as usize).map_or("?", |f| &*f.qualname);
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
            line,
            intrinsic: None,
            setup: false,
        }
    }

    fn call(callee: Callee, context: HotContext, line: u32) -> CallSite {
        CallSite { callee, context, line }
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
            exports: Default::default(),
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
        };
        let unrelated = FileSemantics {
            functions: vec![function("setup", 1)],
            ..FileSemantics::default()
        };
        let info = |module: &str, display: &'static str, semantics| ModuleInfo {
            module: module.to_string(),
            is_package: false,
            display,
            semantics,
        };
        let modules = [
            info("train", "train.py", &train),
            info("losses", "losses.py", &losses),
            info("other", "other.py", &unrelated),
        ];
        let hot = resolve_hot_functions(&modules);
        assert_eq!(
            hot.note(0, 0).as_deref(),
            Some("`step()` is called from the loop at train.py:9")
        );
        assert_eq!(
            hot.note(1, 0).as_deref(),
            Some("`loss()` is called from the loop at train.py:9 via `step()`")
        );
        assert_eq!(
            hot.note(1, 1).as_deref(),
            Some("`masked_mean()` is called from the loop at train.py:9 via `step()` → `loss()`")
        );
        assert_eq!(hot.note(2, 0), None);
    }
}
