//! The semantic model against its fixtures: one file per inference or exemption in
//! `fixtures/model/`, checked with every rule at once. A line ending in `# expect: CODE[, CODE]`
//! must be flagged with exactly those codes and every other line with nothing; a line ending in
//! `# periodic: CODE` is flagged only with `--report-periodic`.

mod common;

use std::collections::BTreeSet;
use std::fs;

use common::{repo, run, stderr, stdout};

/// One fixture per topic; `pkg/` is the cross-file call graph, linted as a folder.
const TOPICS: &[&str] = &[
    "imports",
    "local_imports",
    "shadowing",
    "host_values",
    "self_attributes",
    "devices",
    "default_device",
    "periodic",
    "after_loop",
    "except_handlers",
    "lightning",
    "compiled",
    "helpers",
    "narrowing",
    "bindings",
    "boolean_masks",
    "stored_methods",
    "data_dependent_shapes",
    "large_arms",
    "autograd_functions",
    "passed_functions",
    "lazy_init",
    "moved_items",
    "passed_callables",
    "held_callables",
    "fixed_collections",
    "backends",
    "replaced_forward",
    "decoding",
    "context_managers",
    "annotations",
    "arguments",
    "properties",
    "metrics",
    "indices",
    "instances",
    "aliases",
];

/// (code, row) of every line `marker` marks in `source`.
fn marked(source: &str, marker: &str) -> BTreeSet<(String, usize)> {
    let mut expected = BTreeSet::new();
    for (index, line) in source.lines().enumerate() {
        let Some((_, codes)) = line.split_once(marker) else {
            continue;
        };
        for code in codes.split([',', ' ']).map(str::trim).filter(|c| !c.is_empty()) {
            assert!(
                code.starts_with("SYNC"),
                "line {}: `{marker}` lists `{code}`",
                index + 1
            );
            expected.insert((code.to_string(), index + 1));
        }
    }
    expected
}

/// Compares what was flagged with what is marked; a line of text per difference.
fn differences(path: &str, expected: &BTreeSet<(String, usize)>, found: &BTreeSet<(String, usize)>) -> Vec<String> {
    let missed = expected
        .difference(found)
        .map(|(code, row)| format!("{path}:{row}: {code} not flagged"));
    let extra = found
        .difference(expected)
        .map(|(code, row)| format!("{path}:{row}: {code} flagged but not marked"));
    missed.chain(extra).collect()
}

/// The JSON findings of `synclint check --isolated <args>`.
fn check(args: &[&str]) -> Vec<serde_json::Value> {
    let mut all = vec!["check", "--isolated", "--output-format", "json"];
    all.extend_from_slice(args);
    let output = run(&repo(), &all);
    match serde_json::from_slice(&output.stdout) {
        Ok(serde_json::Value::Array(rows)) => rows,
        _ => panic!(
            "{args:?}: not a JSON array\nstdout: {}\nstderr: {}",
            stdout(&output),
            stderr(&output)
        ),
    }
}

/// (code, row) of the findings in the file `path` ends.
fn findings_in(rows: &[serde_json::Value], path: &str) -> BTreeSet<(String, usize)> {
    rows.iter()
        .filter(|row| {
            row["filename"]
                .as_str()
                .is_some_and(|f| f.replace('\\', "/").ends_with(path))
        })
        .map(|row| {
            (
                row["code"].as_str().unwrap_or("invalid-syntax").to_string(),
                row["location"]["row"].as_u64().unwrap() as usize,
            )
        })
        .collect()
}

#[test]
fn every_fixture_is_a_listed_topic() {
    for entry in fs::read_dir(repo().join("fixtures/model")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue;
        }
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        assert!(
            TOPICS.contains(&stem.as_str()),
            "fixtures/model/{stem}.py is not in TOPICS"
        );
    }
}

#[test]
fn topics_flag_exactly_the_marked_lines() {
    let mut failures = Vec::new();
    for topic in TOPICS {
        let path = format!("fixtures/model/{topic}.py");
        let source = fs::read_to_string(repo().join(&path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        let expected = marked(&source, "# expect:");
        assert!(!expected.is_empty(), "{path} marks no line");
        let found = findings_in(&check(&[&path]), &path);
        failures.extend(differences(&path, &expected, &found));
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// `--report-periodic` adds the lines under periodic guards, and only those.
#[test]
fn report_periodic_shows_the_periodic_lines() {
    let mut failures = Vec::new();
    for topic in TOPICS {
        let path = format!("fixtures/model/{topic}.py");
        let source = fs::read_to_string(repo().join(&path)).unwrap();
        let periodic = marked(&source, "# periodic:");
        if periodic.is_empty() {
            continue;
        }
        let expected: BTreeSet<_> = marked(&source, "# expect:").union(&periodic).cloned().collect();
        let rows = check(&["--report-periodic", &path]);
        let found = findings_in(&rows, &path);
        failures.extend(differences(&path, &expected, &found));
        for row in &rows {
            let line = row["location"]["row"].as_u64().unwrap() as usize;
            let code = row["code"].as_str().unwrap_or_default().to_string();
            let note = row["note"].as_str().unwrap_or_default();
            if periodic.contains(&(code.clone(), line)) && !note.contains("periodic") {
                failures.push(format!("{path}:{line}: {code} note does not say periodic: {note}"));
            }
        }
    }
    let periodic_lines: usize = TOPICS
        .iter()
        .map(|t| {
            marked(
                &fs::read_to_string(repo().join(format!("fixtures/model/{t}.py"))).unwrap(),
                "# periodic:",
            )
            .len()
        })
        .sum();
    assert!(periodic_lines > 0, "no fixture marks a periodic line");
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Lints a folder as a project and requires each of its files to be flagged exactly on its
/// marked lines; returns the findings.
fn folder_flags_exactly_the_marked_lines(folder: &str) -> Vec<serde_json::Value> {
    let rows = check(&[folder]);
    let mut failures = Vec::new();
    let mut files: Vec<_> = fs::read_dir(repo().join(folder))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut marked_anywhere = false;
    for file in &files {
        let name = file.file_name().unwrap().to_str().unwrap();
        let path = format!("{folder}/{name}");
        let expected = marked(&fs::read_to_string(file).unwrap(), "# expect:");
        marked_anywhere |= !expected.is_empty();
        failures.extend(differences(&path, &expected, &findings_in(&rows, &path)));
    }
    assert!(marked_anywhere, "{folder} marks no line");
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
    rows
}

/// A package linted as a folder: `ops.masked_mean` is hot only through
/// `train.py` loop -> `losses.compute_loss` -> `ops.masked_mean`.
#[test]
fn package_call_chain_across_files() {
    let rows = folder_flags_exactly_the_marked_lines("fixtures/model/pkg");

    // Each finding in ops.py says how its line became hot: from the loop in train.py, through
    // the function in losses.py that calls it.
    let notes: Vec<&str> = rows
        .iter()
        .filter(|row| row["filename"].as_str().is_some_and(|f| f.ends_with("ops.py")))
        .map(|row| row["note"].as_str().unwrap_or_default())
        .collect();
    for (op, via) in [
        ("`masked_mean()`", "`compute_loss()`"),
        ("`masked_max()`", "`compute_aux()`"),
    ] {
        assert!(
            notes
                .iter()
                .any(|note| note.contains(op) && note.contains(via) && note.contains("pkg/train.py:")),
            "no ops.py note says {op} is called from the loop in train.py via {via}: {notes:#?}"
        );
    }
}

/// The whole-program model: methods reached through attributes holding instances, a local
/// instance, an annotated parameter and a class; `forward` of a module and a loss whose bases
/// are in another file; an override reached from its base's method; tensors passed to
/// unannotated parameters (also through the arms of a conditional and a returned tuple) and a
/// mask returned across files, also in a tuple a module's `forward` returns; a mask passed on
/// through a parameter annotated as any tensor (the callers' booleans win).
#[test]
fn project_objects_bases_and_parameters() {
    let rows = folder_flags_exactly_the_marked_lines("fixtures/model/project");
    // The mask reaches `select` through `Head.assign`, which model.py's `forward` calls on the
    // instance `__init__` keeps in `self.head`.
    let note = rows
        .iter()
        .find(|row| row["filename"].as_str().is_some_and(|f| f.ends_with("heads.py")) && row["code"] == "SYNC203")
        .and_then(|row| row["note"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        note.contains("`select()`") && note.contains("`Head.assign()`"),
        "{note}"
    );
}

/// Linting one file of the package alone sees no caller: the helpers stay quiet.
#[test]
fn package_file_alone_has_no_callers() {
    let path = "fixtures/model/pkg/ops.py";
    let rows = check(&[path]);
    assert!(
        rows.is_empty(),
        "{path} alone: {}",
        serde_json::to_string_pretty(&rows).unwrap()
    );
}

/// A hot chain thousands of calls long prints a line per function: the indent stops growing
/// past 32 levels and the level is spelled out instead (it used to grow quadratically: 64 MB
/// for 8,000 functions).
#[test]
fn a_long_hot_chain_prints_in_linear_space() {
    let project = common::Project::new();
    let n = 5_000;
    let mut source = String::from("import torch\n");
    for i in 0..n {
        source.push_str(&format!("def f{i}(x):\n    return f{}(x)\n", i + 1));
    }
    source.push_str(&format!("def f{n}(x):\n    return x.item()\n"));
    source.push_str("for b in loader:\n    f0(model(b))\n");
    project.write("chain.py", source);
    let output = project.run(&["graph", "--no-cache", "chain.py"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.contains("\n    chain.f1  (chain.py:4)\n"),
        "{}",
        &text[..500.min(text.len())]
    );
    assert!(
        text.contains(&format!("[{}] chain.f{n}  (chain.py:", n + 1)),
        "{}",
        &text[text.len() - 500..]
    );
    assert!(text.lines().all(|line| line.len() < 120));
    assert!(text.lines().count() < n + 10, "{} lines", text.lines().count());
}

/// `synclint graph`: PyCG's JSON names every function and module, with the edges the model
/// resolves (an instance held in an attribute, an override, a method called through its class);
/// the text tree hangs each hot function under the loop that reaches it; DOT draws it.
#[test]
fn graph_of_the_project_fixture() {
    let folder = "fixtures/model/project";
    let json = run(&repo(), &["graph", "--isolated", "--output-format", "json", folder]);
    assert!(json.status.success(), "{}", stderr(&json));
    let graph: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let callees = |caller: &str| -> Vec<String> {
        graph[caller]
            .as_array()
            .unwrap_or_else(|| panic!("{caller} is not a key: {graph:#}"))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    for (caller, callee) in [
        ("project.model.Net.forward", "project.base.BaseBlock.forward"),
        ("project.model.Net.forward", "project.heads.Head.assign"),
        ("project.base.BaseBlock.forward", "project.heads.Block.compute"),
        ("project.train.train", "project.model.Net.forward"),
        // An instance of either class: both methods.
        ("project.decode.run", "project.search.Beam.advance"),
        ("project.decode.run", "project.search.Greedy.advance"),
        ("project.train.score", "project.heads.Head.assign"),
        ("project.heads.Head.assign", "project.heads.select"),
        (
            "project.assigners.RotatedAssigner.forward",
            "project.assigners.Assigner.forward",
        ),
        (
            "project.detection.DetectionLoss.assigned",
            "project.assigners.Assigner.forward",
        ),
        (
            "project.detection.DetectionLoss.assigned",
            "project.assigners.RotatedAssigner.forward",
        ),
    ] {
        assert!(
            callees(caller).contains(&callee.to_string()),
            "{caller} -> {callee}: {graph:#}"
        );
    }
    assert_eq!(callees("project.masks"), Vec::<String>::new());
    assert!(callees("project.masks.describe").is_empty());

    let text = stdout(&run(&repo(), &["graph", "--isolated", folder]));
    let loop_at = text
        .find("the loop at fixtures/model/project/train.py:22")
        .expect(&text);
    let select = text
        .find("    project.heads.select  (fixtures/model/project/heads.py:5)")
        .expect(&text);
    assert!(loop_at < select, "{text}");
    assert!(!text.contains("project.masks.describe"), "{text}");

    let dot = stdout(&run(
        &repo(),
        &["graph", "--isolated", "--output-format", "dot", folder],
    ));
    assert!(dot.starts_with("digraph calls {"), "{dot}");
    assert!(
        dot.contains("\"project.model.Net.forward\" -> \"project.heads.Head.rows\";"),
        "{dot}"
    );
}
