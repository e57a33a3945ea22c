//! The run every command shares: the files named and the rest of their project, each file
//! checked in parallel (or its earlier result read from the cache), then checked again while
//! the project learns facts about it (what its hot callers pass, what the project functions it
//! calls return). [`crate::outcome`] turns the result into findings to report and fixes to
//! write; `cli.rs` parses arguments and turns outcomes into output and exit codes.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use miette::{LabeledSpan, Report, miette};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use crate::cache::{Cache, FileKey, FileStat, Guarded, SnapshotFile};
use crate::config::{Resolver, Settings};
use crate::diagnostic::{Applicability, Diagnostic};
use crate::discovery::{DiscoveredFile, discover};
use crate::lines::Lines;
use crate::linter::{FileLint, decode, lint_source};
use crate::notebook::{Notebook, code_of};
use crate::parse::{SourceKind, SyntaxError};
use crate::project::Project;
use crate::project::hotness::FunctionNotes;
use crate::project::modules::{ModuleInfo, ModulePaths, display_path};
use crate::project::targets::Targets;
use crate::registry::RuleSet;
use crate::regular_file::read_regular_file;
use crate::render::{Finding, ReportText, SourceText};
use crate::semantic::{FileFacts, FileSummary, FunctionId, HotContext};
use crate::write::{Roots, finish_interrupted_write};

/// How many times files are checked again with what the project learned about them (callers'
/// argument kinds, imported return kinds). Parameters passed on unchanged reach any depth in
/// one round; each round carries values derived from them one call further.
const FACT_ROUNDS: usize = 2;

/// How a run checks its files.
pub struct RunOptions<'a> {
    pub threads: usize,
    /// Check the named files alone, without the rest of their project.
    pub isolated: bool,
    /// Record every call, in cold code too (the call graph shows module level and setup).
    pub every_call: bool,
    /// The least safe fixes that may be applied to a file under these settings; `None` where
    /// the file is not fixed.
    pub fixing: &'a (dyn Fn(&Settings) -> Option<Applicability> + Sync),
    /// The cache folder; `None` checks every file afresh and writes nothing.
    pub cache: Option<PathBuf>,
    /// Text checked in place of what is on disk, by the path it stands for: source read from
    /// stdin, or an editor's unsaved buffers. A named path with text here is taken as given (it
    /// need not exist on disk); nothing of such text is cached.
    pub overlays: FxHashMap<PathBuf, String>,
}

/// What a run checked: every file of the project, the named ones first (or the named ones
/// alone, where the cache held the project pass's conclusions).
pub struct Run {
    pub linted: Vec<Linted>,
    /// Each file's call targets, for the final project (empty where the pass was not run).
    pub targets: Vec<Option<Vec<Targets>>>,
    /// Per file, why its functions are hot through calls (for the named files).
    pub notes: Vec<FunctionNotes>,
    pub errors: Errors,
    /// The folders named, where fixes may be written.
    pub roots: Roots,
}

/// The files named and the rest of their project, with how many were named first; the
/// configuration errors met on the way are returned instead.
pub fn discover_all(
    paths: &[PathBuf],
    resolver: &Arc<Resolver>,
    cwd: &Path,
    options: &RunOptions,
    errors: &mut Errors,
) -> Result<(Vec<DiscoveredFile>, usize), Vec<Report>> {
    let (given, on_disk): (Vec<&PathBuf>, Vec<&PathBuf>) =
        paths.iter().partition(|path| options.overlays.contains_key(*path));
    // What an overlay stands for need not exist on disk.
    let mut files: Vec<DiscoveredFile> = given
        .into_iter()
        .map(|path| DiscoveredFile {
            path: path.clone(),
            settings: resolver.for_dir(path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(cwd)),
        })
        .collect();
    if !on_disk.is_empty() {
        let on_disk: Vec<PathBuf> = on_disk.into_iter().cloned().collect();
        files.extend(discover_paths(&on_disk, resolver, cwd, options.threads, errors));
    }
    // The call graph and the facts come from the whole project of the files named (unless
    // isolated): a file's verdict does not depend on which others were named with it.
    let (files, named) = if options.isolated {
        let named = files.len();
        (files, named)
    } else {
        with_project(files, paths, resolver, cwd, options.threads)
    };
    let config_errors = resolver.take_errors();
    if config_errors.is_empty() {
        Ok((files, named))
    } else {
        Err(config_errors)
    }
}

/// Checks `paths` and the rest of their project (see [`discover_all`]), reading and writing the
/// cache.
pub fn run(paths: &[PathBuf], resolver: &Arc<Resolver>, cwd: &Path, options: &RunOptions) -> Result<Run, Vec<Report>> {
    run_with(paths, resolver, cwd, options, None)
}

/// Which named files a run may write back.
#[derive(Clone, Copy)]
pub enum Writes {
    /// Those its `fixing` fixes (`--fix`).
    Fixed,
    /// Every one (`--add-noqa`).
    All,
}

/// [`run`], for a run that writes files back: a write of one of them that a killed run left
/// unfinished is finished first ([`finish_interrupted_write`]), so that the file is read whole.
pub fn run_to_write(
    paths: &[PathBuf],
    resolver: &Arc<Resolver>,
    cwd: &Path,
    options: &RunOptions,
    writes: Writes,
) -> Result<Run, Vec<Report>> {
    run_with(paths, resolver, cwd, options, Some(writes))
}

fn run_with(
    paths: &[PathBuf],
    resolver: &Arc<Resolver>,
    cwd: &Path,
    options: &RunOptions,
    writes: Option<Writes>,
) -> Result<Run, Vec<Report>> {
    let mut errors = Errors::default();
    let roots = Roots::of(paths, cwd);
    let (mut files, mut named) = discover_all(paths, resolver, cwd, options, &mut errors)?;
    if let Some(writes) = writes {
        finish_interrupted_writes(&mut files, &mut named, writes, options, cwd, &mut errors);
    }
    let cache = options
        .cache
        .clone()
        .and_then(|root| open_cache(root, paths, &files, resolver, cwd, &mut errors));
    let analyser = Analyser {
        options,
        cache: cache.as_ref(),
    };
    // The call graph shows every file, so it always runs the project pass.
    let snapshots = cache
        .as_ref()
        .filter(|_| options.overlays.is_empty() && !options.every_call);
    if let Some(run) = snapshots.and_then(|cache| replay(&files, named, cwd, cache, &analyser, &mut errors)) {
        if let Some(cache) = cache
            && let Err(report) = cache.save()
        {
            errors.warn(report);
        }
        return Ok(Run { errors, roots, ..run });
    }
    let mut linted = lint_all(&files, named, cwd, &analyser, &mut errors);
    let targets = settle_facts(&mut linted, &mut errors, &analyser);
    let modules = module_infos(&linted);
    let project = Project::with_targets(&modules, targets);
    let hot = project.hot_functions();
    let keyed: Option<Vec<(&Path, FileKey)>> = linted
        .iter()
        .map(|file| Some((file.path.as_path(), file.key?)))
        .collect();
    let snapshot = snapshots.zip(keyed);
    // A snapshot keeps every file's notes: a later run may name any of them. Else only the
    // named files' functions that findings are in need theirs.
    let notes = hot.notes(linted.len(), |file, function| {
        snapshot.is_some() || (linted[file].named && linted[file].checked.needs_note_of(function))
    });
    drop(hot);
    let targets = project.into_targets().into_iter().map(Some).collect();
    drop(modules);
    if let Some((cache, keyed)) = snapshot {
        let conclusions = linted
            .iter()
            .zip(&notes)
            .map(|(file, notes)| SnapshotFile {
                facts: file.facts.clone(),
                notes: notes.iter().map(|(id, note)| (*id, note.clone())).collect(),
            })
            .collect();
        if let Err(report) = cache.save_snapshot(&keyed, conclusions) {
            errors.warn(report);
        }
    }
    if let Some(cache) = cache
        && let Err(report) = cache.save()
    {
        errors.warn(report);
    }
    Ok(Run {
        linted,
        targets,
        notes,
        errors,
        roots,
    })
}

/// Finishes the writes a killed run left unfinished in the named files this run may write. A
/// file where that fails is reported and left out: read part written, it would be fixed so.
fn finish_interrupted_writes(
    files: &mut Vec<DiscoveredFile>,
    named: &mut usize,
    writes: Writes,
    options: &RunOptions,
    cwd: &Path,
    errors: &mut Errors,
) {
    let failed: Vec<Option<Report>> = files[..*named]
        .par_iter()
        .map(|file| {
            let may_write = match writes {
                Writes::Fixed => (options.fixing)(&file.settings).is_some(),
                Writes::All => true,
            };
            if !may_write || options.overlays.contains_key(&file.path) {
                return None;
            }
            let error = finish_interrupted_write(&file.path).err()?;
            let display = display_path(&file.path, cwd);
            Some(miette!("{display}: cannot finish an interrupted write of it: {error}"))
        })
        .collect();
    let mut index = 0;
    files.retain(|_| {
        let keep = failed.get(index).is_none_or(Option::is_none);
        index += 1;
        keep
    });
    for report in failed.into_iter().flatten() {
        *named -= 1;
        errors.push(report);
    }
}

/// The cache in `root`, unless it would hold or hide what the run checks: it must not be or
/// contain a project root of the paths named, the working directory, a folder named (or the
/// folder of a file named) or a file being checked. A refused folder is a warning, and the run
/// goes on without a cache.
fn open_cache(
    root: PathBuf,
    paths: &[PathBuf],
    files: &[DiscoveredFile],
    resolver: &Resolver,
    cwd: &Path,
    errors: &mut Errors,
) -> Option<Cache> {
    let mut guarded = Vec::new();
    let named = paths.iter().map(|path| cwd.join(path));
    for path in named.clone().chain([cwd.to_path_buf()]) {
        if let Some(folder) = project_root_of(&path, resolver, cwd) {
            guarded.push(Guarded {
                what: "the project root",
                folder,
            });
        }
    }
    guarded.push(Guarded {
        what: "the working directory",
        folder: cwd.to_path_buf(),
    });
    for path in named {
        guarded.push(Guarded {
            what: "a folder being checked",
            folder: folder_of(&path, cwd).to_path_buf(),
        });
    }
    let checked = files.iter().map(|file| file.path.as_path());
    match Cache::open(root, cwd.to_path_buf(), &guarded, checked) {
        Ok(cache) => Some(cache),
        Err(report) => {
            errors.warn(report);
            None
        }
    }
}

/// Where no file of the project changed since the cache's snapshot of it, the named files
/// checked with the facts the project pass gave them then, and its notes: the pass would
/// conclude the same. `None` where anything changed.
fn replay(
    files: &[DiscoveredFile],
    named: usize,
    cwd: &Path,
    cache: &Cache,
    analyser: &Analyser,
    errors: &mut Errors,
) -> Option<Run> {
    let keyed: Vec<(&Path, FileKey)> = files
        .par_iter()
        .map(|file| Some((file.path.as_path(), analyser.key(&file.path, &file.settings)?)))
        .collect::<Option<_>>()?;
    let snapshot = cache.snapshot(&keyed)?;
    let results: Vec<_> = files[..named]
        .par_iter()
        .zip(&snapshot[..named])
        .with_max_len(1)
        .map(|(file, concluded)| {
            let display = display_path(&file.path, cwd);
            let checked = analyser.check(&file.path, &display, &file.settings, &concluded.facts, true);
            (file, display, concluded, checked)
        })
        .collect();
    let mut linted = Vec::with_capacity(named);
    let mut notes = Vec::with_capacity(named);
    for (file, display, concluded, checked) in results {
        match checked {
            Ok((checked, summary, key)) => {
                linted.push(Linted {
                    path: file.path.clone(),
                    display,
                    settings: file.settings.clone(),
                    summary,
                    checked,
                    module: String::new(),
                    is_package: false,
                    named: true,
                    facts: concluded.facts.clone(),
                    key,
                });
                notes.push(concluded.notes.iter().cloned().collect());
            }
            Err(report) => errors.push(report),
        }
    }
    Some(Run {
        linted,
        targets: Vec::new(),
        notes,
        errors: Errors::default(),
        roots: Roots::default(),
    })
}

/// The cache folder: `explicit` (`--cache-dir`, `SYNCLINT_CACHE_DIR`), else the `cache-dir`
/// setting of the working directory, else `.synclint_cache` in its project root (or in it,
/// outside a project).
pub fn cache_root(explicit: Option<&Path>, resolver: &Resolver, cwd: &Path) -> PathBuf {
    if let Some(explicit) = explicit {
        return cwd.join(explicit);
    }
    let settings = resolver.for_dir(cwd);
    if let Some(folder) = &settings.cache_dir {
        return folder.clone();
    }
    let root = settings
        .project_root
        .clone()
        .or_else(|| crate::discovery::project_root(&cwd.join(crate::cache::DEFAULT_DIR)))
        .unwrap_or_else(|| cwd.to_path_buf());
    root.join(crate::cache::DEFAULT_DIR)
}

/// Reads and parses every file, and nothing more (the benchmark's floor): the number of
/// top-level statements.
pub fn parse_all(files: &[DiscoveredFile]) -> usize {
    files
        .par_iter()
        .with_max_len(1)
        .filter_map(|file| read_regular_file(&file.path).ok().and_then(|bytes| decode(bytes).ok()))
        .map(|source| crate::parse::parse(&source, SourceKind::Python).module().body.len())
        .sum()
}

/// The Python files under `paths`; what cannot be walked goes to `errors`.
fn discover_paths(
    paths: &[PathBuf],
    resolver: &Arc<Resolver>,
    cwd: &Path,
    threads: usize,
    errors: &mut Errors,
) -> Vec<DiscoveredFile> {
    let base = resolver.for_dir(cwd);
    let (files, discovery_errors) = discover(paths, resolver, base.respect_gitignore, threads);
    for error in discovery_errors {
        errors.push(match error.path {
            Some(path) => miette!("{}: {}", display_path(&path, cwd), error.message),
            None => miette!("{}", error.message),
        });
    }
    files
}

/// `files` (named on the command line, first) and the other files of their projects: the
/// folder `project-root` names, else the nearest folder upwards with `pyproject.toml`,
/// `setup.cfg`, `setup.py` or `.git`. Returns them with how many were named. Outside any
/// project, only the files named. The project's walk reports no errors: its files only inform.
fn with_project(
    files: Vec<DiscoveredFile>,
    paths: &[PathBuf],
    resolver: &Arc<Resolver>,
    cwd: &Path,
    threads: usize,
) -> (Vec<DiscoveredFile>, usize) {
    let named = files.len();
    let mut roots: Vec<PathBuf> = Vec::new();
    for path in paths {
        let root = project_root_of(&cwd.join(path), resolver, cwd);
        if let Some(root) = root.filter(|root| !roots.contains(root)) {
            roots.push(root);
        }
    }
    // Named folders that are their project's root already hold all of it.
    roots.retain(|root| !paths.iter().any(|path| same_folder(&cwd.join(path), root)));
    if roots.is_empty() {
        return (files, named);
    }
    let base = resolver.for_dir(cwd);
    let (project, _) = discover(&roots, resolver, base.respect_gitignore, threads);
    let mut folders: FxHashMap<PathBuf, Option<PathBuf>> = FxHashMap::default();
    let mut canonical = |path: &Path| -> Option<PathBuf> {
        let path = cwd.join(path);
        let folder = path.parent()?;
        let real = folders
            .entry(folder.to_path_buf())
            .or_insert_with(|| std::fs::canonicalize(folder).ok())
            .clone()?;
        Some(real.join(path.file_name()?))
    };
    let seen: FxHashSet<PathBuf> = files.iter().filter_map(|file| canonical(&file.path)).collect();
    let mut files = files;
    files.extend(
        project
            .into_iter()
            .filter(|file| canonical(&file.path).is_none_or(|real| !seen.contains(&real))),
    );
    (files, named)
}

/// The folder a path names, or the folder of the file it names (`cwd` for a bare name).
fn folder_of<'p>(path: &'p Path, cwd: &'p Path) -> &'p Path {
    if path.is_dir() {
        path
    } else {
        path.parent().unwrap_or(cwd)
    }
}

/// The project a path (under `cwd`) is checked in: the folder its settings' `project-root`
/// names, else the nearest folder upwards with a project's marker.
fn project_root_of(path: &Path, resolver: &Resolver, cwd: &Path) -> Option<PathBuf> {
    resolver
        .for_dir(folder_of(path, cwd))
        .project_root
        .clone()
        .or_else(|| crate::discovery::project_root(path))
}

/// Whether two paths name the same folder.
fn same_folder(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Errors that make the exit code 2, printed to stderr.
#[derive(Default)]
pub struct Errors {
    pub reports: Vec<Report>,
    /// Printed, without changing the exit code (a cache that cannot be written).
    pub warnings: Vec<Report>,
    /// Syntax errors printed among the findings: counted, not printed twice.
    pub shown: usize,
}

impl Errors {
    pub fn push(&mut self, report: Report) {
        self.reports.push(report);
    }

    pub fn warn(&mut self, report: Report) {
        self.warnings.push(report);
    }

    /// A file's syntax errors: on stderr only when the findings, which include them, are not
    /// printed (`--statistics`, `--diff`, `--fix-only`).
    pub fn push_syntax(&mut self, file: &Linted, findings_printed: bool) {
        if findings_printed {
            self.shown += file.checked.syntax_errors().len();
        } else {
            self.reports.extend(syntax_reports(file));
        }
    }

    pub fn count(&self) -> usize {
        self.reports.len() + self.shown
    }

    pub fn print(&self) {
        for warning in &self.warnings {
            eprintln!("synclint: warning: {warning}");
        }
        for report in &self.reports {
            eprintln!("{report:?}");
        }
    }
}

/// A file's syntax errors, each with the source around it (a file with syntax errors is always
/// kept whole), long lines cut to a window around the error.
pub fn syntax_reports(file: &Linted) -> Vec<Report> {
    let Checked::Whole {
        source,
        notebook,
        syntax_errors,
        ..
    } = &file.checked
    else {
        return Vec::new();
    };
    // The text the errors are in, indexed once for all of its errors: the file's, or in a
    // notebook the cell's (named `path:cell N`), where it starts, and its cell.
    let mut in_text: Option<(ReportText, usize, Option<u32>)> = None;
    let mut reports = Vec::with_capacity(syntax_errors.len());
    for error in syntax_errors {
        let cell = notebook
            .as_ref()
            .and_then(|notebook| notebook.cell_code_at(source, error.range.start()));
        let number = cell.map(|(number, ..)| number);
        if in_text.as_ref().is_some_and(|(_, _, last)| *last != number) {
            in_text = None;
        }
        let (text, base, _) = in_text.get_or_insert_with(|| match cell {
            Some((number, start, text)) => (
                ReportText::new(format!("{}:cell {number}", file.display), text),
                start.to_usize(),
                Some(number),
            ),
            None => (ReportText::new(file.display.clone(), source), 0, None),
        });
        let (source, span) = text.around(error.range.start().to_usize() - *base..error.range.end().to_usize() - *base);
        reports.push(
            miette!(
                labels = vec![LabeledSpan::at(span, "here")],
                "{}: syntax error: {}",
                text.name(),
                error.message
            )
            .with_source_code(source),
        );
    }
    reports
}

/// A linted file.
pub struct Linted {
    pub path: PathBuf,
    pub display: String,
    pub settings: Arc<Settings>,
    pub summary: FileSummary,
    pub checked: Checked,
    pub module: String,
    pub is_package: bool,
    /// Named on the command line (reported); else checked only for what it tells the project.
    pub named: bool,
    /// What the project knew about the file when it was checked.
    pub facts: FileFacts,
    /// Its content and settings, as the cache knows them (`None` without a cache, and for text
    /// from an overlay).
    pub key: Option<FileKey>,
}

/// What checking a file left to report.
pub enum Checked {
    /// The text is kept whole: the file may be fixed, or has syntax errors to show with the
    /// source around them.
    Whole {
        source: Arc<str>,
        /// The notebook whose code cells `source` joins.
        notebook: Option<Arc<Notebook>>,
        diagnostics: Vec<Diagnostic>,
        syntax_errors: Vec<SyntaxError>,
    },
    /// Each finding located already and the text dropped (a large tree's flagged files would
    /// otherwise all stay in memory), with the context that decides whether it is shown.
    Located(Vec<(HotContext, Finding)>),
}

impl Checked {
    /// `fixing`: the least safe fixes that may be applied to the file, if any.
    pub fn new(
        display: &str,
        text: String,
        notebook: Option<Arc<Notebook>>,
        lint: FileLint,
        fixing: Option<Applicability>,
    ) -> Self {
        let fixable = |d: &Diagnostic, minimum| d.fix.as_ref().is_some_and(|f| f.applicability >= minimum);
        let may_fix = fixing.is_some_and(|minimum| lint.diagnostics.iter().any(|d| fixable(d, minimum)));
        if may_fix || !lint.syntax_errors.is_empty() {
            return Checked::Whole {
                source: text.into(),
                notebook,
                diagnostics: lint.diagnostics,
                syntax_errors: lint.syntax_errors,
            };
        }
        // Most files report nothing: no line index to build.
        if lint.diagnostics.is_empty() {
            return Checked::Located(Vec::new());
        }
        let lines = Lines::new(&text);
        let source = SourceText {
            lines: &lines,
            notebook: notebook.as_deref(),
        };
        let located = lint.diagnostics.into_iter().map(|d| {
            (
                d.context,
                Finding::from_diagnostic(display.to_string(), d, None, source),
            )
        });
        Checked::Located(located.collect())
    }

    /// Whether a finding here may need the note of `function`'s hot chain: one is in it, or
    /// the text is kept whole (fixed and checked again, its findings may be anywhere).
    pub fn needs_note_of(&self, function: FunctionId) -> bool {
        match self {
            Checked::Whole { .. } => true,
            Checked::Located(found) => found.iter().any(|(context, _)| context.called_in() == Some(function)),
        }
    }

    pub fn syntax_errors(&self) -> &[SyntaxError] {
        match self {
            Checked::Whole { syntax_errors, .. } => syntax_errors,
            Checked::Located(_) => &[],
        }
    }
}

/// Checks every file in parallel (the first check: the project knows nothing yet); read and
/// decode errors go to `errors`, never fatal. The first `named` files were named on the
/// command line; the others are the rest of their project, checked for what they tell the
/// project and never reported (their read errors too).
fn lint_all(
    files: &[DiscoveredFile],
    named: usize,
    cwd: &Path,
    analyser: &Analyser,
    errors: &mut Errors,
) -> Vec<Linted> {
    let lint_file = |(index, file): (usize, &DiscoveredFile)| -> Result<Linted, Report> {
        let display = display_path(&file.path, cwd);
        let facts = FileFacts::default();
        let (checked, summary, key) = analyser.check(&file.path, &display, &file.settings, &facts, index < named)?;
        Ok(Linted {
            checked,
            key,
            path: file.path.clone(),
            display,
            settings: file.settings.clone(),
            summary,
            module: String::new(),
            is_package: false,
            named: index < named,
            facts,
        })
    };
    // Module paths (a walk up each folder's packages, cached) come from one thread while the
    // others lint, rather than after them. One file per job: files differ in cost a
    // hundredfold, and rayon's default splitting hands each thread a fixed share of the list,
    // which left one of two threads idle for the last 15% of the benchmark.
    let (results, module_names) = rayon::join(
        || {
            files
                .par_iter()
                .enumerate()
                .with_max_len(1)
                .map(lint_file)
                .collect::<Vec<_>>()
        },
        || {
            let mut module_paths = ModulePaths::default();
            files
                .iter()
                // From the absolute path: `helpers.py` named inside its package is still
                // `pkg.helpers`.
                .map(|file| module_paths.module_of(&cwd.join(&file.path)))
                .collect::<Vec<_>>()
        },
    );
    let mut linted = Vec::with_capacity(results.len());
    for (index, (result, (module, is_package))) in results.into_iter().zip(module_names).enumerate() {
        match result {
            Ok(file) => linted.push(Linted {
                module,
                is_package,
                ..file
            }),
            Err(report) if index < named => errors.push(report),
            Err(_) => {}
        }
    }
    linted
}

/// Checks files again while the project learns something new about them (what their hot
/// callers pass, what the project functions they call return).
/// Returns each file's call targets, where they still hold, for the final project.
fn settle_facts(linted: &mut [Linted], errors: &mut Errors, analyser: &Analyser) -> Vec<Option<Vec<Targets>>> {
    let mut known: Vec<Option<Vec<Targets>>> = Vec::new();
    for _ in 0..FACT_ROUNDS {
        let facts = {
            let modules = module_infos(linted);
            let project = Project::with_targets(&modules, std::mem::take(&mut known));
            let hot = project.hot_functions();
            let applied: Vec<&FileFacts> = linted.iter().map(|file| &file.facts).collect();
            let facts = project.facts(&hot, &applied);
            known = project.into_targets().into_iter().map(Some).collect();
            facts
        };
        let changed: Vec<(usize, FileFacts)> = facts
            .into_iter()
            .enumerate()
            .filter(|(index, facts)| *facts != linted[*index].facts)
            .collect();
        if changed.is_empty() {
            break;
        }
        // Each file's old summary goes as soon as its new one is made, not after every file is
        // checked again: the files checked again hold the largest summaries.
        let changed: Vec<(usize, FileFacts, FileSummary)> = changed
            .into_iter()
            .map(|(index, facts)| {
                known[index] = None;
                (index, facts, std::mem::take(&mut linted[index].summary))
            })
            .collect();
        let rechecked: Vec<_> = changed
            .into_par_iter()
            .with_max_len(1)
            .map(|(index, facts, old)| {
                let file = &linted[index];
                let result = analyser.check(&file.path, &file.display, &file.settings, &facts, file.named);
                (index, facts, result.map_err(|report| (report, old)))
            })
            .collect();
        for (index, facts, result) in rechecked {
            let file = &mut linted[index];
            match result {
                Ok((checked, summary, key)) => {
                    file.checked = checked;
                    file.summary = summary;
                    file.facts = facts;
                    file.key = key;
                }
                // The file changed or vanished since: keep what its first check found.
                Err((report, old)) => {
                    file.summary = old;
                    if file.named {
                        errors.push(report);
                    }
                }
            }
        }
    }
    known
}

/// The call graph's view of the linted files.
pub fn module_infos(linted: &[Linted]) -> Vec<ModuleInfo<'_>> {
    linted
        .iter()
        .map(|file| ModuleInfo {
            module: file.module.clone(),
            is_package: file.is_package,
            display: &file.display,
            summary: &file.summary,
        })
        .collect()
}

/// Checks files for a run, through its cache.
struct Analyser<'a> {
    options: &'a RunOptions<'a>,
    cache: Option<&'a Cache>,
}

impl Analyser<'_> {
    /// Reads, decodes and checks one file with what the project knows about it (or takes what
    /// checking it gave before from the cache). A file not `named` is checked only for what it
    /// tells the project: nothing of it is reported. A bug in a rule costs one file, not the
    /// run: it is reported with the file's path (exit 2) and every other file is still checked.
    fn check(
        &self,
        path: &Path,
        display: &str,
        settings: &Settings,
        facts: &FileFacts,
        named: bool,
    ) -> Result<(Checked, FileSummary, Option<FileKey>), Report> {
        let overlay = self.options.overlays.get(path);
        // Unsaved text from an editor is not worth keeping.
        let cache = self.cache.filter(|_| overlay.is_none());
        let stat = cache
            .and_then(|_| std::fs::metadata(path).ok())
            .and_then(|metadata| FileStat::of(&metadata));
        let unreported = || Checked::Located(Vec::new());
        // The project's other files, unchanged since the cache saw them, are not even read.
        if !named
            && let (Some(cache), Some(stat)) = (cache, stat)
            && let Some(key) = cache.known_key(path, stat)
            && let Some(lint) = cache.get(path, key, Some(stat), facts)
        {
            return Ok((unreported(), lint.summary, Some(key)));
        }
        let text = match overlay {
            Some(text) => text.clone(),
            None => {
                let bytes = read_regular_file(path).map_err(|e| miette!("{display}: cannot read: {e}"))?;
                decode(bytes).map_err(|e| miette!("{display}: {e}"))?
            }
        };
        let rules = settings.rules_for(path);
        // Keyed by the file's text: a notebook's key is its JSON, read as it is. Only the cache
        // reads the key: without one, the text is not hashed.
        let key = cache.map(|_| self.file_key(&text, rules, settings));
        let kind = SourceKind::of(path);
        let (code, notebook) = code_of(kind, text).map_err(|e| miette!("{display}: {e}"))?;
        let cached = cache
            .zip(key)
            .and_then(|(cache, key)| cache.get(path, key, stat, facts));
        let mut lint = match cached {
            Some(lint) => lint,
            None => {
                let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let test_code = crate::discovery::is_test_path(path);
                    lint_source(
                        &code,
                        kind,
                        rules,
                        &settings.hot_functions,
                        facts,
                        self.options.every_call,
                        test_code,
                    )
                }));
                let mut lint = checked.map_err(|panic| {
                    let reason = crate::linter::panic_reason(&*panic);
                    miette!("{display}: internal error while checking this file (please report it): {reason}")
                })?;
                // Kept with the summary, so that a file the cache answers for without reading
                // it (a project file not named) still shows its rows in their cells.
                if let Some(notebook) = &notebook {
                    lint.summary.cell_rows = notebook.cell_rows(&code, &notebook.cell_starts());
                }
                if let Some((cache, key)) = cache.zip(key) {
                    cache.put(path, key, stat, facts, &lint);
                }
                lint
            }
        };
        if !named {
            return Ok((unreported(), lint.summary, key));
        }
        let summary = std::mem::take(&mut lint.summary);
        let fixing = (self.options.fixing)(settings);
        Ok((Checked::new(display, code, notebook, lint, fixing), summary, key))
    }

    /// The cache's key of a file: from the cache where its size and time still match, else
    /// from its text. `None` without a cache, in a run with overlays, or where it cannot be read.
    fn key(&self, path: &Path, settings: &Settings) -> Option<FileKey> {
        let cache = self.cache.filter(|_| self.options.overlays.is_empty())?;
        let stat = FileStat::of(&std::fs::metadata(path).ok()?)?;
        if let Some(key) = cache.known_key(path, stat) {
            return Some(key);
        }
        let text = decode(read_regular_file(path).ok()?).ok()?;
        Some(self.file_key(&text, settings.rules_for(path), settings))
    }

    /// The cache's key of a file's text under its settings.
    fn file_key(&self, text: &str, rules: RuleSet, settings: &Settings) -> FileKey {
        FileKey::new(text, rules, &settings.hot_functions, self.options.every_call)
    }
}
