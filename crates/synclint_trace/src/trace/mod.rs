//! `synclint trace`: reads `torch.profiler` traces, finds every time the host waited for the
//! GPU, and joins those waits with synclint's findings for the same files: which findings the
//! run confirmed (and what they cost), which syncs no finding explains, which findings never
//! synced. Data flows one way: read the traces, find the waits, check the files their frames
//! name, join, render.

mod bounded;
mod families;
mod join;
#[cfg(test)]
mod mutations;
mod read;
mod report;
mod sources;
mod svg;
mod timeline;
mod waits;

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use miette::{Report, miette};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::config::Resolver;
use crate::linter::decode;
use crate::outcome::{FixedText, outcome};
use crate::pipeline::{Errors, RunOptions, run};
use crate::project::modules::display_path;

pub use report::{TraceFormat, render};

use join::{Joined, SourceFile, StaticFinding, frame_files, join};
use read::{Trace, read_trace};
use sources::{ProjectFiles, function_at, function_lines, parse_frame};
use waits::{Waits, find_waits};

/// What `synclint trace` was asked to do.
pub struct TraceOptions {
    /// Trace files, or folders of them (as `tensorboard_trace_handler` writes them).
    pub traces: Vec<PathBuf>,
    /// The project the traces' Python files are found in.
    pub root: PathBuf,
    pub cwd: PathBuf,
    pub threads: usize,
    pub cache: Option<PathBuf>,
    /// Whether to lay out one step's timeline for `--svg`.
    pub timeline: bool,
}

/// What the traces showed, joined with the findings.
pub struct TraceReport {
    /// How many traces were read, and the host syncs in them.
    pub traces: usize,
    pub syncs: usize,
    pub rows: Vec<join::Row>,
    /// Profiler steps across all traces.
    pub steps: usize,
    /// Every blocking runtime call's time, as the traces recorded it.
    pub total_stall: read::Nanos,
    pub warnings: Vec<String>,
    pub timeline: Option<svg::Timeline>,
    /// Files that could not be checked (unreadable, not UTF-8).
    pub errors: Errors,
}

/// Reads the traces and joins them with the findings; a trace that cannot be read is an error
/// and nothing is reported.
pub fn trace(options: &TraceOptions, resolver: &Arc<Resolver>) -> Result<TraceReport, Vec<Report>> {
    if !options.root.is_dir() {
        return Err(vec![miette!(
            "--root {} is not a folder: it should be the project the profiled scripts came from",
            options.root.display()
        )]);
    }
    let paths = trace_files(&options.traces)?;
    let traces: Vec<Result<(Trace, Waits), Report>> = paths
        .par_iter()
        .map(|path| {
            let trace = read_trace(path).map_err(|error| miette!("{}: {error}", path.display()))?;
            let waits = find_waits(&trace);
            Ok((trace, waits))
        })
        .collect();
    let (traces, errors): (Vec<_>, Vec<_>) = traces.into_iter().partition(Result::is_ok);
    if !errors.is_empty() {
        return Err(errors.into_iter().filter_map(Result::err).collect());
    }
    let traces: Vec<(Trace, Waits)> = traces.into_iter().filter_map(Result::ok).collect();
    let root = std::path::absolute(&options.root).unwrap_or_else(|_| options.root.clone());
    let mut project = ProjectFiles::new(&root);
    let files = frame_files(&traces, &mut project);
    let mut errors = Errors::default();
    let sources = check_files(&files, options, resolver, &mut errors)?;
    let joined = join(&traces, &mut project, &sources);
    let warnings = warnings(&traces, &mut project, &root, &options.cwd);
    let timeline = options.timeline.then(|| timeline::busiest_step(&traces, &joined));
    let Joined { rows, .. } = joined;
    Ok(TraceReport {
        traces: traces.len(),
        syncs: traces.iter().map(|(_, waits)| waits.syncs.len()).sum(),
        rows,
        steps: traces.iter().map(|(_, waits)| waits.steps.len()).sum(),
        total_stall: traces
            .iter()
            .flat_map(|(_, w)| &w.syncs)
            .fold(0, |total: read::Nanos, s| total.saturating_add(s.stall)),
        warnings,
        timeline,
        errors,
    })
}

/// The trace files named, folders expanded to the traces in them.
fn trace_files(named: &[PathBuf]) -> Result<Vec<PathBuf>, Vec<Report>> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in named {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(path)
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.path())
                .filter(|p| p.is_file() && is_trace_name(p, ""))
                .collect();
            // Where the profiler's own names are there (`*.pt.trace.json[.gz]`), other JSON beside
            // them (hyperparameters, metrics) is not a trace.
            if found.iter().any(|p| is_trace_name(p, ".pt.trace")) {
                found.retain(|p| is_trace_name(p, ".pt.trace"));
            }
            found.sort();
            if found.is_empty() {
                errors.push(miette!(
                    "{}: no traces in this folder (`*.json` or `*.json.gz`, as `torch.profiler` writes them)",
                    path.display()
                ));
            }
            files.extend(found);
        } else if path.is_file() {
            files.push(path.clone());
        } else {
            errors.push(miette!("{}: no such trace file or folder", path.display()));
        }
    }
    if errors.is_empty() { Ok(files) } else { Err(errors) }
}

/// Whether a file's name ends in `{stem_end}.json` or `{stem_end}.json.gz`.
fn is_trace_name(path: &Path, stem_end: &str) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    [".json", ".json.gz"]
        .iter()
        .any(|extension| name.ends_with(&format!("{stem_end}{extension}")))
}

/// Checks the files the traces ran (with the rest of their project, as `check` does) and reads
/// each one's functions and findings.
fn check_files(
    files: &[PathBuf],
    options: &TraceOptions,
    resolver: &Arc<Resolver>,
    errors: &mut Errors,
) -> Result<FxHashMap<PathBuf, SourceFile>, Vec<Report>> {
    if files.is_empty() {
        return Ok(FxHashMap::default());
    }
    let run_options = RunOptions {
        threads: options.threads,
        isolated: false,
        every_call: false,
        fixing: &|_| None,
        cache: options.cache.clone(),
        overlays: FxHashMap::default(),
    };
    let checked = run(files, resolver, &options.cwd, &run_options)?;
    let (outcome, run_errors) = outcome(checked, &|_| None, FixedText::Write, true);
    *errors = run_errors;
    let mut by_path: FxHashMap<&str, Vec<&crate::render::Finding>> = FxHashMap::default();
    for finding in outcome.findings.iter().filter(|f| f.rule.is_some()) {
        by_path.entry(finding.path.as_str()).or_default().push(finding);
    }
    let mut sources = FxHashMap::default();
    for path in files {
        let display = display_path(path, &options.cwd);
        let Some(text) = std::fs::read(path).ok().and_then(|bytes| decode(bytes).ok()) else {
            continue;
        };
        let functions = function_lines(&text);
        let lines: Vec<&str> = text.lines().collect();
        // One copy of each line with findings, shared by its findings: a long line may hold
        // thousands.
        let mut shared: FxHashMap<usize, Rc<str>> = FxHashMap::default();
        let findings = by_path
            .get(display.as_str())
            .into_iter()
            .flatten()
            .filter_map(|finding| {
                Some(StaticFinding {
                    row: finding.start.row,
                    column: finding.start.column,
                    rule: finding.rule?,
                    message: finding.message.clone(),
                    line: shared
                        .entry(finding.start.row)
                        .or_insert_with(|| lines.get(finding.start.row - 1).copied().unwrap_or_default().into())
                        .clone(),
                    function: function_at(&functions, finding.start.row),
                })
            })
            .collect();
        sources.insert(
            path.clone(),
            SourceFile {
                display,
                functions,
                findings,
            },
        );
    }
    Ok(sources)
}

/// What the user should know about the join: traces without events or Python frames, and
/// traces none of whose Python files are in the project.
fn warnings(traces: &[(Trace, Waits)], project: &mut ProjectFiles, root: &Path, cwd: &Path) -> Vec<String> {
    let root = match display_path(root, cwd) {
        shown if shown.is_empty() => ".".to_string(),
        shown => shown,
    };
    let mut warnings = Vec::new();
    for (trace, waits) in traces {
        let path = display_path(&trace.path, cwd);
        warnings.extend(
            read_warnings(trace)
                .into_iter()
                .map(|warning| format!("{path}: {warning}")),
        );
        if trace.spans.is_empty() {
            warnings.push(format!("{path}: no host events: the profiler recorded nothing in it"));
            continue;
        }
        if !waits.with_stack {
            warnings.push(format!(
                "{path}: no Python frames (profile with `with_stack=True`): its syncs are listed by \
                 operator, without source lines"
            ));
            continue;
        }
        let frames: Vec<_> = waits
            .stacks
            .distinct_frames(trace, waits.syncs.iter().map(|sync| sync.stack))
            .into_iter()
            .filter_map(|name| parse_frame(&trace.names[name as usize]))
            .collect();
        if !frames.is_empty() && frames.iter().all(|frame| project.resolve(frame.path).is_empty()) {
            // The outermost frame is the script that was run (`<string>` for a spawned worker).
            let script = frames
                .iter()
                .find(|frame| frame.function == "<module>")
                .unwrap_or(&frames[0]);
            warnings.push(format!(
                "{path}: none of the Python files its syncs ran is under {root} (the script was {}): \
                 its syncs are runtime-only (pass the project folder as --root)",
                script.path
            ));
        }
    }
    warnings
}

/// What the reader cut or left out of a trace, one warning for each kind.
fn read_warnings(trace: &Trace) -> Vec<String> {
    let count = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let mut warnings = Vec::new();
    if trace.cuts.strings > 0 {
        let strings = trace.cuts.strings;
        warnings.push(format!(
            "{} longer than {kib} KiB cut to {} first {kib} KiB (ending in `…`)",
            count(strings, "string", "strings"),
            if strings == 1 { "its" } else { "their" },
            kib = bounded::MAX_STRING / 1024
        ));
    }
    if trace.cuts.numbers > 0 {
        warnings.push(format!(
            "{} beyond any time's range (over {} digits, or an exponent of 100 or more) shortened",
            count(trace.cuts.numbers, "number", "numbers"),
            bounded::MAX_DIGITS
        ));
    }
    if trace.absurd.timestamps > 0 {
        warnings.push(format!(
            "{} with a timestamp no profiler writes (negative, or past 2^62 ns) left out",
            count(trace.absurd.timestamps, "event", "events")
        ));
    }
    if trace.absurd.durations > 0 {
        warnings.push(format!(
            "{} out of range (negative: the event ends before it starts, or over a day) clamped",
            count(trace.absurd.durations, "duration", "durations")
        ));
    }
    warnings
}

/// Writes the timeline's SVG beside `path` and renames it over `path`: a reader never sees half
/// a drawing, and the file gets the permissions any new file gets.
pub fn write_svg(path: &Path, timeline: &svg::Timeline) -> std::io::Result<()> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(format!(".{}.partial", std::process::id()));
    let partial = PathBuf::from(partial);
    std::fs::write(&partial, svg::render(timeline))?;
    std::fs::rename(&partial, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })
}
