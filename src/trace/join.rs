//! Joins the syncs a trace saw with the findings synclint reports for the same files. A sync
//! is *confirmed* by a finding in the function its innermost project frame ran (or, for a sync
//! in a project helper reported where it is called, an outer frame's function) whose rule
//! explains its operator; syncs no finding explains are *runtime-only*, findings no sync
//! confirmed stay *static-only*. A sync outside every profiler step, or made by the profiler
//! itself, is accounted for apart.

use std::path::{Path, PathBuf};

use rustc_hash::{FxHashMap, FxHashSet};

use super::families::{LIBRARY_CALLS, family};
use super::read::{Nanos, Trace};
use super::sources::{Frame, FunctionLines, ProjectFiles, function_at, is_profiler_frame, parse_frame, pick};
use super::waits::{Enclosing, HostSync, Waits};
use crate::registry::Rule;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub(crate) enum Status {
    Confirmed,
    RuntimeOnly,
    OutsideLoop,
    Profiler,
    StaticOnly,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Confirmed => "confirmed",
            Status::RuntimeOnly => "runtime-only",
            Status::OutsideLoop => "outside-loop",
            Status::Profiler => "profiler",
            Status::StaticOnly => "static-only",
        }
    }
}

/// A project file the trace ran, with synclint's findings in it.
pub(crate) struct SourceFile {
    /// The path as findings show it.
    pub display: String,
    pub functions: Vec<FunctionLines>,
    pub findings: Vec<StaticFinding>,
}

pub(crate) struct StaticFinding {
    pub row: usize,
    pub column: usize,
    pub rule: Rule,
    pub message: String,
    /// The text of its line.
    pub line: String,
    /// Index into the file's functions; `None` at module level.
    pub function: Option<usize>,
}

/// One line of the report: a finding, or the place of syncs no finding explains.
#[derive(Debug)]
pub(crate) struct Row {
    pub status: Status,
    pub path: Option<String>,
    pub row: Option<usize>,
    pub column: Option<usize>,
    pub function: Option<String>,
    pub rule: Option<Rule>,
    pub message: Option<String>,
    pub syncs: usize,
    /// How many of the syncs ran in the backward pass.
    pub backward: usize,
    pub stall: Nanos,
    pub gpu_idle: Nanos,
    /// The distinct operator chains of its syncs.
    pub ops: Vec<String>,
}

pub(crate) struct Joined {
    pub rows: Vec<Row>,
    /// For each trace, for each of its syncs, where it went.
    pub syncs: Vec<Vec<SyncPlace>>,
}

/// The row a sync went to, and its own operator chain.
pub(crate) struct SyncPlace {
    pub row: usize,
    pub ops: String,
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum RowKey {
    Finding(PathBuf, usize),
    Place(Status, Option<String>, Option<usize>, String),
}

/// The project files named by the traces' frames (to check before joining).
pub(crate) fn frame_files(traces: &[(Trace, Waits)], project: &mut ProjectFiles) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for (trace, waits) in traces {
        for sync in &waits.syncs {
            let forward = sync.forward.iter().flat_map(|forward| &forward.frames);
            for frame in sync
                .frames
                .iter()
                .chain(forward)
                .filter_map(|f| parse_frame(&trace.names[f.name as usize]))
            {
                for path in project.resolve(frame.path) {
                    if !files.contains(path) {
                        files.push(path.clone());
                    }
                }
            }
        }
    }
    files.sort();
    files
}

pub(crate) fn join(
    traces: &[(Trace, Waits)],
    project: &mut ProjectFiles,
    files: &FxHashMap<PathBuf, SourceFile>,
) -> Joined {
    let mut joiner = Joiner {
        project,
        files,
        rows: Vec::new(),
        keys: FxHashMap::default(),
        calls: FxHashMap::default(),
        op_findings: FxHashMap::default(),
        confirmed: FxHashSet::default(),
    };
    let syncs = traces
        .iter()
        .enumerate()
        .map(|(index, (trace, waits))| {
            waits
                .syncs
                .iter()
                .map(|sync| joiner.place(index, trace, waits, sync))
                .collect()
        })
        .collect();
    joiner.add_static_only();
    Joined {
        rows: joiner.rows,
        syncs,
    }
}

/// One call of a function (trace, step, thread, start), in one file, with the findings a kind
/// of sync could go to.
type FunctionCall = (usize, Option<usize>, u32, Nanos, PathBuf, Vec<usize>);

struct Joiner<'p> {
    project: &'p mut ProjectFiles,
    files: &'p FxHashMap<PathBuf, SourceFile>,
    rows: Vec<Row>,
    keys: FxHashMap<RowKey, usize>,
    /// How many syncs of one rule family one call of a function has made so far in one step:
    /// the k-th goes to the k-th of its findings in that family, round again for a loop in
    /// the function (a frame that outlives the steps).
    calls: FxHashMap<FunctionCall, usize>,
    /// Which finding each confirmed operator call went to, so that the backward pass of that
    /// operator goes to the same one.
    op_findings: FxHashMap<(usize, u32, Nanos), (PathBuf, usize)>,
    confirmed: FxHashSet<(PathBuf, usize)>,
}

/// A frame of a sync, with the project file it names.
struct PlacedFrame<'t> {
    frame: Frame<'t>,
    call: Enclosing,
    file: Option<PathBuf>,
}

impl Joiner<'_> {
    /// Where `sync` goes (its row made if new).
    fn place(&mut self, trace_index: usize, trace: &Trace, waits: &Waits, sync: &HostSync) -> SyncPlace {
        let name = |e: &Enclosing| trace.names[e.name as usize].as_str();
        let runtime = trace.names[sync.runtime as usize].as_str();
        let own_ops: Vec<&str> = sync.ops.iter().map(name).collect();
        let own = self.place_frames(trace, &sync.frames);
        // A backward pass in Python (an `autograd.Function`'s `backward`) has frames of its own;
        // an aten backward node has none and is joined where its forward operator ran.
        let linked = sync.forward.as_ref().filter(|_| own.iter().all(|p| p.file.is_none()));
        let (raw_frames, placed, family_ops): (&[Enclosing], Vec<PlacedFrame>, Vec<&str>) = match linked {
            Some(forward) => (
                &forward.frames,
                self.place_frames(trace, &forward.frames),
                forward.ops.iter().map(name).collect(),
            ),
            None => (&sync.frames, own, own_ops.clone()),
        };
        let found = family(&family_ops, runtime, sync.copy);
        let label = match &sync.forward {
            Some(forward) => format!(
                "{} (backward of {})",
                family(&own_ops, runtime, sync.copy).chain.join(" > "),
                name(&forward.op)
            ),
            None if found.chain.is_empty() => runtime.to_string(),
            // Operators no rule knows: which call waited says what the wait was.
            None if found.tiers.is_empty() => format!("{} > {runtime}", found.chain.join(" > ")),
            None => found.chain.join(" > "),
        };
        let status = if placed.iter().any(|p| is_profiler_frame(p.frame.path)) {
            Status::Profiler
        } else if !waits.steps.is_empty() && sync.step.is_none() {
            Status::OutsideLoop
        } else {
            Status::RuntimeOnly
        };
        let mut tiers = found.tiers.to_vec();
        if placed.first().is_some_and(|p| p.file.is_none()) {
            tiers.push(LIBRARY_CALLS);
        }
        let hint = call_hint(trace, raw_frames, &placed);
        let finding = (status == Status::RuntimeOnly)
            .then(|| self.finding_for(trace_index, sync, linked.is_some(), &placed, &tiers, hint))
            .flatten();
        let key = match &finding {
            Some((file, index)) => {
                self.confirmed.insert((file.clone(), *index));
                for op in &sync.ops {
                    self.op_findings
                        .insert((trace_index, op.thread, op.start), (file.clone(), *index));
                }
                RowKey::Finding(file.clone(), *index)
            }
            None => {
                let (path, row) = self.place_of(&placed);
                RowKey::Place(status, path, row, label.clone())
            }
        };
        let row = match self.keys.get(&key) {
            Some(&row) => row,
            None => {
                let row = self.new_row(&key, status, &placed);
                self.keys.insert(key, row);
                row
            }
        };
        let entry = &mut self.rows[row];
        entry.syncs += 1;
        entry.backward += usize::from(sync.forward.is_some());
        entry.stall = entry.stall.saturating_add(sync.stall);
        entry.gpu_idle = entry.gpu_idle.saturating_add(sync.gpu_idle);
        if !entry.ops.contains(&label) {
            entry.ops.push(label.clone());
        }
        SyncPlace { row, ops: label }
    }

    /// A stack's frames innermost first, each with the project file it names (a name two
    /// files share goes to the one beside the stack's other files).
    fn place_frames<'t>(&mut self, trace: &'t Trace, frames: &[Enclosing]) -> Vec<PlacedFrame<'t>> {
        let parsed: Vec<(Frame<'t>, Enclosing)> = frames
            .iter()
            .rev()
            .filter_map(|call| Some((parse_frame(&trace.names[call.name as usize])?, *call)))
            .collect();
        let unique: Vec<PathBuf> = parsed
            .iter()
            .filter_map(|(frame, _)| match self.project.resolve(frame.path) {
                [only] => Some(only.clone()),
                _ => None,
            })
            .collect();
        parsed
            .into_iter()
            .map(|(frame, call)| {
                let file = pick(self.project.resolve(frame.path), &unique);
                PlacedFrame { frame, call, file }
            })
            .collect()
    }

    /// The finding that explains `sync`, searching its project frames innermost first, each
    /// family's rules tier by tier.
    fn finding_for(
        &mut self,
        trace_index: usize,
        sync: &HostSync,
        linked: bool,
        placed: &[PlacedFrame],
        tiers: &[&[Rule]],
        hint: Option<&str>,
    ) -> Option<(PathBuf, usize)> {
        if linked
            && let Some(forward) = &sync.forward
            && let Some(found) = self
                .op_findings
                .get(&(trace_index, forward.op.thread, forward.op.start))
        {
            return Some(found.clone());
        }
        // An outer frame's finding explains the sync only where its line calls the frame
        // inside it (a project helper's sync is reported at its call).
        let mut callee: Option<&str> = None;
        for (at, frame) in placed.iter().enumerate() {
            // A library frame's name is not what the user's line calls (`torch.unique` runs
            // `_return_output`).
            let Some(path) = &frame.file else { continue };
            let Some(source) = self.files.get(path) else { continue };
            let in_function: Vec<usize> = findings_at(source, frame, callee).collect();
            let innermost = callee.is_none();
            callee = Some(frame.frame.function);
            for tier in tiers {
                let mut candidates: Vec<usize> = in_function
                    .iter()
                    .copied()
                    .filter(|&i| tier.contains(&source.findings[i].rule))
                    .collect();
                if candidates.is_empty() {
                    continue;
                }
                // The call the user's line made (`print`, `item`, `tolist`) picks among its
                // function's findings of one kind.
                if innermost && let Some(hint) = hint {
                    let named: Vec<usize> = candidates
                        .iter()
                        .copied()
                        .filter(|&i| names_call(&source.findings[i].line, hint))
                        .collect();
                    if !named.is_empty() {
                        candidates = named;
                    }
                }
                let chosen = candidates[self.next_call(trace_index, sync, frame, path, &candidates)];
                let rule = source.findings[chosen].rule;
                self.confirm_calls_reaching(&placed[at + 1..], frame.frame.function, rule);
                return Some((path.clone(), chosen));
            }
        }
        None
    }

    /// The outer frames' findings of `rule` at the calls leading to the sync found inside
    /// `callee` (a hot call reported for the sync of the helper it reaches): the same sync
    /// confirms them, counted once, in the helper's row.
    fn confirm_calls_reaching<'t>(&mut self, outer: &[PlacedFrame<'t>], mut callee: &'t str, rule: Rule) {
        for frame in outer {
            let Some(path) = &frame.file else { continue };
            let Some(source) = self.files.get(path) else { continue };
            for index in findings_at(source, frame, Some(callee)) {
                if source.findings[index].rule == rule {
                    self.confirmed.insert((path.clone(), index));
                }
            }
            callee = frame.frame.function;
        }
    }

    /// Which of `candidates` this sync is: the k-th of its kind in one call of the function in
    /// one step goes to the k-th, round again for a loop in the function.
    fn next_call(
        &mut self,
        trace_index: usize,
        sync: &HostSync,
        frame: &PlacedFrame,
        path: &Path,
        candidates: &[usize],
    ) -> usize {
        let call = (
            trace_index,
            sync.step,
            frame.call.thread,
            frame.call.start,
            path.to_path_buf(),
            candidates.to_vec(),
        );
        let seen = self.calls.entry(call).or_default();
        *seen += 1;
        (*seen - 1) % candidates.len()
    }

    /// Where syncs no finding explains are shown: the innermost project frame's function (its
    /// first line: a frame already running when the profiler started carries the line it was
    /// on then, not the line that synced), else the innermost frame as the trace names it.
    fn place_of(&self, placed: &[PlacedFrame]) -> (Option<String>, Option<usize>) {
        let in_project = placed.iter().find_map(|p| {
            let source = self.files.get(p.file.as_ref()?)?;
            let function = function_at(&source.functions, p.frame.line);
            let line = function.map_or(p.frame.line, |f| source.functions[f].first);
            Some((source.display.clone(), line))
        });
        match in_project.or_else(|| placed.first().map(|p| (p.frame.path.to_string(), p.frame.line))) {
            Some((path, row)) => (Some(path), Some(row)),
            None => (None, None),
        }
    }

    fn new_row(&mut self, key: &RowKey, status: Status, placed: &[PlacedFrame]) -> usize {
        let row = match key {
            RowKey::Finding(path, index) => Row::of_finding(&self.files[path], *index, Status::Confirmed),
            RowKey::Place(_, path, row, _) => {
                let function = placed
                    .iter()
                    .find(|p| p.file.as_ref().is_some_and(|f| self.files.contains_key(f)))
                    .or(placed.first())
                    .map(|p| p.frame.function.to_string());
                Row {
                    path: path.clone(),
                    row: *row,
                    function,
                    ..Row::empty(status)
                }
            }
        };
        self.rows.push(row);
        self.rows.len() - 1
    }

    fn add_static_only(&mut self) {
        let mut paths: Vec<&PathBuf> = self.files.keys().collect();
        paths.sort();
        for path in paths {
            let source = &self.files[path];
            for index in 0..source.findings.len() {
                if !self.confirmed.contains(&(path.clone(), index)) {
                    self.rows.push(Row::of_finding(source, index, Status::StaticOnly));
                }
            }
        }
    }
}

/// The findings (by index) of the function `frame` ran in, on a line that calls `callee` where
/// the frame is an outer one (its line called the frame inside it).
fn findings_at<'s>(
    source: &'s SourceFile,
    frame: &PlacedFrame,
    callee: Option<&'s str>,
) -> impl Iterator<Item = usize> + 's {
    let function = function_at(&source.functions, frame.frame.line);
    source
        .findings
        .iter()
        .enumerate()
        .filter(move |(_, finding)| {
            finding.function == function && callee.is_none_or(|name| calls(&finding.line, name))
        })
        .map(|(index, _)| index)
}

/// What the innermost project frame's line called, from the frame just inside it: a builtin
/// (`<built-in method item of Tensor object at 0x..>`, `<built-in function print>`) or a
/// library function.
fn call_hint<'t>(trace: &'t Trace, frames: &[Enclosing], placed: &[PlacedFrame]) -> Option<&'t str> {
    let innermost = placed.iter().find(|p| p.file.is_some())?;
    let at = frames
        .iter()
        .position(|f| f.start == innermost.call.start && f.name == innermost.call.name)?;
    let inside = trace.names[frames.get(at + 1)?.name as usize].as_str();
    if let Some(rest) = inside.strip_prefix("<built-in method ") {
        return rest.split(' ').next();
    }
    if let Some(rest) = inside.strip_prefix("<built-in function ") {
        return rest.strip_suffix('>');
    }
    parse_frame(inside).map(|frame| frame.function)
}

/// Whether a line makes the call `hint` names: by name, or for the special methods that syntax
/// calls (`Tensor.__format__` is a Python frame under an f-string), by that syntax.
fn names_call(line: &str, hint: &str) -> bool {
    match hint {
        "__format__" => has_f_string(line) || calls(line, "format"),
        "__repr__" => calls(line, "repr") || calls(line, "print") || has_f_string(line),
        "__str__" => calls(line, "str") || calls(line, "print") || has_f_string(line),
        "__array__" => calls(line, "asarray") || calls(line, "array"),
        "__iter__" => line.contains(" in ") || calls(line, "list") || calls(line, "tuple"),
        _ => calls(line, hint),
    }
}

/// Whether a line holds an f-string (`f"..."`, `rf'...'`).
fn has_f_string(line: &str) -> bool {
    line.match_indices(['"', '\'']).any(|(at, _)| {
        let prefix: String = line[..at]
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        prefix.len() <= 2 && prefix.chars().any(|c| c.eq_ignore_ascii_case(&'f'))
    })
}

/// Whether a line of source names `function` as a whole word (a call, or an attribute read for
/// a property).
fn calls(line: &str, function: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    line.match_indices(function).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + function.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

impl Row {
    /// The row of a file's `index`-th finding.
    fn of_finding(source: &SourceFile, index: usize, status: Status) -> Row {
        let finding = &source.findings[index];
        Row {
            path: Some(source.display.clone()),
            row: Some(finding.row),
            column: Some(finding.column),
            function: finding.function.map(|f| source.functions[f].name.clone()),
            rule: Some(finding.rule),
            message: Some(finding.message.clone()),
            ..Row::empty(status)
        }
    }

    fn empty(status: Status) -> Row {
        Row {
            status,
            path: None,
            row: None,
            column: None,
            function: None,
            rule: None,
            message: None,
            syncs: 0,
            backward: 0,
            stall: 0,
            gpu_idle: 0,
            ops: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_names_a_call_by_name_or_by_the_syntax_that_makes_it() {
        assert!(names_call("    total += loss.item()", "item"));
        assert!(!names_call("    items = loss", "item"));
        assert!(names_call("    print(f\"{s:.3f}\")", "__format__"));
        assert!(names_call("    msg = rf'{s}'", "__format__"));
        assert!(!names_call("    print(s)", "__format__"));
        assert!(names_call("    print(s)", "__repr__"));
        assert!(!names_call("    if s:", "__repr__"));
    }
}
