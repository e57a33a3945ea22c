//! `synclint trace` end to end: the real binary on real `torch.profiler` traces captured on an
//! H100 (fixtures/trace: the scripts, and how they were captured, are beside the traces).

mod common;

use std::collections::BTreeMap;
use std::io::Read;

use common::{Project, exit_code, json, repo, run, stderr, stdout};
use serde_json::Value;

const TRAINING: &str = "fixtures/trace/train_step.pt.trace.json.gz";
const WITHOUT_STACKS: &str = "fixtures/trace/train_step_nostack.pt.trace.json.gz";
const WORKERS: &str = "fixtures/trace/workers";
const RANKS: &str = "fixtures/trace/ranks";

fn trace_json(args: &[&str]) -> (std::process::Output, Vec<Value>) {
    let mut all = vec!["trace", "--no-cache", "--output-format", "json"];
    all.extend_from_slice(args);
    let output = run(&repo(), &all);
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    let rows = json(&output).as_array().expect("an array of rows").clone();
    (output, rows)
}

/// (status, row, code) -> (syncs, backward syncs) for every row of `rows`.
fn by_place(rows: &[Value]) -> BTreeMap<(String, i64, String), (u64, u64)> {
    rows.iter()
        .map(|row| {
            let key = (
                row["status"].as_str().unwrap().to_string(),
                row["location"]["row"].as_i64().unwrap_or(0),
                row["code"].as_str().unwrap_or("-").to_string(),
            );
            (
                key,
                (row["syncs"].as_u64().unwrap(), row["backward_syncs"].as_u64().unwrap()),
            )
        })
        .collect()
}

fn place(status: &str, row: i64, code: &str) -> (String, i64, String) {
    (status.to_string(), row, code.to_string())
}

fn read_events(path: &str) -> Vec<Value> {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(repo().join(path)).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let document: Value = serde_json::from_str(&text).unwrap();
    document["traceEvents"].as_array().unwrap().clone()
}

/// The trace's own total of host waiting, in µs: every synchronize call, and every copy to or
/// from pageable memory (the runtime call of a copy is found by its correlation id).
fn own_total_stall(path: &str) -> f64 {
    let events = read_events(path);
    let pageable: Vec<u64> = events
        .iter()
        .filter(|e| e["cat"] == "gpu_memcpy" && e["name"].as_str().unwrap().contains("Pageable"))
        .map(|e| e["args"]["correlation"].as_u64().unwrap())
        .collect();
    events
        .iter()
        .filter(|e| e["cat"] == "cuda_runtime")
        .filter(|e| {
            let name = e["name"].as_str().unwrap();
            name.ends_with("Synchronize")
                || (name.starts_with("cudaMemcpy") && pageable.contains(&e["args"]["correlation"].as_u64().unwrap()))
        })
        .map(|e| e["dur"].as_f64().unwrap())
        .sum()
}

#[test]
fn confirms_each_finding_of_a_training_step_and_lists_what_it_missed() {
    let (_, rows) = trace_json(&[TRAINING]);
    let found = by_place(&rows);
    let expected = BTreeMap::from([
        // Both boolean-mask reads of the masked loss, and the backward of the first.
        (place("confirmed", 27, "SYNC301"), (9, 3)),
        (place("confirmed", 31, "SYNC202"), (3, 0)),
        (place("confirmed", 67, "SYNC401"), (3, 0)),
        (place("confirmed", 68, "SYNC401"), (3, 0)),
        (place("confirmed", 74, "SYNC105"), (3, 0)),
        (place("confirmed", 76, "SYNC101"), (3, 0)),
        // `float(self.correct)` inside a property the loop reads.
        (place("confirmed", 47, "SYNC104"), (3, 0)),
        // The profiler's own synchronize when it stops.
        (place("profiler", 50, "-"), (1, 0)),
    ]);
    assert_eq!(found, expected);
    for row in &rows {
        assert_eq!(row["filename"], "fixtures/trace/train_step.py");
        if row["status"] == "confirmed" {
            let per_step = row["syncs"].as_f64().unwrap() / 3.0;
            assert_eq!(
                row["syncs_per_step"].as_f64(),
                Some((per_step * 1000.0).round() / 1000.0)
            );
        }
    }
    let backward = rows.iter().find(|r| r["location"]["row"] == 27).unwrap();
    let ops: Vec<&str> = backward["ops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    assert!(ops.iter().any(|o| o.contains("backward of aten::index")), "{ops:?}");
}

#[test]
fn every_sync_is_accounted_for_and_the_stalls_add_up() {
    for trace in [TRAINING, WITHOUT_STACKS] {
        let (_, rows) = trace_json(&[trace]);
        let syncs: u64 = rows.iter().map(|r| r["syncs"].as_u64().unwrap()).sum();
        let stall: f64 = rows.iter().map(|r| r["stall_us"].as_f64().unwrap()).sum();
        let own = own_total_stall(trace);
        assert!(
            (stall - own).abs() <= own * 0.01,
            "{trace}: rows add up to {stall} µs, the trace to {own} µs"
        );
        let waits = read_events(trace)
            .iter()
            .filter(|e| e["cat"] == "cuda_runtime" && e["name"].as_str().unwrap().ends_with("Synchronize"))
            .count() as u64;
        // Every sync in these traces ends in one synchronize call, except the pageable copies,
        // which block by themselves and then synchronize within the same operator call.
        assert_eq!(syncs, waits, "{trace}");
    }
}

#[test]
fn the_table_ranks_by_stall() {
    let output = run(&repo(), &["trace", "--no-cache", TRAINING]);
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with("28 host syncs in 1 trace (3 profiler steps): "),
        "{text}"
    );
    let stalls: Vec<f64> = text
        .lines()
        .filter(|line| line.contains(" ms ") && line.contains("fixtures/trace/train_step.py"))
        .map(|line| line.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(stalls.len(), 8, "{text}");
    assert!(stalls.windows(2).all(|pair| pair[0] >= pair[1]), "{stalls:?}");
    assert!(text.contains("7 findings confirmed (27 syncs"), "{text}");
}

#[test]
fn a_trace_without_python_stacks_reports_operators_without_lines() {
    let (output, rows) = trace_json(&[WITHOUT_STACKS]);
    assert!(!rows.is_empty());
    assert!(
        rows.iter().all(|r| r["filename"].is_null() && r["code"].is_null()),
        "{rows:?}"
    );
    let ops: Vec<String> = rows.iter().map(|r| r["ops"][0].as_str().unwrap().to_string()).collect();
    assert!(ops.contains(&"aten::index > aten::nonzero".to_string()), "{ops:?}");
    let table = run(&repo(), &["trace", "--no-cache", WITHOUT_STACKS]);
    assert!(stdout(&table).contains("with_stack=True"), "{}", stdout(&table));
    assert!(stderr(&output).is_empty());
}

#[test]
fn a_tensorboard_folder_joins_every_worker() {
    let (_, rows) = trace_json(&[WORKERS]);
    let found = by_place(&rows);
    // Two workers, two profiled steps each: one nonzero and one `.item()` per step.
    assert_eq!(found.get(&place("confirmed", 16, "SYNC201")), Some(&(4, 0)));
    assert_eq!(found.get(&place("confirmed", 36, "SYNC101")), Some(&(4, 0)));
    let nonzero = rows.iter().find(|r| r["code"] == "SYNC201").unwrap();
    assert_eq!(nonzero["syncs_per_step"].as_f64(), Some(1.0));
    assert_eq!(nonzero["filename"], "fixtures/trace/two_workers.py");
}

#[test]
fn svg_draws_the_step_with_the_most_stall() {
    let out = Project::new();
    let svg = out.path().join("step.svg");
    let output = run(
        &repo(),
        &["trace", "--no-cache", TRAINING, "--svg", svg.to_str().unwrap()],
    );
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    let text = std::fs::read_to_string(&svg).unwrap();
    let document = roxmltree::Document::parse(&text).expect("well-formed SVG");
    let labels: Vec<&str> = document.descendants().filter_map(|n| n.text()).collect();
    assert!(labels.iter().any(|l| l.contains("ProfilerStep#")), "{labels:?}");
    assert!(
        labels.iter().any(|l| l.starts_with("train_step.py:67 SYNC401")),
        "{labels:?}"
    );
    assert!(
        labels.iter().any(|l| l.contains("(backward)")),
        "the autograd thread has its lane"
    );
}

#[test]
fn unreadable_traces_are_errors_and_nothing_is_written() {
    let dir = Project::new();
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(repo().join(TRAINING)).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    dir.write("cut.json", &text[..text.len() / 2]);
    let gzipped = std::fs::read(repo().join(TRAINING)).unwrap();
    dir.write("cut.json.gz", &gzipped[..gzipped.len() / 2]);
    dir.write("package.json", r#"{"name": "not a trace", "version": "1.0"}"#);
    dir.write("empty/readme.txt", "no traces here");
    let svg = dir.path().join("out.svg");
    let cases = [
        ("cut.json", "truncated"),
        ("cut.json.gz", "truncated"),
        ("package.json", "`traceEvents` array"),
        ("missing.json", "no such trace file"),
        ("empty", "no traces in this folder"),
    ];
    for (name, reason) in cases {
        let trace = dir.path().join(name);
        let output = run(
            &repo(),
            &[
                "trace",
                "--no-cache",
                trace.to_str().unwrap(),
                "--svg",
                svg.to_str().unwrap(),
            ],
        );
        assert_eq!(exit_code(&output), 2, "{name}");
        assert!(stderr(&output).contains(reason), "{name}: {}", stderr(&output));
        assert!(stderr(&output).contains(name), "{name}: the error names the file");
        assert!(stdout(&output).is_empty(), "{name}: nothing reported");
        assert!(!svg.exists(), "{name}: nothing written");
    }
    let output = run(&repo(), &["trace", "--no-cache", TRAINING, "--root", "no/such/folder"]);
    assert_eq!(exit_code(&output), 2);
    assert!(stderr(&output).contains("is not a folder"), "{}", stderr(&output));
}

#[test]
fn a_script_outside_the_root_is_named() {
    let elsewhere = Project::new();
    elsewhere.write("unrelated.py", "x = 1\n");
    let root = elsewhere.path().to_str().unwrap();
    let output = run(&repo(), &["trace", "--no-cache", TRAINING, "--root", root]);
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("none of the Python files its syncs ran is under"),
        "{text}"
    );
    assert!(text.contains("(the script was train_step.py)"), "{text}");
    assert!(!text.contains("confirmed"), "{text}");
}

#[test]
fn each_sync_goes_to_the_finding_of_its_own_kind_and_call() {
    // A hand-written trace (fixtures/trace/synthetic) of `three_step`: `.item()`, `if t:` and
    // `.item()` again, each with the builtin frame Python records for a C call, three steps; and
    // a helper in another file whose `.item()` synclint reports where it is.
    let root = repo().join("fixtures/trace/synthetic");
    let output = run(
        &root,
        &["trace", "--no-cache", "--output-format", "json", "three_step.json"],
    );
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    let rows = json(&output).as_array().unwrap().clone();
    let found = by_place(&rows);
    let expected = BTreeMap::from([
        (place("confirmed", 7, "SYNC101"), (3, 0)),
        (place("confirmed", 8, "SYNC105"), (3, 0)),
        (place("confirmed", 10, "SYNC101"), (3, 0)),
        (place("confirmed", 5, "SYNC101"), (3, 0)),
    ]);
    assert_eq!(found, expected, "{rows:?}");
}

#[test]
fn two_ddp_ranks_confirm_the_all_reduced_metric() {
    // Two NCCL ranks on two H100s: `.item()` of an all-reduced loss every step, which synclint
    // reports at the `.item()`, where the host waits; DDP's own event waits inside `model(x)`
    // are runtime-only.
    let (_, rows) = trace_json(&[RANKS]);
    let found = by_place(&rows);
    assert_eq!(found.get(&place("confirmed", 19, "SYNC602")), Some(&(4, 0)), "{rows:?}");
    let ddp = rows
        .iter()
        .find(|r| r["status"] == "runtime-only")
        .expect("DDP's waits");
    assert_eq!(ddp["location"]["row"], 22, "placed at its function's first line");
    assert!(
        ddp["ops"][0].as_str().unwrap().ends_with("cudaEventSynchronize"),
        "{ddp}"
    );
}

/// A Python frame (`X` event of `python_function`), as JSON.
fn frame_event(name: &str, ts: f64, dur: f64) -> String {
    format!(r#"{{"ph":"X","cat":"python_function","name":"{name}","pid":1,"tid":1,"ts":{ts:.3},"dur":{dur:.3}}}"#)
}

/// `.item()` as the profiler records it: its builtin frame, operators and synchronize.
fn item_events(ts: f64) -> [String; 4] {
    let op = |name: &str, at: f64, dur: f64| {
        format!(r#"{{"ph":"X","cat":"cpu_op","name":"{name}","pid":1,"tid":1,"ts":{at:.3},"dur":{dur:.3}}}"#)
    };
    [
        frame_event("<built-in method item of Tensor object at 0x7f>", ts, 9.5),
        op("aten::item", ts + 0.1, 9.0),
        op("aten::_local_scalar_dense", ts + 0.2, 8.5),
        format!(
            r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":1,"ts":{:.3},"dur":6}}"#,
            ts + 2.0
        ),
    ]
}

const DEEP: &str = "import torch


def recurse(model, x, n):
    if n:
        return recurse(model, x, n - 1)
    total = 0.0
    for _ in range(1000):
        loss = model(x).sum()
        loss.backward()
        total += loss.item()
    return total


recurse(torch.nn.Linear(4, 4).cuda(), torch.ones(4, device='cuda'), 4000)
";

#[test]
fn a_deep_recursion_with_many_syncs_is_joined() {
    // The recursion 4,000 deep, its innermost call syncing 1,000 times: each sync's stack is
    // 4,003 frames (the join reads each distinct frame once: src/trace/join.rs counts it).
    let project = Project::new();
    project.write("deep.py", DEEP);
    let (depth, syncs) = (4002, 1000);
    let mut events = vec![frame_event("deep.py(15): <module>", 0.0, syncs as f64 * 10.0 + 100.0)];
    events
        .extend((1..depth).map(|at| frame_event("deep.py(4): recurse", at as f64 * 0.01, syncs as f64 * 10.0 + 50.0)));
    let start = depth as f64 * 0.01;
    events.extend((0..syncs).flat_map(|sync| item_events(start + sync as f64 * 10.0)));
    project.write("deep.json", format!("[{}]", events.join(",\n")));
    let output = project.run_within(
        std::time::Duration::from_secs(600),
        &["trace", "--no-cache", "--output-format", "json", "deep.json"],
    );
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    let rows = json(&output).as_array().unwrap().clone();
    assert_eq!(
        by_place(&rows),
        BTreeMap::from([(place("confirmed", 11, "SYNC101"), (1000, 0))])
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_huge_string_is_cut_without_being_held() {
    use std::io::Write;
    // A 64 MiB operator name, written in pieces: if any copy of it were held, the process would
    // hold at least that much.
    let project = Project::new();
    let path = project.path().join("huge.json");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let size = 64 << 20;
    write!(
        file,
        r#"[{{"ph":"X","cat":"cpu_op","pid":1,"tid":1,"ts":1,"dur":1,"name":""#
    )
    .unwrap();
    let piece = vec![b'a'; 1 << 20];
    for _ in 0..size / piece.len() {
        file.write_all(&piece).unwrap();
    }
    write!(file, r#""}},{}]"#, item_events(5.0).join(",")).unwrap();
    file.into_inner().unwrap().sync_all().unwrap();
    let (output, peak) = common::run_measuring_memory(common::synclint().current_dir(project.path()).args([
        "trace",
        "--no-cache",
        "huge.json",
    ]));
    assert_eq!(output.status.code(), Some(0));
    let peak = peak as usize;
    assert!(
        peak < size,
        "peak resident memory {peak} bytes for a {size}-byte string"
    );
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.len() < 4096, "the report is short: {} bytes", text.len());
    assert!(
        text.contains("warning: huge.json: 1 string longer than 64 KiB cut to its first 64 KiB"),
        "{text}"
    );
    assert!(text.starts_with("1 host sync in 1 trace"), "{text}");
}

#[test]
fn absurd_times_are_warned_about_and_kept_out_of_the_report() {
    let project = Project::new();
    let mut events: Vec<String> = item_events(10.0).into();
    // A sync before the clock began, one past any clock, and one that ends before it starts.
    events.push(
        r#"{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":-40,"dur":5}"#.into(),
    );
    events.push(
        r#"{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":1e19,"dur":5}"#.into(),
    );
    events.push(
        r#"{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":30,"dur":-1e12}"#.into(),
    );
    events.push(r#"{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":20,"dur":1e300}"#.into());
    project.write("absurd.json", format!("[{}]", events.join(",")));
    let svg = project.path().join("absurd.svg");
    let output = project.run(&["trace", "--no-cache", "absurd.json", "--svg", svg.to_str().unwrap()]);
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with("2 host syncs in 1 trace (0 profiler steps): 0.006 ms"),
        "{text}"
    );
    assert!(
        text.contains("absurd.json: 2 events with a timestamp no profiler writes (negative, or past 2^62 ns) left out"),
        "{text}"
    );
    assert!(text.contains("absurd.json: 2 durations out of range"), "{text}");
    // The drawing spans the events believed, not the year 300,000.
    let drawing = std::fs::read_to_string(&svg).unwrap();
    assert!(drawing.contains("the whole of absurd.json"), "{drawing}");
    assert!(roxmltree::Document::parse(&drawing).is_ok());
    assert!(!drawing.contains(">1e") && !drawing.contains("NaN"), "{drawing}");
}

#[test]
fn hostile_json_is_an_error_and_never_a_crash() {
    let project = Project::new();
    let deep = 100_000;
    project.write("nested.json", format!("{}{}", "[".repeat(deep), "]".repeat(deep)));
    project.write(
        "nested_args.json",
        format!(r#"[{{"ph":"X","args":{}1{}}}]"#, "[".repeat(deep), "]".repeat(deep)),
    );
    project.write("latin1.json", b"[{\"ph\":\"X\",\"name\":\"caf\xe9\"}]");
    let gzipped = {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut encoder, format!("[{}]", item_events(1.0).join(",")).as_bytes()).unwrap();
        encoder.finish().unwrap()
    };
    project.write("cut.json.gz", &gzipped[..gzipped.len() - 9]);
    for (name, reason) in [
        ("nested.json", "nests arrays and objects"),
        ("nested_args.json", "nests arrays and objects"),
        ("latin1.json", "not valid JSON"),
        ("cut.json.gz", "truncated"),
    ] {
        let output = project.run(&["trace", "--no-cache", name]);
        assert_eq!(exit_code(&output), 2, "{name}: {}", stderr(&output));
        assert!(stderr(&output).contains(reason), "{name}: {}", stderr(&output));
    }
}
