//! Jupyter notebooks end to end: which cells are linted, where findings are reported (cell and
//! row within it) in every format, what `--fix`, `--diff` and `--add-noqa` write (byte for byte
//! outside the changed source lines), and what an invalid notebook does to a run.

mod common;

use common::{Project, exit_code, json, repo, stderr, stdout};

fn train_notebook() -> String {
    std::fs::read_to_string(repo().join("fixtures/notebooks/train.ipynb")).expect("the fixture notebook")
}

fn project() -> Project {
    let project = Project::new();
    project
        .write("pyproject.toml", "[tool.synclint]\n")
        .write("train.ipynb", train_notebook());
    project
}

/// The findings of the fixture notebook, as `cell N:row:column CODE`: the masked loss and the
/// helper `record` (defined in cell 4, called from the loop in cell 6), the loop's copies and
/// truth test, and the evaluation loop under `%%time`. Quiet: `summary` (called only at module
/// level), the `%%writefile` and `%%bash` cells (not Python that runs), the `!pip` and
/// `%matplotlib` lines.
const EXPECTED: &[&str] = &[
    "train.ipynb:cell 4:3:12: SYNC301",
    "train.ipynb:cell 4:7:20: SYNC101",
    "train.ipynb:cell 6:3:23: SYNC401",
    "train.ipynb:cell 6:3:42: SYNC401",
    "train.ipynb:cell 6:9:8: SYNC105",
    "train.ipynb:cell 7:5:23: SYNC401",
    "train.ipynb:cell 7:6:20: SYNC101",
    "train.ipynb:cell 7:6:30: SYNC401",
];

fn concise(output: &std::process::Output) -> Vec<String> {
    stdout(output)
        .lines()
        .filter(|line| line.contains(": SYNC"))
        .map(|line| line.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn cells_are_linted_as_one_module_and_findings_name_their_cell() {
    let project = project();
    let output = project.run(&["check", "--no-cache", "--output-format", "concise", "train.ipynb"]);
    assert_eq!(exit_code(&output), 1, "{}", stderr(&output));
    assert_eq!(concise(&output), EXPECTED);

    // The note names the loop's cell, and the full format shows the cell's own rows.
    let full = project.run(&["check", "--no-cache", "train.ipynb"]);
    let full = stdout(&full);
    assert!(full.contains("┌─ train.ipynb:cell 4:7:20"), "{full}");
    assert!(full.contains("7 │     history.append(loss.item())"), "{full}");
    assert!(
        full.contains("note: hot: `record()` is called from the loop at train.ipynb:cell 6:2"),
        "{full}"
    );
}

#[test]
fn every_format_carries_the_cell() {
    let project = project();
    let output = project.run(&["check", "--no-cache", "--output-format", "json", "train.ipynb"]);
    let rows = json(&output);
    let first = &rows.as_array().expect("an array")[0];
    assert_eq!(first["cell"], 4);
    assert_eq!(first["location"]["row"], 3);
    assert_eq!(first["noqa_row"], 3);
    let cells: Vec<u64> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["cell"].as_u64().unwrap())
        .collect();
    assert_eq!(cells, [4, 4, 6, 6, 6, 7, 7, 7]);

    let github = stdout(&project.run(&["check", "--no-cache", "--output-format", "github", "train.ipynb"]));
    assert!(github.contains("file=train.ipynb,line=7,col=20,"), "{github}");
    assert!(github.contains("::SYNC101 cell 4: `loss.item()`"), "{github}");

    let grouped = stdout(&project.run(&["check", "--no-cache", "--output-format", "grouped", "train.ipynb"]));
    assert!(grouped.contains("  cell 4:7:20 SYNC101 "), "{grouped}");

    let pylint = stdout(&project.run(&["check", "--no-cache", "--output-format", "pylint", "train.ipynb"]));
    assert!(
        pylint.contains("train.ipynb:7: [SYNC101] cell 4: `loss.item()`"),
        "{pylint}"
    );
}

#[test]
fn a_folder_walk_finds_notebooks_unless_include_leaves_them_out() {
    let project = project();
    project.write("helpers.py", "x = 1\n");
    let output = project.run(&["check", "--no-cache", "--output-format", "concise", "."]);
    assert_eq!(concise(&output).len(), EXPECTED.len(), "{}", stdout(&output));

    project.write("pyproject.toml", "[tool.synclint]\ninclude = [\"*.py\"]\n");
    let output = project.run(&["check", "--no-cache", "--output-format", "concise", "."]);
    assert_eq!(exit_code(&output), 0, "{}", stdout(&output));

    // Files outside the default include are linted once a pattern includes them.
    project.write("pyproject.toml", "[tool.synclint]\nextend-include = [\"*.pyw\"]\n");
    project.write(
        "run.pyw",
        "for x in loader:\n    loss = model(x)\n    loss.backward()\n    print(loss.item())\n",
    );
    let output = project.run(&["check", "--no-cache", "--output-format", "concise", "."]);
    assert_eq!(concise(&output).len(), EXPECTED.len() + 1, "{}", stdout(&output));
    assert!(stdout(&output).contains("run.pyw:4:11: SYNC101"), "{}", stdout(&output));
}

#[test]
fn fix_rewrites_only_the_changed_source_lines() {
    let project = project();
    let before = train_notebook();
    let output = project.run(&["check", "--no-cache", "--fix", "--unsafe-fixes", "train.ipynb"]);
    assert_eq!(exit_code(&output), 1, "{}", stderr(&output));
    assert!(
        stdout(&output).contains("(2 fixed, 6 remaining)"),
        "{}",
        stdout(&output)
    );
    let after = std::fs::read_to_string(project.path().join("train.ipynb")).unwrap();
    let expected = before
        .replace(
            "return F.cross_entropy(logits[valid], targets[valid])",
            "return F.cross_entropy(logits.flatten(0, -2), targets.masked_fill(~valid, -100).flatten(), ignore_index=-100)",
        )
        .replace(".sum().item()\"", ".sum().detach()\"");
    assert_eq!(after, expected);
    // Still a notebook: outputs and metadata as they were.
    let notebook: serde_json::Value = serde_json::from_str(&after).expect("valid JSON");
    assert_eq!(notebook["cells"][5]["outputs"][0]["text"][0], "done\n");
    assert_eq!(notebook["metadata"]["kernelspec"]["name"], "python3");

    // A second run changes nothing.
    project.run(&["check", "--no-cache", "--fix", "--unsafe-fixes", "train.ipynb"]);
    assert_eq!(
        std::fs::read_to_string(project.path().join("train.ipynb")).unwrap(),
        after
    );
}

#[test]
fn a_fix_that_adds_a_line_keeps_the_cell_list_layout_and_crlf() {
    // The fix in cell 2 spells `torch.full` and adds `import torch` at the top of the imports,
    // in cell 1. Written by another tool: CRLF, two-space indent.
    let cell = |lines: &[&str]| {
        let lines: Vec<String> = lines.iter().map(|line| format!("        \"{line}\"")).collect();
        format!(
            "    {{\r\n      \"cell_type\": \"code\",\r\n      \"metadata\": {{}},\r\n      \"outputs\": [],\r\n      \"source\": [\r\n{}\r\n      ]\r\n    }}",
            lines.join(",\r\n")
        )
    };
    let notebook = |first: &[&str], second: &[&str]| {
        format!(
            "{{\r\n  \"cells\": [\r\n{},\r\n{}\r\n  ],\r\n  \"metadata\": {{}},\r\n  \"nbformat\": 4,\r\n  \"nbformat_minor\": 5\r\n}}",
            cell(first),
            cell(second)
        )
    };
    let imports = ["from torch import tensor"];
    let step = |zero: &str| {
        [
            "for batch in loader:\\n".to_string(),
            "    loss = model(batch)\\n".to_string(),
            "    loss.backward()\\n".to_string(),
            format!("    zero = {zero}, device=\\\"cuda\\\")"),
        ]
    };
    let before_step = step("tensor(0.0");
    let before = notebook(&imports, &before_step.iter().map(String::as_str).collect::<Vec<_>>());
    let project = Project::new();
    project.write("pyproject.toml", "").write("loop.ipynb", &before);

    let diff = stdout(&project.run(&["check", "--no-cache", "--diff", "loop.ipynb"]));
    assert!(
        diff.starts_with("--- loop.ipynb:cell 1\n+++ loop.ipynb:cell 1\n"),
        "{diff}"
    );
    assert!(
        diff.contains("--- loop.ipynb:cell 2\n+++ loop.ipynb:cell 2\n"),
        "{diff}"
    );

    let output = project.run(&["check", "--no-cache", "--fix", "loop.ipynb"]);
    assert_eq!(exit_code(&output), 0, "{}", stdout(&output));
    let after_step = step("torch.full((), 0.0");
    let expected = notebook(
        &["import torch\\n", imports[0]],
        &after_step.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert_eq!(
        std::fs::read_to_string(project.path().join("loop.ipynb")).unwrap(),
        expected
    );
}

#[test]
fn add_noqa_writes_directives_into_the_cells() {
    let project = project();
    let output = project.run(&["check", "--no-cache", "--add-noqa", "train.ipynb"]);
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    let after = std::fs::read_to_string(project.path().join("train.ipynb")).unwrap();
    assert!(
        after.contains("\"    history.append(loss.item())  # noqa: SYNC101\\n\","),
        "{after}"
    );
    let output = project.run(&["check", "--no-cache", "train.ipynb"]);
    assert_eq!(exit_code(&output), 0, "{}", stdout(&output));
    project.run(&["check", "--no-cache", "--add-noqa", "train.ipynb"]);
    assert_eq!(
        std::fs::read_to_string(project.path().join("train.ipynb")).unwrap(),
        after
    );
}

#[test]
fn an_invalid_notebook_is_an_error_naming_it_and_others_are_still_linted() {
    let project = project();
    project.write(
        "broken.ipynb",
        "{\"cells\": [{\"cell_type\": \"code\", \"source\": [\"x = 1\"]",
    );
    let output = project.run(&["check", "--no-cache", "--output-format", "concise", "."]);
    assert_eq!(exit_code(&output), 2);
    assert!(
        stderr(&output).contains("broken.ipynb: not a valid Jupyter notebook: EOF while parsing"),
        "{}",
        stderr(&output)
    );
    assert_eq!(concise(&output).len(), EXPECTED.len());
}

#[test]
fn a_syntax_error_is_shown_in_its_cell() {
    let project = Project::new();
    let notebook = r#"{"cells": [{"cell_type": "code", "source": ["x = 1\n"]}, {"cell_type": "markdown", "source": []}, {"cell_type": "code", "source": ["y = (\n"]}], "nbformat": 4}"#;
    project.write("pyproject.toml", "").write("bad.ipynb", notebook);
    let output = project.run(&["check", "--no-cache", "--output-format", "concise", "bad.ipynb"]);
    assert_eq!(exit_code(&output), 2);
    assert!(stdout(&output).contains("bad.ipynb:cell 3:"), "{}", stdout(&output));
    let output = project.run(&["check", "--no-cache", "--statistics", "bad.ipynb"]);
    assert!(
        stderr(&output).contains("bad.ipynb:cell 3: syntax error"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn stdin_named_as_a_notebook_is_fixed_as_one() {
    let project = project();
    let output = project.run_stdin(
        &[
            "check",
            "--no-cache",
            "--fix",
            "--unsafe-fixes",
            "--stdin-filename",
            "train.ipynb",
            "-",
        ],
        train_notebook(),
    );
    let fixed = stdout(&output);
    assert!(fixed.contains(".sum().detach()\""), "{fixed}");
    serde_json::from_str::<serde_json::Value>(&fixed).expect("the notebook's JSON");
}

#[test]
fn a_notebook_is_never_the_module_an_import_names() {
    // `train.ipynb` beside `train.py`: `from train import record` is the Python file's.
    let project = project();
    project
        .write("train.py", "def record(loss):\n    return loss.item()\n")
        .write(
            "run.py",
            "from train import record\n\nfor x in loader:\n    loss = model(x)\n    loss.backward()\n    record(loss)\n",
        );
    let output = project.run(&["check", "--no-cache", "train.py"]);
    let text = stdout(&output);
    assert!(text.contains("┌─ train.py:2:12"), "{text}");
    assert!(
        text.contains("`record()` is called from the loop at run.py:3"),
        "{text}"
    );
}

#[test]
fn unused_noqa_is_reported_and_removed_in_cells() {
    let project = Project::new();
    let notebook = r#"{"cells": [{"cell_type": "code", "source": ["x = 1  # noqa: SYNC101\n"]}, {"cell_type": "code", "source": ["for b in loader:\n", "    loss = model(b)\n", "    loss.backward()\n", "    v = loss.item()  # noqa: SYNC101, SYNC203"]}], "nbformat": 4}"#;
    project.write("pyproject.toml", "").write("u.ipynb", notebook);
    let output = project.run(&[
        "check",
        "--no-cache",
        "--extend-select",
        "SYNC900",
        "--output-format",
        "concise",
        "u.ipynb",
    ]);
    assert_eq!(
        concise(&output),
        ["u.ipynb:cell 1:1:8: SYNC900", "u.ipynb:cell 2:4:22: SYNC900"]
    );
    project.run(&["check", "--no-cache", "--extend-select", "SYNC900", "--fix", "u.ipynb"]);
    let fixed = std::fs::read_to_string(project.path().join("u.ipynb")).unwrap();
    let expected = notebook
        .replace("x = 1  # noqa: SYNC101", "x = 1")
        .replace(", SYNC203", "");
    assert_eq!(fixed, expected);
}

#[test]
fn an_added_import_goes_below_a_cell_magic() {
    // `%%time` works only on its cell's first line: `import torch` goes after it.
    let project = Project::new();
    let notebook = r#"{"cells": [{"cell_type": "code", "source": ["%%time\n", "from torch import tensor"]}, {"cell_type": "code", "source": ["for b in loader:\n", "    loss = model(b)\n", "    loss.backward()\n", "    zero = tensor(0.0, device=\"cuda\")"]}], "nbformat": 4}"#;
    project.write("pyproject.toml", "").write("m.ipynb", notebook);
    let output = project.run(&["check", "--no-cache", "--fix", "m.ipynb"]);
    assert_eq!(exit_code(&output), 0, "{}{}", stdout(&output), stderr(&output));
    let fixed = std::fs::read_to_string(project.path().join("m.ipynb")).unwrap();
    let expected = notebook
        .replace(r#"["%%time\n", "#, r#"["%%time\n", "import torch\n", "#)
        .replace("tensor(0.0,", "torch.full((), 0.0,");
    assert_eq!(fixed, expected);
}

#[test]
fn the_call_graph_names_a_notebooks_functions_by_its_file() {
    let project = project();
    let segmentation = std::fs::read_to_string(repo().join("fixtures/notebooks/segmentation.ipynb")).unwrap();
    project.write("segmentation.ipynb", segmentation);
    let output = project.run(&["graph", "--no-cache", "--output-format", "json", "."]);
    let graph = json(&output);
    assert_eq!(
        graph["train"],
        serde_json::json!(["train.masked_loss", "train.record", "train.summary"])
    );
    assert_eq!(
        graph["segmentation"],
        serde_json::json!(["segmentation.iou", "segmentation.segmentation_loss"])
    );
    let tree = stdout(&project.run(&["graph", "--no-cache", "."]));
    assert!(
        tree.contains("the loop at train.ipynb:cell 6:2\n  train.masked_loss  (train.ipynb:cell 4:1)\n"),
        "{tree}"
    );
}
