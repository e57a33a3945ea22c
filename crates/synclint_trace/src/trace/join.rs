//! Joins the syncs a trace saw with the findings synclint reports for the same files. A sync
//! is *confirmed* by a finding in the function its innermost project frame ran (or, for a sync
//! in a project helper reported where it is called, an outer frame's function) whose rule
//! explains its operator; syncs no finding explains are *runtime-only*, findings no sync
//! confirmed stay *static-only*. A sync outside every profiler step, or made by the profiler
//! itself, is accounted for apart.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::families::{LIBRARY_CALLS, family};
use super::read::{Nanos, Trace};
use super::sources::{Folders, Frame, FunctionLines, ProjectFiles, function_at, is_profiler_frame, parse_frame, pick};
use super::waits::{Enclosing, HostSync, Waits};
use crate::registry::Rule;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Status {
    Confirmed,
    RuntimeOnly,
    OutsideLoop,
    Profiler,
    StaticOnly,
}

impl Status {
    pub fn as_str(self) -> &'static str {
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
pub struct SourceFile {
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
    /// The text of its line, shared with the other findings on it.
    pub line: Rc<str>,
    /// Index into the file's functions; `None` at module level.
    pub function: Option<usize>,
}

/// One line of the report: a finding, or the place of syncs no finding explains.
#[derive(Debug)]
pub struct Row {
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

pub struct Joined {
    pub rows: Vec<Row>,
    /// The operator chains of the syncs, each once.
    pub labels: Vec<String>,
    /// For each trace, for each of its syncs, where it went.
    pub syncs: Vec<Vec<SyncPlace>>,
    /// How many frame names were read and matched to files: one for each distinct name in each
    /// trace, however many syncs share it (counted for the scale tests).
    #[cfg(test)]
    pub resolutions: usize,
}

/// The row a sync went to, and its own operator chain (an index into [`Joined::labels`]).
pub(crate) struct SyncPlace {
    pub row: usize,
    pub label: u32,
}

#[derive(Clone, PartialEq, Eq, Hash)]
enum RowKey {
    Finding(FileId, usize),
    Place(Status, Option<String>, Option<usize>, u32),
}

/// The project files named by the traces' frames (to check before joining). Each distinct
/// frame is looked at once, however many syncs share it.
pub(crate) fn frame_files(traces: &[(Trace, Waits)], project: &mut ProjectFiles) -> Vec<PathBuf> {
    let mut files = FxHashSet::default();
    for (trace, waits) in traces {
        let tops = waits.syncs.iter().flat_map(|sync| {
            let forward = sync.forward.map(|forward| Some(forward.stack));
            std::iter::once(sync.stack).chain(forward)
        });
        for frame in waits.stacks.distinct_frames(trace, tops) {
            if let Some(frame) = parse_frame(&trace.names[frame as usize]) {
                files.extend(project.resolve(frame.path).iter().cloned());
            }
        }
    }
    let mut files: Vec<PathBuf> = files.into_iter().collect();
    files.sort();
    files
}

pub fn join(traces: &[(Trace, Waits)], project: &mut ProjectFiles, files: &FxHashMap<PathBuf, SourceFile>) -> Joined {
    let mut joiner = Joiner {
        project,
        files: Files {
            sources: files,
            paths: Vec::new(),
            ids: FxHashMap::default(),
        },
        rows: Vec::new(),
        keys: FxHashMap::default(),
        labels: Vec::new(),
        label_ids: FxHashMap::default(),
        row_labels: FxHashSet::default(),
        calls: FxHashMap::default(),
        op_findings: FxHashMap::default(),
        confirmed: FxHashSet::default(),
        functions: FxHashMap::default(),
        findings_in: FxHashMap::default(),
        #[cfg(test)]
        resolutions: 0,
    };
    let syncs = traces
        .iter()
        .enumerate()
        .map(|(index, (trace, waits))| {
            let mut frames: FrameTable = std::iter::repeat_with(|| None).take(trace.names.len()).collect();
            waits
                .syncs
                .iter()
                .map(|sync| joiner.place(index, trace, waits, &mut frames, sync))
                .collect()
        })
        .collect();
    joiner.add_static_only();
    Joined {
        rows: joiner.rows,
        labels: joiner.labels,
        syncs,
        #[cfg(test)]
        resolutions: joiner.resolutions,
    }
}

/// A project file, by its index in [`Files`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct FileId(u32);

/// The project files the frames named, each given an id once.
struct Files<'p> {
    sources: &'p FxHashMap<PathBuf, SourceFile>,
    paths: Vec<(PathBuf, Option<&'p SourceFile>)>,
    ids: FxHashMap<PathBuf, FileId>,
}

impl<'p> Files<'p> {
    fn id(&mut self, path: &Path) -> FileId {
        if let Some(&id) = self.ids.get(path) {
            return id;
        }
        let id = FileId(self.paths.len() as u32);
        self.paths.push((path.to_path_buf(), self.sources.get(path)));
        self.ids.insert(path.to_path_buf(), id);
        id
    }

    fn path(&self, id: FileId) -> &Path {
        &self.paths[id.0 as usize].0
    }

    /// The file's functions and findings, where it was checked.
    fn source(&self, id: FileId) -> Option<&'p SourceFile> {
        self.paths[id.0 as usize].1
    }
}

/// A frame's name read once for all the syncs whose stacks hold it: the frame, the project files
/// its path may be, and whether it is the profiler's.
struct Resolved<'t> {
    frame: Frame<'t>,
    candidates: Vec<FileId>,
    profiler: bool,
}

/// One trace's frames by name id, resolved on first use (`Some(None)`: not a Python source
/// frame).
type FrameTable<'t> = Vec<Option<Option<Resolved<'t>>>>;

/// A function of a file (`None`: its module level) and the callee its lines must call.
type FunctionCallee<'t> = (FileId, Option<usize>, Option<&'t str>);

/// One call of a function (trace, step, thread, start), in one file, with the findings a kind
/// of sync could go to.
type FunctionCall = (usize, Option<usize>, u32, Nanos, FileId, Vec<usize>);

struct Joiner<'p, 't> {
    project: &'p mut ProjectFiles,
    files: Files<'p>,
    rows: Vec<Row>,
    keys: FxHashMap<RowKey, usize>,
    /// Every operator chain shown, once, and which rows show which.
    labels: Vec<String>,
    label_ids: FxHashMap<String, u32>,
    row_labels: FxHashSet<(usize, u32)>,
    /// How many syncs of one rule family one call of a function has made so far in one step:
    /// the k-th goes to the k-th of its findings in that family, round again for a loop in
    /// the function (a frame that outlives the steps).
    calls: FxHashMap<FunctionCall, usize>,
    /// Which finding each confirmed operator call went to, so that the backward pass of that
    /// operator goes to the same one.
    op_findings: FxHashMap<(usize, u32, Nanos), (FileId, usize)>,
    confirmed: FxHashSet<(FileId, usize)>,
    /// The function of each (file, line) a frame named.
    functions: FxHashMap<(FileId, usize), Option<usize>>,
    /// The findings of one function of a file, on lines that call `callee` where one is given.
    findings_in: FxHashMap<FunctionCallee<'t>, Rc<[usize]>>,
    /// How many frame names were resolved: each distinct one once.
    #[cfg(test)]
    resolutions: usize,
}

/// A frame of a sync, with the project file it names.
struct PlacedFrame<'t> {
    frame: Frame<'t>,
    call: Enclosing,
    file: Option<FileId>,
    profiler: bool,
}

impl<'p, 't> Joiner<'p, 't> {
    /// Where `sync` goes (its row made if new).
    fn place(
        &mut self,
        trace_index: usize,
        trace: &'t Trace,
        waits: &Waits,
        table: &mut FrameTable<'t>,
        sync: &HostSync,
    ) -> SyncPlace {
        let name = |e: &Enclosing| trace.names[e.name as usize].as_str();
        let runtime = trace.names[sync.runtime as usize].as_str();
        let ops = waits.stacks.ops(trace, sync.stack);
        let own_ops: Vec<&str> = ops.iter().map(name).collect();
        let own_frames = waits.stacks.frames(trace, sync.stack);
        let own = self.place_frames(trace, table, &own_frames);
        // A backward pass in Python (an `autograd.Function`'s `backward`) has frames of its own;
        // an aten backward node has none and is joined where its forward operator ran.
        let linked = sync.forward.as_ref().filter(|_| own.iter().all(|p| p.file.is_none()));
        let (raw_frames, placed, family_ops): (Vec<Enclosing>, Vec<PlacedFrame>, Vec<&str>) = match linked {
            Some(forward) => {
                let frames = forward.frames(trace, &waits.stacks);
                let placed = self.place_frames(trace, table, &frames);
                let ops = forward.ops(trace, &waits.stacks).iter().map(name).collect();
                (frames, placed, ops)
            }
            None => (own_frames, own, own_ops.clone()),
        };
        let found = family(&family_ops, runtime, sync.copy);
        let label = match &sync.forward {
            Some(forward) => format!(
                "{} (backward of {})",
                chain_label(family(&own_ops, runtime, sync.copy).chain),
                name(&forward.op)
            ),
            None if found.chain.is_empty() => runtime.to_string(),
            // Operators no rule knows: which call waited says what the wait was.
            None if found.tiers.is_empty() => format!("{} > {runtime}", chain_label(found.chain)),
            None => chain_label(found.chain),
        };
        let status = if placed.iter().any(|p| p.profiler) {
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
        let hint = call_hint(trace, &raw_frames, &placed);
        let finding = (status == Status::RuntimeOnly)
            .then(|| self.finding_for(trace_index, sync, linked.is_some(), &placed, &tiers, hint))
            .flatten();
        let label = self.label_id(label);
        let key = match finding {
            Some((file, index)) => {
                self.confirmed.insert((file, index));
                for op in &ops {
                    self.op_findings
                        .insert((trace_index, op.thread, op.start), (file, index));
                }
                RowKey::Finding(file, index)
            }
            None => {
                let (path, row) = self.place_of(&placed);
                RowKey::Place(status, path, row, label)
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
        if self.row_labels.insert((row, label)) {
            entry.ops.push(self.labels[label as usize].clone());
        }
        SyncPlace { row, label }
    }

    fn label_id(&mut self, label: String) -> u32 {
        if let Some(&id) = self.label_ids.get(&label) {
            return id;
        }
        let id = self.labels.len() as u32;
        self.labels.push(label.clone());
        self.label_ids.insert(label, id);
        id
    }

    /// Reads a frame's name: the frame, and the project files its path may be.
    fn resolve(&mut self, trace: &'t Trace, name: u32) -> Option<Resolved<'t>> {
        #[cfg(test)]
        {
            self.resolutions += 1;
        }
        let frame = parse_frame(&trace.names[name as usize])?;
        let found = self.project.resolve(frame.path);
        let candidates = found.iter().map(|path| self.files.id(path)).collect();
        Some(Resolved {
            frame,
            candidates,
            profiler: is_profiler_frame(frame.path),
        })
    }

    /// A stack's frames innermost first, each with the project file it names (a name two
    /// files share goes to the one beside the stack's other files).
    fn place_frames(
        &mut self,
        trace: &'t Trace,
        table: &mut FrameTable<'t>,
        frames: &[Enclosing],
    ) -> Vec<PlacedFrame<'t>> {
        for call in frames {
            let entry = &mut table[call.name as usize];
            if entry.is_none() {
                *entry = Some(self.resolve(trace, call.name));
            }
        }
        let parsed: Vec<(&Resolved<'t>, Enclosing)> = frames
            .iter()
            .rev()
            .filter_map(|call| Some((table[call.name as usize].as_ref()?.as_ref()?, *call)))
            .collect();
        let tied = parsed.iter().any(|(resolved, _)| resolved.candidates.len() > 1);
        let beside = if tied {
            Folders::of(parsed.iter().filter_map(|(resolved, _)| match resolved.candidates[..] {
                [only] => Some(self.files.path(only)),
                _ => None,
            }))
        } else {
            Folders::default()
        };
        parsed
            .iter()
            .map(|(resolved, call)| {
                let file = match resolved.candidates[..] {
                    [] => None,
                    [only] => Some(only),
                    ref tied => pick(tied.iter().map(|&id| self.files.path(id)), &beside).map(|index| tied[index]),
                };
                PlacedFrame {
                    frame: resolved.frame,
                    call: *call,
                    file,
                    profiler: resolved.profiler,
                }
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
        placed: &[PlacedFrame<'t>],
        tiers: &[&[Rule]],
        hint: Option<&str>,
    ) -> Option<(FileId, usize)> {
        if linked
            && let Some(forward) = &sync.forward
            && let Some(&found) = self
                .op_findings
                .get(&(trace_index, forward.op.thread, forward.op.start))
        {
            return Some(found);
        }
        // An outer frame's finding explains the sync only where its line calls the frame
        // inside it (a project helper's sync is reported at its call).
        let mut callee: Option<&'t str> = None;
        // A frame like the one inside it (a recursion) has the same findings: none, as that
        // one had none.
        let mut searched = None;
        for (at, frame) in placed.iter().enumerate() {
            // A library frame's name is not what the user's line calls (`torch.unique` runs
            // `_return_output`).
            let Some(file) = frame.file else { continue };
            let Some(source) = self.files.source(file) else {
                continue;
            };
            let key = Some((file, frame.frame.line, callee));
            if searched == key {
                continue;
            }
            searched = key;
            let in_function = self.findings_at(file, source, frame.frame.line, callee);
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
                let chosen = candidates[self.next_call(trace_index, sync, frame, file, &candidates)];
                let rule = source.findings[chosen].rule;
                self.confirm_calls_reaching(&placed[at + 1..], frame.frame.function, rule);
                return Some((file, chosen));
            }
        }
        None
    }

    /// The function of `source` that holds `line`.
    fn function_at(&mut self, file: FileId, source: &SourceFile, line: usize) -> Option<usize> {
        *self
            .functions
            .entry((file, line))
            .or_insert_with(|| function_at(&source.functions, line))
    }

    /// The findings (by index) of the function holding `line`, on a line that calls `callee`
    /// where the frame is an outer one (its line called the frame inside it); each function
    /// and callee's looked up once.
    fn findings_at(&mut self, file: FileId, source: &SourceFile, line: usize, callee: Option<&'t str>) -> Rc<[usize]> {
        let function = self.function_at(file, source, line);
        if let Some(found) = self.findings_in.get(&(file, function, callee)) {
            return found.clone();
        }
        let found: Rc<[usize]> = match callee {
            None => source
                .findings
                .iter()
                .enumerate()
                .filter(|(_, finding)| finding.function == function)
                .map(|(index, _)| index)
                .collect(),
            Some(name) => {
                let all = self.findings_at(file, source, line, None);
                all.iter()
                    .copied()
                    .filter(|&index| calls(&source.findings[index].line, name))
                    .collect()
            }
        };
        self.findings_in.insert((file, function, callee), found.clone());
        found
    }

    /// The outer frames' findings of `rule` at the calls leading to the sync found inside
    /// `callee` (a hot call reported for the sync of the helper it reaches): the same sync
    /// confirms them, counted once, in the helper's row.
    fn confirm_calls_reaching(&mut self, outer: &[PlacedFrame<'t>], mut callee: &'t str, rule: Rule) {
        // The frames of a recursion confirm the same findings as the first of them.
        let mut confirmed = None;
        for frame in outer {
            let Some(file) = frame.file else { continue };
            let Some(source) = self.files.source(file) else {
                continue;
            };
            let key = Some((file, frame.frame.line, callee));
            let called = std::mem::replace(&mut callee, frame.frame.function);
            if confirmed == key {
                continue;
            }
            confirmed = key;
            for &index in self.findings_at(file, source, frame.frame.line, Some(called)).iter() {
                if source.findings[index].rule == rule {
                    self.confirmed.insert((file, index));
                }
            }
        }
    }

    /// Which of `candidates` this sync is: the k-th of its kind in one call of the function in
    /// one step goes to the k-th, round again for a loop in the function.
    fn next_call(
        &mut self,
        trace_index: usize,
        sync: &HostSync,
        frame: &PlacedFrame,
        file: FileId,
        candidates: &[usize],
    ) -> usize {
        let call = (
            trace_index,
            sync.step,
            frame.call.thread,
            frame.call.start,
            file,
            candidates.to_vec(),
        );
        let seen = self.calls.entry(call).or_default();
        *seen += 1;
        (*seen - 1) % candidates.len()
    }

    /// Where syncs no finding explains are shown: the innermost project frame's function (its
    /// first line: a frame already running when the profiler started carries the line it was
    /// on then, not the line that synced), else the innermost frame as the trace names it.
    fn place_of(&mut self, placed: &[PlacedFrame]) -> (Option<String>, Option<usize>) {
        let in_project = placed.iter().find_map(|p| {
            let file = p.file?;
            Some((file, self.files.source(file)?, p.frame.line))
        });
        let in_project = in_project.map(|(file, source, line)| {
            let function = self.function_at(file, source, line);
            let line = function.map_or(line, |f| source.functions[f].first);
            (source.display.clone(), line)
        });
        match in_project.or_else(|| placed.first().map(|p| (p.frame.path.to_string(), p.frame.line))) {
            Some((path, row)) => (Some(path), Some(row)),
            None => (None, None),
        }
    }

    fn new_row(&mut self, key: &RowKey, status: Status, placed: &[PlacedFrame]) -> usize {
        let row = match key {
            RowKey::Finding(file, index) => match self.files.source(*file) {
                Some(source) => Row::of_finding(source, *index, Status::Confirmed),
                None => Row::empty(Status::Confirmed),
            },
            RowKey::Place(_, path, row, _) => {
                let function = placed
                    .iter()
                    .find(|p| p.file.is_some_and(|f| self.files.source(f).is_some()))
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
        let mut paths: Vec<&PathBuf> = self.files.sources.keys().collect();
        paths.sort();
        for path in paths {
            let source = &self.files.sources[path];
            let file = self.files.ids.get(path.as_path()).copied();
            for index in 0..source.findings.len() {
                if !file.is_some_and(|file| self.confirmed.contains(&(file, index))) {
                    self.rows.push(Row::of_finding(source, index, Status::StaticOnly));
                }
            }
        }
    }
}

/// The most operators a chain shows, and the most characters of each name: a deeper chain
/// keeps its outermost and innermost operators around a count of those left out.
const MAX_CHAIN_OPS: usize = 8;
const MAX_OP_CHARS: usize = 200;

/// An operator chain as the report shows it: `aten::index > aten::nonzero`.
fn chain_label(chain: &[&str]) -> String {
    let cut = |name: &str| match name.char_indices().nth(MAX_OP_CHARS) {
        Some((at, _)) => format!("{}…", &name[..at]),
        None => name.to_string(),
    };
    if chain.len() <= MAX_CHAIN_OPS {
        return chain.iter().map(|name| cut(name)).collect::<Vec<_>>().join(" > ");
    }
    let half = MAX_CHAIN_OPS / 2;
    let outer = chain[..half].iter().map(|name| cut(name));
    let inner = chain[chain.len() - half..].iter().map(|name| cut(name));
    let left_out = format!("({} more)", chain.len() - 2 * half);
    outer.chain([left_out]).chain(inner).collect::<Vec<_>>().join(" > ")
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
    use crate::trace::sources::function_lines;
    use crate::trace::waits::tests::deep_trace;

    const DEEP: &str = "import torch\n\n\ndef recurse(model, x, n):\n    if n:\n        return recurse(model, x, n - 1)\n    total = 0.0\n    for _ in range(1000):\n        loss = model(x).sum()\n        loss.backward()\n        total += loss.item()\n    return total\n\n\nrecurse(model, x, 4000)\n";

    /// Joins a trace of `frames` around `syncs` `.item()` calls with deep.py (above), whose
    /// `.item()` on line 11 synclint reports.
    fn join_deep(frames: &[String], syncs: usize) -> Joined {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("deep.py");
        std::fs::write(&path, DEEP).unwrap();
        let functions = function_lines(DEEP);
        let finding = StaticFinding {
            row: 11,
            column: 18,
            rule: Rule::Item,
            message: "`loss.item()` waits".to_string(),
            line: DEEP.lines().nth(10).unwrap().into(),
            function: function_at(&functions, 11),
        };
        let source = SourceFile {
            display: "deep.py".to_string(),
            functions,
            findings: vec![finding],
        };
        let files = FxHashMap::from_iter([(path, source)]);
        let mut project = ProjectFiles::new(root.path());
        join(&[deep_trace(frames, syncs)], &mut project, &files)
    }

    #[test]
    fn a_deep_recursion_reads_each_distinct_frame_once() {
        let mut frames = vec!["deep.py(15): <module>".to_string()];
        frames.extend(std::iter::repeat_n("deep.py(4): recurse".to_string(), 4001));
        let joined = join_deep(&frames, 1000);
        // `<module>`, `recurse` and the builtin `item`, for 1,000 stacks of 4,003 frames.
        assert_eq!(joined.resolutions, 3);
        assert_eq!(joined.rows.len(), 1);
        let row = &joined.rows[0];
        assert_eq!((row.status, row.row, row.syncs), (Status::Confirmed, Some(11), 1000));
        assert_eq!(joined.labels, ["aten::item > aten::_local_scalar_dense"]);
    }

    #[test]
    fn a_deep_stack_of_distinct_frames_reads_each_once() {
        let mut frames = vec!["deep.py(15): <module>".to_string(), "deep.py(4): recurse".to_string()];
        frames.extend((0..4000).map(|k| format!("lib/level{k}.py({k}): level{k}")));
        let joined = join_deep(&frames, 200);
        assert_eq!(joined.resolutions, 4003);
        // The innermost frames are a library's: the user's line is the call into it.
        assert_eq!(joined.rows[0].status, Status::Confirmed);
        assert_eq!(joined.rows[0].syncs, 200);
    }

    #[test]
    fn a_long_chain_of_operators_is_shortened() {
        let names: Vec<String> = (0..20).map(|k| format!("op{k}")).collect();
        let chain: Vec<&str> = names.iter().map(String::as_str).collect();
        assert_eq!(
            chain_label(&chain),
            "op0 > op1 > op2 > op3 > (12 more) > op16 > op17 > op18 > op19"
        );
        assert_eq!(chain_label(&chain[..3]), "op0 > op1 > op2");
        let long = "x".repeat(1000);
        assert_eq!(chain_label(&[&long]).chars().count(), MAX_OP_CHARS + 1);
    }

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
