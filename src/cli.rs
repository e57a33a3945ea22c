//! The command line: `synclint [check] [PATH...]`, `synclint rule CODE | --all`.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use miette::{Report, miette};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::config::{Overrides, Resolver, Settings, Source};
use crate::diagnostic::{Applicability, Diagnostic};
use crate::fix::{FixFailure, fix_in_passes};
use crate::graph::GraphFormat;
use crate::lines::Lines;
use crate::linter::{decode, lint_source};
use crate::pipeline::{Checked, Errors, Linted, analyse, discover_paths, lint_path, module_infos, with_project};
use crate::project::{HotFunctions, ModuleInfo, Project, display_path, hot_note, module_path};
use crate::registry::{Rule, RuleSelector};
use crate::render::{ColorChoice, Finding, OutputFormat, SourceText, render};
use crate::semantic::{FileFacts, FunctionId, FunctionSummary, HotContext};

/// Deep enough for 5,000-deep nested expressions in the parser and the checker.
const STACK_SIZE: usize = 256 * 1024 * 1024;
/// Fix passes before a file is reported as not converging.
const MAX_FIX_PASSES: usize = 10;

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
    let (linted, targets) = analyse(&files, files.len(), &cwd, &check_file, &mut errors);
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
    let (linted, targets) = analyse(&files, named, &cwd, &check_file, &mut errors);
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
