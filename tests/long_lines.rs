//! Long lines, as generated code has them: thousands of findings on one line cost memory for
//! the findings, not a copy of the line each; reports show a window of a long line, with the
//! true columns; a syntax error past column 65,535 is reported, not a panic, however the run
//! reports it.

mod common;

use std::path::Path;
use std::process::Output;

use common::*;

/// Findings on the line of [`many_findings_on_one_line`].
const FINDINGS: usize = 8_000;

/// The file: 8,000 `.item()` calls on one 72 KB line of a hot function.
fn many_findings_on_one_line() -> String {
    let calls = vec!["x.item()"; FINDINGS].join("+");
    format!(
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n        t = {calls}\n        return t\n"
    )
}

/// The 1-based column of the `k`th call of [`many_findings_on_one_line`].
fn column_of_call(k: usize) -> usize {
    "        t = ".len() + 1 + k * "x.item()+".len()
}

/// `x = a+a+...+a )`: the parser stops at the `)`, past column 80,000.
fn syntax_error_past_column_65535() -> String {
    format!("x = {}a )\n", "a+".repeat(40_000))
}

/// Runs synclint with `args` in `dir`: its output, and its peak resident memory in bytes.
#[cfg(target_os = "linux")]
fn run_measuring_memory(dir: &Path, args: &[&str]) -> (Output, u64) {
    common::run_measuring_memory(synclint().current_dir(dir).args(args))
}

/// Every output format, on 8,000 findings of one 72 KB line: each finding copied its line, so
/// this took 1.2 GB (20,000 findings took over 8 GB). The findings now share one copy, and the
/// formats that show source show a window of the line.
#[cfg(target_os = "linux")]
#[test]
fn thousands_of_findings_on_one_long_line_take_memory_for_the_findings_only() {
    const MEMORY_BOUND: u64 = 300 << 20;
    let project = Project::new();
    let source = many_findings_on_one_line();
    assert!(source.len() > 72_000);
    project.write("gen.py", &source);
    for format in ALL_FORMATS {
        let args = ["check", "--isolated", "--no-cache", "--output-format", format, "gen.py"];
        let (output, peak) = run_measuring_memory(project.path(), &args);
        assert_eq!(exit_code(&output), 1, "{format}: {}", stderr(&output));
        let printed = stdout(&output);
        assert!(
            printed.matches("SYNC101").count() >= FINDINGS,
            "{format}: every finding is reported"
        );
        // A copy of the line per finding would print 72 KB each.
        assert!(
            printed.len() < FINDINGS * 1_000,
            "{format}: {} bytes for {FINDINGS} findings",
            printed.len()
        );
        assert!(
            peak < MEMORY_BOUND,
            "{format}: peak RSS {} MiB, over {} MiB",
            peak >> 20,
            MEMORY_BOUND >> 20
        );
    }
}

/// Locations keep their true columns, however long the line: in the formats for tools, and in
/// the header of each `full` finding, whose source shows a window of the line.
#[test]
fn findings_on_a_long_line_keep_their_true_columns() {
    let project = Project::new();
    project.write("gen.py", many_findings_on_one_line());
    let json_run = project.run(&["check", "--isolated", "--no-cache", "--output-format", "json", "gen.py"]);
    let columns: Vec<u64> = json_locations(&json_run)
        .into_iter()
        .map(|(_, _, _, column)| column)
        .collect();
    let expected: Vec<u64> = (0..FINDINGS).map(|k| column_of_call(k) as u64).collect();
    assert_eq!(columns, expected);

    let full = project.run(&["check", "--isolated", "--no-cache", "gen.py"]);
    let printed = stdout(&full);
    let headers: Vec<&str> = printed.lines().filter(|line| line.contains("┌─ gen.py:")).collect();
    assert_eq!(headers.len(), FINDINGS);
    for (k, header) in headers.iter().enumerate() {
        assert!(header.ends_with(&format!("gen.py:7:{}", column_of_call(k))), "{header}");
    }
    // Each source line shown is a window: the longest line printed is a few hundred
    // characters, not the 72 KB of the line.
    let widest = printed.lines().map(|line| line.chars().count()).max().unwrap_or(0);
    assert!(widest < 400, "a line of {widest} characters was printed");
}

/// A line longer than the window in `full` output: cut around each finding, `…` where it goes
/// on, the underline under the finding and the true column in the header; a line as long as
/// the window is shown whole.
#[test]
fn full_output_shows_a_window_of_a_long_line() {
    let padding = "len(\"é\") + ".repeat(60);
    let long = format!("        t = x.item() + {padding}x.item() + {padding}x.item()");
    let fits = format!("        u = x.item() + {}1", "1 + ".repeat(70));
    assert!(long.chars().count() > 1_000);
    assert!(fits.chars().count() <= 320, "{}", fits.chars().count());
    let source = format!(
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def forward(self, x):\n{long}\n{fits}\n        return t + u\n"
    );
    let project = Project::new();
    project.write("gen.py", source);
    let output = project.run(&["check", "--isolated", "--no-cache", "gen.py"]);
    assert_eq!(exit_code(&output), 1, "{}", stderr(&output));
    insta::assert_snapshot!("long_line_full", stdout(&output));
}

/// The flags that print syntax errors as reports of their own rather than among the
/// findings.
const REPORTING_FLAGS: [&str; 4] = ["--diff", "--fix-only", "--statistics", "--add-noqa"];

/// A syntax error past column 65,535 panicked in miette's renderer, under every flag that
/// prints syntax errors as reports; each prints a window of the line now, with the true column,
/// and exits as a syntax error on a short line does.
#[test]
fn a_syntax_error_past_column_65535_is_reported_under_every_flag() {
    let project = Project::new();
    let source = syntax_error_past_column_65535();
    project.write("long.py", &source);
    project.write("short.py", "x = a+a )\n");
    let column = source.find(" )").expect("the stray parenthesis") + 2;
    for flag in REPORTING_FLAGS.into_iter().map(Some).chain([None]) {
        let run = |file: &str| {
            let mut args = vec!["check", "--isolated", "--no-cache"];
            args.extend(flag);
            args.push(file);
            project.run(&args)
        };
        let short = run("short.py");
        let output = run("long.py");
        let printed = format!("{}{}", stdout(&output), stderr(&output));
        assert!(
            !printed.contains("panicked"),
            "{flag:?}: {}",
            &printed[..printed.len().min(2_000)]
        );
        assert_eq!(exit_code(&output), exit_code(&short), "{flag:?}");
        assert_eq!(exit_code(&output), 2, "{flag:?}");
        assert!(printed.contains("Expected a statement"), "{flag:?}: {printed}");
        let location = match flag {
            Some(_) => format!("[long.py:1:{column}]"),
            None => format!("long.py:1:{column}"),
        };
        assert!(printed.contains(&location), "{flag:?}: {printed}");
        assert!(printed.len() < 8_000, "{flag:?}: {} bytes printed", printed.len());
        assert_eq!(std::fs::read_to_string(project.path().join("long.py")).unwrap(), source);
    }
}

/// A config error past column 65,535 (a long `select` list) is reported with a window of its
/// line, as the config error it is.
#[test]
fn a_config_error_past_column_65535_is_reported() {
    let project = Project::new();
    let codes = vec!["\"SYNC101\""; 9_000].join(", ");
    let config = format!("select = [{codes}, \"NOPE9\"]\n");
    let column = config.find("\"NOPE9\"").expect("the unknown code") + 1;
    project.write("synclint.toml", &config);
    project.write("a.py", "x = 1\n");
    let output = project.run(&["check", "--no-cache", "a.py"]);
    let printed = stderr(&output);
    assert_eq!(exit_code(&output), 2, "{printed}");
    assert!(
        !printed.contains("panicked"),
        "{}",
        &printed[..printed.len().min(2_000)]
    );
    assert!(
        printed.contains("unknown rule selector") && printed.contains("`NOPE9`"),
        "{printed}"
    );
    assert!(printed.contains(&format!("synclint.toml:1:{column}]")), "{printed}");
    assert!(printed.len() < 4_000, "{} bytes printed", printed.len());
}
