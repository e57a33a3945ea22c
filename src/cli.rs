//! The command line: `synclint [check] [PATH...]`, `synclint rule CODE | --all`.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use miette::{Report, miette};
use rustc_hash::FxHashMap;

use crate::add_noqa::add_noqa_to_files;
use crate::config::{Overrides, Resolver, Settings, Source};
use crate::diagnostic::Applicability;
use crate::graph::GraphFormat;
use crate::linter::decode;
use crate::nesting::CHECK_STACK_BYTES;
use crate::outcome::{FixedText, outcome};
use crate::pipeline::{
    Errors, RunOptions, Writes, cache_root, discover_all, module_infos, parse_all, run, run_to_write,
};
use crate::project::Project;
use crate::project::modules::display_path;
use crate::registry::{Rule, RuleSelector};
use crate::render::{ColorChoice, Finding, OutputFormat, plural, render};
use crate::server::ServerOptions;
use crate::trace::{TraceFormat, TraceOptions, render as render_trace, trace, write_svg};

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
    /// Join `torch.profiler` traces with the findings: which findings the run confirmed and
    /// what they cost, which syncs no finding explains, which findings never synced.
    Trace(TraceArgs),
    /// Run a language server (LSP over stdin and stdout) for editors: findings as you type,
    /// fixes and `# noqa` as code actions, rule docs on hover.
    Server(ServerArgs),
}

#[derive(Args)]
struct ServerArgs {
    #[command(flatten)]
    project: ProjectArgs,
    /// Accepted for editors that pass it; stdin and stdout are the only transport.
    #[arg(long, hide = true)]
    stdio: bool,
}

#[derive(Args)]
struct TraceArgs {
    /// Chrome-trace JSON files (`.json` or `.json.gz`) or folders of them, as
    /// `export_chrome_trace` and `tensorboard_trace_handler` write them.
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    /// The project the profiled scripts came from (default: the current folder).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "table")]
    output_format: TraceFormat,
    /// Also draw the step with the most host stall as an SVG timeline into this file.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    #[command(flatten)]
    project: ProjectArgs,
}

/// How a command that checks a project finds its settings and cache.
#[derive(Args)]
struct ProjectArgs {
    /// Use this configuration file instead of the discovered ones.
    #[arg(long, value_name = "PATH", conflicts_with = "isolated")]
    config: Option<PathBuf>,
    /// Ignore configuration files.
    #[arg(long)]
    isolated: bool,
    /// Read and write no cache.
    #[arg(long, env = "SYNCLINT_NO_CACHE", value_parser = clap::builder::FalseyValueParser::new())]
    no_cache: bool,
    /// Where results are cached between runs (default: `.synclint_cache` in the project root).
    #[arg(long, value_name = "PATH", env = "SYNCLINT_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
}

impl ProjectArgs {
    fn resolver(&self, cwd: &Path) -> Option<Arc<Resolver>> {
        resolver_for(self.isolated, self.config.as_ref(), Overrides::default(), cwd)
    }

    fn cache(&self, resolver: &Resolver, cwd: &Path) -> Option<PathBuf> {
        cache_folder(self.no_cache, self.cache_dir.as_deref(), resolver, cwd)
    }
}

#[derive(Args)]
struct GraphArgs {
    /// Files or folders (default: the current folder).
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    output_format: GraphFormat,
    #[command(flatten)]
    project: ProjectArgs,
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
    /// Rules to enable (codes or prefixes, e.g. SYNC1, or ALL); replaces the default (all rules
    /// but the opt-in SYNC900).
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
    /// Write what would go to stdout (findings, summary, statistics, diff) to this file; its
    /// folder must exist. Source fixed from stdin still goes to stdout.
    #[arg(short, long, value_name = "PATH")]
    output_file: Option<PathBuf>,
    /// Use this config file (pyproject.toml or synclint.toml) for every file.
    #[arg(long, value_name = "PATH", conflicts_with = "isolated")]
    config: Option<PathBuf>,
    /// Ignore every config file, and check the files named without the rest of their project.
    #[arg(long)]
    isolated: bool,
    /// Read and write no cache.
    #[arg(long, env = "SYNCLINT_NO_CACHE", value_parser = clap::builder::FalseyValueParser::new())]
    no_cache: bool,
    /// Where results are cached between runs (default: `.synclint_cache` in the project root).
    #[arg(long, value_name = "PATH", env = "SYNCLINT_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
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
    /// Add `# noqa` directives to every line with a finding, so that the next run passes.
    #[arg(long, conflicts_with_all = ["fix", "diff", "fix_only", "stdin_filename"])]
    add_noqa: bool,
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
        .stack_size(CHECK_STACK_BYTES)
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
        Some(Command::Trace(args)) => trace_command(args, threads),
        Some(Command::Server(args)) => server_command(args, threads),
        Some(Command::Check(args)) => check(args, threads),
        None => check(cli.check, threads),
    });
    ExitCode::from(code)
}

fn graph_command(args: GraphArgs, threads: usize) -> u8 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let Some(resolver) = args.project.resolver(&cwd) else {
        return 2;
    };
    let options = RunOptions {
        threads,
        // The graph shows what was named, not the project around it.
        isolated: true,
        every_call: true,
        fixing: &|_| None,
        cache: args.project.cache(&resolver, &cwd),
        overlays: FxHashMap::default(),
    };
    let run = match run(&paths_or_cwd(&args.paths), &resolver, &cwd, &options) {
        Ok(run) => run,
        Err(reports) => return print_config_errors(reports),
    };
    let modules = module_infos(&run.linted);
    let project = Project::with_targets(&modules, run.targets);
    let hot = project.hot_functions();
    let mut out = io::stdout().lock();
    let written = crate::graph::render(&mut out, args.output_format, &modules, &project, &hot);
    run.errors.print();
    if written.is_err() || run.errors.count() > 0 {
        2
    } else {
        0
    }
}

fn trace_command(args: TraceArgs, threads: usize) -> u8 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let Some(resolver) = args.project.resolver(&cwd) else {
        return 2;
    };
    let options = TraceOptions {
        traces: args.traces,
        root: args.root.unwrap_or_else(|| cwd.clone()),
        cache: args.project.cache(&resolver, &cwd),
        cwd,
        threads,
        timeline: args.svg.is_some(),
    };
    let report = match trace(&options, &resolver) {
        Ok(report) => report,
        Err(reports) => return print_config_errors(reports),
    };
    if let (Some(path), Some(timeline)) = (&args.svg, &report.timeline)
        && let Err(error) = write_svg(path, timeline)
    {
        eprintln!("synclint: cannot write {}: {error}", path.display());
        return 2;
    }
    let mut out = io::stdout().lock();
    let written = render_trace(&mut out, args.output_format, &report);
    report.errors.print();
    if written.is_err() || report.errors.count() > 0 {
        2
    } else {
        0
    }
}

fn server_command(args: ServerArgs, threads: usize) -> u8 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let project = args.project;
    let options = ServerOptions {
        isolated: project.isolated,
        config: project.config.map(|path| cwd.join(path)),
        no_cache: project.no_cache,
        cache_dir: project.cache_dir.map(|path| cwd.join(path)),
        threads,
    };
    crate::server::serve(options, CHECK_STACK_BYTES)
}

/// The cache folder a command uses; `None` with `--no-cache`.
fn cache_folder(no_cache: bool, explicit: Option<&Path>, resolver: &Resolver, cwd: &Path) -> Option<PathBuf> {
    (!no_cache).then(|| cache_root(explicit, resolver, cwd))
}

/// Prints configuration errors; the exit code.
fn print_config_errors(reports: Vec<Report>) -> u8 {
    for report in reports {
        eprintln!("{report:?}");
    }
    2
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

impl CheckArgs {
    /// `--color`, where `auto` colors only a terminal, and an `--output-file` is not one.
    fn color(&self) -> ColorChoice {
        match self.color {
            ColorChoice::Auto if self.output_file.is_some() => ColorChoice::Never,
            color => color,
        }
    }
}

/// Where `check` reports: the `--output-file`, or stdout. A file that cannot be created is
/// printed and gives `None`.
fn open_report(path: Option<&Path>) -> Option<Box<dyn Write>> {
    let Some(path) = path else {
        // Not locked: the lock would be held for the whole run.
        return Some(Box::new(io::stdout()));
    };
    match File::create(path) {
        Ok(file) => Some(Box::new(BufWriter::new(file))),
        Err(error) => {
            // Ruff creates missing folders; a mistyped folder would then hide the report.
            let parent = path.parent().filter(|p| !p.as_os_str().is_empty() && !p.is_dir());
            match parent {
                Some(parent) => eprintln!(
                    "synclint: cannot write {}: no folder {}",
                    path.display(),
                    parent.display()
                ),
                None => eprintln!("synclint: cannot write {}: {error}", path.display()),
            }
            None
        }
    }
}

/// Flushes the report; `code`, or 2 when the report file could not be written in full (a full
/// disk), so that a cut-short report never passes for a whole one. Stdout's errors (a closed
/// pipe) are ignored, as its writes' are.
fn close_report(mut out: Box<dyn Write>, path: Option<&Path>, code: u8) -> u8 {
    match (out.flush(), path) {
        (Err(error), Some(path)) => {
            eprintln!("synclint: cannot write {}: {error}", path.display());
            2
        }
        _ => code,
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
    let Some(mut out) = open_report(args.output_file.as_deref()) else {
        return 2;
    };
    let reads_stdin = paths.iter().any(|p| p == Path::new("-"));
    if args.add_noqa {
        if reads_stdin {
            eprintln!("synclint: --add-noqa edits files: it cannot read source from stdin (`-`)");
            return 2;
        }
        let code = add_noqa_command(&args, &mut out, &paths, &resolver, &cwd, threads);
        return close_report(out, args.output_file.as_deref(), code);
    }
    if reads_stdin {
        let code = check_stdin(&args, &mut out, &resolver, &cwd, threads);
        return close_report(out, args.output_file.as_deref(), code);
    }
    // `fix = true` in a folder's config fixes that folder's files (`--fix` sets it everywhere).
    let fix_requested = args.fix_only || args.diff;
    let fixing = |settings: &Settings| (fix_requested || settings.fix).then(|| fix_minimum(&args, settings));
    let options = RunOptions {
        threads,
        isolated: args.isolated,
        every_call: false,
        fixing: &fixing,
        cache: cache_folder(args.no_cache, args.cache_dir.as_deref(), &resolver, &cwd),
        overlays: FxHashMap::default(),
    };
    if args.parse_only {
        let mut errors = Errors::default();
        return match discover_all(&paths, &resolver, &cwd, &options, &mut errors) {
            Ok((files, _)) => {
                let statements = parse_all(&files);
                println!("parsed {} files ({statements} top-level statements)", files.len());
                0
            }
            Err(reports) => print_config_errors(reports),
        };
    }
    // `--diff` writes nothing, not even to finish what a killed `--fix` left.
    let checked = if args.diff {
        run(&paths, &resolver, &cwd, &options)
    } else {
        run_to_write(&paths, &resolver, &cwd, &options, Writes::Fixed)
    };
    let run = match checked {
        Ok(run) => run,
        Err(reports) => return print_config_errors(reports),
    };
    let findings_printed = !(args.diff || args.fix_only || args.statistics);
    let fixed_text = if args.diff { FixedText::Diff } else { FixedText::Write };
    let (outcome, errors) = outcome(run, &fixing, fixed_text, findings_printed);
    let unsafe_fixes = args.unsafe_fixes || outcome.unsafe_fixes;
    let fixed_total = outcome.fixed_total;
    let findings = std::mem::ManuallyDrop::new(outcome.findings);

    if args.diff {
        let _ = out.write_all(outcome.diff.as_bytes());
        errors.print();
        let code = if errors.count() > 0 {
            2
        } else if outcome.changed_files > 0 {
            1
        } else {
            0
        };
        return close_report(out, args.output_file.as_deref(), code);
    }
    if args.show_fixes && fixed_total > 0 {
        let _ = writeln!(out, "Fixed {fixed_total} finding{}:", plural(fixed_total));
        for (path, counts) in &outcome.fix_log {
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
            let _ = render(&mut out, args.output_format, &findings, args.color(), unsafe_fixes);
            if args.output_format.has_summary() && !args.quiet {
                print_summary(&mut out, &findings, fixed_total, unsafe_fixes, errors.count());
            }
            errors.print();
            let code = exit_code(&errors, rule_findings.len(), args.exit_zero);
            return close_report(out, args.output_file.as_deref(), code);
        }
    } else if !args.quiet && fixed_total > 0 && !args.show_fixes {
        let _ = writeln!(out, "Fixed {fixed_total} finding{}.", plural(fixed_total));
    }
    errors.print();
    let remaining = if args.fix_only { 0 } else { rule_findings.len() };
    close_report(
        out,
        args.output_file.as_deref(),
        exit_code(&errors, remaining, args.exit_zero),
    )
}

/// `--add-noqa`: the findings `check` would report get their `# noqa`; 2 when a file could not
/// be read or written (or has syntax errors).
fn add_noqa_command(
    args: &CheckArgs,
    out: &mut dyn Write,
    paths: &[PathBuf],
    resolver: &Arc<Resolver>,
    cwd: &Path,
    threads: usize,
) -> u8 {
    let options = RunOptions {
        threads,
        isolated: args.isolated,
        every_call: false,
        // Fixed code would move the findings off the lines the directives go on.
        fixing: &|_| None,
        cache: cache_folder(args.no_cache, args.cache_dir.as_deref(), resolver, cwd),
        overlays: FxHashMap::default(),
    };
    let run = match run_to_write(paths, resolver, cwd, &options, Writes::All) {
        Ok(run) => run,
        Err(reports) => return print_config_errors(reports),
    };
    let (added, errors) = add_noqa_to_files(run);
    if !args.quiet {
        let _ = writeln!(out, "Added {added} noqa directive{}.", plural(added));
    }
    errors.print();
    exit_code(&errors, 0, false)
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

/// `synclint -` / `--stdin-filename`: lint (and fix) source from stdin, reporting to `out`. With
/// a file name, the source is checked as that file of its project.
fn check_stdin(args: &CheckArgs, out: &mut dyn Write, resolver: &Arc<Resolver>, cwd: &Path, threads: usize) -> u8 {
    let mut bytes = Vec::new();
    if let Err(error) = io::stdin().read_to_end(&mut bytes) {
        eprintln!("{:?}", miette!("cannot read stdin: {error}"));
        return 2;
    }
    let name = args.stdin_filename.clone().unwrap_or_else(|| PathBuf::from("-"));
    let text = match decode(bytes) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("{:?}", miette!("{}: {error}", display_path(&name, cwd)));
            return 2;
        }
    };
    let fix_requested = args.fix || args.fix_only || args.diff;
    let fixing_for = |settings: &Settings| (fix_requested || settings.fix).then(|| fix_minimum(args, settings));
    let options = RunOptions {
        threads,
        // Source with no file name has no project.
        isolated: args.isolated || args.stdin_filename.is_none(),
        every_call: false,
        fixing: &fixing_for,
        cache: cache_folder(args.no_cache, args.cache_dir.as_deref(), resolver, cwd),
        overlays: FxHashMap::from_iter([(name.clone(), text.clone())]),
    };
    let run = match run(std::slice::from_ref(&name), resolver, cwd, &options) {
        Ok(run) => run,
        Err(reports) => return print_config_errors(reports),
    };
    let settings = resolver.for_dir(name.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(cwd));
    let fixing = fixing_for(&settings).is_some();
    let findings_printed = !args.diff && !args.fix_only;
    let fixed_text = if args.diff { FixedText::Diff } else { FixedText::Return };
    let (outcome, errors) = outcome(run, &fixing_for, fixed_text, findings_printed);
    let unsafe_fixes = args.unsafe_fixes || outcome.unsafe_fixes;
    let fixed = outcome.fixed_text;
    let findings = outcome.findings;
    let remaining = findings.iter().filter(|f| f.rule.is_some()).count();
    if args.diff {
        let _ = out.write_all(outcome.diff.as_bytes());
        errors.print();
        return if errors.count() > 0 {
            2
        } else if outcome.changed_files > 0 {
            1
        } else {
            0
        };
    }
    if fixing {
        // Fixed source to stdout (unchanged source when nothing applied), even with an
        // `--output-file`: an editor reads it back in place of its buffer. Findings to the
        // `--output-file`, or else to stderr.
        let _ = io::stdout()
            .lock()
            .write_all(fixed.as_deref().unwrap_or(&text).as_bytes());
        if !args.fix_only {
            let mut stderr = io::stderr().lock();
            let findings_out: &mut dyn Write = if args.output_file.is_some() { out } else { &mut stderr };
            let _ = render(
                findings_out,
                args.output_format,
                &findings,
                ColorChoice::Never,
                unsafe_fixes,
            );
        }
    } else {
        let _ = render(out, args.output_format, &findings, args.color(), unsafe_fixes);
        if args.output_format.has_summary() && !args.quiet {
            print_summary(out, &findings, 0, unsafe_fixes, errors.count());
        }
    }
    errors.print();
    exit_code(&errors, if args.fix_only { 0 } else { remaining }, args.exit_zero)
}
