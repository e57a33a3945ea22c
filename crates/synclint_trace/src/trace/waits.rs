//! Finds every time the host waited for the GPU in a trace: the blocking CUDA runtime calls,
//! grouped by the operator call that made them (one `.item()` is a copy and a stream
//! synchronize: one sync), each with the operators and Python frames around it, its profiler
//! step, the GPU idle time around its return and, for a sync in the backward pass, the
//! forward operator whose autograd node ran it. What encloses a sync is kept as one node of
//! a tree shared by all the trace's syncs ([`Stacks`]): memory grows with the spans, not with
//! syncs times depth.

use rustc_hash::{FxHashMap, FxHashSet};

use super::read::{GpuKind, Nanos, Span, SpanKind, Trace};

/// Which way a copy in the sync moved data.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub(crate) enum CopyDirection {
    HostToDevice,
    DeviceToHost,
    DeviceToDevice,
}

/// An enclosing span, by name and start (a start tells one call of a frame from the next).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Enclosing {
    pub name: u32,
    pub start: Nanos,
    pub thread: u32,
}

/// A node of [`Stacks`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct NodeId(u32);

/// The enclosing spans of a trace's syncs as a tree: each node is a span with the node of the
/// span around it, so a stack is the node of its innermost span.
#[derive(Default)]
pub(crate) struct Stacks {
    /// (index into the trace's spans, the node of the span enclosing it).
    nodes: Vec<(u32, Option<NodeId>)>,
}

impl Stacks {
    fn push(&mut self, span: usize, parent: Option<NodeId>) -> NodeId {
        self.nodes.push((span as u32, parent));
        NodeId(self.nodes.len() as u32 - 1)
    }

    /// The spans of the stack `top` that `keep` keeps, outermost first.
    pub fn spans(&self, trace: &Trace, top: Option<NodeId>, keep: impl Fn(&Span) -> bool) -> Vec<Enclosing> {
        let mut spans: Vec<Enclosing> = std::iter::successors(top, |node| self.nodes[node.0 as usize].1)
            .map(|node| &trace.spans[self.nodes[node.0 as usize].0 as usize])
            .filter(|span| keep(span))
            .map(as_enclosing)
            .collect();
        spans.reverse();
        spans
    }

    /// Operators and annotations (profiler steps aside), outermost first.
    pub fn ops(&self, trace: &Trace, top: Option<NodeId>) -> Vec<Enclosing> {
        self.spans(trace, top, |s| {
            matches!(s.kind, SpanKind::Op | SpanKind::Annotation)
                && !trace.names[s.name as usize].starts_with(STEP_PREFIX)
        })
    }

    /// Python frames, outermost first (none without `with_stack=True`).
    pub fn frames(&self, trace: &Trace, top: Option<NodeId>) -> Vec<Enclosing> {
        self.spans(trace, top, |s| s.kind == SpanKind::Python)
    }

    /// The names of the Python frames of the stacks `tops`, each once, in the order that walking
    /// each stack in turn, outermost first, meets them. Each node is visited once, however many
    /// stacks share it: what is new in a stack is the part inside what earlier stacks held.
    pub(crate) fn distinct_frames(&self, trace: &Trace, tops: impl IntoIterator<Item = Option<NodeId>>) -> Vec<u32> {
        let mut visited = vec![false; self.nodes.len()];
        let mut seen = FxHashSet::default();
        let (mut names, mut fresh) = (Vec::new(), Vec::new());
        for top in tops {
            fresh.clear();
            let mut node = top;
            while let Some(id) = node
                && !visited[id.0 as usize]
            {
                visited[id.0 as usize] = true;
                fresh.push(id.0 as usize);
                node = self.nodes[id.0 as usize].1;
            }
            for &id in fresh.iter().rev() {
                let span = &trace.spans[self.nodes[id].0 as usize];
                if span.kind == SpanKind::Python && seen.insert(span.name) {
                    names.push(span.name);
                }
            }
        }
        names
    }
}

/// One host wait: a call that blocked until the GPU caught up.
pub(crate) struct HostSync {
    /// The host thread that waited.
    pub thread: u32,
    pub start: Nanos,
    pub end: Nanos,
    /// Time spent inside the blocking runtime calls.
    pub stall: Nanos,
    /// The first blocking runtime call (`cudaStreamSynchronize`, `cudaMemcpyAsync`, ...).
    pub runtime: u32,
    pub copy: Option<CopyDirection>,
    /// What enclosed the blocking call: its operators, annotations and Python frames.
    pub stack: Option<NodeId>,
    /// Index into [`Waits::steps`].
    pub step: Option<usize>,
    /// The GPU's idle stretch around the moment the host got control back.
    pub gpu_idle: Nanos,
    /// For a sync in the backward pass: the forward operator that built the autograd node.
    pub forward: Option<ForwardOp>,
}

/// A forward operator, with what enclosed it when it ran.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ForwardOp {
    pub op: Enclosing,
    /// The operator's own node: its stack and itself.
    pub stack: NodeId,
}

impl ForwardOp {
    /// The operators from the outermost to this one (annotations aside).
    pub fn ops(&self, trace: &Trace, stacks: &Stacks) -> Vec<Enclosing> {
        stacks.spans(trace, Some(self.stack), |s| s.kind == SpanKind::Op)
    }

    pub fn frames(&self, trace: &Trace, stacks: &Stacks) -> Vec<Enclosing> {
        stacks.frames(trace, Some(self.stack))
    }
}

/// A `ProfilerStep#N` annotation.
pub(crate) struct Step {
    pub number: u64,
    pub start: Nanos,
    pub end: Nanos,
}

/// What one trace holds: its syncs in time order and its profiler steps.
pub struct Waits {
    pub syncs: Vec<HostSync>,
    pub steps: Vec<Step>,
    /// What encloses each sync and forward operator.
    pub stacks: Stacks,
    /// Whether the trace has Python frames (profiled `with_stack=True`).
    pub with_stack: bool,
}

const STEP_PREFIX: &str = "ProfilerStep#";

/// How far a span may seem to end after the span enclosing it: timestamps are microseconds
/// with three decimals, which an `f64` holds exactly only up to about 10^12 µs (on hosts up for
/// over 100 days, or on epoch clocks, a child ending with its parent rounds a nanosecond later).
const NESTING_SLACK: Nanos = 8;

/// The host waits of `trace`.
pub(crate) fn find_waits(trace: &Trace) -> Waits {
    let copies = copy_directions(trace);
    let flows = flow_ends(trace);
    let mut by_thread: FxHashMap<u32, Vec<usize>> = FxHashMap::default();
    for (index, span) in trace.spans.iter().enumerate() {
        by_thread.entry(span.thread).or_default().push(index);
    }
    let mut threads: Vec<_> = by_thread.into_iter().collect();
    threads.sort_by_key(|(thread, _)| *thread);
    let mut walk = Walk {
        trace,
        copies: &copies,
        flows: &flows,
        syncs: Vec::new(),
        stacks: Stacks::default(),
        forward_ops: FxHashMap::default(),
        backward_links: Vec::new(),
    };
    for (_, mut spans) in threads {
        // Parents first: earlier start, then longer, then the kind that encloses the other.
        spans.sort_by_key(|&i| {
            let span = &trace.spans[i];
            (span.start, std::cmp::Reverse(span.end), span.kind)
        });
        walk.thread(&spans);
    }
    let Walk {
        mut syncs,
        stacks,
        forward_ops,
        backward_links,
        ..
    } = walk;
    for (sync, flow) in backward_links {
        syncs[sync].forward = forward_ops.get(&flow).copied();
    }
    syncs.sort_by_key(|sync| sync.start);
    let steps = steps(trace);
    let step_at = StepIndex::new(&steps);
    let busy = busy_intervals(trace);
    for sync in &mut syncs {
        sync.step = step_at.first_holding(&steps, sync.start);
        sync.gpu_idle = idle_around(&busy, sync.end);
    }
    let with_stack = trace.spans.iter().any(|span| span.kind == SpanKind::Python);
    Waits {
        syncs,
        steps,
        stacks,
        with_stack,
    }
}

/// Finds the step a moment is in, in logarithmic time: steps are sorted by start, and where
/// they overlap (no profiler writes that) the first that holds the moment wins.
struct StepIndex {
    /// The latest end of the steps up to each one.
    ends_so_far: Vec<Nanos>,
}

impl StepIndex {
    fn new(steps: &[Step]) -> Self {
        let ends_so_far = steps
            .iter()
            .scan(Nanos::MIN, |latest, step| {
                *latest = (*latest).max(step.end);
                Some(*latest)
            })
            .collect();
        StepIndex { ends_so_far }
    }

    fn first_holding(&self, steps: &[Step], at: Nanos) -> Option<usize> {
        // Every step before `first` ends by `at`, and `first` itself ends after it.
        let first = self.ends_so_far.partition_point(|&end| end <= at);
        let begun = steps.partition_point(|step| step.start <= at);
        (first < begun).then_some(first)
    }
}

struct Walk<'t> {
    trace: &'t Trace,
    copies: &'t FxHashMap<u64, (CopyDirection, bool)>,
    flows: &'t FxHashMap<(u32, Nanos, bool), u64>,
    syncs: Vec<HostSync>,
    stacks: Stacks,
    /// Flow id -> the forward operator where it starts.
    forward_ops: FxHashMap<u64, ForwardOp>,
    /// (sync index, flow id) for syncs inside a backward node.
    backward_links: Vec<(usize, u64)>,
}

impl Walk<'_> {
    /// Walks one thread's spans (sorted parents first) with a stack of what encloses each.
    fn thread(&mut self, spans: &[usize]) {
        let mut stack: Vec<Open> = Vec::new();
        // The operator call the last sync belongs to, to merge its further waits into it.
        let mut open: Option<(Nanos, usize)> = None;
        // The last non-blocking copy's operator call and direction.
        let mut copied: Option<(Nanos, CopyDirection)> = None;
        for &index in spans {
            let span = &self.trace.spans[index];
            while stack
                .last()
                .is_some_and(|top| top.span.end.saturating_add(NESTING_SLACK) < span.end)
            {
                stack.pop();
            }
            let around = stack.last().map(|top| top.node);
            let node = self.stacks.push(index, around);
            let innermost_op = stack.last().and_then(|top| top.innermost_op);
            match span.kind {
                SpanKind::Op => {
                    if let Some(&flow) = self.flows.get(&(span.thread, span.start, true)) {
                        let forward = ForwardOp {
                            op: as_enclosing(span),
                            stack: node,
                        };
                        self.forward_ops.insert(flow, forward);
                    }
                }
                SpanKind::Runtime => {
                    if let Some(copy) = self.blocking(span) {
                        match (innermost_op, open) {
                            (Some(op), Some((open_op, sync))) if op == open_op => {
                                let merged = &mut self.syncs[sync];
                                merged.end = span.end;
                                merged.stall = merged.stall.saturating_add(span.end - span.start);
                                merged.copy = merged.copy.or(copy);
                            }
                            _ => {
                                let earlier = copied.filter(|(op, _)| innermost_op == Some(*op)).map(|(_, d)| d);
                                let sync = self.new_sync(span, copy.or(earlier), around);
                                open = innermost_op.map(|op| (op, sync));
                            }
                        }
                    } else if let Some(&(direction, _)) = span.correlation.and_then(|c| self.copies.get(&c))
                        && let Some(op) = innermost_op
                    {
                        // A non-blocking copy in the operator call (the copy before `.item()`'s
                        // synchronize) says which way its data went.
                        copied = Some((op, direction));
                        if let Some((open_op, sync)) = open
                            && open_op == op
                        {
                            let merged = &mut self.syncs[sync];
                            merged.copy = merged.copy.or(Some(direction));
                        }
                    }
                }
                SpanKind::Annotation | SpanKind::Python => {}
            }
            stack.push(Open {
                span,
                node,
                innermost_op: if span.kind == SpanKind::Op {
                    Some(span.start)
                } else {
                    innermost_op
                },
            });
        }
    }

    fn new_sync(&mut self, span: &Span, copy: Option<CopyDirection>, around: Option<NodeId>) -> usize {
        // The outermost operator that a backward node's flow ends on.
        let backward_flow = self
            .stacks
            .spans(self.trace, around, |s| s.kind == SpanKind::Op)
            .iter()
            .find_map(|s| self.flows.get(&(s.thread, s.start, false)).copied());
        let index = self.syncs.len();
        if let Some(flow) = backward_flow {
            self.backward_links.push((index, flow));
        }
        self.syncs.push(HostSync {
            thread: span.thread,
            start: span.start,
            end: span.end,
            stall: span.end - span.start,
            runtime: span.name,
            copy,
            stack: around,
            step: None,
            gpu_idle: 0,
            forward: None,
        });
        index
    }

    /// `Some(direction if a copy)` when the runtime call blocks the host until the GPU is done.
    #[allow(clippy::option_option)]
    fn blocking(&self, span: &Span) -> Option<Option<CopyDirection>> {
        let name = self.trace.names[span.name as usize].as_str();
        match name {
            // Freeing device memory waits for the whole device (the caching allocator frees on
            // `empty_cache()`, and when an allocation fails and it retries).
            "cudaStreamSynchronize"
            | "cudaDeviceSynchronize"
            | "cudaEventSynchronize"
            | "cuStreamSynchronize"
            | "cuCtxSynchronize"
            | "cuEventSynchronize"
            | "cudaFree"
            | "cudaFreeHost"
            | "cuMemFree_v2" => Some(None),
            _ if name.starts_with("cudaMemcpy") || name.starts_with("cuMemcpy") => {
                let copy = span.correlation.and_then(|c| self.copies.get(&c));
                let asynchronous = name.contains("Async");
                match copy {
                    // A copy to or from pageable memory is staged through a driver buffer: the
                    // call returns only when it is done, behind everything queued before it.
                    Some(&(direction, pageable)) if pageable || !asynchronous => Some(Some(direction)),
                    None if !asynchronous => Some(None),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// A span on the walk's stack.
struct Open<'t> {
    span: &'t Span,
    node: NodeId,
    /// The start of the innermost operator at or around it.
    innermost_op: Option<Nanos>,
}

fn as_enclosing(span: &Span) -> Enclosing {
    Enclosing {
        name: span.name,
        start: span.start,
        thread: span.thread,
    }
}

/// Correlation id -> (direction, whether host memory is pageable) of each GPU copy.
fn copy_directions(trace: &Trace) -> FxHashMap<u64, (CopyDirection, bool)> {
    trace
        .gpu
        .iter()
        .filter(|gpu| gpu.kind == GpuKind::Memcpy)
        .filter_map(|gpu| {
            let name = trace.names[gpu.name as usize].as_str();
            let direction = if name.contains("HtoD") {
                CopyDirection::HostToDevice
            } else if name.contains("DtoH") {
                CopyDirection::DeviceToHost
            } else {
                CopyDirection::DeviceToDevice
            };
            Some((gpu.correlation?, (direction, name.contains("Pageable"))))
        })
        .collect()
}

/// (thread, timestamp, is the forward end) -> flow id.
fn flow_ends(trace: &Trace) -> FxHashMap<(u32, Nanos, bool), u64> {
    trace
        .flows
        .iter()
        .map(|flow| ((flow.thread, flow.ts, flow.start), flow.id))
        .collect()
}

fn steps(trace: &Trace) -> Vec<Step> {
    let mut steps: Vec<Step> = trace
        .spans
        .iter()
        .filter(|span| span.kind == SpanKind::Annotation)
        .filter_map(|span| {
            let number = trace.names[span.name as usize]
                .strip_prefix(STEP_PREFIX)?
                .parse()
                .ok()?;
            Some(Step {
                number,
                start: span.start,
                end: span.end,
            })
        })
        .collect();
    steps.sort_by_key(|step| step.start);
    steps
}

/// The GPU's busy time as sorted, disjoint intervals.
fn busy_intervals(trace: &Trace) -> Vec<(Nanos, Nanos)> {
    let mut spans: Vec<(Nanos, Nanos)> = trace.gpu.iter().map(|gpu| (gpu.start, gpu.end)).collect();
    spans.sort_unstable();
    let mut merged: Vec<(Nanos, Nanos)> = Vec::with_capacity(spans.len());
    for (start, end) in spans {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// How long the GPU sat idle across `at`: from the end of its last work before to the start
/// of its next (zero when it was busy at `at`, or nothing follows).
fn idle_around(busy: &[(Nanos, Nanos)], at: Nanos) -> Nanos {
    let next = busy.partition_point(|&(start, _)| start <= at);
    if next > 0 && busy[next - 1].1 > at {
        return 0;
    }
    match (next.checked_sub(1).map(|i| busy[i].1), busy.get(next)) {
        (Some(idle_from), Some(&(idle_to, _))) => idle_to.saturating_sub(idle_from),
        _ => 0,
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::trace::read::parse_trace;
    use std::path::Path;

    fn waits(events: &str) -> (Trace, Waits) {
        let trace = parse_trace(Path::new("t.json"), format!("[{events}]").as_bytes()).unwrap();
        let waits = find_waits(&trace);
        (trace, waits)
    }

    /// A stack of `frames` (outermost first, each inside the one before) around `syncs`
    /// `.item()` calls, each under the builtin frame Python records for it.
    pub(crate) fn deep_trace(frames: &[String], syncs: usize) -> (Trace, Waits) {
        let span = |cat: &str, name: &str, ts: f64, dur: f64| {
            format!(r#"{{"ph":"X","cat":"{cat}","name":"{name}","pid":1,"tid":1,"ts":{ts:.3},"dur":{dur:.3}}}"#)
        };
        let inner = syncs as f64 * 10.0;
        let depth = frames.len() as f64;
        let mut events: Vec<String> = frames
            .iter()
            .enumerate()
            .map(|(at, name)| {
                span(
                    "python_function",
                    name,
                    at as f64 * 0.01,
                    inner + 2.0 * (depth - at as f64) * 0.01,
                )
            })
            .collect();
        for sync in 0..syncs {
            let ts = depth * 0.01 + sync as f64 * 10.0;
            events.push(span(
                "python_function",
                "<built-in method item of Tensor object at 0x7f>",
                ts,
                9.5,
            ));
            events.push(span("cpu_op", "aten::item", ts + 0.1, 9.0));
            events.push(span("cpu_op", "aten::_local_scalar_dense", ts + 0.2, 8.5));
            events.push(span("cuda_runtime", "cudaStreamSynchronize", ts + 2.0, 6.0));
        }
        waits(&events.join(","))
    }

    #[test]
    fn the_syncs_of_a_deep_stack_share_it() {
        let mut frames = vec!["deep.py(15): <module>".to_string()];
        frames.extend(std::iter::repeat_n("deep.py(4): recurse".to_string(), 2001));
        let (trace, waits) = deep_trace(&frames, 500);
        assert_eq!(waits.syncs.len(), 500);
        // One node for each span, however many syncs lie under the 2,002 frames.
        assert_eq!(waits.stacks.nodes.len(), trace.spans.len());
        let last = waits.syncs.last().unwrap();
        assert_eq!(waits.stacks.frames(&trace, last.stack).len(), 2003);
        let distinct = waits
            .stacks
            .distinct_frames(&trace, waits.syncs.iter().map(|sync| sync.stack));
        let distinct: Vec<&str> = distinct
            .iter()
            .map(|&name| trace.names[name as usize].as_str())
            .collect();
        assert_eq!(
            distinct,
            [
                "deep.py(15): <module>",
                "deep.py(4): recurse",
                "<built-in method item of Tensor object at 0x7f>"
            ]
        );
    }

    #[test]
    fn a_sync_is_in_the_first_step_that_holds_it() {
        let steps = [(0, 10), (5, 30), (12, 20), (40, 50)].map(|(start, end)| Step { number: 0, start, end });
        let index = StepIndex::new(&steps);
        let found: Vec<Option<usize>> = [0, 7, 10, 15, 25, 30, 35, 45, 60]
            .iter()
            .map(|&at| index.first_holding(&steps, at))
            .collect();
        let scanned: Vec<Option<usize>> = [0, 7, 10, 15, 25, 30, 35, 45, 60]
            .iter()
            .map(|&at| steps.iter().position(|s| s.start <= at && at < s.end))
            .collect();
        assert_eq!(found, scanned);
        assert_eq!(
            found,
            [Some(0), Some(0), Some(1), Some(1), Some(1), None, None, Some(3), None]
        );
    }

    fn names(trace: &Trace, spans: &[Enclosing]) -> Vec<String> {
        spans.iter().map(|s| trace.names[s.name as usize].clone()).collect()
    }

    #[test]
    fn one_item_is_one_sync_with_its_ops_frames_and_step() {
        let (trace, waits) = waits(
            r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#4","pid":1,"tid":1,"ts":0,"dur":100},
               {"ph":"X","cat":"python_function","name":"train.py(3): train","pid":1,"tid":1,"ts":1,"dur":90},
               {"ph":"X","cat":"cpu_op","name":"aten::item","pid":1,"tid":1,"ts":10,"dur":20},
               {"ph":"X","cat":"cpu_op","name":"aten::_local_scalar_dense","pid":1,"tid":1,"ts":11,"dur":18},
               {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":12,"dur":2,"args":{"correlation":5}},
               {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":15,"dur":10,"args":{"correlation":6}},
               {"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pinned)","pid":0,"tid":7,"ts":20,"dur":1,"args":{"correlation":5}},
               {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":2,"dur":15},
               {"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":40,"dur":5}"#,
        );
        assert_eq!(waits.syncs.len(), 1);
        let sync = &waits.syncs[0];
        assert_eq!(sync.stall, 10_000);
        assert_eq!(
            names(&trace, &waits.stacks.ops(&trace, sync.stack)),
            ["aten::item", "aten::_local_scalar_dense"]
        );
        assert_eq!(
            names(&trace, &waits.stacks.frames(&trace, sync.stack)),
            ["train.py(3): train"]
        );
        assert_eq!(sync.step, Some(0));
        assert_eq!(waits.steps[0].number, 4);
        // The GPU went idle at 21 µs and got work again at 40 µs.
        assert_eq!(sync.gpu_idle, 19_000);
        assert_eq!(sync.copy, Some(CopyDirection::DeviceToHost));
    }

    #[test]
    fn a_pageable_copy_blocks_and_its_stream_sync_joins_it() {
        let (_, waits) = waits(
            r#"{"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":0,"dur":50},
               {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":1,"dur":30,"args":{"correlation":1}},
               {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":32,"dur":5},
               {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pageable -> Device)","pid":0,"tid":7,"ts":25,"dur":5,"args":{"correlation":1}},
               {"ph":"X","cat":"cpu_op","name":"aten::copy_","pid":1,"tid":1,"ts":60,"dur":50},
               {"ph":"X","cat":"cuda_runtime","name":"cudaMemcpyAsync","pid":1,"tid":1,"ts":61,"dur":3,"args":{"correlation":2}},
               {"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD (Pinned -> Device)","pid":0,"tid":7,"ts":70,"dur":5,"args":{"correlation":2}}"#,
        );
        assert_eq!(waits.syncs.len(), 1, "the pinned non-blocking copy does not wait");
        assert_eq!(waits.syncs[0].stall, 35_000);
        assert_eq!(waits.syncs[0].copy, Some(CopyDirection::HostToDevice));
    }

    #[test]
    fn a_backward_sync_knows_its_forward_op() {
        let (trace, waits) = waits(
            r#"{"ph":"X","cat":"python_function","name":"loss.py(9): masked","pid":1,"tid":1,"ts":0,"dur":50},
               {"ph":"X","cat":"cpu_op","name":"aten::index","pid":1,"tid":1,"ts":10,"dur":5},
               {"ph":"s","cat":"fwdbwd","name":"fwdbwd","id":3,"pid":1,"tid":1,"ts":10},
               {"ph":"X","cat":"cpu_op","name":"IndexBackward0","pid":1,"tid":2,"ts":100,"dur":40},
               {"ph":"f","cat":"fwdbwd","name":"fwdbwd","id":3,"pid":1,"tid":2,"ts":100,"bp":"e"},
               {"ph":"X","cat":"cpu_op","name":"aten::nonzero","pid":1,"tid":2,"ts":110,"dur":20},
               {"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":2,"ts":112,"dur":8}"#,
        );
        let forward = waits.syncs[0].forward.as_ref().expect("linked to its forward op");
        assert_eq!(trace.names[forward.op.name as usize], "aten::index");
        assert_eq!(
            names(&trace, &forward.frames(&trace, &waits.stacks)),
            ["loss.py(9): masked"]
        );
        assert_eq!(names(&trace, &forward.ops(&trace, &waits.stacks)), ["aten::index"]);
        assert!(waits.stacks.frames(&trace, waits.syncs[0].stack).is_empty());
    }

    #[test]
    fn freeing_device_memory_is_a_wait() {
        let (_, waits) =
            waits(r#"{"ph":"X","cat":"cuda_runtime","name":"cudaFree","pid":1,"tid":1,"ts":10,"dur":300}"#);
        assert_eq!(waits.syncs.len(), 1);
        assert_eq!(waits.syncs[0].stall, 300_000);
    }

    #[test]
    fn idle_is_zero_while_the_gpu_is_busy() {
        assert_eq!(idle_around(&[(0, 10), (20, 30)], 5), 0);
        assert_eq!(idle_around(&[(0, 10), (20, 30)], 15), 10);
        assert_eq!(idle_around(&[(0, 10)], 15), 0);
        assert_eq!(idle_around(&[], 15), 0);
    }
}
