//! Helpers shared by the integration tests: run the real binary on real files.

#![allow(dead_code)]

pub mod diff;
pub mod mutate;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn synclint() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_synclint"));
    command
        .env_remove("SYNCLINT_OUTPUT_FORMAT")
        .env_remove("SYNCLINT_CACHE_DIR")
        .env_remove("SYNCLINT_NO_CACHE")
        .env("NO_COLOR", "1");
    command
}

/// Runs synclint with `args` in `dir`.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    synclint().current_dir(dir).args(args).output().expect("run synclint")
}

/// Runs synclint reading `source` from stdin.
pub fn run_stdin(args: &[&str], source: &str) -> Output {
    run_with_stdin(synclint().args(args), source.as_bytes())
}

/// Runs `command` with `source` as its stdin.
pub fn run_with_stdin(command: &mut Command, source: &[u8]) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn synclint");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(source)
        .expect("write stdin");
    child.wait_with_output().expect("wait for synclint")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// (code, path, row, column) of every finding in JSON output, in output order.
pub fn json_locations(output: &Output) -> Vec<(String, String, u64, u64)> {
    json(output)
        .as_array()
        .expect("an array")
        .iter()
        .map(|row| {
            (
                row["code"].as_str().unwrap_or("invalid-syntax").to_string(),
                row["filename"].as_str().expect("a filename").to_string(),
                row["location"]["row"].as_u64().expect("a row"),
                row["location"]["column"].as_u64().expect("a column"),
            )
        })
        .collect()
}

/// (code, row) of every finding in JSON output.
pub fn json_findings(output: &Output) -> Vec<(String, usize)> {
    json_locations(output)
        .into_iter()
        .map(|(code, _, row, _)| (code, row as usize))
        .collect()
}

pub fn exit_code(output: &Output) -> i32 {
    output.status.code().expect("exit code")
}

/// A throwaway project folder: write files into it, then run synclint inside it.
pub struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    pub fn new() -> Self {
        Project {
            dir: tempfile::tempdir().expect("a temporary folder"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `contents` at `relative`, creating its folders.
    pub fn write(&self, relative: &str, contents: impl AsRef<[u8]>) -> &Self {
        let path = self.path().join(relative);
        std::fs::create_dir_all(path.parent().expect("a parent folder")).expect("create folders");
        std::fs::write(&path, contents).expect("write a project file");
        self
    }

    /// Runs synclint with `args` at the project's root.
    pub fn run(&self, args: &[&str]) -> Output {
        run(self.path(), args)
    }

    /// Runs synclint with `args` in the project's folder `relative`.
    pub fn run_in(&self, relative: &str, args: &[&str]) -> Output {
        run(&self.path().join(relative), args)
    }

    /// Runs synclint at the root reading `source` from stdin.
    pub fn run_stdin(&self, args: &[&str], source: impl AsRef<[u8]>) -> Output {
        run_with_stdin(synclint().current_dir(self.path()).args(args), source.as_ref())
    }

    /// Runs synclint at the root, failing the test if it takes longer than `limit`.
    pub fn run_within(&self, limit: Duration, args: &[&str]) -> Output {
        run_within(synclint().current_dir(self.path()).args(args), limit)
    }
}

/// Every `--output-format`.
pub const ALL_FORMATS: [&str; 12] = [
    "full",
    "concise",
    "grouped",
    "json",
    "json-lines",
    "junit",
    "github",
    "gitlab",
    "pylint",
    "rdjson",
    "azure",
    "sarif",
];

/// Starts `command` with its stdout and stderr read to their ends on threads of their own, so
/// that a full pipe cannot stall it: the child, and the readers of stdout and stderr.
fn spawn_drained(command: &mut Command) -> (std::process::Child, [std::thread::JoinHandle<Vec<u8>>; 2]) {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn synclint");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            pipe.read_to_end(&mut bytes)
                .map(|_| bytes)
                .expect("read the child's output")
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("stderr")));
    (child, [stdout, stderr])
}

/// Runs `command` to its end: its output, and its peak resident memory in bytes (the child's
/// own high-water mark, from `wait4` as it is reaped).
#[cfg(target_os = "linux")]
pub fn run_measuring_memory(command: &mut Command) -> (Output, u64) {
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    let (child, [stdout, stderr]) = spawn_drained(command);
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: `rusage` is plain data, for which all zeroes is a valid value.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our child, not yet waited for; both pointers are to live locals.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(reaped, pid, "wait4: {}", std::io::Error::last_os_error());
    let output = Output {
        status: ExitStatus::from_raw(status),
        stdout: stdout.join().expect("stdout thread"),
        stderr: stderr.join().expect("stderr thread"),
    };
    // Linux counts `ru_maxrss` in KiB.
    (output, usage.ru_maxrss as u64 * 1024)
}

/// Runs `command`, killing it and failing the test when it outlives `limit` (a hang must not
/// hang the test suite). Output is read while it runs, so a full pipe cannot stall it.
pub fn run_within(command: &mut Command, limit: Duration) -> Output {
    run_bounded(command, limit).unwrap_or_else(|limit| panic!("synclint ran longer than {limit:?}"))
}

/// Runs `command` as [`run_within`] does, but answers `Err(limit)` where it had to kill it.
pub fn run_bounded(command: &mut Command, limit: Duration) -> Result<Output, Duration> {
    let (mut child, [stdout, stderr]) = spawn_drained(command);
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("poll synclint") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(limit);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok(Output {
        status,
        stdout: stdout.join().expect("stdout reader"),
        stderr: stderr.join().expect("stderr reader"),
    })
}

/// The output parsed as JSON, with both streams in the panic message when it is not.
pub fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "JSON output: {e}\nstdout: {}\nstderr: {}",
            stdout(output),
            stderr(output)
        )
    })
}
