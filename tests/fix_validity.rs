//! The fix-validity harness, after Ruff's `ruff_fix_validity`: every seed file (fixtures/ and
//! examples/, as the project they are) and mutants of them that still parse are fixed with
//! `--fix --unsafe-fixes` in a copy, and then
//! - every fixed file parses;
//! - `--diff` wrote nothing, and its hunks, applied to the original, make the fixed file byte for
//!   byte (so every byte outside them, CRLF, BOM and tabs included, is kept); a file with
//!   nothing to fix is not touched;
//! - fixing again changes nothing;
//! - no finding of a fixed file is new (a fix may remove findings, never add one: findings are
//!   compared by rule and message, or by rule and the text of their line);
//! - what the fix run reports as remaining ("N remaining", and the findings it lists) is what a
//!   fresh `check` of the fixed files finds.
//!
//! `SYNCLINT_FUZZ_CASES` and the other variables of the fuzz harness choose the mutants.

mod common;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use common::mutate::{FuzzConfig, Mutant, keep_failure, seeds};
use common::*;
use synclint::linter::decode;
use synclint::notebook::{Notebook, code_of};
use synclint::parse::{SourceKind, parses_cleanly};

/// Cases looked through for mutants that still parse, by default.
const CI_CASES: u64 = 600;

/// Mutants fixed by one run of the binary.
const BATCH: usize = 100;

/// A finding as `check --output-format json` gives it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Found {
    /// The file, and in a notebook the cell: `train.ipynb:cell 3`.
    place: String,
    code: String,
    row: u64,
    column: u64,
    message: String,
    fixable: bool,
}

impl Found {
    fn file(&self) -> &str {
        self.place.split_once(":cell ").map_or(&self.place, |(file, _)| file)
    }
}

fn found(output: &Output) -> Vec<Found> {
    json(output)
        .as_array()
        .expect("a list of findings")
        .iter()
        .map(|finding| {
            let filename = finding["filename"].as_str().expect("a filename");
            Found {
                place: match finding["cell"].as_u64() {
                    Some(cell) => format!("{filename}:cell {cell}"),
                    None => filename.to_string(),
                },
                code: finding["code"].as_str().unwrap_or("invalid-syntax").to_string(),
                row: finding["location"]["row"].as_u64().expect("a row"),
                column: finding["location"]["column"].as_u64().expect("a column"),
                message: finding["message"].as_str().unwrap_or_default().to_string(),
                fixable: !finding["fix"].is_null(),
            }
        })
        .collect()
}

/// Where a finding is and what: (place, code, row, column).
type Located = (String, String, u64, u64);

/// What `--output-format concise` lists: each finding, and the summary's fixed and remaining
/// counts (`Found 9 findings (2 fixed, 7 remaining).`).
fn listed(out: &str) -> (Vec<Located>, (usize, usize)) {
    let mut findings = Vec::new();
    let mut counts = None;
    for line in out.lines() {
        if let Some(summary) = line.strip_prefix("Found ") {
            counts = Some(summary_counts(summary).unwrap_or_else(|| panic!("a summary {line:?}")));
            continue;
        }
        if line == "All checks passed!" {
            counts = Some((0, 0));
            continue;
        }
        let Some((place, rest)) = line.split_once(": ") else {
            continue;
        };
        let (Some((place, column)), Some(code)) = (place.rsplit_once(':'), rest.split(' ').next()) else {
            continue;
        };
        let Some((place, row)) = place.rsplit_once(':') else {
            continue;
        };
        if let (Ok(row), Ok(column)) = (row.parse(), column.parse()) {
            findings.push((place.to_string(), code.to_string(), row, column));
        }
    }
    (findings, counts.unwrap_or_else(|| panic!("no summary in {out}")))
}

/// (fixed, remaining) of a summary after its `Found `.
fn summary_counts(summary: &str) -> Option<(usize, usize)> {
    let number = |text: &str| text.parse::<usize>().ok();
    match summary.split_once(" (") {
        Some((_, counts)) => {
            let (fixed, rest) = counts.split_once(" fixed, ")?;
            Some((number(fixed)?, number(rest.split_once(' ')?.0)?))
        }
        None => Some((0, number(summary.split_once(' ')?.0)?)),
    }
}

/// The text of a finding's line, in its file or cell.
fn line_text(bytes: &[u8], place: &str, row: u64) -> String {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let cell = place
        .split_once(":cell ")
        .and_then(|(_, cell)| cell.parse::<u32>().ok());
    let code = match cell {
        Some(number) => match Notebook::parse(text) {
            Ok((notebook, code)) => notebook
                .cell_texts(&code)
                .find(|(cell, _)| *cell == number)
                .map(|(_, text)| text.to_string())
                .unwrap_or_default(),
            Err(_) => String::new(),
        },
        None => text,
    };
    code.lines()
        .nth(row as usize - 1)
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn kind_of(path: &str) -> SourceKind {
    SourceKind::of(Path::new(path))
}

/// Whether `bytes` are UTF-8 source of `kind` that parses with no error.
fn parses(bytes: &[u8], kind: SourceKind) -> bool {
    let Ok(text) = decode(bytes.to_vec()) else { return false };
    let Ok((code, _)) = code_of(kind, text) else {
        return false;
    };
    parses_cleanly(&code, kind)
}

/// The files of a project: each path (relative, with `/`) and its bytes.
type Files = BTreeMap<String, Vec<u8>>;

fn read_files(root: &Path, names: &[&String]) -> Files {
    names
        .iter()
        .map(|name| {
            let bytes = std::fs::read(root.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            ((*name).clone(), bytes)
        })
        .collect()
}

/// Fixes a copy of `files` as one project and checks every promise of the module's doc; the
/// failures, each with the file it is about.
fn validate(files: &Files) -> Vec<(String, String)> {
    let project = Project::new();
    for (name, bytes) in files {
        project.write(name, bytes);
    }
    let names: Vec<&String> = files.keys().collect();
    let failures: RefCell<Vec<(String, String)>> = RefCell::default();
    let fail = |file: &str, why: String| failures.borrow_mut().push((file.to_string(), why));
    // Every file parses, so each run exits 0 or 1: an error (exit 2) is a failure of the files
    // its messages name.
    let check = |args: &[&str]| {
        let output = project.run(&[&["check", "--isolated"], args, &["."]].concat());
        let code = exit_code(&output);
        if code != 0 && code != 1 {
            let err = stderr(&output);
            let named: Vec<&&String> = names.iter().filter(|name| err.contains(name.as_str())).collect();
            let why = format!("`check {}` exits {code}: {err}", args.join(" "));
            match named.as_slice() {
                [] => fail("(all)", why),
                named => named.iter().for_each(|name| fail(name, why.clone())),
            }
        }
        output
    };
    let before = found(&check(&["--output-format", "json"]));

    let diff_run = check(&["--diff", "--unsafe-fixes"]);
    let diffs = diff::parse(&stdout(&diff_run)).unwrap_or_else(|why| {
        // The reason starts with the path it is about.
        let name = names.iter().find(|name| why.starts_with(name.as_str()));
        fail(
            name.map_or("(all)", |name| name.as_str()),
            format!("the diff does not parse: {why}"),
        );
        Vec::new()
    });
    if read_files(project.path(), &names) != *files {
        fail("(all)", "`--diff` changed files".to_string());
    }

    let fix_run = check(&["--fix", "--unsafe-fixes", "--output-format", "concise"]);
    let (remaining, (fixed_count, remaining_count)) = listed(&stdout(&fix_run));
    let fixed = read_files(project.path(), &names);
    let after_run = check(&["--output-format", "json"]);
    let after = found(&after_run);

    for (name, original) in files {
        let now = &fixed[name];
        let kind = kind_of(name);
        if now != original && !parses(now, kind) {
            fail(name, "the fixed file does not parse".to_string());
        }
        let fixable = before.iter().any(|f| f.file() == name && f.fixable);
        if now != original && !fixable {
            fail(name, "changed, with nothing to fix".to_string());
        }
        if let Err(why) = diff_makes_fixed(&diffs, name, original, now) {
            fail(name, why);
        }
        // Every finding of the fixed file was there before the fix, by its message or its line.
        let mut earlier: Vec<&Found> = before.iter().filter(|f| f.file() == name).collect();
        for finding in after.iter().filter(|f| f.file() == name) {
            let line = line_text(now, &finding.place, finding.row);
            let same = earlier
                .iter()
                .position(|f| f.code == finding.code && f.message == finding.message)
                .or_else(|| {
                    earlier
                        .iter()
                        .position(|f| f.code == finding.code && line_text(original, &f.place, f.row) == line)
                });
            match same {
                Some(index) => {
                    earlier.swap_remove(index);
                }
                None => fail(
                    name,
                    format!(
                        "a new finding after the fix: {}:{}:{} {} {}",
                        finding.place, finding.row, finding.column, finding.code, finding.message
                    ),
                ),
            }
        }
    }

    // What the fix run said is left is what a fresh check finds.
    let mut fresh: Vec<Located> = after
        .iter()
        .map(|f| (f.place.clone(), f.code.clone(), f.row, f.column))
        .collect();
    let mut remaining = remaining;
    fresh.sort();
    remaining.sort();
    if remaining_count != fresh.len() || remaining != fresh {
        let missing: Vec<_> = fresh.iter().filter(|f| !remaining.contains(f)).collect();
        let extra: Vec<_> = remaining.iter().filter(|f| !fresh.contains(f)).collect();
        fail(
            "(all)",
            format!(
                "the fix run reports {remaining_count} remaining, a fresh check finds {}: not listed {missing:?}, listed but not found {extra:?}",
                fresh.len()
            ),
        );
    }
    let changed = names.iter().filter(|name| fixed[**name] != files[**name]).count();
    if (fixed_count == 0) != (changed == 0) {
        fail("(all)", format!("{fixed_count} fixed, {changed} files changed"));
    }

    let again = check(&["--fix", "--unsafe-fixes", "--output-format", "concise"]);
    let (_, (fixed_again, _)) = listed(&stdout(&again));
    let twice = read_files(project.path(), &names);
    for name in &names {
        if twice[*name] != fixed[*name] {
            fail(name, "a second `--fix --unsafe-fixes` changed it again".to_string());
        }
    }
    if fixed_again != 0 {
        fail("(all)", format!("a second `--fix --unsafe-fixes` fixed {fixed_again}"));
    }
    failures.into_inner()
}

/// Whether `--diff`'s hunks for `name` (a notebook's cell by cell) make `fixed` of `original`.
fn diff_makes_fixed(diffs: &[diff::FileDiff], name: &str, original: &[u8], fixed: &[u8]) -> Result<(), String> {
    let ours: Vec<&diff::FileDiff> = diffs
        .iter()
        .filter(|file| file.path.split_once(":cell ").map_or(&*file.path, |(file, _)| file) == name)
        .collect();
    if original == fixed {
        return match ours.is_empty() {
            true => Ok(()),
            false => Err("the diff changes it, `--fix` did not".to_string()),
        };
    }
    if ours.is_empty() {
        return Err("`--fix` changed it, the diff does not".to_string());
    }
    let text = |bytes: &[u8]| String::from_utf8(bytes.to_vec()).map_err(|_| "not UTF-8".to_string());
    let (original, fixed) = (text(original)?, text(fixed)?);
    if kind_of(name) == SourceKind::Python {
        let made = diff::apply(&original, &ours[0].hunks)?;
        return match made == fixed {
            true => Ok(()),
            false => Err("the diff applied to the original is not the fixed file".to_string()),
        };
    }
    let cells = |json: String| -> Result<Vec<(u32, String)>, String> {
        let (notebook, code) = Notebook::parse(json).map_err(|e| e.to_string())?;
        Ok(notebook
            .cell_texts(&code)
            .map(|(cell, text)| (cell, text.to_string()))
            .collect())
    };
    let (before, after) = (cells(original.clone())?, cells(fixed.clone())?);
    for ((cell, old), (_, new)) in before.iter().zip(&after) {
        let header = format!("{name}:cell {cell}");
        let made = match ours.iter().find(|file| file.path == header) {
            Some(file) => diff::apply(old, &file.hunks)?,
            None => old.clone(),
        };
        if made != *new {
            return Err(format!("the diff applied to cell {cell} is not the fixed cell"));
        }
    }
    // Outside the code cells' sources, the notebook is what it was.
    let without_code = |json: &str| -> Result<serde_json::Value, String> {
        let body = json.strip_prefix('\u{feff}').unwrap_or(json);
        let mut value: serde_json::Value = serde_json::from_str(body).map_err(|e| e.to_string())?;
        for cell in value["cells"].as_array_mut().into_iter().flatten() {
            if cell["cell_type"] == "code" {
                cell["source"] = serde_json::Value::Null;
            }
        }
        Ok(value)
    };
    match without_code(&original)? == without_code(&fixed)? {
        true => Ok(()),
        false => Err("the fix changed the notebook outside its code cells".to_string()),
    }
}

/// fixtures/ and examples/, as the one project they are.
#[test]
fn every_seed_file_fixes_validly() {
    let root = repo();
    let seeds = seeds(&[root.join("fixtures"), root.join("examples")]);
    assert_eq!(seeds.len(), 120);
    let files: Files = seeds.into_iter().map(|seed| (seed.name, seed.bytes)).collect();
    let failures = validate(&files);
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Mutants that still parse, in folders of [`BATCH`].
#[test]
fn mutants_that_parse_fix_validly() {
    let config = FuzzConfig::from_env(CI_CASES);
    let seeds = seeds(&config.seed_folders);
    let mutants: Vec<Mutant> = config
        .cases
        .clone()
        .map(|case| Mutant::new(&seeds, case))
        .filter(|mutant| {
            let kind = if mutant.notebook {
                SourceKind::Notebook
            } else {
                SourceKind::Python
            };
            parses(&mutant.bytes, kind)
        })
        .collect();
    assert!(!mutants.is_empty(), "no mutant of {:?} parses", config.cases);
    // Seen with `--nocapture`: how much a run covered.
    eprintln!(
        "{} of {} mutants parse",
        mutants.len(),
        config.cases.end - config.cases.start
    );
    let mut failures = Vec::new();
    for batch in mutants.chunks(BATCH) {
        let files: Files = batch
            .iter()
            .map(|mutant| (mutant.file_name(), mutant.bytes.clone()))
            .collect();
        for (file, why) in validate(&files) {
            match batch.iter().find(|mutant| mutant.file_name() == file) {
                Some(mutant) => {
                    let reproduce = config.reproduce("fix_validity", mutant.case);
                    let kept = keep_failure("fix_validity", mutant, &why, &reproduce);
                    failures.push(format!("{}\n  {why}\n  kept at {}", mutant.describe(), kept.display()));
                }
                None => failures.push(format!(
                    "cases {}..={}: {why}",
                    batch[0].case,
                    batch[batch.len() - 1].case
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures in {} mutants that parse:\n{}",
        failures.len(),
        mutants.len(),
        failures.join("\n")
    );
}

/// The files of a project, from (path, text) pairs.
fn project_files(files: &[(&str, &str)]) -> Files {
    files
        .iter()
        .map(|(name, text)| (name.to_string(), text.as_bytes().to_vec()))
        .collect()
}

/// A call that gives another file's helper a GPU tensor it syncs on is reported at the call
/// (SYNC101, from what the project found of the helper, kept by the call's offset). A fix
/// above the call moves it: the fix run checked the fixed text with the facts at the old
/// offsets, lost the finding and counted one fewer remaining than a fresh check finds
/// (fixtures/: "643 remaining", where `check` then found 647).
#[test]
fn a_fix_above_a_call_keeps_what_the_project_found_of_the_call() {
    let files = project_files(&[
        ("helpers.py", "def log_scalar(t):\n    print(t.item())\n"),
        (
            "train.py",
            "import torch\n\nfrom helpers import log_scalar\n\n\ndef train(model, loader, optimizer):\n    for batch in loader:\n        loss = model(batch.cuda()).mean()\n        loss.backward()\n        optimizer.step()\n        log_scalar(loss)\n",
        ),
    ]);
    let project = Project::new();
    for (name, bytes) in &files {
        project.write(name, bytes);
    }
    let fixed = project.run(&["check", "--isolated", "--fix", "--output-format", "concise", "."]);
    let (remaining, counts) = listed(&stdout(&fixed));
    assert_eq!(counts, (1, 2), "{}", stdout(&fixed));
    assert!(
        remaining.contains(&("train.py".to_string(), "SYNC101".to_string(), 11, 9)),
        "{remaining:?}"
    );
    assert_eq!(validate(&files), Vec::new());
}

/// SYNC301's fix passes the unmasked tensors to the loss. The masked read it leaves in place
/// (its local is read elsewhere too) still waits: it was not reported before the fix, as if the
/// fix removed it, and appeared after it as a new SYNC203 (fixtures/SYNC207.py:48).
#[test]
fn a_masked_read_the_loss_fix_leaves_is_reported_before_the_fix_too() {
    let source = "import torch.nn.functional as F\n\n\ndef train(model, loader, opt):\n    for xb, yb in loader:\n        out = model(xb.to(\"cuda\", non_blocking=True))\n        yb = yb.to(\"cuda\", non_blocking=True)\n        valid = yb >= 0\n        kept = out[valid]\n        count = kept.shape[0]\n        loss = F.cross_entropy(kept, yb[valid]) / count\n        opt.zero_grad()\n        loss.backward()\n        opt.step()\n";
    let files = project_files(&[("train.py", source)]);
    let project = Project::new();
    project.write("train.py", source);
    let before = project.run(&["check", "--isolated", "--output-format", "json", "."]);
    let codes: Vec<(String, usize)> = json_findings(&before);
    assert_eq!(
        codes,
        vec![("SYNC203".to_string(), 9), ("SYNC301".to_string(), 11)],
        "{}",
        stdout(&before)
    );
    assert_eq!(validate(&files), Vec::new());
}

/// With CR line ends a file is one line to `patch` and `git apply`, and so it is in the diff.
/// `similar` ended a line at each `\r` and printed it with no newline after, running the whole
/// diff together.
#[test]
fn the_diff_of_a_file_with_cr_line_ends_is_one_line() {
    let source = "for batch in loader:\r    loss = model(batch.cuda())\r    loss.backward()";
    let project = Project::new();
    project.write("a.py", source);
    let diff = project.run(&["check", "--isolated", "--diff", "a.py"]);
    let fixed = source.replace("batch.cuda()", "batch.cuda(non_blocking=True)");
    assert_eq!(
        stdout(&diff),
        format!(
            "--- a.py\n+++ a.py\n@@ -1 +1 @@\n-{source}\n\\ No newline at end of file\n+{fixed}\n\\ No newline at end of file\n"
        )
    );
    assert_eq!(validate(&project_files(&[("a.py", source)])), Vec::new());
}
