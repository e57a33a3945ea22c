//! A seeded mutation test: thousands of traces made from the fixtures by breaking them (bytes
//! flipped, cut, repeated; values of the wrong type or absurd size; deep nesting; broken gzip),
//! each read, joined, reported and drawn as `synclint trace` would. None may panic, and every
//! sync of a trace that reads must land in exactly one row.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::join::{SourceFile, frame_files, join};
use super::read::{Trace, read_stream};
use super::sources::ProjectFiles;
use super::waits::{Waits, find_waits};
use super::{TraceFormat, TraceOptions, TraceReport, check_files, render, svg, timeline, warnings};
use crate::config::{Overrides, Resolver, Source};
use crate::pipeline::Errors;

/// splitmix64: a fixed seed gives the same cases on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// JSON values put in place of a value: wrong types, absurd sizes, names the join reads.
const VALUES: &[&str] = &[
    "null",
    "true",
    "[]",
    "{}",
    "[1, [2]]",
    "{\"a\": {\"b\": []}}",
    "-1",
    "0",
    "0.5",
    "1e308",
    "-1e999",
    "1e400",
    "1.5e-400",
    "9007199254740993",
    "18446744073709551616",
    "-9223372036854775809",
    "\"\"",
    "\"X\"",
    "\"f\"",
    "\"\\ud83d\\ude00\"",
    "\"\\u0000\"",
    "\"cuda_runtime\"",
    "\"python_function\"",
    "\"cpu_op\"",
    "\"fwdbwd\"",
    "\"gpu_memcpy\"",
    "\"user_annotation\"",
    "\"cudaStreamSynchronize\"",
    "\"cudaMemcpyAsync\"",
    "\"cudaFree\"",
    "\"aten::item\"",
    "\"aten::nonzero\"",
    "\"ProfilerStep#18446744073709551616\"",
    "\"ProfilerStep#1\"",
    "\"train.py(7): three_step\"",
    "\"train.py(0): main\"",
    "\"train_step.py(99999999999999999999): f\"",
    "\"pkg/helpers.py(-4): read_scalar\"",
    "\"torch/profiler/profiler.py(1): stop\"",
    "\"C:\\\\x\\\\train.py(5): f\"",
    "\"<built-in method item of Tensor object at 0x7f>\"",
    "\"Memcpy DtoH (Pageable -> Device)\"",
];

/// Whole events added to a trace: absurd times, cycles of flows, wrong types everywhere.
const EVENTS: &[&str] = &[
    r#"{"ph":"X","cat":"python_function","name":"train.py(5): three_step","pid":1,"tid":1,"ts":0.001,"dur":1e300}"#,
    r#"{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":-3,"dur":5}"#,
    r#"{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":4611686018427387,"dur":86400000000}"#,
    r#"{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":120,"dur":-50}"#,
    r#"{"ph":"s","cat":"fwdbwd","name":"fwdbwd","id":7,"pid":1,"tid":1,"ts":105}"#,
    r#"{"ph":"f","cat":"fwdbwd","name":"fwdbwd","id":7,"pid":1,"tid":1,"ts":105}"#,
    r#"{"ph":"X","cat":"cpu_op","name":"aten::item","pid":1,"tid":1,"ts":105,"dur":10,"ts":"again","dur":[1]}"#,
    r#"{"ph":["X"],"cat":{"c":1},"name":null,"pid":[],"tid":{},"ts":true,"dur":"x","id":[],"args":[]}"#,
    r#"{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoH (Device -> Pageable)","pid":0,"tid":7,"ts":107,"dur":1,"args":{"correlation":1001}}"#,
    r#"{"ph":"X","cat":"user_annotation","name":"ProfilerStep#9","pid":1,"tid":1,"ts":100,"dur":0}"#,
    r#"{"ph":"X","cat":"cpu_op","name":"aten::nonzero","pid":1,"tid":"1","ts":105.0000000001,"dur":9.9999999999}"#,
    "[]",
    "1",
    "\"text\"",
    "null",
];

/// Bytes that break JSON, for the reader's errors.
const BREAKING: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    "\"",
    ",",
    ":",
    "\\",
    "\u{ff}",
    "\"\\ud800\"",
    "\"\\u00\"",
    "NaN",
];

/// Where the JSON value starting at `start` ends (for a string, an object or an array, past
/// its closing byte; for anything else, at the next comma or closing bracket).
fn value_end(text: &[u8], start: usize) -> usize {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (at, &byte) in text.iter().enumerate().skip(start) {
        match (in_string, byte) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') => {
                in_string = false;
                if depth == 0 {
                    return at + 1;
                }
            }
            (true, _) => {}
            (false, b'"') => in_string = true,
            (false, b'[' | b'{') => depth += 1,
            (false, b']' | b'}') if depth == 0 => return at,
            (false, b']' | b'}') => {
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
            (false, b',') if depth == 0 => return at,
            _ => {}
        }
    }
    text.len()
}

/// A random position just after one of `byte` (or `None` where there is none).
fn after(rng: &mut Rng, text: &[u8], byte: u8) -> Option<usize> {
    let from = rng.below(text.len());
    let found = text[from..].iter().position(|&b| b == byte).map(|p| from + p);
    found.or_else(|| text.iter().position(|&b| b == byte)).map(|at| at + 1)
}

/// Breaks `text` in one of a few ways, most of them keeping it JSON.
fn mutate(rng: &mut Rng, text: &mut Vec<u8>) {
    match rng.below(10) {
        0..=2 => {
            // A value replaced.
            let Some(colon) = after(rng, text, b':') else { return };
            let start = colon + text[colon..].iter().take_while(|b| b.is_ascii_whitespace()).count();
            let end = value_end(text, start);
            let value = rng.pick(VALUES);
            text.splice(start..end, value.bytes());
        }
        3 => {
            // An event (or any object) repeated: duplicate frames, syncs, keys.
            let Some(open) = after(rng, text, b'{') else { return };
            let end = value_end(text, open - 1);
            let mut copy = text[open - 1..end].to_vec();
            copy.insert(0, b',');
            text.splice(end..end, copy);
        }
        4 => {
            // A field added to an object, after its first key (a repeated key, maybe).
            let Some(open) = after(rng, text, b'{') else { return };
            let key = [
                "\"ph\"", "\"cat\"", "\"name\"", "\"ts\"", "\"dur\"", "\"id\"", "\"tid\"", "\"args\"",
            ];
            let field = format!("{}: {},", rng.pick(&key), rng.pick(VALUES));
            text.splice(open..open, field.bytes());
        }
        5 => {
            // An event added after another.
            let Some(close) = after(rng, text, b'}') else { return };
            let event = format!(",{}", rng.pick(EVENTS));
            text.splice(close..close, event.bytes());
        }
        6 => {
            // A value nested deep.
            let Some(colon) = after(rng, text, b':') else { return };
            let end = value_end(text, colon);
            let depth = 1 + rng.below(2500);
            text.splice(end..end, std::iter::repeat_n(b']', depth));
            text.splice(colon..colon, std::iter::repeat_n(b'[', depth));
        }
        7 => {
            let at = rng.below(text.len());
            text.truncate(at);
        }
        8 => {
            let at = rng.below(text.len());
            let end = (at + 1 + rng.below(24)).min(text.len());
            text.drain(at..end);
        }
        _ => {
            let at = rng.below(text.len() + 1);
            if rng.below(2) == 0 && at < text.len() {
                text[at] = rng.next() as u8;
            } else {
                text.splice(at..at, rng.pick(BREAKING).bytes());
            }
        }
    }
}

fn gzip(text: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(text).expect("compress in memory");
    encoder.finish().expect("compress in memory")
}

/// What the fixture traces run, checked once: the mutated traces are joined with it.
struct Fixture {
    text: Vec<u8>,
    root: PathBuf,
    project: ProjectFiles,
    sources: FxHashMap<PathBuf, SourceFile>,
}

impl Fixture {
    fn new(text: Vec<u8>, root: PathBuf) -> Self {
        let trace = read_stream(Path::new("fixture.json"), &text[..]).expect("the fixture reads");
        let waits = find_waits(&trace);
        let mut project = ProjectFiles::new(&root);
        let files = frame_files(&[(trace, waits)], &mut project);
        let options = TraceOptions {
            traces: Vec::new(),
            root: root.clone(),
            cwd: root.clone(),
            threads: 1,
            cache: None,
            timeline: true,
        };
        let resolver = Arc::new(Resolver::new(Source::Isolated, Overrides::default(), root.clone()).expect("defaults"));
        let sources = check_files(&files, &options, &resolver, &mut Errors::default()).expect("the fixture checks");
        assert!(!sources.is_empty(), "{root:?}: the fixture's files are found");
        Fixture {
            text,
            root,
            project,
            sources,
        }
    }

    /// Reads, joins, reports and draws one trace, as `synclint trace` does: how many syncs it
    /// had, `None` where it does not read.
    fn run(&mut self, bytes: &[u8]) -> Option<usize> {
        let trace = read_stream(Path::new("case.json"), bytes).ok()?;
        let waits = find_waits(&trace);
        let traces: Vec<(Trace, Waits)> = vec![(trace, waits)];
        frame_files(&traces, &mut self.project);
        let joined = join(&traces, &mut self.project, &self.sources);
        let syncs = traces[0].1.syncs.len();
        let placed: usize = joined.rows.iter().map(|row| row.syncs).sum();
        assert_eq!(placed, syncs, "every sync lands in one row");
        let drawing = timeline::busiest_step(&traces, &joined);
        assert!(svg::render(&drawing).ends_with("</svg>\n"));
        let report = TraceReport {
            traces: 1,
            syncs,
            rows: joined.rows,
            steps: traces[0].1.steps.len(),
            total_stall: traces[0]
                .1
                .syncs
                .iter()
                .fold(0, |total: i64, s| total.saturating_add(s.stall)),
            warnings: warnings(&traces, &mut self.project, &self.root, &self.root),
            timeline: None,
            errors: Errors::default(),
        };
        for format in [TraceFormat::Table, TraceFormat::Json] {
            render(&mut Vec::new(), format, &report).expect("written to memory");
        }
        Some(syncs)
    }
}

fn fixtures() -> Vec<Fixture> {
    let repo = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    let synthetic = repo.join("fixtures/trace/synthetic");
    let three_step = std::fs::read(synthetic.join("three_step.json")).expect("the synthetic fixture");
    // The first milliseconds of a real training step: frames, operators, copies, flows.
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(repo.join("fixtures/trace/train_step.pt.trace.json.gz")).expect("the fixture"),
    )
    .read_to_string(&mut text)
    .expect("the fixture decompresses");
    let document: serde_json::Value = serde_json::from_str(&text).expect("the fixture is JSON");
    let events = document["traceEvents"].as_array().expect("events");
    let step = events
        .iter()
        .find(|e| e["name"] == "ProfilerStep#3")
        .and_then(|e| e["ts"].as_f64())
        .expect("a profiler step");
    let window: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| {
            let (ts, dur) = (e["ts"].as_f64().unwrap_or(-1.0), e["dur"].as_f64().unwrap_or(0.0));
            (step..step + 1200.0).contains(&ts) || (ts <= step && step <= ts + dur && e["ph"] == "X")
        })
        .collect();
    let step_slice = serde_json::to_vec(&serde_json::json!({ "traceEvents": window })).expect("serialized");
    vec![
        Fixture::new(three_step, synthetic),
        Fixture::new(step_slice, repo.join("fixtures/trace")),
    ]
}

#[test]
fn thousands_of_broken_traces_neither_panic_nor_lose_a_sync() {
    let mut fixtures = fixtures();
    let mut rng = Rng(0x5EED_0007_A2CE);
    let (mut read, mut joined) = (0, 0);
    for case in 0..3000 {
        let fixture = &mut fixtures[case % 3 / 2];
        let mut text = fixture.text.clone();
        for _ in 0..1 + rng.below(4) {
            mutate(&mut rng, &mut text);
        }
        let bytes = if rng.below(8) == 0 {
            let mut compressed = gzip(&text);
            match rng.below(3) {
                0 => compressed.truncate(rng.below(compressed.len())),
                1 => {
                    let at = rng.below(compressed.len());
                    compressed[at] ^= 1 << rng.below(8);
                }
                _ => {}
            }
            compressed
        } else {
            text
        };
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fixture.run(&bytes))) {
            Ok(Some(syncs)) => {
                read += 1;
                joined += usize::from(syncs > 0);
            }
            Ok(None) => {}
            Err(_) => {
                let kept = std::env::temp_dir().join(format!("synclint-mutation-{case}.json"));
                let _ = std::fs::write(&kept, &bytes);
                panic!("case {case} panicked; its trace is at {}", kept.display());
            }
        }
    }
    // Enough of the broken traces still read, and have syncs to join, to test the join too.
    assert!(read > 600 && joined > 500, "{read} read, {joined} with syncs");
}
