//! The command line: `synclint [check] [PATH...]`, `synclint rule CODE | --all`.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use miette::{LabeledSpan, NamedSource, Report, miette};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::config::{Overrides, Resolver, Settings, Source};
use crate::diagnostic::{Applicability, Diagnostic};
use crate::discovery::{DiscoveredFile, discover};
use crate::fix::{FixFailure, fix_in_passes};
use crate::graph::GraphFormat;
use crate::lines::Lines;
use crate::linter::{FileLint, decode, lint_source};
use crate::parse::SyntaxError;
use crate::project::{HotFunctions, ModuleInfo, ModulePaths, Project, Targets, display_path, hot_note, module_path};
use crate::registry::{Rule, RuleSelector};
use crate::render::{ColorChoice, Finding, OutputFormat, SourceText, render};
use crate::semantic::{FileFacts, FileSemantics, FunctionId, FunctionSummary, HotContext};

/// Deep enough for 5,000-deep nested expressions in the parser and the checker.
const STACK_SIZE: usize = 256 * 1024 * 1024;
/// Fix passes before a file is reported as not converging.
const MAX_FIX_PASSES: usize = 10;
/// How many times files are checked again with what the project learned about them (callers'
/// argument kinds, imported return kinds). Parameters passed on unchanged reach any depth in
/// one round; each round carries values derived from them one call further.
const FACT_ROUNDS: usize = 2;

#[derive(Parser)]
#[command(
    name = "synclint",
    version,
    about = "Find host-device synchronization hazards in PyTorch code",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    check: CheckArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Lint files (the default command).
    Check(CheckArgs),
    /// Print the documentation of a rule.
    Rule(RuleArgs),
    /// Print the project's call graph: the hot call tree (what runs every step, and why), or
    /// every edge as PyCG's JSON or Graphviz.
    Graph(GraphArgs),
}

#[derive(Args)]
struct GraphArgs {
    /// Files or folders (default: the current folder).
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    output_format: GraphFormat,
    /// Use this configuration file instead of the discovered ones.
    #[arg(long, value_name = "PATH", conflicts_with = "isolated")]
    config: Option<PathBuf>,
    /// Ignore configuration files.
    #[arg(long)]
    isolated: bool,
}

#[derive(Args)]
struct RuleArgs {
    /// A rule code, e.g. SYNC101.
    code: Option<String>,
    /// Print every rule's documentation.
    #[arg(long, conflicts_with = "code")]
    all: bool,
}

#[derive(Args)]
struct CheckArgs {
    /// Files or folders to lint (default: the current folder); `-` reads source from stdin.
    paths: Vec<PathBuf>,
    /// Rules to enable (codes or prefixes, e.g. SYNC1); replaces the default (all rules).
    #[arg(long, value_delimiter = ',', value_name = "RULE")]
    select: Option<Vec<RuleSelector>>,
    /// Rules to enable on top of the selection.
    #[arg(long, value_delimiter = ',', value_name = "RULE")]
    extend_select: Vec<RuleSelector>,
    /// Rules to disable.
    #[arg(long, value_delimiter = ',', value_name = "RULE")]
    ignore: Vec<RuleSelector>,
    /// How to print findings.
    #[arg(long, value_enum, default_value = "full", env = "SYNCLINT_OUTPUT_FORMAT")]
    output_format: OutputFormat,
    /// Use this config file (pyproject.toml or synclint.toml) for every file.
    #[arg(long, value_name = "PATH", conflicts_with = "isolated")]
    config: Option<PathBuf>,
    /// Ignore every config file.
    #[arg(long)]
    isolated: bool,
    /// Print how often each rule fired instead of the findings.
    #[arg(long)]
    statistics: bool,
    /// Exit 0 even when there are findings.
    #[arg(long)]
    exit_zero: bool,
    /// Print findings only: no summary.
    #[arg(short, long)]
    quiet: bool,
    #[arg(long, value_enum, default_value = "auto")]
    color: ColorChoice,
    /// The file name to report for source read from stdin (`-`).
    #[arg(long, value_name = "NAME")]
    stdin_filename: Option<PathBuf>,
    /// Apply safe fixes.
    #[arg(long, overrides_with = "no_fix")]
    fix: bool,
    #[arg(long, overrides_with = "fix", hide = true)]
    no_fix: bool,
    /// Also apply unsafe fixes (with --fix), or show them as available.
    #[arg(long, overrides_with = "no_unsafe_fixes")]
    unsafe_fixes: bool,
    #[arg(long, overrides_with = "unsafe_fixes", hide = true)]
    no_unsafe_fixes: bool,
    /// Print the diff `--fix` would make and write nothing (exit 1 when there are changes).
    #[arg(long)]
    diff: bool,
    /// Apply fixes and do not report what remains.
    #[arg(long)]
    fix_only: bool,
    /// List what was fixed.
    #[arg(long)]
    show_fixes: bool,
    /// Exclude these globs (replaces the defaults).
    #[arg(long, value_delimiter = ',', value_name = "GLOB")]
    exclude: Option<Vec<String>>,
    /// Exclude these globs as well.
    #[arg(long, value_delimiter = ',', value_name = "GLOB")]
    extend_exclude: Vec<String>,
    /// Lint files that .gitignore / .ignore exclude.
    #[arg(long)]
    no_respect_gitignore: bool,
    /// Also report findings under periodic guards (`if step % N == 0:`).
    #[arg(long)]
    report_periodic: bool,
    /// Only read and parse (the benchmark's floor).
    #[arg(long, hide = true)]
    parse_only: bool,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let threads = std::env::var("SYNCLINT_THREADS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(STACK_SIZE)
        .build()
    {
        Ok(pool) => pool,
        Err(error) => {
            eprintln!("synclint: cannot start threads: {error}");
            return ExitCode::from(2);
        }
    };
    let code = pool.install(|| match cli.command {
        Some(Command::Rule(args)) => rule_command(args),
        Some(Command::Graph(args)) => graph_command(args, threads),
        Some(Command::Check(args)) => check(args, threads),
        None => check(cli.check, threads),
    });
    ExitCode::from(code)
}

fn graph_command(args: GraphArgs, threads: usize) -> u8 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let Some(resolver) = resolver_for(args.isolated, args.config.as_ref(), Overrides::default(), &cwd) else {
        return 2;
    };
    let mut errors = Errors::default();
    let files = discover_paths(&paths_or_cwd(&args.paths), &resolver, &cwd, threads, &mut errors);
    // Every call, in cold code too: the graph shows module level and setup as well.
    let check_file = |path: &Path, display: &str, settings: &Settings, facts: &FileFacts| {
        lint_path(path, display, settings, facts, false, Applicability::Safe, true)
    };
    let mut linted = lint_all(&files, files.len(), &cwd, &check_file, &mut errors);
    let targets = settle_facts(&mut linted, &mut errors, &check_file);
    let modules = module_infos(&linted);
    let project = Project::with_targets(&modules, targets);
    let hot = project.hot_functions();
    let mut out = io::stdout().lock();
    let written = crate::graph::render(&mut out, args.output_format, &modules, &project, &hot);
    errors.print();
    if written.is_err() || errors.count() > 0 { 2 } else { 0 }
}

/// Settings for every folder: from `--isolated`, `--config` or the discovered files. A bad
/// configuration is printed and gives `None`.
fn resolver_for(isolated: bool, config: Option<&PathBuf>, overrides: Overrides, cwd: &Path) -> Option<Arc<Resolver>> {
    let source = if isolated {
        Source::Isolated
    } else if let Some(path) = config {
        Source::Explicit(path.clone())
    } else {
        Source::Discover
    };
    match Resolver::new(source, overrides, cwd.to_path_buf()) {
        Ok(resolver) => Some(Arc::new(resolver)),
        Err(report) => {
            eprintln!("{report:?}");
            None
        }
    }
}

/// The paths given, or the current folder.
fn paths_or_cwd(paths: &[PathBuf]) -> Vec<PathBuf> {
    if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    }
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
        let path = cwd.join(path);
        let folder = if path.is_dir() {
            path.as_path()
        } else {
            path.parent().unwrap_or(cwd)
        };
        let root = resolver
            .for_dir(folder)
            .project_root
            .clone()
            .or_else(|| crate::discovery::project_root(&path));
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
    let seen: rustc_hash::FxHashSet<PathBuf> = files.iter().filter_map(|file| canonical(&file.path)).collect();
    let mut files = files;
    files.extend(
        project
            .into_iter()
            .filter(|file| canonical(&file.path).is_none_or(|real| !seen.contains(&real))),
    );
    (files, named)
}

/// Whether two paths name the same folder.
fn same_folder(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn rule_command(args: RuleArgs) -> u8 {
    let mut out = io::stdout().lock();
    let result = if args.all {
        Rule::ALL
            .iter()
            .try_for_each(|rule| writeln!(out, "{}\n", rule.doc().trim_end()))
    } else {
        let Some(code) = args.code else {
            eprintln!("synclint: name a rule (`synclint rule SYNC101`) or use `--all`");
            return 2;
        };
        match Rule::from_code(&code) {
            Some(rule) => writeln!(out, "{}", rule.doc().trim_end()),
            None => {
                let known: Vec<&str> = Rule::ALL.iter().map(|r| r.code()).collect();
                eprintln!("synclint: unknown rule `{code}`; known rules: {}", known.join(", "));
                return 2;
            }
        }
    };
    if result.is_err() { 2 } else { 0 }
}

/// Errors that make the exit code 2, printed to stderr.
#[derive(Default)]
struct Errors {
    reports: Vec<Report>,
    /// Syntax errors printed among the findings: counted, not printed twice.
    shown: usize,
}

impl Errors {
    fn push(&mut self, report: Report) {
        self.reports.push(report);
    }

    /// A file's syntax errors: on stderr only when the findings, which include them, are not
    /// printed (`--statistics`, `--diff`, `--fix-only`).
    fn push_syntax(&mut self, file: &Linted, findings_printed: bool) {
        if findings_printed {
            self.shown += file.checked.syntax_errors().len();
        } else {
            self.reports.extend(syntax_reports(file));
        }
    }

    fn count(&self) -> usize {
        self.reports.len() + self.shown
    }

    fn print(&self) {
        for report in &self.reports {
            eprintln!("{report:?}");
        }
    }
}

/// A file's syntax errors, each with the source around it (a file with syntax errors is always
/// kept whole).
fn syntax_reports(file: &Linted) -> Vec<Report> {
    let Checked::Whole {
        source, syntax_errors, ..
    } = &file.checked
    else {
        return Vec::new();
    };
    syntax_errors
        .iter()
        .map(|error| {
            let span = error.range.start().to_usize()..error.range.end().to_usize();
            miette!(
                labels = vec![LabeledSpan::at(span, "here")],
                "{}: syntax error: {}",
                file.display,
                error.message
            )
            .with_source_code(NamedSource::new(file.display.clone(), source.to_string()))
        })
        .collect()
}

/// A linted file.
struct Linted {
    path: PathBuf,
    display: String,
    settings: Arc<Settings>,
    semantics: FileSemantics,
    checked: Checked,
    module: String,
    is_package: bool,
    /// Named on the command line (reported); else checked only for what it tells the project.
    named: bool,
    /// What the project knew about the file when it was checked.
    facts: FileFacts,
}

/// What checking a file left to report.
enum Checked {
    /// The text is kept whole: the file may be fixed, or has syntax errors to show with the
    /// source around them.
    Whole {
        source: Arc<str>,
        diagnostics: Vec<Diagnostic>,
        syntax_errors: Vec<SyntaxError>,
    },
    /// Each finding located already and the text dropped (a large tree's flagged files would
    /// otherwise all stay in memory), with the context that decides whether it is shown.
    Located(Vec<(HotContext, Finding)>),
}

impl Checked {
    /// `fixing`: whether fixes at `minimum` may be applied to the file.
    fn new(display: &str, text: String, lint: FileLint, fixing: bool, minimum: Applicability) -> Self {
        let fixable = |d: &Diagnostic| d.fix.as_ref().is_some_and(|f| f.applicability >= minimum);
        let may_fix = fixing && lint.diagnostics.iter().any(fixable);
        if may_fix || !lint.syntax_errors.is_empty() {
            return Checked::Whole {
                source: text.into(),
                diagnostics: lint.diagnostics,
                syntax_errors: lint.syntax_errors,
            };
        }
        let lines = Lines::new(&text);
        let source = SourceText {
            text: &text,
            lines: &lines,
        };
        let located = lint.diagnostics.into_iter().map(|d| {
            (
                d.context,
                Finding::from_diagnostic(display.to_string(), d, None, source),
            )
        });
        Checked::Located(located.collect())
    }

    fn syntax_errors(&self) -> &[SyntaxError] {
        match self {
            Checked::Whole { syntax_errors, .. } => syntax_errors,
            Checked::Located(_) => &[],
        }
    }
}

/// The least safe fixes `--fix` applies to files under `settings`.
fn fix_minimum(args: &CheckArgs, settings: &Settings) -> Applicability {
    if args.unsafe_fixes || settings.unsafe_fixes {
        Applicability::Unsafe
    } else {
        Applicability::Safe
    }
}

fn check(args: CheckArgs, threads: usize) -> u8 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let overrides = Overrides {
        select: args.select.clone(),
        extend_select: args.extend_select.clone(),
        ignore: args.ignore.clone(),
        exclude: args.exclude.clone(),
        extend_exclude: args.extend_exclude.clone(),
        respect_gitignore: args.no_respect_gitignore.then_some(false),
        fix: if args.fix {
            Some(true)
        } else if args.no_fix {
            Some(false)
        } else {
            None
        },
        unsafe_fixes: if args.unsafe_fixes {
            Some(true)
        } else if args.no_unsafe_fixes {
            Some(false)
        } else {
            None
        },
        report_periodic: args.report_periodic.then_some(true),
    };
    let Some(resolver) = resolver_for(args.isolated, args.config.as_ref(), overrides, &cwd) else {
        return 2;
    };
    let paths = paths_or_cwd(&args.paths);
    if paths.iter().any(|p| p == Path::new("-")) {
        return check_stdin(&args, &resolver, &cwd);
    }

    let mut errors = Errors::default();
    let findings_printed = !(args.diff || args.fix_only || args.statistics);
    let files = discover_paths(&paths, &resolver, &cwd, threads, &mut errors);
    // The call graph and the facts come from the whole project of the files named (unless
    // `--isolated`): a file's verdict does not depend on which others were named with it.
    let (files, named) = if args.isolated {
        let named = files.len();
        (files, named)
    } else {
        with_project(files, &paths, &resolver, &cwd, threads)
    };
    let config_errors = resolver.take_errors();
    if !config_errors.is_empty() {
        for report in config_errors {
            eprintln!("{report:?}");
        }
        return 2;
    }
    if args.parse_only {
        let parsed: usize = files
            .par_iter()
            .with_max_len(1)
            .filter_map(|file| std::fs::read(&file.path).ok().and_then(|bytes| decode(bytes).ok()))
            .map(|source| crate::parse::parse(&source).module().body.len())
            .sum();
        println!("parsed {} files ({parsed} top-level statements)", files.len());
        return 0;
    }

    // `fix = true` in a folder's config fixes that folder's files (`--fix` sets it everywhere).
    let fix_requested = args.fix_only || args.diff;
    // Check every file in parallel; read and decode errors are reported, never fatal.
    let check_file = |path: &Path, display: &str, settings: &Settings, facts: &FileFacts| {
        lint_path(
            path,
            display,
            settings,
            facts,
            fix_requested || settings.fix,
            fix_minimum(&args, settings),
            false,
        )
    };
    let mut linted = lint_all(&files, named, &cwd, &check_file, &mut errors);
    let targets = settle_facts(&mut linted, &mut errors, &check_file);
    let modules = module_infos(&linted);
    let hot = Project::with_targets(&modules, targets).hot_functions();
    let mut outputs: Vec<FileOutput> = linted
        .par_iter()
        .enumerate()
        .map(|(index, file)| {
            let fixing = fix_requested || file.settings.fix;
            if file.named {
                process_file(index, file, &hot, fixing, &args)
            } else {
                FileOutput::default()
            }
        })
        .collect();
    drop(modules);

    let mut findings = Vec::new();
    let mut fixed_total = 0;
    let mut changed_files = 0;
    let mut diff_text = String::new();
    let mut fix_log: Vec<(String, FxHashMap<Rule, usize>)> = Vec::new();
    for (file, output) in linted.iter().zip(outputs.iter_mut()).filter(|(file, _)| file.named) {
        errors.push_syntax(file, findings_printed);
        if let Some(error) = output.error.take() {
            errors.push(error);
        }
        if let Some(fixed) = &output.fixed {
            changed_files += 1;
            fixed_total += output.applied.len();
            let mut counts: FxHashMap<Rule, usize> = FxHashMap::default();
            for rule in &output.applied {
                *counts.entry(*rule).or_default() += 1;
            }
            fix_log.push((file.display.clone(), counts));
            if args.diff {
                diff_text.push_str(&unified_diff(&file.display, &fixed.original, &fixed.text));
            } else if let Err(report) = write_atomically(&file.path, &file.display, &fixed.text) {
                errors.push(report);
            }
        }
        findings.append(&mut output.findings);
    }
    findings.sort_by(|a, b| (&a.path, a.start, a.code()).cmp(&(&b.path, b.start, b.code())));
    let unsafe_fixes = args.unsafe_fixes || linted.iter().any(|f| f.settings.unsafe_fixes);
    // The process ends once this is printed, and the OS takes its memory back at once: freeing
    // every file's call graph and every finding piece by piece costs about 10 ms on a large tree.
    std::mem::forget(linted);
    let findings = std::mem::ManuallyDrop::new(findings);
    let mut out = io::stdout().lock();

    if args.diff {
        let _ = out.write_all(diff_text.as_bytes());
        errors.print();
        return if errors.count() > 0 {
            2
        } else if changed_files > 0 {
            1
        } else {
            0
        };
    }
    if args.show_fixes && fixed_total > 0 {
        let _ = writeln!(out, "Fixed {fixed_total} finding{}:", plural(fixed_total));
        for (path, counts) in &fix_log {
            let _ = writeln!(out, "- {path}:");
            let mut counts: Vec<_> = counts.iter().collect();
            counts.sort();
            for (rule, count) in counts {
                let _ = writeln!(out, "    {count} × {} ({})", rule.code(), rule.name());
            }
        }
    }
    let rule_findings: Vec<&Finding> = findings.iter().filter(|f| f.rule.is_some()).collect();
    if !args.fix_only {
        if args.statistics {
            print_statistics(&mut out, &rule_findings);
        } else {
            let _ = render(&mut out, args.output_format, &findings, args.color, unsafe_fixes);
            let human = matches!(args.output_format, OutputFormat::Full | OutputFormat::Concise);
            if human && !args.quiet {
                print_summary(&mut out, &findings, fixed_total, unsafe_fixes, errors.count());
            }
            errors.print();
            return exit_code(&errors, rule_findings.len(), args.exit_zero);
        }
    } else if !args.quiet && fixed_total > 0 && !args.show_fixes {
        let _ = writeln!(out, "Fixed {fixed_total} finding{}.", plural(fixed_total));
    }
    errors.print();
    let remaining = if args.fix_only { 0 } else { rule_findings.len() };
    exit_code(&errors, remaining, args.exit_zero)
}

fn exit_code(errors: &Errors, findings: usize, exit_zero: bool) -> u8 {
    if errors.count() > 0 {
        2
    } else if findings > 0 && !exit_zero {
        1
    } else {
        0
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn print_summary(out: &mut dyn Write, findings: &[Finding], fixed: usize, unsafe_fixes: bool, errors: usize) {
    let count = findings.iter().filter(|f| f.rule.is_some()).count();
    let safe = findings
        .iter()
        .filter(|f| f.fix.as_ref().is_some_and(|x| x.applicability == Applicability::Safe))
        .count();
    let unsafe_ = findings
        .iter()
        .filter(|f| f.fix.as_ref().is_some_and(|x| x.applicability == Applicability::Unsafe))
        .count();
    let _ = writeln!(out, "{}", summary_line(count, fixed, errors));
    if safe > 0 || (unsafe_fixes && unsafe_ > 0) {
        let n = if unsafe_fixes { safe + unsafe_ } else { safe };
        let flags = if unsafe_fixes {
            "`--fix --unsafe-fixes`"
        } else {
            "`--fix`"
        };
        let _ = writeln!(out, "[*] {n} fixable with {flags}.");
    }
    if !unsafe_fixes && unsafe_ > 0 {
        let _ = writeln!(
            out,
            "{unsafe_} more fix{} available with `--unsafe-fixes`.",
            if unsafe_ == 1 { " is" } else { "es are" }
        );
    }
}

/// "All checks passed!", "Found 3 findings.", "Found 4 findings (1 fixed, 3 remaining) and 2
/// errors.": errors (syntax, unreadable files) are counted so that a failed run never reads as
/// a clean one.
fn summary_line(count: usize, fixed: usize, errors: usize) -> String {
    let findings = match (count, fixed) {
        (0, 0) if errors == 0 => return "All checks passed!".to_string(),
        (0, 0) => return format!("Found {errors} error{}.", plural(errors)),
        (0, fixed) => format!("Found {fixed} finding{} ({fixed} fixed, 0 remaining)", plural(fixed)),
        (count, 0) => format!("Found {count} finding{}", plural(count)),
        (count, fixed) => format!("Found {} findings ({fixed} fixed, {count} remaining)", count + fixed),
    };
    match errors {
        0 => format!("{findings}."),
        errors => format!("{findings} and {errors} error{}.", plural(errors)),
    }
}

fn print_statistics(out: &mut dyn Write, findings: &[&Finding]) {
    let mut counts: FxHashMap<Rule, (usize, bool)> = FxHashMap::default();
    for finding in findings {
        if let Some(rule) = finding.rule {
            let entry = counts.entry(rule).or_default();
            entry.0 += 1;
            entry.1 |= finding.fix.is_some();
        }
    }
    let mut rows: Vec<_> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(&b.0)));
    for (rule, (count, fixable)) in rows {
        let _ = writeln!(
            out,
            "{count:>6}\t{}\t{}{}",
            rule.code(),
            if fixable { "[*] " } else { "" },
            rule.name()
        );
    }
}

/// What happened to one file after the project-wide pass.
#[derive(Default)]
struct FileOutput {
    /// Syntax errors and the findings still to report, with why their line is hot.
    findings: Vec<Finding>,
    fixed: Option<FixedText>,
    applied: Vec<Rule>,
    error: Option<Report>,
}

/// A file's text before and after its fixes.
struct FixedText {
    original: Arc<str>,
    text: String,
}

/// Checks every file in parallel (the first check: the project knows nothing yet); read and
/// decode errors go to `errors`, never fatal.
/// The first `named` files were named on the command line; the others are the rest of their
/// project, checked for what they tell the project and never reported (their read errors too).
fn lint_all(
    files: &[DiscoveredFile],
    named: usize,
    cwd: &Path,
    check_file: &CheckFile,
    errors: &mut Errors,
) -> Vec<Linted> {
    let lint_file = |(index, file): (usize, &DiscoveredFile)| -> Result<Linted, Report> {
        let display = display_path(&file.path, cwd);
        let facts = FileFacts::default();
        let (checked, semantics) = check_file(&file.path, &display, &file.settings, &facts)?;
        Ok(Linted {
            checked,
            path: file.path.clone(),
            display,
            settings: file.settings.clone(),
            semantics,
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

/// Checks one file (path, display path, settings) with what the project knows about it.
type CheckFile<'f> = dyn Fn(&Path, &str, &Settings, &FileFacts) -> Result<(Checked, FileSemantics), Report> + Sync + 'f;

/// Checks files again while the project learns something new about them (what their hot
/// callers pass, what the project functions they call return).
/// Returns each file's call targets, where they still hold, for the final project.
fn settle_facts(linted: &mut [Linted], errors: &mut Errors, check_file: &CheckFile) -> Vec<Option<Vec<Targets>>> {
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
        for (index, _) in &changed {
            known[*index] = None;
        }
        let rechecked: Vec<_> = changed
            .into_par_iter()
            .with_max_len(1)
            .map(|(index, facts)| {
                let file = &linted[index];
                let result = check_file(&file.path, &file.display, &file.settings, &facts);
                (index, facts, result)
            })
            .collect();
        for (index, facts, result) in rechecked {
            match result {
                Ok((checked, semantics)) => {
                    let file = &mut linted[index];
                    file.checked = checked;
                    file.semantics = semantics;
                    file.facts = facts;
                }
                // The file changed or vanished since: keep what its first check found.
                Err(report) if linted[index].named => errors.push(report),
                Err(_) => {}
            }
        }
    }
    known
}

/// The call graph's view of the linted files.
fn module_infos(linted: &[Linted]) -> Vec<ModuleInfo<'_>> {
    linted
        .iter()
        .map(|file| ModuleInfo {
            module: file.module.clone(),
            is_package: file.is_package,
            display: &file.display,
            semantics: &file.semantics,
        })
        .collect()
}

/// Reads, decodes and checks one file with what the project knows about it. A bug in a rule
/// costs one file, not the run: it is reported with the file's path (exit 2) and every other
/// file is still checked.
fn lint_path(
    path: &Path,
    display: &str,
    settings: &Settings,
    facts: &FileFacts,
    fixing: bool,
    minimum: Applicability,
    every_call: bool,
) -> Result<(Checked, FileSemantics), Report> {
    let bytes = std::fs::read(path).map_err(|e| miette!("{display}: cannot read: {e}"))?;
    let text = decode(bytes).map_err(|e| miette!("{display}: {e}"))?;
    let rules = settings.rules_for(path);
    let checked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        lint_source(&text, rules, &settings.hot_functions, facts, every_call)
    }));
    let mut lint = checked.map_err(|panic| {
        let reason = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        miette!("{display}: internal error while checking this file (please report it): {reason}")
    })?;
    let semantics = std::mem::take(&mut lint.semantics);
    Ok((Checked::new(display, text, lint, fixing, minimum), semantics))
}

/// Keeps the findings whose line is hot (resolving calls across files), and applies fixes in
/// passes until nothing changes.
fn process_file(index: usize, file: &Linted, hot: &HotFunctions, fixing: bool, args: &CheckArgs) -> FileOutput {
    let settings = &file.settings;
    let (source, diagnostics, syntax_errors) = match &file.checked {
        Checked::Located(candidates) => {
            let functions = &file.semantics.functions;
            let called_note = |id: FunctionId| hot.note(index, id);
            let findings = candidates.iter().filter_map(|(context, finding)| {
                let note = hot_note(
                    *context,
                    &file.display,
                    functions,
                    called_note,
                    settings.report_periodic,
                )?;
                Some(finding.clone().with_note(note))
            });
            return FileOutput {
                findings: findings.collect(),
                ..FileOutput::default()
            };
        }
        Checked::Whole {
            source,
            diagnostics,
            syntax_errors,
        } => (source, diagnostics, syntax_errors),
    };
    // Notes of this file's hot functions, by qualified name, so re-checked (fixed) code finds
    // them again.
    let function_notes: FxHashMap<&str, String> = file
        .semantics
        .functions
        .iter()
        .enumerate()
        .filter_map(|(id, f)| Some((&*f.qualname, hot.note(index, id as FunctionId)?)))
        .collect();
    // Why a finding's line is hot, in a file with these functions; `None` hides it.
    let note = |context: HotContext, functions: &[FunctionSummary]| {
        let called_note = |id: FunctionId| {
            let qualname = &*functions.get(id as usize)?.qualname;
            function_notes.get(qualname).cloned()
        };
        hot_note(context, &file.display, functions, called_note, settings.report_periodic)
    };
    let visible = |diagnostics: &[Diagnostic], functions: &[FunctionSummary]| -> Vec<(Diagnostic, String)> {
        diagnostics
            .iter()
            .filter_map(|d| Some((d.clone(), note(d.context, functions)?)))
            .collect()
    };
    let original_lines = Lines::new(source);
    let original = SourceText {
        text: source,
        lines: &original_lines,
    };
    let mut output = FileOutput {
        findings: syntax_errors
            .iter()
            .map(|error| Finding::syntax_error(file.display.clone(), error, original))
            .collect(),
        ..FileOutput::default()
    };
    let mut remaining = visible(diagnostics, &file.semantics.functions);
    let minimum = fix_minimum(args, settings);
    let has_fix = remaining
        .iter()
        .any(|(d, _)| d.fix.as_ref().is_some_and(|f| f.applicability >= minimum));
    if fixing && has_fix && syntax_errors.is_empty() {
        let rules = settings.rules_for(&file.path);
        let relint = |source: &str| {
            let lint = lint_source(source, rules, &settings.hot_functions, &file.facts, false);
            visible(&lint.diagnostics, &lint.semantics.functions)
        };
        match fix_in_passes(source, remaining, minimum, MAX_FIX_PASSES, |(d, _)| d, relint) {
            Ok(fixed) => {
                remaining = fixed.remaining;
                output.applied = fixed.applied;
                if fixed.source != **source {
                    output.fixed = Some(FixedText {
                        original: source.clone(),
                        text: fixed.source,
                    });
                }
            }
            Err(failure) => {
                let why = match failure {
                    FixFailure::DoesNotParse => "a fix produced code that does not parse".to_string(),
                    FixFailure::NotConverged(passes) => {
                        format!("fixes did not converge after {passes} passes")
                    }
                };
                output.error = Some(miette!("{}: {why}; the file was left unchanged", file.display));
                remaining = visible(diagnostics, &file.semantics.functions);
            }
        }
    }
    // The findings left are located in the text they were found in: the fixed one, if any.
    let fixed_lines;
    let located_in = match &output.fixed {
        Some(fixed) => {
            fixed_lines = Lines::new(&fixed.text);
            SourceText {
                text: &fixed.text,
                lines: &fixed_lines,
            }
        }
        None => original,
    };
    let remaining = remaining
        .into_iter()
        .map(|(d, note)| Finding::from_diagnostic(file.display.clone(), d, Some(note), located_in));
    output.findings.extend(remaining);
    output
}

/// Writes through a temporary file in the same folder, then renames it over the original,
/// keeping its permissions. A read-only or vanished file is an error.
fn write_atomically(path: &Path, display: &str, contents: &str) -> Result<(), Report> {
    // Through a symbolic link: replace the file it points to, not the link.
    let path = &std::fs::canonicalize(path).map_err(|e| miette!("{display}: cannot write the fix: {e}"))?;
    let metadata = std::fs::metadata(path).map_err(|e| miette!("{display}: cannot write the fix: {e}"))?;
    if metadata.permissions().readonly() {
        return Err(miette!("{display}: cannot write the fix: the file is read-only"));
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(|e| miette!("{display}: cannot write the fix: {e}"))?;
    temp.write_all(contents.as_bytes())
        .map_err(|e| miette!("{display}: cannot write the fix: {e}"))?;
    temp.as_file()
        .sync_all()
        .map_err(|e| miette!("{display}: cannot write the fix: {e}"))?;
    std::fs::set_permissions(temp.path(), metadata.permissions())
        .map_err(|e| miette!("{display}: cannot write the fix: {e}"))?;
    temp.persist(path)
        .map_err(|e| miette!("{display}: cannot write the fix: {}", e.error))?;
    Ok(())
}

fn unified_diff(path: &str, before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(3)
        .header(path, path)
        .to_string()
}

/// `synclint -` / `--stdin-filename`: lint (and fix) source from stdin.
fn check_stdin(args: &CheckArgs, resolver: &Resolver, cwd: &Path) -> u8 {
    let mut bytes = Vec::new();
    if let Err(error) = io::stdin().read_to_end(&mut bytes) {
        eprintln!("{:?}", miette!("cannot read stdin: {error}"));
        return 2;
    }
    let name = args.stdin_filename.clone().unwrap_or_else(|| PathBuf::from("-"));
    let display = display_path(&name, cwd);
    let text = match decode(bytes) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("{:?}", miette!("{display}: {error}"));
            return 2;
        }
    };
    let settings = resolver.for_dir(name.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(cwd));
    let mut lint = lint_source(
        &text,
        settings.rules_for(&name),
        &settings.hot_functions,
        &FileFacts::default(),
        false,
    );
    let (module, is_package) = module_path(&name);
    let fixing = args.fix || args.fix_only || args.diff || settings.fix;
    let file = Linted {
        path: name,
        semantics: std::mem::take(&mut lint.semantics),
        checked: Checked::new(&display, text.clone(), lint, fixing, fix_minimum(args, &settings)),
        display,
        settings: settings.clone(),
        module,
        is_package,
        named: true,
        facts: FileFacts::default(),
    };
    let modules = [ModuleInfo {
        module: file.module.clone(),
        is_package,
        display: &file.display,
        semantics: &file.semantics,
    }];
    let hot = Project::new(&modules).hot_functions();
    let mut output = process_file(0, &file, &hot, fixing, args);
    let unsafe_fixes = args.unsafe_fixes || settings.unsafe_fixes;
    let mut errors = Errors::default();
    if let Some(error) = output.error {
        errors.push(error);
    }
    errors.push_syntax(&file, !args.diff && !args.fix_only);
    let fixed = output.fixed.map(|fixed| fixed.text);
    let mut findings = std::mem::take(&mut output.findings);
    let remaining = findings.iter().filter(|f| f.rule.is_some()).count();
    findings.sort_by_key(|f| (f.start, f.code()));
    let mut stdout = io::stdout().lock();
    if args.diff {
        if let Some(fixed) = &fixed {
            let _ = stdout.write_all(unified_diff(&file.display, &text, fixed).as_bytes());
        }
        errors.print();
        return if errors.count() > 0 {
            2
        } else if fixed.is_some() {
            1
        } else {
            0
        };
    }
    if fixing {
        // Fixed source to stdout (unchanged source when nothing applied); findings to stderr.
        let _ = stdout.write_all(fixed.as_deref().unwrap_or(&text).as_bytes());
        if !args.fix_only {
            let mut stderr = io::stderr().lock();
            let _ = render(
                &mut stderr,
                args.output_format,
                &findings,
                ColorChoice::Never,
                unsafe_fixes,
            );
        }
    } else {
        let _ = render(&mut stdout, args.output_format, &findings, args.color, unsafe_fixes);
        if matches!(args.output_format, OutputFormat::Full | OutputFormat::Concise) && !args.quiet {
            print_summary(&mut stdout, &findings, 0, unsafe_fixes, errors.count());
        }
    }
    errors.print();
    exit_code(&errors, if args.fix_only { 0 } else { remaining }, args.exit_zero)
}

#[cfg(test)]
mod write_tests {
    use std::os::unix::fs::PermissionsExt;

    use super::write_atomically;

    #[test]
    fn vanished_and_read_only_files_are_errors_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone.py");
        let error = write_atomically(&gone, "pkg/gone.py", "x = 1\n").unwrap_err();
        assert!(format!("{error}").contains("pkg/gone.py"), "{error}");
        assert!(!gone.exists());

        let locked = dir.path().join("locked.py");
        std::fs::write(&locked, "x = 0\n").unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o444)).unwrap();
        let error = write_atomically(&locked, "pkg/locked.py", "x = 1\n").unwrap_err();
        assert!(
            format!("{error}").contains("pkg/locked.py: cannot write the fix: the file is read-only"),
            "{error}"
        );
        assert_eq!(std::fs::read_to_string(&locked).unwrap(), "x = 0\n");
    }

    #[test]
    fn writes_keep_the_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.py");
        std::fs::write(&path, "x = 0\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
        write_atomically(&path, "run.py", "x = 1\r\n").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"x = 1\r\n");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o751);
    }
}
