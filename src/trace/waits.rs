//! Finds every time the host waited for the GPU in a trace: the blocking CUDA runtime calls,
//! grouped by the operator call that made them (one `.item()` is a copy and a stream
//! synchronize: one sync), each with the operators and Python frames around it, its profiler
//! step, the GPU idle time around its return and, for a sync in the backward pass, the
//! forward operator whose autograd node ran it.

use rustc_hash::FxHashMap;

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
    /// Operators and annotations, outermost first.
    pub ops: Vec<Enclosing>,
    /// Python frames, outermost first (empty without `with_stack=True`).
    pub frames: Vec<Enclosing>,
    /// Index into [`Waits::steps`].
    pub step: Option<usize>,
    /// The GPU's idle stretch around the moment the host got control back.
    pub gpu_idle: Nanos,
    /// For a sync in the backward pass: the forward operator that built the autograd node.
    pub forward: Option<ForwardOp>,
}

/// A forward operator, with what enclosed it when it ran.
#[derive(Clone, Debug)]
pub(crate) struct ForwardOp {
    pub op: Enclosing,
    pub ops: Vec<Enclosing>,
    pub frames: Vec<Enclosing>,
}

/// A `ProfilerStep#N` annotation.
pub(crate) struct Step {
    pub number: u64,
    pub start: Nanos,
    pub end: Nanos,
}

/// What one trace holds: its syncs in time order and its profiler steps.
pub(crate) struct Waits {
    pub syncs: Vec<HostSync>,
    pub steps: Vec<Step>,
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
        forward_ops,
        backward_links,
        ..
    } = walk;
    for (sync, flow) in backward_links {
        syncs[sync].forward = forward_ops.get(&flow).cloned();
    }
    syncs.sort_by_key(|sync| sync.start);
    let steps = steps(trace);
    let busy = busy_intervals(trace);
    for sync in &mut syncs {
        sync.step = steps
            .iter()
            .position(|step| step.start <= sync.start && sync.start < step.end);
        sync.gpu_idle = idle_around(&busy, sync.end);
    }
    let with_stack = trace.spans.iter().any(|span| span.kind == SpanKind::Python);
    Waits {
        syncs,
        steps,
        with_stack,
    }
}

struct Walk<'t> {
    trace: &'t Trace,
    copies: &'t FxHashMap<u64, (CopyDirection, bool)>,
    flows: &'t FxHashMap<(u32, Nanos, bool), u64>,
    syncs: Vec<HostSync>,
    /// Flow id -> the forward operator where it starts.
    forward_ops: FxHashMap<u64, ForwardOp>,
    /// (sync index, flow id) for syncs inside a backward node.
    backward_links: Vec<(usize, u64)>,
}

impl Walk<'_> {
    /// Walks one thread's spans (sorted parents first) with a stack of what encloses each.
    fn thread(&mut self, spans: &[usize]) {
        let mut stack: Vec<&Span> = Vec::new();
        // The operator call the last sync belongs to, to merge its further waits into it.
        let mut open: Option<(Nanos, usize)> = None;
        // The last non-blocking copy's operator call and direction.
        let mut copied: Option<(Nanos, CopyDirection)> = None;
        for &index in spans {
            let span = &self.trace.spans[index];
            while stack
                .last()
                .is_some_and(|top| top.end.saturating_add(NESTING_SLACK) < span.end)
            {
                stack.pop();
            }
            match span.kind {
                SpanKind::Op => {
                    if let Some(&flow) = self.flows.get(&(span.thread, span.start, true)) {
                        let mut ops = enclosing(&stack, SpanKind::Op);
                        ops.push(as_enclosing(span));
                        let forward = ForwardOp {
                            op: as_enclosing(span),
                            ops,
                            frames: enclosing(&stack, SpanKind::Python),
                        };
                        self.forward_ops.insert(flow, forward);
                    }
                }
                SpanKind::Runtime => {
                    let innermost_op = stack.iter().rev().find(|s| s.kind == SpanKind::Op).map(|s| s.start);
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
                                let sync = self.new_sync(span, copy.or(earlier), &stack);
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
            stack.push(span);
        }
    }

    fn new_sync(&mut self, span: &Span, copy: Option<CopyDirection>, stack: &[&Span]) -> usize {
        let ops: Vec<Enclosing> = stack
            .iter()
            .filter(|s| matches!(s.kind, SpanKind::Op | SpanKind::Annotation))
            .filter(|s| !self.trace.names[s.name as usize].starts_with(STEP_PREFIX))
            .map(|s| as_enclosing(s))
            .collect();
        let backward_flow = stack
            .iter()
            .filter(|s| s.kind == SpanKind::Op)
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
            ops,
            frames: enclosing(stack, SpanKind::Python),
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

fn as_enclosing(span: &Span) -> Enclosing {
    Enclosing {
        name: span.name,
        start: span.start,
        thread: span.thread,
    }
}

fn enclosing(stack: &[&Span], kind: SpanKind) -> Vec<Enclosing> {
    stack
        .iter()
        .filter(|s| s.kind == kind)
        .map(|s| as_enclosing(s))
        .collect()
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
mod tests {
    use super::*;
    use crate::trace::read::parse_trace;
    use std::path::Path;

    fn waits(events: &str) -> (Trace, Waits) {
        let trace = parse_trace(Path::new("t.json"), format!("[{events}]").as_bytes()).unwrap();
        let waits = find_waits(&trace);
        (trace, waits)
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
        assert_eq!(names(&trace, &sync.ops), ["aten::item", "aten::_local_scalar_dense"]);
        assert_eq!(names(&trace, &sync.frames), ["train.py(3): train"]);
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
        assert_eq!(names(&trace, &forward.frames), ["loss.py(9): masked"]);
        assert!(waits.syncs[0].frames.is_empty());
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
