//! The fuzz harness: mutants of real files (every `.py` and `.ipynb` under fixtures/ and
//! examples/, or the folders `SYNCLINT_FUZZ_SEEDS` names) go through the parser and the rules
//! as the library runs them and as the binary does, and neither may panic, abort, hang, exit
//! with a code other than 0, 1 or 2, or print output that does not parse.
//!
//! The mutants are made from case numbers (see `common/mutate.rs`): CI runs the first
//! [`CI_CASES`]; `SYNCLINT_FUZZ_CASES`, `SYNCLINT_FUZZ_FIRST` and `SYNCLINT_FUZZ_SEEDS` run
//! others, `SYNCLINT_FUZZ_CASE` one. A failing mutant is written under
//! `target/tmp/fuzz-failures/`, and the failure names its case, seed and mutations.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Output;
use std::sync::mpsc;
use std::time::Duration;

use common::mutate::{FuzzConfig, Mutant, Seed, keep_failure, seeds};
use common::*;
use ruff_text_size::{TextRange, TextSize};
use synclint::diagnostic::Applicability;
use synclint::fix::{FixFailure, FixTarget, Moves, fix_in_passes};
use synclint::linter::{decode, lint_source, panic_reason};
use synclint::nesting::CHECK_STACK_BYTES;
use synclint::notebook::code_of;
use synclint::parse::SourceKind;
use synclint::registry::RuleSet;
use synclint::semantic::FileFacts;

/// Mutants each test runs by default: about a minute each in a debug build.
const CI_CASES: u64 = 2_000;

/// Mutants checked by one run of the binary: enough that starting it does not dominate.
const BATCH: usize = 100;

/// How long one mutant may take in the library, and one batch in the binary, before it counts
/// as a hang. Debug builds are slow on the deepest mutants (10,000 levels), not this slow.
const CASE_LIMIT: Duration = Duration::from_secs(60);
const BATCH_LIMIT: Duration = Duration::from_secs(300);

/// What a mutant left to look at when it failed: why, and where it was written.
fn failed(config: &FuzzConfig, mutant: &Mutant, why: &str) -> String {
    let reproduce = config.reproduce("fuzz", mutant.case);
    let kept = keep_failure("fuzz", mutant, why, &reproduce);
    format!(
        "{}\n  {why}\n  kept at {}\n  reproduce: {reproduce}",
        mutant.describe(),
        kept.display()
    )
}

fn report(failures: &[String], run: usize) {
    assert!(
        failures.is_empty(),
        "{} of {run} mutants failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every mutant through `lint_source` on a thread with the checker's stack, then its fixes in
/// passes as `--fix --unsafe-fixes` applies them: no panic, every range on the source's
/// character boundaries, every pass parses, the passes end.
#[test]
fn the_library_survives_every_mutant() {
    let config = FuzzConfig::from_env(CI_CASES);
    let seeds = seeds(&config.seed_folders);
    let (to_checker, mutants) = mpsc::channel::<(Vec<u8>, bool)>();
    let (to_harness, verdicts) = mpsc::channel::<Result<(), String>>();
    std::thread::Builder::new()
        .stack_size(CHECK_STACK_BYTES)
        .spawn(move || {
            for (bytes, notebook) in mutants {
                let verdict = std::panic::catch_unwind(|| check_in_library(bytes, notebook))
                    .unwrap_or_else(|panic| Err(format!("panicked: {}", panic_reason(&*panic))));
                if to_harness.send(verdict).is_err() {
                    break;
                }
            }
        })
        .expect("a checker thread");
    let mut failures = Vec::new();
    let mut run = 0;
    for case in config.cases.clone() {
        let mutant = Mutant::new(&seeds, case);
        to_checker
            .send((mutant.bytes.clone(), mutant.notebook))
            .expect("the checker thread takes mutants");
        run += 1;
        match verdicts.recv_timeout(CASE_LIMIT) {
            Ok(Ok(())) => {}
            Ok(Err(why)) => failures.push(failed(&config, &mutant, &why)),
            Err(_) => {
                // The checker is stuck on it: nothing after it can be checked.
                failures.push(failed(&config, &mutant, &format!("ran longer than {CASE_LIMIT:?}")));
                break;
            }
        }
    }
    report(&failures, run);
}

/// One mutant as the checker's threads check it, and fixed as the fix run fixes it.
fn check_in_library(bytes: Vec<u8>, notebook: bool) -> Result<(), String> {
    // Not UTF-8, or not a notebook: an error the binary reports, with nothing to check.
    let Ok(text) = decode(bytes) else { return Ok(()) };
    let kind = if notebook {
        SourceKind::Notebook
    } else {
        SourceKind::Python
    };
    let Ok((code, notebook)) = code_of(kind, text) else {
        return Ok(());
    };
    let lint = |source: &str| lint_source(source, kind, RuleSet::all(), &[], &FileFacts::default(), true, false);
    let checked = lint(&code);
    let in_source = |range: TextRange, what: &str| {
        let (start, end) = (range.start().to_usize(), range.end().to_usize());
        if end <= code.len() && code.is_char_boundary(start) && code.is_char_boundary(end) {
            Ok(())
        } else {
            Err(format!(
                "{what} at {start}..{end} is not on the source's character boundaries (length {})",
                code.len()
            ))
        }
    };
    for error in &checked.syntax_errors {
        in_source(error.range, &format!("syntax error `{}`", error.message))?;
    }
    for diagnostic in &checked.diagnostics {
        let what = format!("{} `{}`", diagnostic.rule.code(), diagnostic.message);
        in_source(diagnostic.range, &what)?;
        for edit in diagnostic.fix.iter().flat_map(|fix| &fix.edits) {
            in_source(edit.range, &format!("an edit of {what}"))?;
        }
    }
    if !checked.syntax_errors.is_empty() {
        // The fix run leaves a file with syntax errors as it is.
        return Ok(());
    }
    let target = FixTarget {
        source: &code,
        kind,
        boundaries: notebook.map(|notebook| notebook.cell_starts()).unwrap_or_default(),
    };
    let relint = |source: &str, _: &[TextSize], _: &Moves| lint(source).diagnostics;
    match fix_in_passes(target, checked.diagnostics, Applicability::Unsafe, 10, |d| d, relint) {
        Ok(_) => Ok(()),
        Err(FixFailure::DoesNotParse) => Err("a fix produced code that does not parse".to_string()),
        Err(FixFailure::NotConverged(passes)) => Err(format!("fixes did not converge after {passes} passes")),
    }
}

/// The runs of the binary each batch of mutants gets: findings as JSON, statistics, the diff
/// of every fix, and one more output format in turn.
fn runs(batch: usize) -> Vec<Vec<&'static str>> {
    // JSON is checked on every batch; each batch also prints one of the other formats.
    let other_formats: Vec<&'static str> = ALL_FORMATS.into_iter().filter(|format| *format != "json").collect();
    let check = vec!["check", "--isolated"];
    let with = |args: &[&'static str]| [check.clone(), args.to_vec()].concat();
    vec![
        with(&["--output-format", "json", "."]),
        with(&["--statistics", "."]),
        with(&["--diff", "--unsafe-fixes", "."]),
        with(&["--output-format", other_formats[batch % other_formats.len()], "."]),
    ]
}

/// Every mutant through the binary, in folders of [`BATCH`]: each run exits 0, 1 or 2 within
/// [`BATCH_LIMIT`], reports no panic, and prints what its format promises. A failing batch is
/// run again one mutant at a time, to name the mutants that fail.
#[test]
fn the_binary_survives_every_mutant() {
    let config = FuzzConfig::from_env(CI_CASES);
    let seeds = seeds(&config.seed_folders);
    let cases: Vec<u64> = config.cases.clone().collect();
    let mut failures = Vec::new();
    for (batch, cases) in cases.chunks(BATCH).enumerate() {
        let mutants: Vec<Mutant> = cases.iter().map(|&case| Mutant::new(&seeds, case)).collect();
        let runs = runs(batch);
        if check_in_binary(&mutants, &runs).is_ok() {
            continue;
        }
        let before = failures.len();
        for mutant in &mutants {
            if let Err(why) = check_in_binary(std::slice::from_ref(mutant), &runs) {
                failures.push(failed(&config, mutant, &why));
            }
        }
        if failures.len() == before {
            let why = check_in_binary(&mutants, &runs).err().unwrap_or_default();
            failures.push(format!(
                "cases {}..={} fail together, none alone:\n  {why}",
                cases[0],
                cases[cases.len() - 1]
            ));
        }
    }
    report(&failures, cases.len());
}

/// The runs of `runs` on `mutants`, written into one folder.
fn check_in_binary(mutants: &[Mutant], runs: &[Vec<&str>]) -> Result<(), String> {
    let project = Project::new();
    for mutant in mutants {
        project.write(&mutant.file_name(), &mutant.bytes);
    }
    let names: Vec<String> = mutants.iter().map(Mutant::file_name).collect();
    for args in runs {
        let output = run_bounded(synclint().current_dir(project.path()).args(args), BATCH_LIMIT)
            .map_err(|limit| format!("`{}` ran longer than {limit:?}", args.join(" ")))?;
        judge(&output, args, &names).map_err(|why| format!("`{}`: {why}", args.join(" ")))?;
    }
    Ok(())
}

/// Whether a run ended as it may, and printed what its format promises.
fn judge(output: &Output, args: &[&str], names: &[String]) -> Result<(), String> {
    let (out, err) = (stdout(output), stderr(output));
    let code = match output.status.code() {
        Some(code) => code,
        None => return Err(format!("killed by signal {:?}\nstderr: {err}", output.status.signal())),
    };
    if !(0..=2).contains(&code) {
        return Err(format!("exit code {code}\nstderr: {err}"));
    }
    // A panic caught per file is an internal error; one that is not prints `thread '...'
    // panicked at` (or `has overflowed its stack`) on a line of its own. Source lines in the
    // errors shown may say anything, but they are indented.
    let panicked = err.lines().any(|line| {
        line.contains("internal error while checking")
            || (line.starts_with("thread '") && (line.contains("panicked at") || line.contains("overflowed its stack")))
    });
    if panicked {
        return Err(format!("stderr: {err}"));
    }
    let named = |path: &str| {
        let file = path.split_once(":cell ").map_or(path, |(file, _)| file);
        names.iter().any(|name| name == file)
    };
    let format = args
        .iter()
        .position(|arg| *arg == "--output-format")
        .map(|at| args[at + 1]);
    if args.contains(&"--diff") {
        let files = diff::parse(&out).map_err(|why| format!("the diff does not parse: {why}"))?;
        if let Some(file) = files.iter().find(|file| !named(&file.path)) {
            return Err(format!("the diff names {:?}, not a file checked", file.path));
        }
        return if files.is_empty() || code != 0 {
            Ok(())
        } else {
            Err("exit code 0 with changes in the diff".to_string())
        };
    }
    if args.contains(&"--statistics") {
        let statistic = |line: &str| {
            let fields: Vec<&str> = line.trim_start().split('\t').collect();
            fields.len() == 3 && fields[0].parse::<usize>().is_ok() && fields[1].starts_with("SYNC")
        };
        return match out.lines().find(|line| !statistic(line)) {
            Some(line) => Err(format!("a statistics line {line:?}")),
            None => Ok(()),
        };
    }
    match format {
        Some("json") => {
            let findings = serde_json::from_str::<serde_json::Value>(&out).map_err(|e| format!("JSON output: {e}"))?;
            let findings = findings.as_array().ok_or("JSON output is not a list")?;
            for finding in findings {
                let filename = finding["filename"].as_str().unwrap_or_default();
                if !named(filename) || finding["location"]["row"].as_u64().is_none_or(|row| row == 0) {
                    return Err(format!("a finding {finding}"));
                }
            }
            let syntax_error = findings.iter().any(|finding| finding["code"].is_null());
            match (code, findings.is_empty()) {
                (0, false) => Err("exit code 0 with findings".to_string()),
                (1, true) => Err("exit code 1 without findings".to_string()),
                (1, false) if syntax_error => Err("exit code 1 with a syntax error".to_string()),
                _ => Ok(()),
            }
        }
        Some("json-lines") => out
            .lines()
            .try_for_each(|line| serde_json::from_str::<serde_json::Value>(line).map(drop))
            .map_err(|e| format!("JSON lines output: {e}")),
        Some("gitlab" | "rdjson" | "sarif") => serde_json::from_str::<serde_json::Value>(&out)
            .map(drop)
            .map_err(|e| format!("JSON output: {e}")),
        Some("junit") => roxmltree::Document::parse(&out)
            .map(drop)
            .map_err(|e| format!("JUnit XML output: {e}")),
        _ => Ok(()),
    }
}

/// The harness's own mutations do what they say, from the case number alone.
#[test]
fn mutants_are_made_from_their_case_number() {
    let seeds = seeds(&[repo().join("fixtures"), repo().join("examples")]);
    assert_eq!(seeds.len(), 120, "every .py and .ipynb under fixtures/ and examples/");
    assert_eq!(seeds.iter().filter(|seed| seed.notebook).count(), 2);
    let first: Vec<Mutant> = (0..200).map(|case| Mutant::new(&seeds, case)).collect();
    let again: Vec<Mutant> = (0..200).map(|case| Mutant::new(&seeds, case)).collect();
    for (a, b) in first.iter().zip(&again) {
        assert_eq!((a.describe(), &a.bytes), (b.describe(), &b.bytes));
    }
    let changed = first
        .iter()
        .filter(|mutant| {
            let seed: &Seed = seeds.iter().find(|seed| seed.name == mutant.seed).expect("its seed");
            seed.bytes != mutant.bytes
        })
        .count();
    assert!(changed > 180, "only {changed} of 200 mutants differ from their seed");
    assert!(first.iter().any(|mutant| mutant.notebook));
}

/// The harness's diff reader takes what `--diff` prints, CRLF line ends and a missing newline
/// at the end included, and applying it makes the fixed file.
#[test]
fn a_diff_applies_to_make_the_fixed_file() {
    let source = "import torch\r\nfor b in loader:\r\n    x = torch.tensor([1.0], device='cuda')\r\n    b.cuda()";
    let project = Project::new();
    project.write("a.py", source);
    let output = project.run(&["check", "--isolated", "--diff", "--unsafe-fixes", "a.py"]);
    let files = diff::parse(&stdout(&output)).expect("the diff parses");
    assert_eq!(files.len(), 1, "{}", stdout(&output));
    let fixed = diff::apply(source, &files[0].hunks).expect("the diff applies");
    assert_ne!(fixed, source);
    project.run(&["check", "--isolated", "--fix", "--unsafe-fixes", "a.py"]);
    let written = std::fs::read_to_string(Path::new(project.path()).join("a.py")).expect("the fixed file");
    assert_eq!(fixed, written);
}

/// Loops nested 1,500 deep (the fuzz harness made them of a file whose indentation broke) are
/// checked, and the finding in the innermost one is found, `for` and `while` loops alike. Each
/// loop's body was searched for loops that run backward or decode once for every loop around
/// it, and each assignment looked its name up in a list of every loop's iterable: the time
/// grew with the cube of the depth (1,000 loops took 48 seconds in a debug build, 10,000 would
/// have taken hours).
#[test]
fn loops_nested_fifteen_hundred_deep() {
    let depth = 1_500;
    let project = Project::new();
    for (name, header) in [("for", "for r in rows:"), ("while", "while r:")] {
        let mut source = String::from("for batch in loader:\n loss = model(batch)\n");
        for level in 1..=depth {
            let indent = " ".repeat(level);
            source.push_str(&format!("{indent}{header}\n{indent} x = f(r)\n"));
        }
        source.push_str(&format!("{}print(loss.item())\n", " ".repeat(depth + 1)));
        project.write(&format!("{name}.py"), &source);
    }
    let output = project.run_within(
        Duration::from_secs(90),
        &["check", "--isolated", "--output-format", "json", "."],
    );
    let found: Vec<(String, String, u64)> = json_locations(&output)
        .into_iter()
        .map(|(code, path, row, _)| (code, path, row))
        .collect();
    let row = 2 * depth as u64 + 3;
    assert_eq!(
        found,
        vec![
            ("SYNC101".to_string(), "for.py".to_string(), row),
            ("SYNC101".to_string(), "while.py".to_string(), row)
        ],
        "{}",
        stderr(&output)
    );
}
