//! Lays out the profiler step with the most host stall as a timeline for `--svg`: each host
//! thread's top-level operators and its stalls (labelled with the line the join gave them),
//! and each GPU stream's kernels and copies.

use rustc_hash::FxHashMap;

use super::join::{Joined, Row, SyncPlace};
use super::read::{GpuKind, Nanos, SpanKind, Trace};
use super::svg::{Block, BlockKind, Lane, Timeline};
use super::waits::Waits;

/// A window of one trace: a profiler step, or the whole trace when it has none.
struct Window {
    trace: usize,
    start: Nanos,
    end: Nanos,
    title: String,
}

/// The busiest step's timeline; an empty drawing where no trace recorded anything.
pub(super) fn busiest_step(traces: &[(Trace, Waits)], joined: &Joined) -> Timeline {
    let mut windows = Vec::new();
    for (index, (trace, waits)) in traces.iter().enumerate() {
        let file = trace
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if waits.steps.is_empty() {
            let (Some(start), Some(end)) = (
                trace.spans.iter().map(|s| s.start).min(),
                trace.spans.iter().map(|s| s.end).max(),
            ) else {
                continue;
            };
            windows.push(Window {
                trace: index,
                start,
                end,
                title: format!("the whole of {file} (no profiler steps)"),
            });
        }
        windows.extend(waits.steps.iter().map(|step| Window {
            trace: index,
            start: step.start,
            end: step.end,
            title: format!("ProfilerStep#{} of {file}", step.number),
        }));
    }
    // Each trace's syncs are in time order: the stall of those starting in a window is the
    // difference of two running totals, found by binary search.
    let totals: Vec<Vec<i128>> = traces
        .iter()
        .map(|(_, waits)| {
            std::iter::once(0)
                .chain(waits.syncs.iter().scan(0, |total: &mut i128, sync| {
                    *total += i128::from(sync.stall);
                    Some(*total)
                }))
                .collect()
        })
        .collect();
    let stall_in = |window: &Window| -> i128 {
        let syncs = &traces[window.trace].1.syncs;
        let from = syncs.partition_point(|s| s.start < window.start);
        let to = syncs.partition_point(|s| s.start < window.end).max(from);
        totals[window.trace][to] - totals[window.trace][from]
    };
    match windows
        .into_iter()
        .max_by_key(|w| (stall_in(w), std::cmp::Reverse(w.start)))
    {
        Some(window) => lay_out(&traces[window.trace], &joined.syncs[window.trace], joined, window),
        None => Timeline {
            title: "no host events in the traces".to_string(),
            start_ns: 0,
            end_ns: 0,
            lanes: Vec::new(),
        },
    }
}

fn lay_out((trace, waits): &(Trace, Waits), places: &[SyncPlace], joined: &Joined, window: Window) -> Timeline {
    let inside = |start: Nanos, end: Nanos| end > window.start && start < window.end;
    let mut host: FxHashMap<u32, Vec<Block>> = FxHashMap::default();
    // Top-level operators only: what a trace viewer shows at its first level.
    let mut ops: Vec<_> = trace.spans.iter().filter(|s| s.kind == SpanKind::Op).collect();
    ops.sort_by_key(|s| (s.thread, s.start, std::cmp::Reverse(s.end)));
    let mut covered: FxHashMap<u32, Nanos> = FxHashMap::default();
    for op in ops {
        let until = covered.entry(op.thread).or_insert(Nanos::MIN);
        if op.start < *until {
            continue;
        }
        *until = op.end;
        if inside(op.start, op.end) {
            host.entry(op.thread).or_default().push(Block {
                start_ns: op.start,
                end_ns: op.end,
                kind: BlockKind::Op,
                label: trace.names[op.name as usize].clone(),
            });
        }
    }
    for (sync, place) in waits.syncs.iter().zip(places) {
        if inside(sync.start, sync.end) {
            host.entry(sync.thread).or_default().push(Block {
                start_ns: sync.start,
                end_ns: sync.end,
                kind: BlockKind::Stall,
                label: stall_label(
                    &joined.rows[place.row],
                    &joined.labels[place.label as usize],
                    sync.stall,
                ),
            });
        }
    }
    let mut device: FxHashMap<u32, Vec<Block>> = FxHashMap::default();
    for gpu in trace.gpu.iter().filter(|g| inside(g.start, g.end)) {
        device.entry(gpu.stream).or_default().push(Block {
            start_ns: gpu.start,
            end_ns: gpu.end,
            kind: match gpu.kind {
                GpuKind::Kernel => BlockKind::Kernel,
                GpuKind::Memcpy => BlockKind::Memcpy,
                GpuKind::Memset => BlockKind::Memset,
            },
            label: trace.names[gpu.name as usize].clone(),
        });
    }
    let mut lanes: Vec<(String, Vec<Block>)> = Vec::new();
    let mut host: Vec<_> = host.into_iter().collect();
    host.sort_by_key(|(thread, _)| *thread);
    for (thread, blocks) in host {
        let id = &trace.threads[thread as usize];
        // The thread the autograd engine runs backward nodes on.
        let backward = blocks.iter().any(|b| b.label.starts_with("autograd::engine::"));
        let role = if backward { " (backward)" } else { "" };
        lanes.push((format!("host thread {}{role}", id.tid), blocks));
    }
    let mut device: Vec<_> = device.into_iter().collect();
    device.sort_by_key(|(stream, _)| *stream);
    for (stream, blocks) in device {
        let id = &trace.threads[stream as usize];
        lanes.push((format!("GPU {} stream {}", id.pid, id.tid), blocks));
    }
    Timeline {
        title: window.title,
        start_ns: window.start,
        end_ns: window.end,
        lanes: lanes
            .into_iter()
            .map(|(label, mut blocks)| {
                blocks.sort_by_key(|b| b.start_ns);
                Lane { label, blocks }
            })
            .collect(),
    }
}

/// `train.py:27 SYNC203 0.93 ms aten::index > aten::nonzero`: the file's name, not its path,
/// and the operators last, where a long label is cut.
fn stall_label(row: &Row, ops: &str, stall: Nanos) -> String {
    let mut label = String::new();
    if let Some(path) = &row.path {
        label.push_str(path.rsplit('/').next().unwrap_or(path));
        if let Some(line) = row.row {
            label.push_str(&format!(":{line}"));
        }
        label.push(' ');
    }
    if let Some(rule) = row.rule {
        label.push_str(rule.code());
        label.push(' ');
    }
    label.push_str(&format!("{:.2} ms {ops}", stall as f64 / 1e6));
    label
}
