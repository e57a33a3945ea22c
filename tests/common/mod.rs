//! Helpers shared by the integration tests: run the real binary on real files.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn synclint() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_synclint"));
    command
        .env_remove("SYNCLINT_OUTPUT_FORMAT")
        .env("NO_COLOR", "1");
    command
}

/// Runs synclint with `args` in `dir`.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    synclint()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run synclint")
}

/// Runs synclint reading `source` from stdin.
pub fn run_stdin(args: &[&str], source: &str) -> Output {
    let mut child = synclint()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn synclint");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(source.as_bytes())
        .unwrap();
    child.wait_with_output().expect("wait for synclint")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// (code, row) of every finding in JSON output.
pub fn json_findings(output: &Output) -> Vec<(String, usize)> {
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "JSON output: {e}\nstdout: {}\nstderr: {}",
            stdout(output),
            stderr(output)
        )
    });
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|row| {
            (
                row["code"].as_str().unwrap_or("invalid-syntax").to_string(),
                row["location"]["row"].as_u64().unwrap() as usize,
            )
        })
        .collect()
}

pub fn exit_code(output: &Output) -> i32 {
    output.status.code().expect("exit code")
}
