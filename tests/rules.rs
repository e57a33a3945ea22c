//! Every rule against its fixture (the lines marked `# expect: CODE` and no others), a snapshot of
//! its messages, its doc's examples, and the measured facts.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use common::{json_findings, repo, run, run_stdin, stdout};
use synclint::registry::Rule;

/// The lines a fixture marks for `code`.
fn expected_lines(source: &str, code: &str) -> BTreeSet<usize> {
    source
        .lines()
        .enumerate()
        .filter(|(_, line)| {
            line.split_once("# expect:")
                .is_some_and(|(_, codes)| codes.split([',', ' ']).any(|c| c.trim() == code))
        })
        .map(|(index, _)| index + 1)
        .collect()
}

/// The flags that enable `rule` for its fixture: the rule alone, or, for an opt-in rule, on top
/// of the default rules, as users enable it (SYNC900 judges the other rules' directives).
fn selecting(rule: Rule) -> [&'static str; 2] {
    if rule.is_opt_in() {
        ["--extend-select", rule.code()]
    } else {
        ["--select", rule.code()]
    }
}

#[test]
fn every_rule_has_a_fixture_and_a_doc() {
    for rule in Rule::ALL {
        let fixture = repo().join(format!("fixtures/{}.py", rule.code()));
        assert!(fixture.is_file(), "missing {}", fixture.display());
        let doc = repo().join(format!("rules/{}-{}.md", rule.code(), rule.name()));
        assert!(doc.is_file(), "missing {}", doc.display());
    }
    // Every doc in rules/ is a registered rule.
    for entry in fs::read_dir(repo().join("rules")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            Rule::ALL
                .iter()
                .any(|r| name == format!("{}-{}.md", r.code(), r.name())),
            "rules/{name} names no registered rule"
        );
    }
}

#[test]
fn fixtures_flag_exactly_the_marked_lines() {
    let mut failures = Vec::new();
    for rule in Rule::ALL {
        let path = format!("fixtures/{}.py", rule.code());
        let source = fs::read_to_string(repo().join(&path)).unwrap();
        let expected = expected_lines(&source, rule.code());
        assert!(!expected.is_empty(), "{path} marks no line for {}", rule.code());
        let [flag, code] = selecting(*rule);
        let output = run(
            &repo(),
            &["check", "--isolated", flag, code, "--output-format", "json", &path],
        );
        let found: BTreeSet<usize> = json_findings(&output)
            .into_iter()
            .filter(|(code, _)| code == rule.code())
            .map(|(_, row)| row)
            .collect();
        let missed: Vec<_> = expected.difference(&found).collect();
        let extra: Vec<_> = found.difference(&expected).collect();
        if !missed.is_empty() || !extra.is_empty() {
            failures.push(format!(
                "{path}: not flagged {missed:?}; flagged but unmarked {extra:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn fixture_snapshots() {
    for rule in Rule::ALL {
        let path = format!("fixtures/{}.py", rule.code());
        let [flag, code] = selecting(*rule);
        let output = run(
            &repo(),
            &[
                "check",
                "--isolated",
                flag,
                code,
                "--output-format",
                "concise",
                "--quiet",
                &path,
            ],
        );
        insta::assert_snapshot!(rule.code(), stdout(&output));
    }
}

/// The blocks of a rule doc: (setup, example, use instead).
fn doc_blocks(doc: &str) -> (String, String, String) {
    let mut setup = None;
    let mut example = None;
    let mut rewrite = None;
    let mut section = "";
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        if let Some(heading) = line.strip_prefix("## ") {
            section = heading.trim();
            continue;
        }
        let info = match line.strip_prefix("```") {
            Some(info) if info.starts_with("python") => info.trim(),
            _ => continue,
        };
        let mut block = String::new();
        for body in lines.by_ref() {
            if body.starts_with("```") {
                break;
            }
            block.push_str(body);
            block.push('\n');
        }
        match (info, section) {
            ("python setup", _) => setup = Some(block),
            ("python", "Example") => example = Some(block),
            ("python", "Use instead") => rewrite = Some(block),
            _ => {}
        }
    }
    (
        setup.expect("a setup block"),
        example.expect("an Example block"),
        rewrite.expect("a Use instead block"),
    )
}

#[test]
fn doc_examples_fire_and_rewrites_do_not() {
    let mut failures = Vec::new();
    for rule in Rule::ALL {
        let (setup, example, rewrite) = doc_blocks(rule.doc());
        for (label, snippet, should_fire) in [("Example", &example, true), ("Use instead", &rewrite, false)] {
            let source = format!("{setup}\n{snippet}");
            // An opt-in rule is enabled as users enable it; the others are on already.
            let output = run_stdin(
                &[
                    "check",
                    "--isolated",
                    "--extend-select",
                    rule.code(),
                    "--output-format",
                    "json",
                    "--stdin-filename",
                    "doc_example.py",
                    "-",
                ],
                &source,
            );
            let fired = json_findings(&output).iter().any(|(code, _)| code == rule.code());
            if fired != should_fire {
                failures.push(format!(
                    "{}: the {label} block {} fire",
                    rule.code(),
                    if should_fire { "does not" } else { "does" }
                ));
            }
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn doc_shape() {
    for rule in Rule::ALL {
        let doc = rule.doc();
        assert!(
            doc.starts_with(&format!("# {}: {}", rule.code(), rule.name())),
            "{} title",
            rule.code()
        );
        for section in [
            "## What it does",
            "## Why is this bad",
            "## Example",
            "## Use instead",
            "## Fix",
            "## When it fires",
        ] {
            assert!(doc.contains(section), "{} lacks {section}", rule.code());
        }
        let row = format!("| {} | {} |", rule.code(), rule.name());
        assert!(
            doc.contains(&row),
            "{}: the table row must read `{row} <fix> |`",
            rule.code()
        );
    }
}

/// Case ids listed in docs/accuracy.md as not visible statically.
fn unseeable_cases() -> BTreeSet<String> {
    let text = fs::read_to_string(repo().join("docs/accuracy.md")).unwrap_or_default();
    let Some(section) = text.split("## Syncs synclint cannot see").nth(1) else {
        return BTreeSet::new();
    };
    section
        .lines()
        .take_while(|line| !line.starts_with("## "))
        .filter_map(|line| line.strip_prefix("| `")?.split('`').next().map(str::to_string))
        .collect()
}

/// Every measured statement, inside a training loop: each one that syncs is flagged, and none
/// that does not sync is.
#[test]
fn measured_facts() {
    let source = fs::read_to_string(repo().join("fixtures/facts.py")).unwrap();
    let mut cases: BTreeMap<String, (bool, Vec<usize>)> = BTreeMap::new();
    for (index, line) in source.lines().enumerate() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        let Some((_, marker)) = line.split_once("# fact[") else {
            continue;
        };
        let Some((id, verdict)) = marker.split_once("]:") else {
            continue;
        };
        // The header's prose describes the marker as `# fact[<case-id>]: ...`.
        if !id.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            continue;
        }
        let syncs = match verdict.trim() {
            "sync" => true,
            "no-sync" => false,
            other => panic!("line {}: unknown verdict {other}", index + 1),
        };
        cases
            .entry(id.to_string())
            .or_insert((syncs, Vec::new()))
            .1
            .push(index + 1);
    }
    assert!(cases.len() > 200, "facts.py holds {} cases", cases.len());
    let output = run(
        &repo(),
        &["check", "--isolated", "--output-format", "json", "fixtures/facts.py"],
    );
    let found: BTreeMap<usize, Vec<String>> =
        json_findings(&output)
            .into_iter()
            .fold(BTreeMap::new(), |mut map, (code, row)| {
                map.entry(row).or_default().push(code);
                map
            });
    let unseeable = unseeable_cases();
    let mut failures = Vec::new();
    for (id, (syncs, lines)) in &cases {
        let flagged: Vec<&String> = lines.iter().filter_map(|l| found.get(l)).flatten().collect();
        match (syncs, flagged.is_empty(), unseeable.contains(id)) {
            (true, true, false) => failures.push(format!("{id} (line {}) syncs but is not flagged", lines[0])),
            (true, false, true) => failures.push(format!(
                "{id} is listed as unseeable in docs/accuracy.md but is flagged"
            )),
            (false, false, _) => failures.push(format!(
                "{id} (line {}) does not sync but is flagged {flagged:?}",
                lines[0]
            )),
            _ => {}
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} facts wrong:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Every rule's claim was checked on a GPU (`verify/verify_rules.py`): a new rule cannot land
/// without a row in docs/verified-on-gpu.md whose verdict is ok. A rule whose doc says it makes
/// no claim about the GPU (SYNC900 checks `# noqa` comments) is not run there.
#[test]
fn every_rule_is_verified_on_a_gpu() {
    let table = fs::read_to_string(repo().join("docs/verified-on-gpu.md")).expect("docs/verified-on-gpu.md");
    for rule in Rule::ALL
        .iter()
        .filter(|rule| !rule.doc().contains("<!-- verify: no-gpu-claim -->"))
    {
        let row = table
            .lines()
            .find(|line| line.starts_with(&format!("| {} |", rule.code())))
            .unwrap_or_else(|| panic!("docs/verified-on-gpu.md has no row for {}", rule.code()));
        let verdict = row.trim_end_matches('|').rsplit('|').next().unwrap_or_default().trim();
        assert!(
            verdict.starts_with("ok"),
            "{}: verdict `{verdict}` on the GPU",
            rule.code()
        );
    }
}
