//! The command line end to end: the real binary on real files in temporary folders. Output
//! formats, exit codes, `# noqa`, configuration, file discovery, awkward files, stdin, the `rule`
//! command and determinism.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{
    ALL_FORMATS, Project, exit_code, json, json_findings, json_locations, repo, run, run_stdin, stderr, stdout,
    synclint,
};
use synclint::registry::Rule;

/// A hot loop with one finding: SYNC101 at 2:5.
const ONE_FINDING: &str = "for b in loader:\n    model(b).item()\n";

/// A hot loop with two findings: SYNC101 at 2:5 and SYNC103 at 3:5.
const TWO_FINDINGS: &str = "for b in loader:\n    model(b).item()\n    model(b).cpu()\n";

/// Nothing to report: the same calls at module level are cold.
const CLEAN: &str = "import torch\n\nx = torch.ones(3, device=\"cuda\").item()\n";

/// A training script and a loss in another file that it makes hot: safe fixes, an unsafe fix,
/// findings without fixes, and a note naming a cross-file call chain.
fn training_project() -> Project {
    let project = Project::new();
    project.write(
        "train.py",
        r#"import torch
import torch.nn.functional as F

from losses import masked_mean

dev = torch.device("cuda")


def train(model, loader, opt):
    for step, (x, y) in enumerate(loader):
        x = x.to(dev)
        out = model(x)
        loss = F.cross_entropy(out, y.to(dev)) + masked_mean(out, out > 0)
        if torch.isnan(loss).any():
            continue
        scale = torch.tensor(2.0, device=dev)
        print(f"step {step}: {loss.item():.3f}")
"#,
    );
    project.write(
        "losses.py",
        "import torch\n\n\ndef masked_mean(x, mask):\n    return x.sum() / torch.linalg.inv(x).sum()\n",
    );
    project
}

/// The path of every finding in JSON output, in output order.
fn paths(output: &std::process::Output) -> Vec<String> {
    json_locations(output).into_iter().map(|(_, path, _, _)| path).collect()
}

/// The codes found, as a set.
fn codes(output: &std::process::Output) -> BTreeSet<String> {
    json_findings(output).into_iter().map(|(code, _)| code).collect()
}

fn set(codes: &[&str]) -> BTreeSet<String> {
    codes.iter().map(|c| c.to_string()).collect()
}

// Output formats ---------------------------------------------------------------------------

#[test]
fn full_output() {
    let project = training_project();
    let output = project.run(&["check", "--isolated", "--color", "never", "."]);
    assert_eq!(exit_code(&output), 1, "{}", stderr(&output));
    assert!(
        !stdout(&output).contains('\u{1b}'),
        "no escape codes with --color never"
    );
    insta::assert_snapshot!("full", stdout(&output));
}

#[test]
fn full_output_color() {
    let project = training_project();
    // The helper sets NO_COLOR and stdout is a pipe: no color unless asked for.
    let plain = project.run(&["check", "--isolated", "."]);
    assert!(!stdout(&plain).contains('\u{1b}'));
    let colored = project.run(&["check", "--isolated", "--color", "always", "."]);
    assert!(
        stdout(&colored).contains("\u{1b}["),
        "--color always colors: {}",
        stdout(&colored)
    );
}

#[test]
fn concise_output() {
    let project = training_project();
    let output = project.run(&["check", "--isolated", "--output-format", "concise", "."]);
    assert_eq!(exit_code(&output), 1);
    insta::assert_snapshot!("concise", stdout(&output));
}

#[test]
fn json_output_has_ruffs_shape() {
    let project = training_project();
    let output = project.run(&["check", "--isolated", "--output-format", "json", "."]);
    assert_eq!(exit_code(&output), 1);
    let rows = json(&output);
    let rows = rows.as_array().expect("an array");
    assert_eq!(rows.len(), 6, "{rows:#?}");
    let location = |value: &serde_json::Value| {
        assert!(value["row"].as_u64().is_some_and(|r| r >= 1), "{value}");
        assert!(value["column"].as_u64().is_some_and(|c| c >= 1), "{value}");
    };
    for row in rows {
        let code = row["code"].as_str().expect("a code");
        assert!(Rule::from_code(code).is_some(), "{code}");
        assert!(row["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert!(row["filename"].as_str().is_some_and(|f| f.ends_with(".py")));
        location(&row["location"]);
        location(&row["end_location"]);
        assert_eq!(row["noqa_row"], row["location"]["row"]);
        assert!(
            row["url"]
                .as_str()
                .is_some_and(|u| u.starts_with("https://") && u.contains(code))
        );
        match &row["fix"] {
            serde_json::Value::Null => {}
            fix => {
                assert!(
                    matches!(fix["applicability"].as_str(), Some("safe" | "unsafe")),
                    "{fix}"
                );
                assert!(fix["message"].as_str().is_some_and(|m| !m.is_empty()), "{fix}");
                let edits = fix["edits"].as_array().expect("edits");
                assert!(!edits.is_empty());
                for edit in edits {
                    assert!(edit["content"].is_string());
                    location(&edit["location"]);
                    location(&edit["end_location"]);
                }
            }
        }
    }
    // One of each kind, and the JSON says `unsafe` without changing the fix's message.
    let fix_of = |code: &str| {
        rows.iter()
            .find(|r| r["code"] == code)
            .map(|r| r["fix"].clone())
            .expect(code)
    };
    assert_eq!(fix_of("SYNC101"), serde_json::Value::Null);
    assert_eq!(fix_of("SYNC401")["applicability"], "safe");
    let unsafe_fix = fix_of("SYNC303");
    assert_eq!(unsafe_fix["applicability"], "unsafe");
    assert!(
        !unsafe_fix["message"].as_str().unwrap().contains("(unsafe)"),
        "{unsafe_fix}"
    );
    // `torch.tensor(2.0, device=dev)` -> `torch.full((), 2.0, device=dev)`: two small edits,
    // so the rest of the call (layout, comments) is kept.
    let tensor_edits = rows
        .iter()
        .find(|r| r["code"] == "SYNC401" && r["location"]["row"] == 16)
        .map(|r| r["fix"]["edits"].clone())
        .expect("the torch.tensor fix");
    assert_eq!(
        tensor_edits,
        serde_json::json!([
            {"content": "full", "location": {"row": 16, "column": 23}, "end_location": {"row": 16, "column": 29}},
            {"content": "(), ", "location": {"row": 16, "column": 30}, "end_location": {"row": 16, "column": 30}},
        ])
    );
}

#[test]
fn json_output_is_an_empty_array_when_clean() {
    let project = Project::new();
    project.write("clean.py", CLEAN);
    let output = project.run(&["check", "--isolated", "--output-format", "json", "."]);
    assert_eq!(exit_code(&output), 0);
    assert_eq!(json(&output), serde_json::json!([]));
}

/// A GitHub annotation's parts: (title, properties, message).
type Annotation = (String, Vec<(String, String)>, String);

/// `::warning title=synclint (CODE),file=PATH,line=N,col=N,endLine=N,endColumn=N::CODE message`
/// as its parts.
fn parse_github_line(line: &str) -> Option<Annotation> {
    let rest = line.strip_prefix("::warning ")?;
    let (properties, message) = rest.split_once("::")?;
    let properties: Vec<(String, String)> = properties
        .split(',')
        .map(|pair| pair.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect::<Option<_>>()?;
    let title = properties.iter().find(|(k, _)| k == "title")?.1.clone();
    Some((title, properties, message.to_string()))
}

#[test]
fn github_output() {
    let project = training_project();
    let output = project.run(&["check", "--isolated", "--output-format", "github", "."]);
    assert_eq!(exit_code(&output), 1);
    let text = stdout(&output);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    for line in lines {
        let (title, properties, message) =
            parse_github_line(line).unwrap_or_else(|| panic!("not a workflow command: {line}"));
        let keys: Vec<&str> = properties.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["title", "file", "line", "col", "endLine", "endColumn"], "{line}");
        let code = title
            .strip_prefix("synclint (")
            .and_then(|t| t.strip_suffix(')'))
            .expect("synclint (CODE)");
        assert!(Rule::from_code(code).is_some(), "{line}");
        assert!(message.starts_with(&format!("{code} ")), "{line}");
        for (key, value) in &properties[2..] {
            assert!(value.parse::<u32>().is_ok_and(|n| n >= 1), "{key}={value} in {line}");
        }
        assert!(properties[1].1.ends_with(".py"), "{line}");
    }
    assert!(
        text.contains("file=train.py,line=17,col=31,endLine=17,endColumn=42::SYNC101 "),
        "{text}"
    );
}

#[test]
fn sarif_output() {
    let project = training_project();
    let output = project.run(&["check", "--isolated", "--output-format", "sarif", "."]);
    assert_eq!(exit_code(&output), 1);
    let sarif = json(&output);
    assert_eq!(sarif["version"], "2.1.0");
    let driver = &sarif["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "synclint");
    let rule_ids: Vec<&str> = driver["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    let all: Vec<&str> = Rule::ALL.iter().map(|r| r.code()).collect();
    assert_eq!(rule_ids, all);
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), 6);
    for result in results {
        let rule_id = result["ruleId"].as_str().expect("ruleId");
        let index = result["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(all[index], rule_id);
        assert!(result["message"]["text"].as_str().is_some_and(|t| !t.is_empty()));
        let location = &result["locations"][0]["physicalLocation"];
        assert!(
            location["artifactLocation"]["uri"]
                .as_str()
                .is_some_and(|u| u.ends_with(".py"))
        );
        assert!(location["region"]["startLine"].as_u64().is_some_and(|n| n >= 1));
        assert!(location["region"]["startColumn"].as_u64().is_some_and(|n| n >= 1));
    }
}

// Ruff's other output formats ---------------------------------------------------------------

/// The same call flagged twice (4:5 and 5:5), a fixable SYNC401 (6:9) and a row and a column of
/// two digits (11:13).
const STEPS: &str = "import torch\n\nfor b in loader:\n    model(b).item()\n    model(b).item()\n    x = torch.tensor(2.0, device=\"cuda\")\n    # two-digit rows below\n    #\n    #\n    if b:\n        y = model(b).cpu()\n";

/// Findings in two files and a file without any: `pkg/steps.py` is `STEPS`, `train.py` has
/// SYNC101 and SYNC103.
fn formats_project() -> Project {
    let project = Project::new();
    project
        .write("train.py", TWO_FINDINGS)
        .write("clean.py", CLEAN)
        .write("pkg/steps.py", STEPS);
    project
}

/// (path, row, column, code) of every finding of `formats_project`, in output order.
const FORMATS_FINDINGS: [(&str, u64, u64, &str); 6] = [
    ("pkg/steps.py", 4, 5, "SYNC101"),
    ("pkg/steps.py", 5, 5, "SYNC101"),
    ("pkg/steps.py", 6, 9, "SYNC401"),
    ("pkg/steps.py", 11, 13, "SYNC103"),
    ("train.py", 2, 5, "SYNC101"),
    ("train.py", 3, 5, "SYNC103"),
];

/// A finding as the formats that carry one message report it, read from the `json` format.
#[derive(Debug)]
struct Reported {
    code: String,
    path: String,
    row: u64,
    column: u64,
    end_row: u64,
    end_column: u64,
    /// The message, then `; ` and the help, then the note in parentheses.
    message: String,
    /// The `json` row it was read from.
    json: serde_json::Value,
}

/// What `synclint check` reports in `project`, read from its `json` output.
fn reported(project: &Project) -> Vec<Reported> {
    let output = project.run(&["check", "--isolated", "--output-format", "json", "."]);
    let rows = json(&output);
    let reported: Vec<Reported> = rows
        .as_array()
        .expect("an array")
        .iter()
        .map(|row| {
            let text = |key: &str| row[key].as_str().map(str::to_string);
            let number = |location: &str, key: &str| row[location][key].as_u64().expect(key);
            let mut message = text("message").expect("a message");
            if let Some(help) = text("help") {
                message = format!("{message}; {help}");
            }
            if let Some(note) = text("note") {
                message = format!("{message} ({note})");
            }
            Reported {
                code: text("code").expect("a code"),
                path: text("filename").expect("a filename"),
                row: number("location", "row"),
                column: number("location", "column"),
                end_row: number("end_location", "row"),
                end_column: number("end_location", "column"),
                message,
                json: row.clone(),
            }
        })
        .collect();
    let found: Vec<(&str, u64, u64, &str)> = reported
        .iter()
        .map(|r| (r.path.as_str(), r.row, r.column, r.code.as_str()))
        .collect();
    assert_eq!(found, FORMATS_FINDINGS, "the project's findings changed");
    reported
}

/// The stdout of `check --output-format FORMAT` (and `extra` arguments) on `project`, which must
/// exit with `expected_exit`.
fn run_format(project: &Project, format: &str, extra: &[&str], expected_exit: i32) -> String {
    let mut args = vec!["check", "--isolated", "--output-format", format];
    args.extend_from_slice(extra);
    args.push(".");
    let output = project.run(&args);
    assert_eq!(exit_code(&output), expected_exit, "{format}: {}", stderr(&output));
    stdout(&output)
}

/// A project without findings.
fn clean_project() -> Project {
    let project = Project::new();
    project.write("clean.py", CLEAN);
    project
}

#[test]
fn json_lines_output_is_the_json_objects_one_per_line() {
    let project = formats_project();
    let array = json(&project.run(&["check", "--isolated", "--output-format", "json", "."]));
    let text = run_format(&project, "json-lines", &[], 1);
    let objects: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert_eq!(objects.len(), FORMATS_FINDINGS.len(), "{text}");
    assert_eq!(serde_json::Value::Array(objects), array);
    assert!(text.ends_with('\n'));
    assert_eq!(run_format(&clean_project(), "json-lines", &[], 0), "");
}

#[test]
fn junit_output() {
    let project = formats_project();
    let expected = reported(&project);
    let text = run_format(&project, "junit", &[], 1);
    assert!(
        text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"),
        "{text}"
    );
    let document = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let root = document.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let attribute =
        |node: roxmltree::Node, name: &str| node.attribute(name).unwrap_or_else(|| panic!("{name}")).to_string();
    assert_eq!(attribute(root, "name"), "synclint");
    assert_eq!(attribute(root, "tests"), "6");
    assert_eq!(attribute(root, "failures"), "6");
    assert_eq!(attribute(root, "errors"), "0");
    let suites: Vec<roxmltree::Node> = root.children().filter(|n| n.is_element()).collect();
    let suite_summary: Vec<(String, String, String)> = suites
        .iter()
        .map(|suite| {
            assert_eq!(suite.tag_name().name(), "testsuite");
            assert_eq!(attribute(*suite, "package"), "org.synclint");
            assert_eq!(attribute(*suite, "errors"), "0");
            assert_eq!(attribute(*suite, "disabled"), "0");
            (
                attribute(*suite, "name"),
                attribute(*suite, "tests"),
                attribute(*suite, "failures"),
            )
        })
        .collect();
    let suite = |name: &str, n: &str| (name.to_string(), n.to_string(), n.to_string());
    assert_eq!(suite_summary, [suite("pkg/steps.py", "4"), suite("train.py", "2")]);

    let cases: Vec<(String, roxmltree::Node)> = suites
        .iter()
        .flat_map(|suite| {
            let name = attribute(*suite, "name");
            suite
                .children()
                .filter(|n| n.is_element())
                .map(move |case| (name.clone(), case))
        })
        .collect();
    assert_eq!(cases.len(), expected.len());
    for ((suite, case), finding) in cases.iter().zip(&expected) {
        assert_eq!(case.tag_name().name(), "testcase");
        assert_eq!(*suite, finding.path);
        assert_eq!(attribute(*case, "name"), format!("org.synclint.{}", finding.code));
        let classname = if finding.path == "train.py" {
            "train"
        } else {
            "pkg.steps"
        };
        assert_eq!(attribute(*case, "classname"), classname);
        assert_eq!(attribute(*case, "line"), finding.row.to_string());
        assert_eq!(attribute(*case, "column"), finding.column.to_string());
        let failures: Vec<roxmltree::Node> = case.children().filter(|n| n.is_element()).collect();
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].tag_name().name(), "failure");
        // The quotes in `device="cuda"` survive as attribute and as text.
        assert_eq!(attribute(failures[0], "message"), finding.message);
        assert_eq!(
            failures[0].text(),
            Some(format!("line {}, col {}, {}", finding.row, finding.column, finding.message).as_str())
        );
    }

    let clean = run_format(&clean_project(), "junit", &[], 0);
    let document = roxmltree::Document::parse(&clean).unwrap_or_else(|e| panic!("{e}\n{clean}"));
    let root = document.root_element();
    assert_eq!(
        (attribute(root, "tests"), attribute(root, "failures")),
        ("1".into(), "0".into())
    );
    let suites: Vec<roxmltree::Node> = root.children().filter(|n| n.is_element()).collect();
    assert_eq!(suites.len(), 1, "{clean}");
    assert_eq!(attribute(suites[0], "name"), "synclint");
    assert_eq!(attribute(suites[0], "failures"), "0");
    let cases: Vec<roxmltree::Node> = suites[0].children().filter(|n| n.is_element()).collect();
    assert_eq!(cases.len(), 1, "{clean}");
    assert_eq!(attribute(cases[0], "name"), "No errors found");
    assert_eq!(attribute(cases[0], "classname"), "synclint");
    assert!(!cases[0].has_children(), "a passing test case: {clean}");
}

/// GitLab Code Quality issues, with their fingerprints in output order.
fn gitlab_issues(project: &Project) -> (Vec<serde_json::Value>, Vec<String>) {
    let text = run_format(project, "gitlab", &[], 1);
    let issues: Vec<serde_json::Value> = serde_json::from_str::<serde_json::Value>(&text)
        .unwrap_or_else(|e| panic!("{e}\n{text}"))
        .as_array()
        .expect("an array")
        .clone();
    let fingerprints = issues
        .iter()
        .map(|issue| issue["fingerprint"].as_str().expect("a fingerprint").to_string())
        .collect();
    (issues, fingerprints)
}

#[test]
fn gitlab_output() {
    let project = formats_project();
    let expected = reported(&project);
    let (issues, fingerprints) = gitlab_issues(&project);
    assert_eq!(issues.len(), expected.len());
    for (issue, finding) in issues.iter().zip(&expected) {
        assert_eq!(issue["check_name"], finding.code.as_str());
        assert_eq!(issue["description"], format!("{}: {}", finding.code, finding.message));
        assert_eq!(issue["severity"], "major");
        let location = &issue["location"];
        assert_eq!(location["path"], finding.path.as_str());
        let position = |end: &str| {
            let at = &location["positions"][end];
            (at["line"].as_u64().unwrap(), at["column"].as_u64().unwrap())
        };
        assert_eq!(position("begin"), (finding.row, finding.column));
        assert_eq!(position("end"), (finding.end_row, finding.end_column));
    }
    for fingerprint in &fingerprints {
        assert!(
            fingerprint.len() == 16 && fingerprint.chars().all(|c| c.is_ascii_hexdigit()),
            "{fingerprint}"
        );
    }
    let unique: BTreeSet<&String> = fingerprints.iter().collect();
    assert_eq!(
        unique.len(),
        fingerprints.len(),
        "the same call twice, two fingerprints: {fingerprints:?}"
    );

    // Blank lines above every finding move them down and keep their fingerprints.
    project.write("pkg/steps.py", format!("\n\n\n{STEPS}"));
    let (moved, moved_fingerprints) = gitlab_issues(&project);
    assert_eq!(moved_fingerprints, fingerprints);
    assert_eq!(moved[0]["location"]["positions"]["begin"]["line"], 7, "{:#}", moved[0]);

    // Changing the flagged code changes its fingerprint and no other.
    project.write(
        "train.py",
        TWO_FINDINGS.replace("model(b).cpu()", "model(b).cuda().cpu()"),
    );
    let (_, changed) = gitlab_issues(&project);
    let differing: Vec<usize> = (0..changed.len()).filter(|&i| changed[i] != fingerprints[i]).collect();
    assert_eq!(differing, [5], "{changed:?}\n{fingerprints:?}");

    assert_eq!(
        json(&clean_project().run(&["check", "--isolated", "--output-format", "gitlab", "."])),
        serde_json::json!([])
    );
}

#[test]
fn pylint_output() {
    let project = formats_project();
    let expected = reported(&project);
    let text = run_format(&project, "pylint", &[], 1);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), expected.len(), "{text}");
    for (line, finding) in lines.iter().zip(&expected) {
        let (path, rest) = line.split_once(':').expect("path:");
        let (row, rest) = rest.split_once(": ").expect("row: ");
        let (code, message) = rest
            .strip_prefix('[')
            .and_then(|rest| rest.split_once("] "))
            .expect("[CODE] message");
        assert_eq!(
            (path, row, code, message),
            (
                finding.path.as_str(),
                finding.row.to_string().as_str(),
                finding.code.as_str(),
                finding.message.as_str()
            )
        );
    }
    assert_eq!(run_format(&clean_project(), "pylint", &[], 0), "");
}

#[test]
fn rdjson_output() {
    let project = formats_project();
    let expected = reported(&project);
    let text = run_format(&project, "rdjson", &[], 1);
    let report: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(report["source"]["name"], "synclint");
    // The repository Cargo.toml names, if it names one.
    let repository = env!("CARGO_PKG_REPOSITORY");
    let url = report["source"].get("url");
    assert_eq!(
        url,
        (!repository.is_empty()).then(|| serde_json::json!(repository)).as_ref()
    );
    assert_eq!(report["severity"], "WARNING");
    let diagnostics = report["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(diagnostics.len(), expected.len());
    let range = |start: &serde_json::Value, end: &serde_json::Value| {
        serde_json::json!({
            "start": {"line": start["row"], "column": start["column"]},
            "end": {"line": end["row"], "column": end["column"]},
        })
    };
    for (diagnostic, finding) in diagnostics.iter().zip(&expected) {
        assert_eq!(diagnostic["message"], finding.message.as_str());
        assert_eq!(diagnostic["location"]["path"], finding.path.as_str());
        assert_eq!(
            diagnostic["location"]["range"],
            range(&finding.json["location"], &finding.json["end_location"])
        );
        assert_eq!(diagnostic["code"]["value"], finding.code.as_str());
        assert_eq!(diagnostic["code"]["url"], finding.json["url"]);
        assert!(
            diagnostic.get("severity").is_none(),
            "the report's severity: {diagnostic}"
        );
        // Suggestions: the fix's edits, only where there is a fix.
        match &finding.json["fix"] {
            serde_json::Value::Null => assert!(diagnostic.get("suggestions").is_none(), "{diagnostic}"),
            fix => {
                let edits: Vec<serde_json::Value> = fix["edits"]
                    .as_array()
                    .expect("edits")
                    .iter()
                    .map(|edit| {
                        serde_json::json!({
                            "range": range(&edit["location"], &edit["end_location"]),
                            "text": edit["content"],
                        })
                    })
                    .collect();
                assert!(!edits.is_empty());
                assert_eq!(diagnostic["suggestions"], serde_json::Value::Array(edits));
            }
        }
    }
    let with_suggestions = diagnostics.iter().filter(|d| d.get("suggestions").is_some()).count();
    assert_eq!(with_suggestions, 1);

    let clean = json(&clean_project().run(&["check", "--isolated", "--output-format", "rdjson", "."]));
    assert_eq!(clean["diagnostics"], serde_json::json!([]));
}

#[test]
fn azure_output() {
    let project = formats_project();
    let expected = reported(&project);
    let text = run_format(&project, "azure", &[], 1);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), expected.len(), "{text}");
    for (line, finding) in lines.iter().zip(&expected) {
        let (properties, message) = line
            .strip_prefix("##vso[task.logissue ")
            .and_then(|rest| rest.split_once(']'))
            .unwrap_or_else(|| panic!("not a logging command: {line}"));
        let properties: Vec<(&str, &str)> = properties
            .split(';')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or_else(|| panic!("{p} in {line}")))
            .collect();
        let row = finding.row.to_string();
        let column = finding.column.to_string();
        assert_eq!(
            properties,
            [
                ("type", "error"),
                ("sourcepath", finding.path.as_str()),
                ("linenumber", row.as_str()),
                ("columnnumber", column.as_str()),
                ("code", finding.code.as_str()),
            ]
        );
        assert_eq!(message, finding.message);
    }
    assert_eq!(run_format(&clean_project(), "azure", &[], 0), "");
}

#[test]
fn grouped_output() {
    let project = formats_project();
    let expected = reported(&project);
    let text = run_format(&project, "grouped", &[], 1);
    let (groups, summary) = text.rsplit_once("\n\n").expect("groups, then the summary");
    assert_eq!(summary, "Found 6 findings.\n[*] 1 fixable with `--fix`.\n");
    let mut found = Vec::new();
    for group in groups.split("\n\n") {
        let mut lines = group.lines();
        let header = lines.next().expect("a header");
        let path = header.strip_suffix(':').unwrap_or_else(|| panic!("path: {header}"));
        let lines: Vec<&str> = lines.collect();
        // Rows are right-aligned and columns padded: every `:` and every code starts at the same
        // place in a file's group.
        let colons: BTreeSet<usize> = lines.iter().map(|l| l.find(':').unwrap()).collect();
        let codes: BTreeSet<usize> = lines.iter().map(|l| l.find("SYNC").unwrap()).collect();
        assert_eq!((colons.len(), codes.len()), (1, 1), "{group}");
        for line in lines {
            let rest = line.strip_prefix("  ").unwrap_or_else(|| panic!("indented: {line:?}"));
            let (location, rest) = rest.trim_start().split_once(' ').unwrap();
            let (row, column) = location.split_once(':').unwrap();
            let (code, message) = rest.trim_start().split_once(' ').unwrap();
            let (fixable, message) = match message.strip_prefix("[*] ") {
                Some(message) => (true, message),
                None => (false, message),
            };
            let (row, column) = (row.parse::<u64>().unwrap(), column.parse::<u64>().unwrap());
            found.push((path, row, column, code, fixable, message));
        }
    }
    assert_eq!(found.len(), expected.len(), "{text}");
    for (&(path, row, column, code, fixable, message), finding) in found.iter().zip(&expected) {
        assert_eq!(
            (path, row, column, code),
            (
                finding.path.as_str(),
                finding.row,
                finding.column,
                finding.code.as_str()
            )
        );
        // The message without help or note, as `concise` prints it.
        assert_eq!(message, finding.json["message"].as_str().unwrap());
        assert_eq!(fixable, finding.code == "SYNC401", "{message}");
    }
    assert!(text.contains("   4:5  SYNC101 "), "{text}");
    assert!(text.contains("  11:13 SYNC103 "), "{text}");

    let quiet = run_format(&project, "grouped", &["--quiet"], 1);
    assert_eq!(quiet, format!("{groups}\n\n"));
    assert_eq!(run_format(&clean_project(), "grouped", &[], 0), "All checks passed!\n");
}

/// A syntax error in each new format: `invalid-syntax` where a code goes, as `sarif` and
/// `concise` write it (`json-lines`, as `json`, has no code).
#[test]
fn new_formats_report_syntax_errors() {
    let project = Project::new();
    project.write("bad.py", "def (:\n");
    let output_of = |format: &str| {
        let output = project.run(&["check", "--isolated", "--output-format", format, "bad.py"]);
        assert_eq!(exit_code(&output), 2, "{format}");
        stdout(&output)
    };
    let line = serde_json::from_str::<serde_json::Value>(output_of("json-lines").lines().next().unwrap()).unwrap();
    assert_eq!(line["code"], serde_json::Value::Null);
    assert!(output_of("pylint").starts_with("bad.py:1: [invalid-syntax] "));
    assert!(output_of("azure").contains(";code=invalid-syntax;]"));
    assert!(output_of("grouped").starts_with("bad.py:\n  1:5 invalid-syntax "));
    let junit = output_of("junit");
    let document = roxmltree::Document::parse(&junit).unwrap();
    let case = document.descendants().find(|n| n.has_tag_name("testcase")).unwrap();
    assert_eq!(case.attribute("name"), Some("org.synclint.invalid-syntax"));
    let gitlab: serde_json::Value = serde_json::from_str(&output_of("gitlab")).unwrap();
    assert_eq!(gitlab[0]["check_name"], "invalid-syntax");
    let rdjson: serde_json::Value = serde_json::from_str(&output_of("rdjson")).unwrap();
    let diagnostic = &rdjson["diagnostics"][0];
    assert_eq!(diagnostic["code"], serde_json::json!({"value": "invalid-syntax"}));
    assert_eq!(diagnostic["severity"], "ERROR");
}

#[test]
fn output_file() {
    let project = formats_project();
    for format in ["json", "junit", "full"] {
        let to_stdout = project.run(&["check", "--isolated", "--output-format", format, "."]);
        let to_file = project.run(&[
            "check",
            "--isolated",
            "--output-format",
            format,
            "-o",
            "report.out",
            ".",
        ]);
        assert_eq!(exit_code(&to_file), exit_code(&to_stdout), "{format}");
        assert_eq!(stdout(&to_file), "", "{format}: nothing on stdout");
        let written = std::fs::read(project.path().join("report.out")).expect("the report");
        // Everything stdout had, the summary of `full` included.
        assert_eq!(written, to_stdout.stdout, "{format}");
    }
    let statistics = project.run(&["check", "--isolated", "--statistics", "--output-file", "stats.txt", "."]);
    assert_eq!(stdout(&statistics), "");
    let stats = std::fs::read_to_string(project.path().join("stats.txt")).unwrap();
    assert!(stats.contains("SYNC101"), "{stats}");

    // From stdin too; when fixing, the fixed source still goes to stdout and the findings to
    // the file.
    let stdin_args = [
        "check",
        "--isolated",
        "--output-format",
        "json",
        "-o",
        "stdin.json",
        "-",
    ];
    let stdin_report = || {
        let text = std::fs::read_to_string(project.path().join("stdin.json")).expect("the report");
        let rows: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        rows.as_array()
            .expect("an array")
            .iter()
            .map(|row| row["code"].as_str().unwrap().to_string())
            .collect::<Vec<String>>()
    };
    let from_stdin = project.run_stdin(&stdin_args, ONE_FINDING);
    assert_eq!((exit_code(&from_stdin), stdout(&from_stdin)), (1, String::new()));
    assert_eq!(stdin_report(), ["SYNC101"]);
    let mut fix_args = stdin_args.to_vec();
    fix_args.insert(1, "--fix");
    let fixed = project.run_stdin(&fix_args, STEPS);
    assert!(stdout(&fixed).contains("torch.full((), 2.0"), "{}", stdout(&fixed));
    assert_eq!(stdin_report(), ["SYNC101", "SYNC101", "SYNC103"], "what the fix left");
    assert_eq!(stderr(&fixed), "");
}

#[test]
fn output_file_in_a_missing_folder() {
    let project = formats_project();
    let output = project.run(&["check", "--isolated", "-o", "missing/report.json", "."]);
    assert_eq!(exit_code(&output), 2);
    assert_eq!(stdout(&output), "");
    assert!(stderr(&output).contains("missing/report.json"), "{}", stderr(&output));
    assert!(!project.path().join("missing").exists(), "no folder is made");
}

#[test]
fn output_format_from_the_environment() {
    let project = Project::new();
    project.write("a.py", ONE_FINDING);
    let output = synclint()
        .current_dir(project.path())
        .env("SYNCLINT_OUTPUT_FORMAT", "concise")
        .args(["check", "--isolated", "a.py"])
        .output()
        .unwrap();
    assert!(stdout(&output).starts_with("a.py:2:5: SYNC101 "), "{}", stdout(&output));
}

// Exit codes ---------------------------------------------------------------------------------

#[test]
fn exit_codes() {
    let project = Project::new();
    project.write("clean.py", CLEAN).write("dirty.py", ONE_FINDING);
    let clean = project.run(&["check", "--isolated", "clean.py"]);
    assert_eq!(exit_code(&clean), 0);
    assert_eq!(stdout(&clean), "All checks passed!\n");
    assert_eq!(exit_code(&project.run(&["check", "--isolated", "dirty.py"])), 1);
    let exit_zero = project.run(&["check", "--isolated", "--exit-zero", "dirty.py"]);
    assert_eq!(exit_code(&exit_zero), 0);
    assert!(stdout(&exit_zero).contains("Found 1 finding."));
}

#[test]
fn exit_zero_does_not_hide_errors() {
    let project = Project::new();
    project.write("dirty.py", ONE_FINDING).write("broken.py", "def (:\n");
    let output = project.run(&["check", "--isolated", "--exit-zero", "."]);
    assert_eq!(exit_code(&output), 2);
}

#[test]
fn unknown_select_code_is_a_usage_error() {
    let project = Project::new();
    project.write("a.py", ONE_FINDING);
    for flag in ["--select", "--ignore", "--extend-select"] {
        let output = project.run(&["check", "--isolated", flag, "SYNC999", "a.py"]);
        assert_eq!(exit_code(&output), 2, "{flag}");
        assert!(stderr(&output).contains("SYNC999"), "{flag}: {}", stderr(&output));
        assert!(stdout(&output).is_empty(), "{flag}: nothing is linted");
    }
}

#[test]
fn unknown_path() {
    let project = Project::new();
    project.write("a.py", ONE_FINDING);
    let output = project.run(&[
        "check",
        "--isolated",
        "--output-format",
        "concise",
        "missing.py",
        "a.py",
    ]);
    assert_eq!(exit_code(&output), 2);
    assert!(stderr(&output).contains("missing.py"), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("a.py:2:5: SYNC101"),
        "the other path is still linted"
    );
    assert!(!stdout(&output).contains("All checks passed"), "{}", stdout(&output));
}

// noqa -------------------------------------------------------------------------------------

#[test]
fn line_noqa() {
    let project = Project::new();
    project.write(
        "a.py",
        "for b in loader:\n\
         \x20   model(b).item()\n\
         \x20   model(b).item()  # noqa\n\
         \x20   model(b).item()  # noqa: SYNC101\n\
         \x20   model(b).item()  # noqa: E501\n\
         \x20   model(b).item()  # noqa: SYNC102\n\
         \x20   model(b).item()  #NOQA:sync101\n\
         \x20   model(b).item()  # noqa: E501, SYNC101\n\
         \x20   model(b).item()  # type: ignore  # noqa: SYNC1\n\
         \x20   print(model(b).item(), model(b).cpu())  # noqa: SYNC101\n",
    );
    let output = project.run(&["check", "--isolated", "--output-format", "json", "a.py"]);
    let found = json_findings(&output);
    assert_eq!(
        found,
        [
            ("SYNC101".to_string(), 2),
            ("SYNC101".to_string(), 5),
            ("SYNC101".to_string(), 6),
            ("SYNC103".to_string(), 10)
        ],
        "E501 and SYNC102 do not cover SYNC101"
    );
}

#[test]
fn file_noqa() {
    let body = "for b in loader:\n    model(b).item()\n    model(b).cpu()\n    torch.nonzero(model(b))\n";
    let cases: &[(&str, &[&str])] = &[
        ("# synclint: noqa\n", &[]),
        ("# synclint: noqa: SYNC1\n", &["SYNC201"]),
        ("# synclint: noqa: SYNC103\n", &["SYNC101", "SYNC201"]),
        ("# synclint: noqa: SYNC101, SYNC201\n", &["SYNC103"]),
        ("# synclint: noqa: SYNC101\n# synclint: noqa: SYNC103\n", &["SYNC201"]),
        ("# synclint: noqa: E501\n", &["SYNC101", "SYNC103", "SYNC201"]),
        // Not a file-level directive: a plain `# noqa` covers only its own line.
        ("# noqa\n", &["SYNC101", "SYNC103", "SYNC201"]),
    ];
    for (header, expected) in cases {
        let project = Project::new();
        project.write("a.py", format!("import torch\n{header}{body}"));
        let output = project.run(&["check", "--isolated", "--output-format", "json", "a.py"]);
        assert_eq!(codes(&output), set(expected), "header {header:?}");
    }
}

/// SYNC900 is opt-in: a stale directive is reported only where a selector names SYNC900 (or a
/// prefix of it, or `ALL`), on the command line or in the config.
#[test]
fn unused_noqa_is_reported_only_when_selected() {
    let source =
        "import torch\nfor b in loader:\n    model(b).item()  # noqa: SYNC101\n    model(b)  # noqa: SYNC101\n";
    let cases: &[(&str, &str, &[&str], bool)] = &[
        ("synclint.toml", "", &[], false),
        ("synclint.toml", "", &["--extend-select", "SYNC900"], true),
        ("synclint.toml", "", &["--select", "ALL"], true),
        ("synclint.toml", "", &["--select", "SYNC"], true),
        ("synclint.toml", "", &["--select", "SYNC1"], false),
        ("synclint.toml", "extend-select = [\"SYNC900\"]\n", &[], true),
        ("synclint.toml", "select = [\"ALL\"]\n", &[], true),
        ("synclint.toml", "select = [\"ALL\"]\n", &["--ignore", "SYNC9"], false),
        (
            "pyproject.toml",
            "[tool.synclint]\nextend-select = [\"SYNC900\"]\n",
            &[],
            true,
        ),
        (
            "pyproject.toml",
            "[tool.synclint]\nselect = [\"SYNC900\", \"SYNC1\"]\n",
            &[],
            true,
        ),
        (
            "pyproject.toml",
            "[tool.synclint]\nextend-select = [\"SYNC900\"]\nper-file-ignores = { \"a.py\" = [\"SYNC900\"] }\n",
            &[],
            false,
        ),
    ];
    for (config_name, config, flags, reported) in cases {
        let project = Project::new();
        project.write(config_name, config).write("a.py", source);
        let mut args = vec!["check", "--no-cache", "--output-format", "json"];
        args.extend_from_slice(flags);
        args.push("a.py");
        let output = project.run(&args);
        let expected: &[(&str, usize)] = if *reported { &[("SYNC900", 4)] } else { &[] };
        let expected: Vec<(String, usize)> = expected.iter().map(|(code, row)| (code.to_string(), *row)).collect();
        assert_eq!(
            json_findings(&output),
            expected,
            "{config_name} {config:?} flags {flags:?}: {}",
            stderr(&output)
        );
    }
}

/// A directive that suppresses a finding is used, also where every finding of the file is
/// suppressed, and also where the finding is hidden because no hot line calls its function
/// (another file may): the verdict is the same with `--isolated` and in the project.
#[test]
fn used_directives_are_quiet_with_unused_noqa_selected() {
    let project = Project::new();
    project
        .write("pyproject.toml", "[project]\nname = \"p\"\n")
        .write("helpers.py", "def read(t):\n    return t.item()  # noqa: SYNC101\n")
        .write(
            "train.py",
            "import torch\nfrom helpers import read\nfor b in loader:\n    v = model(b).item()  # noqa: SYNC101\n    w = read(model(b))\n",
        );
    for isolated in [false, true] {
        for path in ["helpers.py", "train.py", "."] {
            let mut args = vec!["check", "--no-cache", "--extend-select", "SYNC900"];
            if isolated {
                args.push("--isolated");
            }
            args.push(path);
            let output = project.run(&args);
            assert_eq!(
                exit_code(&output),
                0,
                "{args:?}: {}{}",
                stdout(&output),
                stderr(&output)
            );
            assert!(stdout(&output).contains("All checks passed"), "{args:?}");
        }
    }
    // Without the directives, the helper's finding is reported in the project run (it is hot
    // through train.py) and hidden with `--isolated`.
    project.write("helpers.py", "def read(t):\n    return t.item()\n");
    let output = project.run(&["check", "--no-cache", "--output-format", "json", "helpers.py"]);
    assert_eq!(json_findings(&output), [("SYNC101".to_string(), 2)]);
    let output = project.run(&["check", "--no-cache", "--isolated", "helpers.py"]);
    assert_eq!(exit_code(&output), 0);
}

// Configuration ------------------------------------------------------------------------------

#[test]
fn pyproject_is_found_from_the_file_upwards() {
    let project = Project::new();
    project
        .write(
            "pyproject.toml",
            "[project]\nname = \"demo\"\n\n[tool.synclint]\nselect = [\"SYNC103\"]\n",
        )
        .write("pkg/deep/a.py", TWO_FINDINGS);
    // From the root, from the file's folder, and from outside the project.
    for (cwd, path) in [("", "pkg/deep/a.py"), ("pkg/deep", "a.py"), ("pkg", "deep")] {
        let output = project.run_in(cwd, &["check", "--output-format", "json", path]);
        assert_eq!(codes(&output), set(&["SYNC103"]), "from {cwd:?}: {}", stderr(&output));
    }
    let outside = synclint()
        .current_dir(std::env::temp_dir())
        .args(["check", "--output-format", "json"])
        .arg(project.path().join("pkg/deep/a.py"))
        .output()
        .unwrap();
    assert_eq!(codes(&outside), set(&["SYNC103"]));
}

#[test]
fn pyproject_without_a_synclint_table_is_skipped() {
    let project = Project::new();
    project
        .write("synclint.toml", "select = [\"SYNC103\"]\n")
        .write("sub/pyproject.toml", "[project]\nname = \"demo\"\n")
        .write("sub/a.py", TWO_FINDINGS);
    let output = project.run(&["check", "--output-format", "json", "sub/a.py"]);
    assert_eq!(codes(&output), set(&["SYNC103"]));
}

#[test]
fn nearest_config_wins() {
    let project = Project::new();
    project
        .write("pyproject.toml", "[tool.synclint]\nselect = [\"SYNC101\"]\n")
        .write("sub/synclint.toml", "select = [\"SYNC103\"]\n")
        .write("a.py", TWO_FINDINGS)
        .write("sub/a.py", TWO_FINDINGS)
        .write("sub/deeper/a.py", TWO_FINDINGS)
        .write("other/a.py", TWO_FINDINGS);
    let output = project.run(&["check", "--output-format", "json", "."]);
    let found: Vec<(String, String)> = json_locations(&output)
        .into_iter()
        .map(|(code, path, _, _)| (path, code))
        .collect();
    let expected = [
        ("a.py", "SYNC101"),
        ("other/a.py", "SYNC101"),
        ("sub/a.py", "SYNC103"),
        ("sub/deeper/a.py", "SYNC103"),
    ];
    assert_eq!(found, expected.map(|(p, c)| (p.to_string(), c.to_string())));
    // From inside the nested folder, a file above it still gets the parent's config.
    let from_sub = project.run_in("sub", &["check", "--output-format", "json", "../a.py", "deeper/a.py"]);
    let found: Vec<(String, String)> = json_locations(&from_sub)
        .into_iter()
        .map(|(code, path, _, _)| (path, code))
        .collect();
    assert_eq!(
        found,
        [("../a.py", "SYNC101"), ("deeper/a.py", "SYNC103")].map(|(p, c)| (p.to_string(), c.to_string()))
    );
}

#[test]
fn a_folder_above_the_nested_config_does_not_use_it() {
    // `sub/..` is the root, which has no config: `sub/synclint.toml` must not apply to it.
    let project = Project::new();
    project
        .write("sub/synclint.toml", "select = [\"SYNC103\"]\n")
        .write("a.py", TWO_FINDINGS);
    let output = project.run_in("sub", &["check", "--output-format", "json", "../a.py"]);
    assert_eq!(codes(&output), set(&["SYNC101", "SYNC103"]));
}

#[test]
fn select_ignore_and_extend_select() {
    let source =
        "import torch\nfor b in loader:\n    model(b).item()\n    model(b).cpu()\n    torch.nonzero(model(b))\n";
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("", &[], &["SYNC101", "SYNC103", "SYNC201"]),
        ("select = [\"SYNC1\"]\n", &[], &["SYNC101", "SYNC103"]),
        ("select = [\"SYNC1\"]\nignore = [\"SYNC103\"]\n", &[], &["SYNC101"]),
        (
            "select = [\"SYNC101\"]\nextend-select = [\"SYNC2\"]\n",
            &[],
            &["SYNC101", "SYNC201"],
        ),
        ("ignore = [\"SYNC2\"]\n", &[], &["SYNC101", "SYNC103"]),
        // Command-line options on top of the config.
        ("select = [\"SYNC1\"]\n", &["--select", "SYNC201"], &["SYNC201"]),
        (
            "select = [\"SYNC1\"]\n",
            &["--extend-select", "SYNC201"],
            &["SYNC101", "SYNC103", "SYNC201"],
        ),
        ("select = [\"SYNC1\"]\n", &["--ignore", "SYNC101,SYNC103"], &[]),
    ];
    for (config, flags, expected) in cases {
        let project = Project::new();
        project.write("synclint.toml", config).write("a.py", source);
        let mut args = vec!["check", "--output-format", "json"];
        args.extend_from_slice(flags);
        args.push("a.py");
        let output = project.run(&args);
        assert_eq!(
            codes(&output),
            set(expected),
            "config {config:?} flags {flags:?}: {}",
            stderr(&output)
        );
    }
}

#[test]
fn per_file_ignores() {
    let project = Project::new();
    project
        .write(
            "pyproject.toml",
            "[tool.synclint.per-file-ignores]\n\"scripts/*.py\" = [\"SYNC101\"]\n\"scratch.py\" = [\"SYNC1\"]\n",
        )
        .write("scripts/run_a.py", TWO_FINDINGS)
        .write("scratch.py", TWO_FINDINGS)
        .write("deep/scratch.py", TWO_FINDINGS)
        .write("main.py", TWO_FINDINGS);
    // `scripts/*.py` matches the path relative to the config; `scratch.py` matches the file name
    // wherever the file is.
    let expected: Vec<(String, String)> = [
        ("main.py", "SYNC101"),
        ("main.py", "SYNC103"),
        ("scripts/run_a.py", "SYNC103"),
    ]
    .map(|(p, c)| (p.to_string(), c.to_string()))
    .to_vec();
    // Whichever way the paths are given, the patterns apply the same.
    for args in [
        vec!["."],
        vec![],
        vec!["scripts", "main.py", "scratch.py", "deep"],
        vec!["./scripts/run_a.py", "main.py", "./scratch.py", "deep"],
    ] {
        let mut full_args = vec!["check", "--output-format", "json"];
        full_args.extend(args.iter().copied());
        let output = project.run(&full_args);
        let found: Vec<(String, String)> = json_locations(&output)
            .into_iter()
            .map(|(code, path, _, _)| (path, code))
            .collect();
        assert_eq!(found, expected, "args {args:?}");
    }
    let from_scripts = project.run_in("scripts", &["check", "--output-format", "json", "run_a.py"]);
    assert_eq!(codes(&from_scripts), set(&["SYNC103"]));
    let absolute = project.path().join("scripts/run_a.py");
    let output = project.run(&["check", "--output-format", "json", absolute.to_str().unwrap()]);
    assert_eq!(codes(&output), set(&["SYNC103"]));
}

#[test]
fn exclude_and_extend_exclude() {
    let project = Project::new();
    project
        .write(
            "pyproject.toml",
            "[tool.synclint]\nextend-exclude = [\"generated\", \"src/legacy\", \"*_pb2.py\"]\n",
        )
        .write("src/keep.py", ONE_FINDING)
        .write("src/legacy/old.py", ONE_FINDING)
        .write("src/api_pb2.py", ONE_FINDING)
        .write("generated/gen.py", ONE_FINDING)
        .write("build/out.py", ONE_FINDING);
    // extend-exclude adds to the defaults (build/ stays excluded).
    for args in [vec!["."], vec![]] {
        let mut full_args = vec!["check", "--output-format", "json"];
        full_args.extend(args.iter().copied());
        assert_eq!(paths(&project.run(&full_args)), ["src/keep.py"], "args {args:?}");
    }
    // Folders named on the command line are walked; what is excluded inside them is skipped.
    let named = project.run(&["check", "--output-format", "json", "src", "generated", "build"]);
    assert_eq!(paths(&named), ["build/out.py", "generated/gen.py", "src/keep.py"]);
    // --exclude replaces the defaults: build/ is linted, the config's extensions still apply.
    let replaced = project.run(&["check", "--output-format", "json", "--exclude", "src", "."]);
    assert_eq!(paths(&replaced), ["build/out.py"]);
    let cli_extend = project.run(&["check", "--output-format", "json", "--extend-exclude", "keep.py", "."]);
    assert!(paths(&cli_extend).is_empty(), "{:?}", paths(&cli_extend));
    // A config's `exclude` replaces the defaults too.
    project.write("pyproject.toml", "[tool.synclint]\nexclude = [\"src\"]\n");
    let config_exclude = project.run(&["check", "--output-format", "json", "."]);
    assert_eq!(paths(&config_exclude), ["build/out.py", "generated/gen.py"]);
}

#[test]
fn hot_functions() {
    let project = Project::new();
    let source = "def my_update(model, x):\n    return model(x).item()\n\n\
                  class Trainer:\n    def apply(self, model, x):\n        return model(x).item()\n";
    project.write("a.py", source);
    let cold = project.run(&["check", "--output-format", "json", "a.py"]);
    assert!(json_findings(&cold).is_empty(), "neither function is hot by itself");
    project.write(
        "pyproject.toml",
        "[tool.synclint]\nhot-functions = [\"my_update\", \"Trainer.apply\"]\n",
    );
    let output = project.run(&["check", "--output-format", "json", "a.py"]);
    assert_eq!(
        json_findings(&output),
        [("SYNC101".to_string(), 2), ("SYNC101".to_string(), 6)]
    );
    let note = json(&output)[0]["note"].as_str().unwrap_or_default().to_string();
    assert!(note.contains("hot-functions"), "the note says why: {note}");
}

#[test]
fn respect_gitignore_in_config() {
    let project = Project::new();
    project
        .write(".gitignore", "ignored/\n")
        .write("ignored/a.py", ONE_FINDING)
        .write("a.py", ONE_FINDING);
    let respected = project.run(&["check", "--output-format", "json", "."]);
    assert_eq!(json_locations(&respected).len(), 1);
    project.write("pyproject.toml", "[tool.synclint]\nrespect-gitignore = false\n");
    let ignored = project.run(&["check", "--output-format", "json", "."]);
    assert_eq!(json_locations(&ignored).len(), 2);
}

#[test]
fn explicit_config_and_isolated() {
    let project = Project::new();
    project
        .write("pyproject.toml", "[tool.synclint]\nselect = [\"SYNC101\"]\n")
        .write("configs/only-copies.toml", "select = [\"SYNC103\"]\n")
        .write("sub/synclint.toml", "select = [\"SYNC2\"]\n")
        .write("a.py", TWO_FINDINGS)
        .write("sub/a.py", TWO_FINDINGS);
    // --config applies to every file, whatever configs sit beside them.
    let explicit = project.run(&[
        "check",
        "--config",
        "configs/only-copies.toml",
        "--output-format",
        "json",
        ".",
    ]);
    assert_eq!(
        json_findings(&explicit),
        [("SYNC103".to_string(), 3), ("SYNC103".to_string(), 3)]
    );
    // --isolated ignores them all.
    let isolated = project.run(&["check", "--isolated", "--output-format", "json", "."]);
    assert_eq!(json_findings(&isolated).len(), 4);
    let missing = project.run(&["check", "--config", "nope.toml", "."]);
    assert_eq!(exit_code(&missing), 2);
    assert!(stderr(&missing).contains("nope.toml"), "{}", stderr(&missing));
}

/// Asserts a broken config fails the run with its path and the offending line on stderr,
/// reported once.
fn assert_config_error(file: &str, config: &str, line: &str, message: &str) {
    let project = Project::new();
    project
        .write(file, config)
        .write("a.py", ONE_FINDING)
        .write("sub/b.py", ONE_FINDING);
    let output = project.run(&["check", "."]);
    let err = stderr(&output);
    assert_eq!(exit_code(&output), 2, "{err}");
    assert!(err.contains(file), "names the config: {err}");
    assert_eq!(err.matches("invalid config").count(), 1, "reported once: {err}");
    assert!(err.contains(line), "shows the offending line {line:?}: {err}");
    assert!(err.contains(message), "says what is wrong ({message}): {err}");
    assert!(
        !stdout(&output).contains("SYNC101"),
        "nothing is linted with a broken config"
    );
}

#[test]
fn unknown_config_key() {
    assert_config_error(
        "pyproject.toml",
        "[tool.synclint]\nselect = [\"SYNC1\"]\nbogus-key = 1\n",
        "3 │ bogus-key = 1",
        "unknown field `bogus-key`",
    );
    assert_config_error(
        "synclint.toml",
        "selct = [\"SYNC1\"]\n",
        "1 │ selct",
        "unknown field `selct`",
    );
}

#[test]
fn wrong_config_type() {
    assert_config_error(
        "pyproject.toml",
        "[tool.synclint]\nselect = \"SYNC1\"\n",
        "2 │ select = \"SYNC1\"",
        "expected a sequence",
    );
    assert_config_error(
        "synclint.toml",
        "respect-gitignore = \"no\"\n",
        "1 │ respect-gitignore",
        "expected a boolean",
    );
}

#[test]
fn unknown_rule_in_config() {
    assert_config_error(
        "synclint.toml",
        "ignore = [\"SYNC101\", \"SYNC999\"]\n",
        "1 │ ignore",
        "SYNC999",
    );
    assert_config_error(
        "pyproject.toml",
        "[tool.synclint.per-file-ignores]\n\"tests/*\" = [\"SYNC8\"]\n",
        "2 │ \"tests/*\"",
        "SYNC8",
    );
}

#[test]
fn invalid_toml() {
    assert_config_error("synclint.toml", "select = [\"SYNC1\"\n", "1 │ select", "invalid config");
}

#[test]
fn invalid_glob_patterns() {
    let project = Project::new();
    project.write("a.py", ONE_FINDING);
    for flag in ["--exclude", "--extend-exclude"] {
        let output = project.run(&["check", flag, "[abc", "."]);
        assert_eq!(exit_code(&output), 2, "{flag}: {}", stderr(&output));
        assert!(stderr(&output).contains("[abc"), "{flag}: {}", stderr(&output));
        assert!(!stderr(&output).contains("panicked"), "{flag}: {}", stderr(&output));
    }
    for config in [
        "extend-exclude = [\"[x\"]\n",
        "[per-file-ignores]\n\"[x\" = [\"SYNC1\"]\n",
    ] {
        project.write("synclint.toml", config);
        let output = project.run(&["check", "."]);
        let err = stderr(&output);
        assert_eq!(exit_code(&output), 2, "{config}: {err}");
        assert!(err.contains("synclint.toml") && err.contains("[x"), "{config}: {err}");
        assert!(!err.contains("panicked"), "{config}: {err}");
    }
}

#[test]
fn a_broken_nested_config() {
    assert_config_error(
        "sub/synclint.toml",
        "bogus = true\n",
        "1 │ bogus = true",
        "unknown field `bogus`",
    );
}

// Discovery --------------------------------------------------------------------------------

#[test]
fn gitignore() {
    let project = Project::new();
    project
        .write(".gitignore", "ignored/\n*_scratch.py\n")
        .write("ignored/a.py", ONE_FINDING)
        .write("my_scratch.py", ONE_FINDING)
        .write("sub/.gitignore", "local.py\n")
        .write("sub/local.py", ONE_FINDING)
        .write("sub/kept.py", ONE_FINDING)
        .write("kept.py", ONE_FINDING);
    let linted = |args: &[&str]| -> Vec<String> {
        let mut full_args = vec!["check", "--isolated", "--output-format", "json"];
        full_args.extend_from_slice(args);
        paths(&project.run(&full_args))
    };
    assert_eq!(linted(&["."]), ["kept.py", "sub/kept.py"]);
    assert_eq!(linted(&["sub"]), ["sub/kept.py"]);
    assert_eq!(
        linted(&["--no-respect-gitignore", "."]),
        [
            "ignored/a.py",
            "kept.py",
            "my_scratch.py",
            "sub/kept.py",
            "sub/local.py"
        ]
    );
}

#[test]
fn default_excludes() {
    let project = Project::new();
    for dir in [
        ".venv/lib",
        "venv",
        "__pycache__",
        "build",
        "dist",
        "node_modules/pkg",
        "lib/python3.12/site-packages/pkg",
        ".git",
        "x.egg-info",
        "src",
    ] {
        project.write(&format!("{dir}/m.py"), ONE_FINDING);
    }
    let output = project.run(&["check", "--isolated", "--output-format", "json", "."]);
    assert_eq!(paths(&output), ["src/m.py"]);
}

#[test]
fn a_named_file_is_always_linted() {
    let project = Project::new();
    project
        .write(".gitignore", "ignored.py\n")
        .write("pyproject.toml", "[tool.synclint]\nextend-exclude = [\"skip_me.py\"]\n")
        .write("ignored.py", ONE_FINDING)
        .write("skip_me.py", ONE_FINDING)
        .write("build/out.py", ONE_FINDING)
        .write(".venv/m.py", ONE_FINDING)
        .write("script", ONE_FINDING);
    let output = project.run(&[
        "check",
        "--output-format",
        "json",
        "ignored.py",
        "skip_me.py",
        "build/out.py",
        ".venv/m.py",
        "script",
    ]);
    assert_eq!(
        paths(&output),
        [".venv/m.py", "build/out.py", "ignored.py", "script", "skip_me.py"]
    );
}

#[test]
fn only_python_files_in_folders() {
    let project = Project::new();
    project
        .write("a.py", ONE_FINDING)
        .write("notes.txt", ONE_FINDING)
        .write("script.pyw", ONE_FINDING)
        .write("README.md", "# not python\n")
        .write("data.bin", [0xff, 0xfe, 0x00])
        .write("noext", ONE_FINDING);
    let output = project.run(&["check", "--isolated", "--output-format", "json", "."]);
    assert_eq!(exit_code(&output), 1, "{}", stderr(&output));
    assert_eq!(paths(&output), ["a.py"]);
}

#[cfg(unix)]
#[test]
fn broken_symlink_and_symlink_loop() {
    let project = Project::new();
    project.write("a.py", ONE_FINDING).write("sub/b.py", ONE_FINDING);
    std::os::unix::fs::symlink("nowhere.py", project.path().join("broken.py")).unwrap();
    std::os::unix::fs::symlink("..", project.path().join("sub/loop")).unwrap();
    let output = project.run_within(
        Duration::from_secs(60),
        &["check", "--isolated", "--output-format", "concise", "."],
    );
    let err = stderr(&output);
    assert_eq!(exit_code(&output), 2, "{err}");
    assert!(err.contains("broken.py"), "{err}");
    assert!(err.contains("sub/loop"), "{err}");
    assert!(err.to_lowercase().contains("loop"), "{err}");
    let out = stdout(&output);
    assert!(
        out.contains("a.py:2:5: SYNC101") && out.contains("sub/b.py:2:5: SYNC101"),
        "{out}"
    );
    assert_eq!(
        out.matches("SYNC101").count(),
        2,
        "nothing linted twice through the loop: {out}"
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_file_is_linted() {
    let project = Project::new();
    project.write("real/a.py", ONE_FINDING);
    std::os::unix::fs::symlink("real/a.py", project.path().join("link.py")).unwrap();
    let output = project.run(&["check", "--isolated", "--output-format", "json", "link.py"]);
    assert_eq!(
        json_locations(&output),
        [("SYNC101".to_string(), "link.py".to_string(), 2, 5)]
    );
}

// Awkward files ----------------------------------------------------------------------------

/// Opening a FIFO to read it waits for a writer: one named is reported and never opened, as are
/// a socket and a device; walking a folder skips them.
#[cfg(unix)]
#[test]
fn a_fifo_socket_or_device_is_not_a_regular_file() {
    let project = Project::new();
    project.write("a.py", ONE_FINDING);
    let made = std::process::Command::new("mkfifo")
        .arg(project.path().join("fifo.py"))
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let _socket = std::os::unix::net::UnixListener::bind(project.path().join("sock.py")).unwrap();
    let concise = ["check", "--isolated", "--no-cache", "--output-format", "concise"];
    for fix in [&[][..], &["--fix"]] {
        let named = [&concise[..], fix, &["fifo.py", "sock.py", "/dev/null", "a.py"]].concat();
        let output = project.run_within(Duration::from_secs(60), &named);
        let err = stderr(&output);
        assert_eq!(exit_code(&output), 2, "{err}");
        for name in ["fifo.py", "sock.py", "/dev/null"] {
            assert!(err.contains(&format!("{name}: not a regular file")), "{name}: {err}");
        }
        assert!(stdout(&output).contains("a.py:2:5: SYNC101"), "{}", stdout(&output));
        assert!(!stdout(&output).contains("All checks passed"), "{}", stdout(&output));

        let walked = [&concise[..], fix, &["."]].concat();
        let output = project.run_within(Duration::from_secs(60), &walked);
        assert_eq!(exit_code(&output), 1, "{}", stderr(&output));
        assert_eq!(stderr(&output), "");
        assert_eq!(stdout(&output).matches("SYNC101").count(), 1, "{}", stdout(&output));
    }
}

/// A config file that is a FIFO is reported, never opened to wait for a writer: named with
/// `--config`, or as a folder's `pyproject.toml` or `synclint.toml` (not taken for a config).
#[cfg(unix)]
#[test]
fn a_fifo_config_is_refused_without_waiting() {
    let project = Project::new();
    project.write("a.py", ONE_FINDING).write("sub/b.py", ONE_FINDING);
    for fifo in ["given.toml", "synclint.toml", "sub/pyproject.toml"] {
        let made = std::process::Command::new("mkfifo")
            .arg(project.path().join(fifo))
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
    }
    let concise = ["check", "--no-cache", "--output-format", "concise"];
    let output = project.run_within(
        Duration::from_secs(60),
        &[&concise[..], &["--config", "given.toml", "a.py"]].concat(),
    );
    assert_eq!(exit_code(&output), 2, "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cannot read config given.toml: not a regular file"),
        "{}",
        stderr(&output)
    );
    let output = project.run_within(Duration::from_secs(60), &[&concise[..], &["."]].concat());
    assert_eq!(exit_code(&output), 1, "{}", stderr(&output));
    assert_eq!(stdout(&output).matches("SYNC101").count(), 2, "{}", stdout(&output));
}

/// `--add-noqa` writes as `--fix` does: not through a link out of the folder linted (reported),
/// once through a link inside it, and in place where the file has another hard link.
#[cfg(unix)]
#[test]
fn add_noqa_writes_only_inside_the_folders_linted_and_keeps_hard_links() {
    use std::os::unix::fs::MetadataExt;

    let project = Project::new();
    let outside = Project::new();
    outside.write("shared.py", ONE_FINDING);
    project
        .write("pkg/a.py", ONE_FINDING)
        .write("pkg/b.py", ONE_FINDING)
        .write("elsewhere/.keep", "");
    let pkg = project.path().join("pkg");
    std::os::unix::fs::symlink(outside.path().join("shared.py"), pkg.join("link.py")).unwrap();
    std::os::unix::fs::symlink("a.py", pkg.join("inner.py")).unwrap();
    std::fs::hard_link(pkg.join("b.py"), project.path().join("elsewhere/b.py")).unwrap();
    let output = project.run(&["check", "--isolated", "--no-cache", "--add-noqa", "pkg"]);
    let err = stderr(&output).replace("\n  │ ", " ");
    assert_eq!(exit_code(&output), 2, "{err}");
    let message = format!(
        "pkg/link.py: is a symbolic link to {}, outside the folders being linted; no `# noqa` added",
        std::fs::canonicalize(outside.path().join("shared.py"))
            .unwrap()
            .display()
    );
    assert!(err.contains(&message), "{err}");
    assert_eq!(stdout(&output), "Added 2 noqa directives.\n");
    let with_noqa = ONE_FINDING.replace(".item()\n", ".item()  # noqa: SYNC101\n");
    let read = |path: &std::path::Path| std::fs::read_to_string(path).unwrap();
    assert_eq!(read(&outside.path().join("shared.py")), ONE_FINDING);
    assert_eq!(read(&pkg.join("a.py")), with_noqa);
    assert_eq!(read(&project.path().join("elsewhere/b.py")), with_noqa);
    let inode = |path: &std::path::Path| std::fs::metadata(path).unwrap().ino();
    assert_eq!(inode(&pkg.join("b.py")), inode(&project.path().join("elsewhere/b.py")));
    assert!(std::fs::symlink_metadata(pkg.join("inner.py")).unwrap().is_symlink());
}

#[test]
fn a_syntax_error_beside_a_good_file() {
    let project = Project::new();
    project.write("good.py", ONE_FINDING).write(
        "bad.py",
        "import torch\n\ndef train(model, loader):\n    for x in loader:\n        loss = model(x)\n        loss.item()\n\ndef (:\n    pass\n",
    );
    let concise = project.run(&["check", "--isolated", "--output-format", "concise", "."]);
    assert_eq!(exit_code(&concise), 2, "{}", stderr(&concise));
    let out = stdout(&concise);
    assert!(
        out.contains("bad.py:8:5: invalid-syntax"),
        "the syntax error with its path and location: {out}"
    );
    assert!(
        out.contains("bad.py:6:9: SYNC101"),
        "the part above the error is still linted: {out}"
    );
    assert!(
        out.contains("good.py:2:5: SYNC101"),
        "the good file is still linted: {out}"
    );
    assert!(!out.contains("All checks passed"));

    let full = project.run(&["check", "--isolated", "."]);
    assert_eq!(exit_code(&full), 2);
    let shown = format!("{}{}", stdout(&full), stderr(&full));
    assert!(shown.contains("bad.py:8:5"), "{shown}");
    assert_eq!(
        shown.matches("Expected an identifier").count(),
        1,
        "each syntax error shown once: {shown}"
    );

    let rows = json_locations(&project.run(&["check", "--isolated", "--output-format", "json", "."]));
    assert!(
        rows.contains(&("invalid-syntax".to_string(), "bad.py".to_string(), 8, 5)),
        "{rows:?}"
    );
    assert!(
        rows.contains(&("SYNC101".to_string(), "bad.py".to_string(), 6, 9)),
        "{rows:?}"
    );
    assert!(
        rows.contains(&("SYNC101".to_string(), "good.py".to_string(), 2, 5)),
        "{rows:?}"
    );

    let statistics = project.run(&["check", "--isolated", "--statistics", "."]);
    assert_eq!(exit_code(&statistics), 2);
    assert!(
        stderr(&statistics).contains("bad.py"),
        "not shown on stdout, so on stderr: {}",
        stderr(&statistics)
    );
}

#[test]
fn a_non_utf8_file() {
    let project = Project::new();
    project
        .write("good.py", ONE_FINDING)
        .write("latin1.py", b"# caf\xe9\nx = 1\n");
    let output = project.run(&["check", "--isolated", "--output-format", "concise", "."]);
    let err = stderr(&output);
    assert_eq!(exit_code(&output), 2, "{err}");
    assert!(err.contains("latin1.py") && err.contains("UTF-8"), "{err}");
    assert!(err.contains("line 1"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(stdout(&output).contains("good.py:2:5: SYNC101"));
    assert!(!stdout(&output).contains("All checks passed"), "{}", stdout(&output));
}

#[test]
fn an_empty_file() {
    let project = Project::new();
    project
        .write("empty.py", "")
        .write("blank.py", "\n\n   \n")
        .write("comment.py", "# nothing\n");
    let output = project.run(&["check", "--isolated", "."]);
    assert_eq!(exit_code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "All checks passed!\n");
}

#[test]
fn crlf_and_bom() {
    let lf = "import torch\n\nfor b in loader:\n    model(b).item()\n\n\nfor b in loader:  model(b).item()\n";
    let crlf = lf.replace('\n', "\r\n");
    let project = Project::new();
    project
        .write("lf.py", lf)
        .write("crlf.py", &crlf)
        .write("cr.py", lf.replace('\n', "\r"))
        .write("bom.py", format!("\u{feff}{lf}"))
        .write("bom_crlf.py", format!("\u{feff}{crlf}"))
        .write("bom_first_line.py", "\u{feff}for b in loader: model(b).item()\n");
    let output = project.run(&["check", "--isolated", "--output-format", "json", "."]);
    let mut found = json_locations(&output);
    found.retain(|(_, path, _, _)| path != "bom_first_line.py");
    for path in ["bom.py", "bom_crlf.py", "cr.py", "crlf.py", "lf.py"] {
        let rows: Vec<(u64, u64)> = found
            .iter()
            .filter(|(_, p, _, _)| p == path)
            .map(|(_, _, r, c)| (*r, *c))
            .collect();
        assert_eq!(rows, [(4, 5), (7, 19)], "{path}");
    }
    // The BOM is not a column, in any format.
    let first = project.run(&["check", "--isolated", "--output-format", "concise", "bom_first_line.py"]);
    assert!(
        stdout(&first).starts_with("bom_first_line.py:1:18: SYNC101"),
        "{}",
        stdout(&first)
    );
    let full = project.run(&["check", "--isolated", "bom_first_line.py"]);
    assert!(stdout(&full).contains("bom_first_line.py:1:18"), "{}", stdout(&full));
    assert!(!stdout(&full).contains('\u{feff}'), "{}", stdout(&full));
    let github = project.run(&["check", "--isolated", "--output-format", "github", "bom_first_line.py"]);
    assert!(
        stdout(&github).contains("line=1,col=18,endLine=1,endColumn=33"),
        "{}",
        stdout(&github)
    );
    // The full format counts lines as the others do, a lone `\r` included, and prints no
    // carriage returns.
    for path in ["crlf.py", "cr.py"] {
        let full = project.run(&["check", "--isolated", path]);
        let text = stdout(&full);
        assert!(
            text.contains(&format!("{path}:4:5")) && text.contains(&format!("{path}:7:19")),
            "{text}"
        );
        assert!(!text.contains('\r'), "{text:?}");
    }
}

/// A method call whose receiver spans lines is reported from the method's name: the line that
/// syncs (issue 14), where a `# noqa` goes too.
#[test]
fn a_finding_that_spans_lines() {
    let project = Project::new();
    project.write("a.py", "for b in loader:\n    model(\n        b\n    ).item()\n");
    let concise = project.run(&["check", "--isolated", "--output-format", "concise", "-q", "a.py"]);
    assert_eq!(
        stdout(&concise),
        "a.py:4:7: SYNC101 `model( b ).item()` waits for the GPU to finish all queued work\n"
    );
    let github = project.run(&["check", "--isolated", "--output-format", "github", "a.py"]);
    assert_eq!(stdout(&github).lines().count(), 1, "{}", stdout(&github));
    assert!(
        stdout(&github).contains("line=4,col=7,endLine=4,endColumn=13::"),
        "{}",
        stdout(&github)
    );
    project.write(
        "b.py",
        "for b in loader:\n    model(\n        b\n    ).item()  # noqa: SYNC101\n",
    );
    let quiet = project.run(&["check", "--isolated", "--output-format", "concise", "-q", "b.py"]);
    assert_eq!(stdout(&quiet), "", "{}", stdout(&quiet));
    let full = project.run(&["check", "--isolated", "a.py"]);
    assert!(
        stdout(&full).starts_with("warning[SYNC101]: `model( b ).item()` waits"),
        "{}",
        stdout(&full)
    );
}

#[test]
fn deeply_nested_expressions() {
    let depth = 5000;
    let shapes = [
        ("parentheses", format!("{}b{}", "(".repeat(depth), ")".repeat(depth))),
        ("calls", format!("{}b{}", "f(".repeat(depth), ")".repeat(depth))),
        ("lists", format!("{}b{}", "[".repeat(depth), "]".repeat(depth))),
        ("subscripts", format!("b{}", "[0]".repeat(depth))),
        ("attributes", format!("b{}", ".a".repeat(depth))),
        ("unary", format!("{}b", "not ".repeat(depth))),
        ("binary", vec!["b"; depth].join(" + ")),
    ];
    let project = Project::new();
    for (name, expression) in &shapes {
        // At module level, inside a hot loop, followed by a finding that must still be found.
        let source = format!("x = {expression}\nfor b in loader:\n    y = {expression}\n    model(b).item()\n");
        project.write(&format!("{name}.py"), source);
    }
    project.write(
        "literal.py",
        format!("x = {}1{}\n", "(".repeat(depth), ")".repeat(depth)),
    );
    let output = project.run_within(
        Duration::from_secs(120),
        &["check", "--isolated", "--output-format", "json", "."],
    );
    assert!(!stderr(&output).contains("overflow"), "{}", stderr(&output));
    let found = json_locations(&output);
    for (name, _) in &shapes {
        let path = format!("{name}.py");
        assert!(
            found.contains(&("SYNC101".to_string(), path.clone(), 4, 5)),
            "{path}: {found:?} {}",
            stderr(&output)
        );
    }
    assert_eq!(exit_code(&output), 1, "{}", stderr(&output));
}

/// Code nested up to synclint's limit (10,000 levels of statements, expressions and patterns)
/// is checked whole, in every shape that nests: the checker's threads have the stack for it.
/// One level deeper, the file is refused with an error that says why, and the other files are
/// still checked.
#[test]
fn nesting_up_to_the_limit_is_checked_and_deeper_is_refused() {
    let shapes = |depth: usize| -> Vec<(&str, String)> {
        vec![
            ("binary", vec!["y"; depth].join(" + ")),
            ("power", vec!["y"; depth].join(" ** ")),
            ("attributes", format!("y{}", ".a".repeat(depth))),
            ("methods", format!("y{}", ".sum()".repeat(depth / 2))),
            ("calls", format!("{}y{}", "f(".repeat(depth), ")".repeat(depth))),
            ("lists", format!("{}y{}", "[".repeat(depth), "]".repeat(depth))),
            ("dicts", format!("{}y{}", "{1: ".repeat(depth), "}".repeat(depth))),
            ("subscripts", format!("{}0{}", "y[".repeat(depth), "]".repeat(depth))),
            ("unary", format!("{}y", "-".repeat(depth))),
            ("lambdas", format!("{}y", "lambda: ".repeat(depth))),
            ("conditionals", format!("{}y", "y if y else ".repeat(depth))),
            (
                "generators",
                format!("{}y{}", "(a for a in ".repeat(depth), ")".repeat(depth)),
            ),
            ("f_strings", format!("{}y{}", "f\"{".repeat(depth), "}\"".repeat(depth))),
        ]
    };
    let project = Project::new();
    // The loop's body is four levels below the module: the expression may take the rest.
    let room = synclint::nesting::MAX_NESTING - 4;
    for (name, expression) in shapes(room) {
        let source = format!("for b in loader:\n    y = model(b)\n    x = {expression}\n    model(b).item()\n");
        project.write(&format!("within/{name}.py"), source);
    }
    // At module level an expression starts two levels below the module: one more is too many.
    for (name, expression) in shapes(synclint::nesting::MAX_NESTING) {
        project.write(&format!("beyond/{name}.py"), format!("x = {expression}\n"));
    }
    project.write("beyond/fine.py", "for b in loader:\n    model(b).item()\n");
    let output = project.run_within(
        Duration::from_secs(300),
        &["check", "--isolated", "--output-format", "json", "."],
    );
    assert!(!stderr(&output).contains("overflow"), "{}", stderr(&output));
    let found = json(&output);
    let found = found.as_array().expect("a list of findings");
    let summary: Vec<(&str, &str)> = found
        .iter()
        .map(|finding| {
            let field = |key: &str| finding[key].as_str().unwrap_or_default();
            (field("filename"), field("code"))
        })
        .collect();
    let refused = |path: &str| {
        found.iter().any(|finding| {
            finding["filename"].as_str() == Some(path)
                && finding["code"].is_null()
                && finding["message"]
                    .as_str()
                    .is_some_and(|message| message.contains("code nested more than 10,000 levels deep"))
        })
    };
    let located = |path: &str, row: u64| {
        found.iter().any(|finding| {
            finding["filename"].as_str() == Some(path)
                && finding["code"].as_str() == Some("SYNC101")
                && finding["location"]["row"].as_u64() == Some(row)
        })
    };
    for (name, _) in shapes(0) {
        assert!(
            located(&format!("within/{name}.py"), 4),
            "within/{name}.py: {summary:?}"
        );
        assert!(!refused(&format!("within/{name}.py")), "within/{name}.py");
        assert!(refused(&format!("beyond/{name}.py")), "beyond/{name}.py: {summary:?}");
    }
    assert!(located("beyond/fine.py", 2), "{summary:?}");
    assert_eq!(exit_code(&output), 2, "{}", stderr(&output));
}

/// A function is analysed on demand inside the visit of the call that asks, so a chain of
/// functions each calling the next once nested an analysis per link on the stack (62,000 links
/// aborted the run). Past a bound the rest of the chain is analysed by the file's own pass, and
/// the deepest tree a file may hold still fits on top: the last link's expression is nested as
/// deep as the limit allows. The sync at the chain's end is still found, through the project's
/// hot chains.
#[test]
fn a_chain_of_functions_each_calling_the_next_is_checked_whatever_its_length() {
    const LINKS: usize = 30_000;
    let project = Project::new();
    let mut source = String::from("import torch\n");
    for link in 0..LINKS {
        source.push_str(&format!("def f{link}(x):\n    return f{}(x)\n", link + 1));
    }
    // The body's expression starts three levels below the module: it may take the rest.
    let room = synclint::nesting::MAX_NESTING - 3;
    let deep = format!("{}x{}", "[".repeat(room), "]".repeat(room));
    source.push_str(&format!("def f{LINKS}(x):\n    y = {deep}\n    return x.item()\n"));
    source.push_str("for b in loader:\n    f0(model(b))\n");
    project.write("chain.py", source);
    let output = project.run_within(
        Duration::from_secs(300),
        &["check", "--isolated", "--output-format", "concise", "."],
    );
    let item_row = 2 * LINKS + 4;
    assert!(
        stdout(&output).contains(&format!("chain.py:{item_row}:12: SYNC101")),
        "{}\n{}",
        stdout(&output).chars().take(2_000).collect::<String>(),
        stderr(&output).chars().take(2_000).collect::<String>()
    );
    assert_eq!(
        exit_code(&output),
        1,
        "{}",
        stderr(&output).chars().take(2_000).collect::<String>()
    );
}

/// A long method chain is inferred one link at a time: each link's receiver is inferred once.
#[test]
fn a_long_method_chain() {
    let project = Project::new();
    project.write(
        "chain.py",
        format!("for b in loader:\n    y = model(b){}\n", ".float()".repeat(200)),
    );
    let output = project.run_within(
        Duration::from_secs(30),
        &["check", "--isolated", "--output-format", "json", "."],
    );
    assert!(exit_code(&output) < 2, "{}", stderr(&output));
}

#[test]
fn an_unreadable_file() {
    let project = Project::new();
    project.write("good.py", ONE_FINDING).write("secret.py", ONE_FINDING);
    let secret = project.path().join("secret.py");
    set_mode(&secret, 0o000);
    if std::fs::read(&secret).is_ok() {
        // Running as root: the file can still be read, so there is nothing to test.
        return;
    }
    let output = project.run(&["check", "--isolated", "--output-format", "concise", "."]);
    set_mode(&secret, 0o644);
    let err = stderr(&output);
    assert_eq!(exit_code(&output), 2, "{err}");
    assert!(err.contains("secret.py"), "{err}");
    assert!(stdout(&output).contains("good.py:2:5: SYNC101"));
}

#[cfg(unix)]
fn set_mode(path: &std::path::Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[cfg(not(unix))]
fn set_mode(_: &std::path::Path, _: u32) {}

// stdin --------------------------------------------------------------------------------------

#[test]
fn stdin() {
    let output = run_stdin(
        &[
            "-",
            "--isolated",
            "--stdin-filename",
            "train.py",
            "--output-format",
            "concise",
        ],
        ONE_FINDING,
    );
    assert_eq!(exit_code(&output), 1);
    assert_eq!(
        stdout(&output),
        "train.py:2:5: SYNC101 `model(b).item()` waits for the GPU to finish all queued work\nFound 1 finding.\n"
    );
    let json_output = run_stdin(
        &[
            "check",
            "--isolated",
            "--stdin-filename",
            "train.py",
            "--output-format",
            "json",
            "-",
        ],
        ONE_FINDING,
    );
    assert_eq!(
        json_locations(&json_output),
        [("SYNC101".to_string(), "train.py".to_string(), 2, 5)]
    );
    let unnamed = run_stdin(&["check", "--isolated", "--output-format", "concise", "-"], ONE_FINDING);
    assert!(stdout(&unnamed).starts_with("-:2:5: SYNC101"), "{}", stdout(&unnamed));
    let clean = run_stdin(&["-", "--isolated"], CLEAN);
    assert_eq!(exit_code(&clean), 0);
}

#[test]
fn stdin_uses_the_config_of_its_file_name() {
    let project = Project::new();
    project.write("sub/synclint.toml", "select = [\"SYNC103\"]\n").write(
        "pyproject.toml",
        "[tool.synclint.per-file-ignores]\n\"tests/*\" = [\"SYNC1\"]\n",
    );
    let run_named = |name: &str| {
        let args = ["check", "--output-format", "json", "--stdin-filename", name, "-"];
        codes(&project.run_stdin(&args, TWO_FINDINGS))
    };
    assert_eq!(run_named("train.py"), set(&["SYNC101", "SYNC103"]));
    assert_eq!(run_named("sub/train.py"), set(&["SYNC103"]));
    assert_eq!(run_named("tests/test_train.py"), set(&[]));
}

#[test]
fn stdin_errors() {
    let bad = run_stdin(
        &[
            "-",
            "--isolated",
            "--stdin-filename",
            "train.py",
            "--output-format",
            "json",
        ],
        "for b in loader:\n    model(b).item()\ndef (:\n",
    );
    assert_eq!(exit_code(&bad), 2);
    let rows = json_locations(&bad);
    assert!(
        rows.contains(&("invalid-syntax".to_string(), "train.py".to_string(), 3, 5)),
        "{rows:?}"
    );
    assert!(
        rows.contains(&("SYNC101".to_string(), "train.py".to_string(), 2, 5)),
        "{rows:?}"
    );

    let latin1 = Project::new().run_stdin(&["-", "--isolated", "--stdin-filename", "latin1.py"], b"x = '\xe9'\n");
    assert_eq!(exit_code(&latin1), 2);
    assert!(
        stderr(&latin1).contains("latin1.py") && stderr(&latin1).contains("UTF-8"),
        "{}",
        stderr(&latin1)
    );
}

// The `rule` command, --version, --statistics, --quiet ---------------------------------------

#[test]
fn rule_command() {
    let one = run(&repo(), &["rule", "SYNC101"]);
    assert_eq!(exit_code(&one), 0);
    assert!(stdout(&one).starts_with("# SYNC101: item\n"), "{}", stdout(&one));
    assert!(stdout(&one).contains("## Example"));
    assert_eq!(
        stdout(&run(&repo(), &["rule", "sync101"])),
        stdout(&one),
        "codes are case-insensitive"
    );

    let all = run(&repo(), &["rule", "--all"]);
    assert_eq!(exit_code(&all), 0);
    let text = stdout(&all);
    let titles: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("# SYNC"))
        .map(|l| &l[2..9])
        .collect();
    let expected: Vec<&str> = Rule::ALL.iter().map(|r| r.code()).collect();
    assert_eq!(titles.len(), Rule::ALL.len());
    assert_eq!(titles, expected);

    for args in [&["rule", "SYNC999"][..], &["rule", "item"], &["rule"]] {
        let output = run(&repo(), args);
        assert_eq!(exit_code(&output), 2, "{args:?}");
        assert!(stdout(&output).is_empty(), "{args:?}");
        assert!(!stderr(&output).is_empty(), "{args:?}");
    }
    assert!(stderr(&run(&repo(), &["rule", "SYNC999"])).contains("SYNC999"));
    assert!(stderr(&run(&repo(), &["rule"])).contains("--all"), "says how to use it");
}

#[test]
fn version() {
    let output = run(&repo(), &["--version"]);
    assert_eq!(exit_code(&output), 0);
    assert_eq!(stdout(&output), format!("synclint {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn statistics() {
    let project = training_project();
    let output = project.run(&["check", "--isolated", "--statistics", "."]);
    assert_eq!(exit_code(&output), 1);
    insta::assert_snapshot!("statistics", stdout(&output));
    let clean = Project::new();
    clean.write("a.py", CLEAN);
    let nothing = clean.run(&["check", "--isolated", "--statistics", "."]);
    assert_eq!(exit_code(&nothing), 0);
}

#[test]
fn quiet() {
    let project = training_project();
    let loud = project.run(&["check", "--isolated", "--output-format", "concise", "."]);
    let quiet = project.run(&["check", "--isolated", "--output-format", "concise", "--quiet", "."]);
    assert_eq!(exit_code(&quiet), 1);
    assert!(stdout(&loud).contains("Found 6 findings."));
    assert!(!stdout(&quiet).contains("Found"), "{}", stdout(&quiet));
    assert!(!stdout(&quiet).contains("fixable"), "{}", stdout(&quiet));
    assert_eq!(stdout(&quiet).lines().count(), 6);
    let short = project.run(&["check", "--isolated", "--output-format", "concise", "-q", "."]);
    assert_eq!(stdout(&short), stdout(&quiet));
    let clean = Project::new();
    clean.write("a.py", CLEAN);
    assert_eq!(stdout(&clean.run(&["check", "--isolated", "-q", "."])), "");
}

// Order and determinism --------------------------------------------------------------------

/// Several folders and files, created in an order unlike the sorted one.
fn many_files_project() -> Project {
    let project = Project::new();
    for name in [
        "z.py", "b/y.py", "a/x.py", "a/b/w.py", "B.py", "a.py", "a/b.py", "a-b.py", "b.py",
    ] {
        project.write(name, TWO_FINDINGS);
    }
    project.write("a/b/v.py", "for b in loader:\n    model(b).cpu(); model(b).item()\n");
    project
}

#[test]
fn output_is_sorted_by_path_line_and_column() {
    let project = many_files_project();
    let output = project.run(&["check", "--isolated", "--output-format", "json", "."]);
    let found = json_locations(&output);
    let mut sorted = found.clone();
    sorted.sort_by(|a, b| (&a.1, a.2, a.3).cmp(&(&b.1, b.2, b.3)));
    assert_eq!(found, sorted);
    assert_eq!(found.len(), 20);
}

#[test]
fn threads_do_not_change_the_output() {
    let project = many_files_project();
    let with_threads = |threads: &str, format: &str| {
        let output = synclint()
            .current_dir(project.path())
            .env("SYNCLINT_THREADS", threads)
            .args(["check", "--isolated", "--output-format", format, "."])
            .output()
            .unwrap();
        (exit_code(&output), stdout(&output), stderr(&output))
    };
    for format in ALL_FORMATS {
        assert_eq!(with_threads("1", format), with_threads("2", format), "{format}");
        assert_eq!(with_threads("1", format), with_threads("8", format), "{format}");
    }
}

#[test]
fn the_same_output_twice() {
    let project = training_project();
    project.write("bad.py", "def (:\n").write("sub/a.py", TWO_FINDINGS);
    for format in ALL_FORMATS {
        let first = project.run(&["check", "--isolated", "--output-format", format, "."]);
        let second = project.run(&["check", "--isolated", "--output-format", format, "."]);
        assert_eq!(first.stdout, second.stdout, "{format}");
        assert_eq!(first.stderr, second.stderr, "{format}");
        assert_eq!(exit_code(&first), 2);
    }
}

#[test]
fn the_default_path_is_the_working_directory() {
    let project = Project::new();
    project.write("a.py", ONE_FINDING).write("sub/b.py", ONE_FINDING);
    let implicit = project.run(&["check", "--isolated", "--output-format", "concise"]);
    let explicit = project.run(&["check", "--isolated", "--output-format", "concise", "."]);
    let bare = project.run(&["--isolated", "--output-format", "concise"]);
    assert_eq!(stdout(&implicit), stdout(&explicit));
    assert_eq!(stdout(&bare), stdout(&explicit));
    assert!(
        stdout(&explicit).starts_with("a.py:2:5: SYNC101"),
        "{}",
        stdout(&explicit)
    );
}

/// A message that quotes code spanning several lines stays on one line in JSON too.
#[test]
fn json_messages_are_one_line() {
    let project = Project::new();
    project.write(
        "multi.py",
        "import torch\ndev = torch.device(\"cuda\")\nx = torch.randn(8, device=dev)\nfor step in range(3):\n    v = (\n        x.sum()\n    ).item()\n",
    );
    let output = project.run(&["check", "--isolated", "--output-format", "json", "."]);
    let rows = json(&output);
    let messages: Vec<&str> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["message"].as_str().unwrap())
        .collect();
    assert!(!messages.is_empty(), "{}", stdout(&output));
    for message in messages {
        assert!(!message.contains('\n') && !message.contains('\r'), "{message:?}");
    }
}

/// A file named alone is checked inside its project (issue: pre-commit passes only the changed
/// files): the helper's `.item()` is hot through the loop of a file that was not named, with
/// the same finding and note as when the whole project is linted; `--isolated` checks the file
/// alone; files not named are never reported, even broken ones; `project-root` sets the
/// project where no marker does.
#[test]
fn a_file_named_alone_is_checked_in_its_project() {
    let project = Project::new();
    project
        .write("pyproject.toml", "")
        .write("pkg/__init__.py", "")
        .write("pkg/helpers.py", "def record_value(x):\n    return x.item()\n")
        .write(
            "train.py",
            "from pkg.helpers import record_value\n\n\ndef train(model, loader, opt):\n    for x, y in loader:\n        loss = model(x, y)\n        loss.backward()\n        opt.step()\n        record_value(loss)\n        print(loss.item())\n",
        )
        .write("broken.py", "def (:\n");
    let whole = project.run(&["check", "--output-format", "concise", "pkg/helpers.py", "train.py"]);
    let alone = project.run(&["check", "pkg/helpers.py"]);
    let alone_concise = project.run(&["check", "--output-format", "concise", "pkg/helpers.py"]);
    assert_eq!(exit_code(&alone), 1, "{}", stdout(&alone));
    assert!(
        stdout(&alone).contains("hot: `record_value()` is called from the loop at train.py:5"),
        "{}",
        stdout(&alone)
    );
    let helper_lines = |output: &std::process::Output| -> Vec<String> {
        stdout(output)
            .lines()
            .filter(|line| line.starts_with("pkg/helpers.py"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(helper_lines(&alone_concise), helper_lines(&whole));
    assert_eq!(helper_lines(&alone_concise).len(), 1);
    // Not named: train.py's own finding and broken.py's syntax error stay out.
    assert!(
        !stdout(&alone_concise).contains("train.py:10"),
        "{}",
        stdout(&alone_concise)
    );
    assert!(!stdout(&alone).contains("broken.py") && !stderr(&alone).contains("broken.py"));
    // From a subfolder, and with the folder of the helper named: the same finding.
    let from_pkg = project.run_in("pkg", &["check", "--output-format", "concise", "helpers.py"]);
    assert_eq!(exit_code(&from_pkg), 1, "{}", stdout(&from_pkg));
    let isolated = project.run(&["check", "--isolated", "pkg/helpers.py"]);
    assert_eq!(exit_code(&isolated), 0, "{}", stdout(&isolated));

    // No marker: the folder `project-root` names (relative to the config) is the project.
    let unmarked = Project::new();
    unmarked
        .write("synclint.toml", "project-root = \".\"\n")
        .write("helpers.py", "def record_value(x):\n    return x.item()\n")
        .write(
            "train.py",
            "from helpers import record_value\n\n\ndef train(model, loader, opt):\n    for x, y in loader:\n        loss = model(x, y)\n        loss.backward()\n        opt.step()\n        record_value(loss)\n",
        );
    let alone = unmarked.run(&["check", "helpers.py"]);
    assert_eq!(exit_code(&alone), 1, "{}", stdout(&alone));
}

#[test]
fn source_from_stdin_is_checked_as_the_file_it_names_in_its_project() {
    let project = Project::new();
    project
        .write("pyproject.toml", "")
        .write("pkg/__init__.py", "")
        .write("pkg/helpers.py", "def record_value(x):\n    return x\n")
        .write(
            "train.py",
            "from pkg.helpers import record_value\n\n\ndef train(model, loader):\n    for x in loader:\n        record_value(model(x))\n",
        );
    // The editor's unsaved text stands for pkg/helpers.py; the loop in train.py makes it hot.
    let unsaved = "def record_value(x):\n    return x.item()\n";
    let args = [
        "check",
        "--output-format",
        "concise",
        "--stdin-filename",
        "pkg/helpers.py",
        "-",
    ];
    let output = project.run_stdin(&args, unsaved);
    assert_eq!(exit_code(&output), 1, "{}{}", stdout(&output), stderr(&output));
    assert!(
        stdout(&output).starts_with("pkg/helpers.py:2:12: SYNC101"),
        "{}",
        stdout(&output)
    );
    // The file on disk is not what was checked, and nothing else is reported.
    assert_eq!(stdout(&output).lines().filter(|line| line.contains("SYNC")).count(), 1);
    // Without its project (`--isolated`) the helper is cold.
    let isolated = ["check", "--isolated", "--stdin-filename", "pkg/helpers.py", "-"];
    assert_eq!(exit_code(&project.run_stdin(&isolated, unsaved)), 0);
    // A name that does not exist yet in the project is checked too.
    let new_file = [
        "check",
        "--output-format",
        "concise",
        "--stdin-filename",
        "pkg/new.py",
        "-",
    ];
    let output = project.run_stdin(&new_file, "for x in loader:\n    print(model(x).item())\n");
    assert!(
        stdout(&output).starts_with("pkg/new.py:2:11: SYNC101"),
        "{}",
        stdout(&output)
    );
}

/// Loops in test files start no hot chains: a test that loops over a helper's calls makes
/// neither the helper nor its own lines hot; the same loop in training code does.
#[test]
fn loops_in_test_files_make_nothing_hot() {
    let project = Project::new();
    let helper = "def record_value(x):\n    return x.item()\n";
    let looped = "import torch\nfrom pkg.helpers import record_value\n\n\ndef run():\n    for step in range(3):\n        x = torch.ones(2, device=\"cuda\").sum()\n        record_value(x)\n        assert x.item() > 0\n";
    project
        .write("pyproject.toml", "")
        .write("pkg/__init__.py", "")
        .write("pkg/helpers.py", helper)
        .write("tests/test_helpers.py", looped)
        .write("pkg/test_more.py", looped)
        .write("pkg/conftest.py", looped);
    let output = project.run(&["check", "--output-format", "concise", "."]);
    assert_eq!(exit_code(&output), 0, "{}", stdout(&output));
    project.write("train.py", looped);
    let output = project.run(&["check", "--output-format", "concise", "."]);
    let found = stdout(&output);
    assert!(found.contains("pkg/helpers.py:2:12: SYNC101"), "{found}");
    assert!(found.contains("train.py:9:16: SYNC101"), "{found}");
    assert!(!found.contains("test_"), "{found}");
}
