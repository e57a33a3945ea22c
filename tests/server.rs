//! `synclint server` end to end: the binary driven over stdin and stdout as an editor drives
//! it, with `Content-Length` framed JSON-RPC. Diagnostics are compared with what `synclint
//! check` reports (columns in UTF-16 units), code actions with what `check --fix` writes, and
//! the server is fed half-typed code, random edits and malformed messages.

mod common;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use serde_json::{Value, json};

use common::{Project, json as output_json, repo, synclint};

/// How long any one answer may take before the test fails (a debug build, a busy machine).
const PATIENCE: Duration = Duration::from_secs(30);

/// A message from the server, and its text as sent.
struct Received {
    value: Value,
    text: String,
}

/// An editor's end of the connection.
struct Client {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Received>,
    /// Messages read while waiting for another.
    pending: VecDeque<Received>,
    stderr: std::thread::JoinHandle<String>,
    next_id: i64,
}

impl Client {
    /// Starts `synclint server` in `dir` with `args`.
    fn start(dir: &Path, args: &[&str]) -> Client {
        Client::start_with(dir, args, &[])
    }

    /// Starts `synclint server` in `dir` with `args` and environment variables `env`.
    fn start_with(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Client {
        let mut child = synclint()
            .envs(env.iter().copied())
            .current_dir(dir)
            .arg("server")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn synclint server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Client {
            child,
            stdin,
            messages,
            pending: VecDeque::new(),
            stderr,
            next_id: 0,
        }
    }

    /// Starts a server for `dir` and initializes it; `capabilities` are the client's.
    fn initialized(dir: &Path, capabilities: Value) -> Client {
        Client::initialized_with(
            Client::start(dir, &["--no-cache"]),
            dir,
            json!({"capabilities": capabilities}),
        )
    }

    /// Initializes the server `client` started for `dir` with `params` (the capabilities and
    /// the rest).
    fn initialized_with(mut client: Client, dir: &Path, mut params: Value) -> Client {
        params["processId"] = Value::Null;
        params["rootUri"] = file_uri(dir).into();
        let result = client.request("initialize", params);
        assert_eq!(
            result["result"]["capabilities"]["positionEncoding"], "utf-16",
            "{result}"
        );
        client.notify("initialized", json!({}));
        client
    }

    fn send_raw(&mut self, body: &[u8]) {
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        self.stdin.write_all(header.as_bytes()).expect("write to the server");
        self.stdin.write_all(body).expect("write to the server");
        self.stdin.flush().expect("write to the server");
    }

    fn send(&mut self, message: Value) {
        self.send_raw(message.to_string().as_bytes());
    }

    /// Sends `messages` framed in one write, so that the server reads them as fast as it can.
    fn send_all(&mut self, messages: &[Value]) {
        let mut bytes = Vec::new();
        for message in messages {
            bytes.extend(frame(&message.to_string()));
        }
        self.stdin.write_all(&bytes).expect("write to the server");
        self.stdin.flush().expect("write to the server");
    }

    /// Writes `bytes` as they are, then a request that is always answered (a hover over a
    /// document that is not open): the responses read before its answer, as sent, and its
    /// answer. The server answers in order, so those responses are the answers to `bytes`.
    fn replies_to(&mut self, bytes: &[u8]) -> (Vec<String>, Value) {
        self.stdin.write_all(bytes).expect("write to the server");
        let probe = self.request_answered_after_replies();
        let mut replies = Vec::new();
        while let Some(at) = self.pending.iter().position(|message| is_response(&message.value)) {
            let reply = self.pending.remove(at).expect("a pending message");
            replies.push(reply.text);
        }
        (replies, probe)
    }

    /// Sends the probe request of [`Client::replies_to`] and waits for its answer, keeping
    /// the responses read before it.
    fn request_answered_after_replies(&mut self) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        let position = json!({"line": 0, "character": 0});
        let params = json!({"textDocument": {"uri": "file:///nowhere/probe.py"}, "position": position});
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover", "params": params}));
        self.wait_for(|message| message["id"] == id && is_response(message))
    }

    /// Forgets every message read so far.
    fn forget_unread(&mut self) {
        self.unread();
        self.pending.clear();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its response (the whole message: `result` or `error`).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait_for(|message| message["id"] == id && message.get("method").is_none())
    }

    /// Like [`Client::request`], failing the test on an error response.
    fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params);
        assert!(response.get("error").is_none(), "{method} failed: {response}");
        response["result"].clone()
    }

    /// The next message `wanted` accepts; the others are kept for later.
    fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        self.wait_for_received(wanted).value
    }

    /// Like [`Client::wait_for`], with the message's text as sent.
    fn wait_for_received(&mut self, wanted: impl Fn(&Value) -> bool) -> Received {
        if let Some(at) = self.pending.iter().position(|message| wanted(&message.value)) {
            return self.pending.remove(at).expect("a pending message");
        }
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) if wanted(&message.value) => return message,
                Ok(message) => self.pending.push_back(message),
                Err(RecvTimeoutError::Timeout) => panic!("no answer in {PATIENCE:?}; read {:#?}", self.values()),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the server stopped; read {:#?}", self.values())
                }
            }
        }
    }

    fn values(&self) -> Vec<&Value> {
        self.pending.iter().map(|message| &message.value).collect()
    }

    /// The diagnostics published for `uri` that `wanted` accepts, waiting for them.
    fn diagnostics_where(&mut self, uri: &str, wanted: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let message = self.wait_for(|message| {
            message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
                && wanted(message["params"]["diagnostics"].as_array().expect("diagnostics"))
        });
        message["params"]["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .clone()
    }

    /// The diagnostics published for version `version` of `uri`.
    fn diagnostics_of_version(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let message = self.wait_for(|message| {
            message["method"] == "textDocument/publishDiagnostics"
                && message["params"]["uri"] == uri
                && message["params"]["version"] == version
        });
        message["params"]["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .clone()
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}),
        );
    }

    fn change_all(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// Every message read so far and not waited for.
    fn unread(&mut self) -> Vec<&Value> {
        while let Ok(message) = self.messages.try_recv() {
            self.pending.push_back(message);
        }
        self.values()
    }

    /// Messages the server logged as errors, and error responses, so far.
    fn errors_seen(&mut self) -> Vec<Value> {
        self.unread()
            .into_iter()
            .filter(|message| {
                message.get("error").is_some()
                    || (message["method"] == "window/logMessage" && message["params"]["type"] == 1)
            })
            .cloned()
            .collect()
    }

    /// The server's resident memory (Linux's `VmRSS`), in bytes.
    #[cfg(target_os = "linux")]
    fn resident_bytes(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("the server's status");
        let line = status.lines().find(|line| line.starts_with("VmRSS:")).expect("VmRSS");
        let kib: u64 = line
            .split_whitespace()
            .nth(1)
            .and_then(|kib| kib.parse().ok())
            .expect("a size in kB");
        kib * 1024
    }

    /// `shutdown`, then `exit`: the exit code and what the server wrote to stderr.
    fn shut_down(mut self) -> (i32, String) {
        let response = self.request("shutdown", Value::Null);
        assert_eq!(response["result"], Value::Null, "{response}");
        self.notify("exit", Value::Null);
        self.finish()
    }

    /// Waits for the server to exit: its code and stderr.
    fn finish(mut self) -> (i32, String) {
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("poll the server") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the server did not exit");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        (
            status.code().expect("an exit code"),
            self.stderr.join().expect("stderr"),
        )
    }
}

/// A JSON-RPC body framed as the base protocol frames it.
fn frame(body: &str) -> Vec<u8> {
    let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    bytes.extend(body.as_bytes());
    bytes
}

/// Whether `message` is a response (to the client's request).
fn is_response(message: &Value) -> bool {
    message.get("method").is_none()
}

/// A response's id exactly as the server wrote it, and its error code (`None` for a result).
fn id_and_code(text: &str) -> (String, Option<i64>) {
    let members: std::collections::HashMap<String, Box<RawValue>> = serde_json::from_str(text).expect("a response");
    let id = members.get("id").expect("an id").get().to_string();
    let code = members.get("error").map(|error| {
        let error: Value = serde_json::from_str(error.get()).expect("an error");
        error["code"].as_i64().expect("an error code")
    });
    assert!(members.contains_key("result") != code.is_some(), "{text}");
    (id, code)
}

fn read_message(reader: &mut impl BufRead) -> Option<Received> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = value.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    let text = String::from_utf8(body).ok()?;
    let value = serde_json::from_str(&text).ok()?;
    Some(Received { value, text })
}

fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The UTF-16 position of a 1-based row and a 1-based column counted in characters, as the
/// command line reports them.
fn utf16_position(text: &str, row: u64, column: u64) -> (u64, u64) {
    let line = text.split('\n').nth(row as usize - 1).expect("the row");
    let units: usize = line.chars().take(column as usize - 1).map(char::len_utf16).sum();
    (row - 1, units as u64)
}

/// (code, line, character) of each diagnostic, sorted.
fn positions(diagnostics: &[Value]) -> Vec<(String, u64, u64)> {
    let mut positions: Vec<_> = diagnostics
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("syntax").to_string(),
                d["range"]["start"]["line"].as_u64().expect("a line"),
                d["range"]["start"]["character"].as_u64().expect("a character"),
            )
        })
        .collect();
    positions.sort();
    positions
}

/// What `synclint check` reports for `name` in `project`, as (code, line, character) in LSP
/// terms, and the JSON rows.
fn cli_findings(project: &Project, name: &str) -> (Vec<(String, u64, u64)>, Vec<Value>) {
    let output = project.run(&["check", "--no-cache", "--output-format", "json", name]);
    let rows = output_json(&output).as_array().expect("an array").clone();
    let text = std::fs::read_to_string(project.path().join(name)).expect("the file");
    let mut found: Vec<_> = rows
        .iter()
        .map(|row| {
            let (line, character) = utf16_position(
                &text,
                row["location"]["row"].as_u64().expect("a row"),
                row["location"]["column"].as_u64().expect("a column"),
            );
            (row["code"].as_str().unwrap_or("syntax").to_string(), line, character)
        })
        .collect();
    found.sort();
    (found, rows)
}

/// Applies LSP text edits to `text` (UTF-16 positions), as an editor does: all at once, each
/// range in the original text.
fn apply_edits(text: &str, edits: &[Value]) -> String {
    let offset = |position: &Value| {
        let line = position["line"].as_u64().expect("a line") as usize;
        let character = position["character"].as_u64().expect("a character") as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        let mut units = 0;
        for (at, c) in text[start..].char_indices() {
            if units >= character || c == '\n' {
                return start + at;
            }
            units += c.len_utf16();
        }
        text.len()
    };
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|edit| {
            (
                offset(&edit["range"]["start"]),
                offset(&edit["range"]["end"]),
                edit["newText"].as_str().expect("new text"),
            )
        })
        .collect();
    spans.sort_by_key(|&(start, end, _)| (start, end));
    let mut result = String::new();
    let mut copied = 0;
    for (start, end, new_text) in spans {
        result.push_str(&text[copied..start]);
        result.push_str(new_text);
        copied = end;
    }
    result.push_str(&text[copied..]);
    result
}

/// The edits a code action makes to `uri`.
fn action_edits<'a>(action: &'a Value, uri: &str) -> &'a [Value] {
    action["edit"]["changes"][uri]
        .as_array()
        .expect("edits to the document")
}

const TRAIN: &str = "\
import torch

device = torch.device(\"cuda\")


def train(model, loader):
    for batch in loader:
        batch = batch.to(device, non_blocking=True)
        x = model(batch)
        x[torch.nonzero(x < 0, as_tuple=True)] = 0.0
        label = \"ünï 🙂\"; print(label, x.sum().item())
        assert x.min() > 0
";

#[test]
fn a_session_from_initialize_to_exit() {
    let project = Project::new();
    project.write("train.py", TRAIN);
    let uri = file_uri(&project.path().join("train.py"));
    let mut client = Client::initialized(project.path(), json!({}));
    client.open(&uri, TRAIN);

    // The findings `check` reports, where it reports them; the non-ASCII line's column is in
    // UTF-16 units (`🙂` is two).
    let (expected, rows) = cli_findings(&project, "train.py");
    assert!(expected.contains(&("SYNC101".to_string(), 10, 39)), "{expected:?}");
    let diagnostics = client.diagnostics_where(&uri, |d| !d.is_empty());
    assert_eq!(positions(&diagnostics), expected);
    let item = diagnostics.iter().find(|d| d["code"] == "SYNC101").expect("SYNC101");
    let row = rows.iter().find(|row| row["code"] == "SYNC101").expect("a SYNC101 row");
    assert_eq!(item["range"]["end"], json!({"line": 10, "character": 53}));
    assert_eq!(item["severity"], 2);
    assert_eq!(item["source"], "synclint");
    assert_eq!(item["codeDescription"]["href"], row["url"]);
    assert_eq!(
        item["message"].as_str().unwrap(),
        format!(
            "{}\n{}",
            row["message"].as_str().unwrap(),
            row["help"].as_str().unwrap()
        )
    );
    let related = &item["relatedInformation"][0];
    assert_eq!(related["message"], row["note"]);
    assert_eq!(related["location"]["uri"], uri.as_str());
    // "inside the loop at train.py:7"
    assert_eq!(related["location"]["range"]["start"]["line"], 6, "{related}");

    // Fix all: what `check --fix` writes.
    let actions = client.result(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": [], "only": ["source.fixAll"]},
        }),
    );
    let actions = actions.as_array().expect("actions");
    assert_eq!(actions.len(), 1, "{actions:?}");
    assert_eq!(actions[0]["kind"], "source.fixAll.synclint");
    assert_eq!(actions[0]["title"], "Fix all safe fixes");
    let fixed_by_server = apply_edits(TRAIN, action_edits(&actions[0], &uri));
    let copy = Project::new();
    copy.write("train.py", TRAIN);
    copy.run(&["check", "--no-cache", "--fix", "train.py"]);
    let fixed_by_check = std::fs::read_to_string(copy.path().join("train.py")).unwrap();
    assert_ne!(fixed_by_check, TRAIN);
    assert_eq!(fixed_by_server, fixed_by_check);

    // The quick fixes on the `nonzero` line: each finding's fix, marked safe or unsafe, and its
    // `# noqa`.
    let actions = client.result(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 9, "character": 20}, "end": {"line": 9, "character": 20}},
            "context": {"diagnostics": []},
        }),
    );
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert!(
        titles.contains(&"Replace with `x.masked_fill_(x < 0, 0.0)` (safe)"),
        "{titles:?}"
    );
    assert!(titles.contains(&"Add `# noqa: SYNC201`"), "{titles:?}");
    let noqa = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "Add `# noqa: SYNC201`")
        .unwrap();
    let with_noqa = apply_edits(TRAIN, action_edits(noqa, &uri));
    assert!(with_noqa.contains("x[torch.nonzero(x < 0, as_tuple=True)] = 0.0  # noqa: SYNC201\n"));
    let assert_actions = client.result(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 11, "character": 16}, "end": {"line": 11, "character": 16}},
            "context": {"diagnostics": [], "only": ["quickfix"]},
        }),
    );
    let unsafe_fix = assert_actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"].as_str().unwrap().ends_with("(unsafe)"));
    assert!(unsafe_fix.is_some(), "{assert_actions}");

    // Hover: the rule's doc, as `synclint rule` prints it.
    let hover = client.result(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 10, "character": 45}}),
    );
    let doc = project.run(&["rule", "SYNC101"]);
    assert_eq!(
        hover["contents"]["value"].as_str().unwrap(),
        common::stdout(&doc).trim_end()
    );
    let nothing = client.result(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(nothing, Value::Null);

    // An edit that removes the hazards clears the diagnostics.
    let clean = "import torch\n\n\ndef train(model, loader):\n    for batch in loader:\n        model(batch)\n";
    client.change_all(&uri, 2, clean);
    assert_eq!(client.diagnostics_of_version(&uri, 2), Vec::<Value>::new());

    assert_eq!(client.errors_seen(), Vec::<Value>::new());
    let (code, stderr) = client.shut_down();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn an_edited_helper_changes_its_callers_findings() {
    let project = Project::new();
    project.write("pyproject.toml", "");
    let helper = "import torch\n\n\ndef scale(t):\n    return 2.0\n";
    let helper_on_gpu = "import torch\n\n\ndef scale(t):\n    return torch.ones(3, device=\"cuda\").sum()\n";
    project.write("helpers.py", helper);
    let train = "\
from helpers import scale


def train(model, loader):
    for batch in loader:
        loss = model(batch)
        s = scale(loss)
        if s > 1:
            print(\"big\")
";
    project.write("train.py", train);
    let helper_uri = file_uri(&project.path().join("helpers.py"));
    let train_uri = file_uri(&project.path().join("train.py"));
    let mut client = Client::initialized(project.path(), json!({}));
    client.open(&train_uri, train);
    client.open(&helper_uri, helper);
    assert_eq!(client.diagnostics_of_version(&train_uri, 1), Vec::<Value>::new());

    // Unsaved: the helper now returns a GPU tensor, so the caller's test of it syncs.
    client.change_all(&helper_uri, 2, helper_on_gpu);
    let found = client.diagnostics_where(&train_uri, |d| !d.is_empty());
    assert_eq!(positions(&found), vec![("SYNC105".to_string(), 7, 11)]);
    // `check` says the same of the saved project.
    project.write("helpers.py", helper_on_gpu);
    assert_eq!(cli_findings(&project, "train.py").0, positions(&found));

    // Back to a Python float: the caller's finding goes.
    client.change_all(&helper_uri, 3, helper);
    client.diagnostics_where(&train_uri, |d| d.is_empty());

    // A sync in the helper is hot through the caller's loop, which the related information
    // points at.
    client.change_all(&helper_uri, 4, "def scale(t):\n    return t.max().item()\n");
    let found = client.diagnostics_where(&helper_uri, |d| !d.is_empty());
    let related = &found[0]["relatedInformation"][0];
    assert_eq!(
        related["message"],
        "hot: `scale()` is called from the loop at train.py:5"
    );
    assert_eq!(related["location"]["uri"], train_uri.as_str());
    assert_eq!(related["location"]["range"]["start"]["line"], 4);
    assert_eq!(client.errors_seen(), Vec::<Value>::new());
    let (code, stderr) = client.shut_down();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn settings_are_read_again_when_the_config_changes() {
    let project = Project::new();
    project.write("pyproject.toml", "[tool.synclint]\nignore = [\"SYNC101\"]\n");
    project.write("train.py", TRAIN);
    let uri = file_uri(&project.path().join("train.py"));
    let mut client = Client::initialized(
        project.path(),
        json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}}),
    );
    // The server asks to watch Python and configuration files.
    let registration = client.wait_for(|message| message["method"] == "client/registerCapability");
    let watchers = &registration["params"]["registrations"][0]["registerOptions"]["watchers"];
    assert!(watchers.to_string().contains("pyproject.toml"), "{watchers}");
    client.open(&uri, TRAIN);
    let codes = |d: &[Value]| -> Vec<String> { positions(d).into_iter().map(|(code, _, _)| code).collect() };
    let found = client.diagnostics_of_version(&uri, 1);
    assert!(!codes(&found).contains(&"SYNC101".to_string()), "{found:?}");

    project.write("pyproject.toml", "[tool.synclint]\n");
    let config_uri = file_uri(&project.path().join("pyproject.toml"));
    client.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": config_uri, "type": 2}]}),
    );
    client.diagnostics_where(&uri, |d| codes(d).contains(&"SYNC101".to_string()));
    let (code, stderr) = client.shut_down();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn a_client_that_pulls_diagnostics_is_not_sent_them() {
    let project = Project::new();
    project.write("train.py", TRAIN);
    let uri = file_uri(&project.path().join("train.py"));
    let mut client = Client::initialized(project.path(), json!({"textDocument": {"diagnostic": {}}}));
    client.open(&uri, TRAIN);
    let report = client.result("textDocument/diagnostic", json!({"textDocument": {"uri": uri}}));
    assert_eq!(report["kind"], "full");
    let items = report["items"].as_array().unwrap();
    assert_eq!(positions(items), cli_findings(&project, "train.py").0);
    // A file that is not open is checked from the disk.
    project.write("other.py", TRAIN);
    let other = file_uri(&project.path().join("other.py"));
    let report = client.result("textDocument/diagnostic", json!({"textDocument": {"uri": other}}));
    assert_eq!(report["items"].as_array().unwrap().len(), items.len());
    let pushed = client
        .unread()
        .iter()
        .any(|message| message["method"] == "textDocument/publishDiagnostics");
    assert!(!pushed);
    let (code, stderr) = client.shut_down();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn malformed_and_unknown_messages_get_error_responses() {
    let project = Project::new();
    let mut client = Client::start(project.path(), &["--no-cache"]);
    // Before `initialize`.
    let early = client.request("textDocument/hover", json!({}));
    assert_eq!(early["error"]["code"], -32002, "{early}");

    let result = client.result(
        "initialize",
        json!({"processId": null, "rootUri": file_uri(project.path()), "capabilities": {}}),
    );
    assert!(result["capabilities"].is_object());
    client.notify("initialized", json!({}));

    client.send_raw(b"{this is not json");
    let parse_error = client.wait_for(|m| m["error"]["code"] == -32700);
    assert_eq!(parse_error["id"], Value::Null);
    client.send(json!({"jsonrpc": "2.0", "id": 99, "method": 5}));
    let invalid = client.wait_for(|m| m["id"] == 99);
    assert_eq!(invalid["error"]["code"], -32600, "{invalid}");
    // A header block without a length, then a well-formed request: still answered.
    client.stdin.write_all(b"Content-Type: nothing\r\n\r\n").unwrap();
    let unknown = client.request("synclint/unknown", json!({}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let bad_params = client.request("textDocument/codeAction", json!({"textDocument": 3}));
    assert_eq!(bad_params["error"]["code"], -32602, "{bad_params}");
    let again = client.request("initialize", json!({"capabilities": {}}));
    assert_eq!(again["error"]["code"], -32600, "{again}");

    // Documents the server does not know, and ones that are no file.
    let unknown_uri = file_uri(&project.path().join("missing.py"));
    let none = client.result(
        "textDocument/codeAction",
        json!({
            "textDocument": {"uri": unknown_uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": []},
        }),
    );
    assert_eq!(none, Value::Null);
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": unknown_uri, "version": 2}, "contentChanges": [{"text": "x"}]}),
    );
    client.open("untitled:Untitled-1", TRAIN);
    let untitled = client.diagnostics_where("untitled:Untitled-1", |d| !d.is_empty());
    assert!(positions(&untitled).iter().any(|(code, _, _)| code == "SYNC101"));
    client.notify("$/cancelRequest", json!({"id": 1}));
    client.notify("textDocument/didOpen", json!({"bogus": true}));

    let (code, stderr) = client.shut_down();
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

const PARSE_ERROR: Option<i64> = Some(-32700);
const INVALID_REQUEST: Option<i64> = Some(-32600);
const METHOD_NOT_FOUND: Option<i64> = Some(-32601);

/// The replies to a message: each one's id as written and its error code (`None` for a result).
type Replies = Vec<(String, Option<i64>)>;

/// A request for a hover over a document that is not open, with `id` as written: answered with
/// a `null` result.
fn hover_with_id(id: &str) -> String {
    format!(
        r#"{{"jsonrpc": "2.0", "id": {id}, "method": "textDocument/hover", "params": {{"textDocument": {{"uri": "file:///nowhere/a.py"}}, "position": {{"line": 0, "character": 0}}}}}}"#
    )
}

#[test]
fn every_message_gets_the_reply_json_rpc_prescribes() {
    let project = Project::new();
    let mut client = Client::initialized(project.path(), json!({}));
    let answered = |id: &str| vec![(id.to_string(), None)];
    let refused = |id: &str, code: Option<i64>| vec![(id.to_string(), code)];
    let cases: Vec<(&str, Vec<u8>, Replies)> = vec![
        // Any number or string is an id, echoed as written.
        (
            "an id above 2^31",
            frame(&hover_with_id("2147483648")),
            answered("2147483648"),
        ),
        (
            "an id above 2^64",
            frame(&hover_with_id("123456789012345678901234567890")),
            answered("123456789012345678901234567890"),
        ),
        ("a negative id", frame(&hover_with_id("-1")), answered("-1")),
        ("a float id", frame(&hover_with_id("1.5")), answered("1.5")),
        ("an id with an exponent", frame(&hover_with_id("1e3")), answered("1e3")),
        (
            "a string id with escapes",
            frame(&hover_with_id(r#""a\u00e9\"b""#)),
            answered(r#""a\u00e9\"b""#),
        ),
        ("an empty string id", frame(&hover_with_id(r#""""#)), answered(r#""""#)),
        // No id JSON-RPC allows.
        (
            "a null id",
            frame(&hover_with_id("null")),
            refused("null", INVALID_REQUEST),
        ),
        (
            "an object id",
            frame(&hover_with_id(r#"{"a": 1}"#)),
            refused("null", INVALID_REQUEST),
        ),
        (
            "an array id",
            frame(&hover_with_id("[1]")),
            refused("null", INVALID_REQUEST),
        ),
        (
            "a boolean id",
            frame(&hover_with_id("true")),
            refused("null", INVALID_REQUEST),
        ),
        // Not JSON.
        (
            "a body cut short",
            frame(r#"{"jsonrpc": "2.0", "id": 3, "#),
            refused("null", PARSE_ERROR),
        ),
        ("an empty body", frame(""), refused("null", PARSE_ERROR)),
        (
            "a body that is no UTF-8",
            [b"Content-Length: 2\r\n\r\n".as_slice(), b"\xff\xfe"].concat(),
            refused("null", PARSE_ERROR),
        ),
        // JSON, but no request or notification.
        (
            "no method",
            frame(r#"{"jsonrpc": "2.0", "id": 12}"#),
            refused("12", INVALID_REQUEST),
        ),
        (
            "jsonrpc 1.0",
            frame(r#"{"jsonrpc": "1.0", "id": 13, "method": "shutdown"}"#),
            refused("13", INVALID_REQUEST),
        ),
        (
            "no jsonrpc",
            frame(r#"{"id": 14, "method": "shutdown"}"#),
            refused("14", INVALID_REQUEST),
        ),
        (
            "a method that is no string",
            frame(r#"{"jsonrpc": "2.0", "id": 15, "method": 15}"#),
            refused("15", INVALID_REQUEST),
        ),
        (
            "params that are a number",
            frame(r#"{"jsonrpc": "2.0", "id": 16, "method": "shutdown", "params": 16}"#),
            refused("16", INVALID_REQUEST),
        ),
        (
            "a notification with params that are a string",
            frame(r#"{"jsonrpc": "2.0", "method": "exit", "params": "now"}"#),
            refused("null", INVALID_REQUEST),
        ),
        (
            "a batch",
            frame(&format!("[{}]", hover_with_id("17"))),
            refused("null", INVALID_REQUEST),
        ),
        ("an empty batch", frame("[]"), refused("null", INVALID_REQUEST)),
        ("a number", frame("18"), refused("null", INVALID_REQUEST)),
        // Requests for methods the server does not have.
        (
            "an unknown method",
            frame(r#"{"jsonrpc": "2.0", "id": 4294967296, "method": "synclint/unknown"}"#),
            refused("4294967296", METHOD_NOT_FOUND),
        ),
        (
            "an unknown $/ request",
            frame(r#"{"jsonrpc": "2.0", "id": "x", "method": "$/unknown", "params": {}}"#),
            refused(r#""x""#, METHOD_NOT_FOUND),
        ),
        // What is never answered.
        (
            "an unknown notification",
            frame(r#"{"jsonrpc": "2.0", "method": "synclint/unknown", "params": {}}"#),
            vec![],
        ),
        (
            "a notification with invalid params",
            frame(r#"{"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"bogus": 1}}"#),
            vec![],
        ),
        (
            "a cancellation",
            frame(r#"{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}}"#),
            vec![],
        ),
        (
            "a response",
            frame(r#"{"jsonrpc": "2.0", "id": "synclint-9", "result": null}"#),
            vec![],
        ),
        // Frames that are broken.
        (
            "a header without a length",
            [b"Content-Type: x\r\n\r\n".as_slice(), hover_with_id("20").as_bytes()].concat(),
            refused("null", PARSE_ERROR),
        ),
        (
            "a length that is no number",
            [
                b"Content-Length: abc\r\n\r\n".as_slice(),
                hover_with_id("21").as_bytes(),
            ]
            .concat(),
            refused("null", PARSE_ERROR),
        ),
        (
            "a header without its body",
            b"Content-Length: 500\r\n\r\n".to_vec(),
            refused("null", PARSE_ERROR),
        ),
        (
            "a huge length",
            [
                b"Content-Length: 1000000000000\r\n\r\n".as_slice(),
                hover_with_id("22").as_bytes(),
            ]
            .concat(),
            refused("null", PARSE_ERROR),
        ),
        (
            "a length past the limit",
            [
                b"Content-Length: 67108865\r\n\r\n".as_slice(),
                hover_with_id("23").as_bytes(),
            ]
            .concat(),
            refused("null", PARSE_ERROR),
        ),
        (
            "a length of 2^64",
            [
                b"Content-Length: 18446744073709551616\r\n\r\n".as_slice(),
                hover_with_id("24").as_bytes(),
            ]
            .concat(),
            refused("null", PARSE_ERROR),
        ),
        ("bytes that are no frame", vec![b'x'; 100_000], vec![]),
    ];
    for (case, bytes, expected) in cases {
        let (replies, probe) = client.replies_to(&bytes);
        let replies: Replies = replies.iter().map(|text| id_and_code(text)).collect();
        assert_eq!(replies, expected, "{case}");
        // The server answers the next request as ever.
        assert_eq!(probe["result"], Value::Null, "{case}: {probe}");
    }
    // Nothing of the huge lengths was allocated.
    #[cfg(target_os = "linux")]
    assert!(client.resident_bytes() < 1 << 30, "{} bytes", client.resident_bytes());
    let (code, stderr) = client.shut_down();
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn requests_outside_the_lifecycle_get_its_errors_with_their_ids() {
    let project = Project::new();
    let mut client = Client::start(project.path(), &["--no-cache"]);
    let answer = |client: &mut Client, body: &str| {
        client.send_raw(body.as_bytes());
        id_and_code(&client.wait_for_received(is_response).text)
    };
    // Before `initialize`: not initialized; notifications are dropped.
    client.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": "file:///a.py", "languageId": "python", "version": 1, "text": ""}}),
    );
    assert_eq!(
        answer(&mut client, &hover_with_id("1099511627776")),
        ("1099511627776".into(), Some(-32002))
    );
    let initialize = format!(
        r#"{{"jsonrpc": "2.0", "id": 7.0, "method": "initialize", "params": {{"processId": null, "rootUri": "{}", "capabilities": {{}}}}}}"#,
        file_uri(project.path())
    );
    assert_eq!(answer(&mut client, &initialize), ("7.0".into(), None));
    assert_eq!(
        answer(&mut client, &initialize.replace("7.0", "8")),
        ("8".into(), INVALID_REQUEST)
    );
    client.notify("initialized", json!({}));
    assert_eq!(answer(&mut client, &hover_with_id("9e0")), ("9e0".into(), None));
    let shutdown = r#"{"jsonrpc": "2.0", "id": 1e1, "method": "shutdown"}"#;
    assert_eq!(answer(&mut client, shutdown), ("1e1".into(), None));
    // After `shutdown`: invalid requests.
    assert_eq!(
        answer(&mut client, &hover_with_id("11.25")),
        ("11.25".into(), INVALID_REQUEST)
    );
    client.notify("exit", Value::Null);
    let (code, stderr) = client.finish();
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The quick checks the server traced (`$/logTrace`) among the messages read.
fn quick_checks_traced(client: &mut Client) -> usize {
    client
        .unread()
        .iter()
        .filter(|message| {
            message["method"] == "$/logTrace"
                && message["params"]["message"]
                    .as_str()
                    .is_some_and(|text| text.starts_with("quick check of "))
        })
        .count()
}

#[test]
fn a_burst_of_edits_is_checked_for_its_last_version_only() {
    let source = std::fs::read_to_string(repo().join("fixtures/facts.py")).unwrap();
    let project = Project::new();
    project.write("pyproject.toml", "");
    let uri = file_uri(&project.path().join("typed.py"));
    let client = Client::start(project.path(), &["--no-cache"]);
    let mut client = Client::initialized_with(client, project.path(), json!({"capabilities": {}, "trace": "verbose"}));
    client.open(&uri, &source);
    client.diagnostics_of_version(&uri, 1);
    client.wait_for(|message| {
        message["method"] == "window/logMessage"
            && message["params"]["message"]
                .as_str()
                .is_some_and(|text| text.starts_with("project pass over"))
    });
    assert_eq!(quick_checks_traced(&mut client), 1, "the open is checked once");
    client.forget_unread();

    // A hot sync typed at the end of the file, a character a message, and padded with a
    // comment to 200 edits, all written at once.
    let mut typed =
        "\n\ndef typed_in_a_burst(model, loader):\n    for batch in loader:\n        print(model(batch).item())\n"
            .to_string();
    typed.push_str("# ");
    while typed.chars().count() < 200 {
        typed.push('x');
    }
    let mut at = (source.lines().count() as u64, 0);
    let mut edits = Vec::new();
    for (index, character) in typed.chars().enumerate() {
        let range = json!({"start": {"line": at.0, "character": at.1}, "end": {"line": at.0, "character": at.1}});
        edits.push(json!({
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": index + 2}, "contentChanges": [{"range": range, "text": character.to_string()}]},
        }));
        at = if character == '\n' {
            (at.0 + 1, 0)
        } else {
            (at.0, at.1 + 1)
        };
    }
    client.send_all(&edits);
    let last = edits.len() as i64 + 1;
    let found = client.diagnostics_of_version(&uri, last);

    // The last version's diagnostics are those of its text.
    let final_text = format!("{source}{typed}");
    project.write("typed.py", &final_text);
    let item_line = final_text
        .lines()
        .position(|line| line.contains("model(batch).item()"))
        .unwrap() as u64;
    assert!(
        positions(&found)
            .iter()
            .any(|(code, line, _)| code == "SYNC101" && *line == item_line),
        "{:?}",
        positions(&found)
    );
    assert_eq!(positions(&found), cli_findings(&project, "typed.py").0);
    // Far fewer checks than edits, and none shown of a version a newer one had replaced.
    let checks = quick_checks_traced(&mut client);
    assert!(
        (1..=20).contains(&checks),
        "{checks} quick checks for {} edits",
        edits.len()
    );
    // Versions before the last that were published (the server caught up with the burst
    // meanwhile): each one cost a check of its own before the last one's.
    let superseded: Vec<i64> = client
        .unread()
        .iter()
        .filter(|message| message["method"] == "textDocument/publishDiagnostics")
        .filter_map(|message| message["params"]["version"].as_i64())
        .filter(|&version| version < last)
        .collect();
    assert!(superseded.len() < checks, "{superseded:?}");
    assert!(superseded.is_sorted(), "{superseded:?}");
    assert_eq!(client.errors_seen(), Vec::<Value>::new());
    let (code, stderr) = client.shut_down();
    assert_eq!(code, 0, "{stderr}");
}

/// About `bytes` bytes of Python: small functions, one in five hundred with a finding.
fn many_functions(bytes: usize) -> String {
    let mut text = String::new();
    for n in 0.. {
        if text.len() > bytes {
            break;
        }
        if n % 500 == 0 {
            text.push_str(&format!(
                "\n\ndef train_{n}(model, loader):\n    for batch in loader:\n        print(model(batch).item())\n"
            ));
        }
        text.push_str(&format!(
            "\n\ndef helper_{n}(x, y):\n    z = x + y * {n}\n    return z\n"
        ));
    }
    text
}

#[cfg(target_os = "linux")]
#[test]
fn a_closed_document_leaves_nothing_behind() {
    let project = Project::new();
    project.write("pyproject.toml", "");
    // mimalloc returns freed pages to the system only a while after they are freed, and only at
    // a later call into it: the server tells it to once a close leaves it idle.
    let client = Client::start_with(project.path(), &["--no-cache"], &[]);
    let mut client = Client::initialized_with(client, project.path(), json!({"capabilities": {}}));
    let project_pass = |message: &Value| {
        message["method"] == "window/logMessage"
            && message["params"]["message"]
                .as_str()
                .is_some_and(|text| text.starts_with("project pass over"))
    };
    let open_and_close = |client: &mut Client, name: &str, text: &str| {
        let uri = file_uri(&project.path().join(name));
        client.open(&uri, text);
        assert!(!client.diagnostics_of_version(&uri, 1).is_empty());
        client.wait_for(project_pass);
        let open = client.resident_bytes();
        client.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}}));
        client.diagnostics_where(&uri, |d| d.is_empty());
        // The project pass due 300 ms after a close finds no open file.
        std::thread::sleep(Duration::from_millis(500));
        client.result(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}),
        );
        open
    };
    // Each thread of the server has checked a document of 1 MB before the baseline: the arena
    // of parse trees keeps 8 MiB of its pages per thread once it is rewound (src/arena.rs).
    open_and_close(&mut client, "warm.py", &many_functions(1_000_000));
    let before = client.resident_bytes();
    let open = open_and_close(&mut client, "big.py", &many_functions(4_000_000));
    let after = client.resident_bytes();
    let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
    let summary = format!(
        "{:.0} MiB before, {:.0} open, {:.0} after",
        mib(before),
        mib(open),
        mib(after)
    );
    // The open document weighs, and once it is closed, nothing of it stays.
    assert!(open > before + (32 << 20), "{summary}");
    assert!(after < before + (open - before) / 8, "{summary}");
    let (code, stderr) = client.shut_down();
    assert_eq!(code, 0, "{stderr}");
}

/// A document nested far deeper than anything Python compiles (a sum of 400,000 names) gets the
/// error that says so, and the server goes on answering: it used to overflow its stack and die.
#[test]
fn a_document_too_deep_to_check_is_an_error_not_a_crash() {
    let project = Project::new();
    project.write("pyproject.toml", "");
    let mut client = Client::initialized(project.path(), json!({}));
    let deep = file_uri(&project.path().join("deep.py"));
    client.open(&deep, &format!("x = {}\n", vec!["a"; 400_000].join(" + ")));
    let diagnostics = client.diagnostics_of_version(&deep, 1);
    assert!(
        diagnostics.iter().any(|d| d["message"]
            .as_str()
            .is_some_and(|m| m.contains("code nested more than 10,000 levels deep"))),
        "{diagnostics:?}"
    );
    let fine = file_uri(&project.path().join("fine.py"));
    client.open(&fine, "for b in loader:\n    model(b).item()\n");
    assert!(!client.diagnostics_of_version(&fine, 1).is_empty());
    let (code, stderr) = client.shut_down();
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn exit_without_shutdown_is_code_1() {
    let project = Project::new();
    let mut client = Client::initialized(project.path(), json!({}));
    client.notify("exit", Value::Null);
    assert_eq!(client.finish().0, 1);
}

/// Inserts `text` at an LSP position, returning the position after it.
fn insert_at(client: &mut Client, uri: &str, version: i64, at: (u64, u64), text: &str) -> (u64, u64) {
    let range = json!({"start": {"line": at.0, "character": at.1}, "end": {"line": at.0, "character": at.1}});
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": range, "text": text}]}),
    );
    if text == "\n" {
        (at.0 + 1, 0)
    } else {
        (at.0, at.1 + text.encode_utf16().count() as u64)
    }
}

#[test]
fn typing_a_file_character_by_character() {
    let source = std::fs::read_to_string(repo().join("fixtures/SYNC101.py")).unwrap();
    let project = Project::new();
    project.write("typed.py", &source);
    let uri = file_uri(&project.path().join("typed.py"));
    let mut client = Client::initialized(project.path(), json!({}));
    client.open(&uri, "");
    let mut at = (0, 0);
    let mut version = 1;
    for (index, character) in source.chars().enumerate() {
        version += 1;
        at = insert_at(&mut client, &uri, version, at, &character.to_string());
        if index % 97 == 0 {
            // Requests on half-typed code are answered too.
            let position = json!({"line": at.0, "character": at.1});
            client.result(
                "textDocument/hover",
                json!({"textDocument": {"uri": uri}, "position": position}),
            );
            client.result(
                "textDocument/codeAction",
                json!({
                    "textDocument": {"uri": uri},
                    "range": {"start": {"line": 0, "character": 0}, "end": position},
                    "context": {"diagnostics": []},
                }),
            );
        }
    }
    // Once typed in full, the file's diagnostics are what `check` reports.
    let typed = client.diagnostics_of_version(&uri, version);
    assert_eq!(positions(&typed), cli_findings(&project, "typed.py").0);
    assert_eq!(client.errors_seen(), Vec::<Value>::new());
    let (code, stderr) = client.shut_down();
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A small deterministic generator (64-bit LCG), so that a failure can be replayed.
struct Random(u64);

impl Random {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % below.max(1)
    }
}

#[test]
fn random_edits_of_corpus_files_never_break_the_server() {
    let mut corpus: Vec<String> = ["fixtures", "fixtures/model"]
        .iter()
        .flat_map(|folder| std::fs::read_dir(repo().join(folder)).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "py"))
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    corpus.sort();
    let snippets = [
        "(",
        ")",
        "[",
        "]",
        ":",
        "\n",
        "    ",
        "\t",
        "def ",
        "for x in y:\n",
        ".item()",
        "if t:",
        "\"\"\"",
        "'",
        "é",
        "🙂",
        "\r\n",
        "\\",
        "lambda: ",
        "# noqa",
        "@",
        "torch.cuda.synchronize()",
    ];
    let project = Project::new();
    project.write("pyproject.toml", "");
    let mut client = Client::initialized(project.path(), json!({}));
    let mut random = Random(0x5eed_1234);
    let uris: Vec<String> = (0..3)
        .map(|n| file_uri(&project.path().join(format!("file{n}.py"))))
        .collect();
    for uri in &uris {
        client.open(uri, &corpus[random.next(corpus.len() as u64) as usize]);
    }
    let started = Instant::now();
    let mut versions = [1i64; 3];
    for step in 0..400 {
        let which = random.next(3) as usize;
        versions[which] += 1;
        let start = json!({"line": random.next(120), "character": random.next(90)});
        let end = if random.next(3) == 0 {
            start.clone()
        } else {
            json!({"line": random.next(120), "character": random.next(90)})
        };
        let text = match random.next(4) {
            0 => String::new(),
            1 => {
                let donor = &corpus[random.next(corpus.len() as u64) as usize];
                let from = random.next(donor.len() as u64) as usize;
                let to = (from + random.next(200) as usize).min(donor.len());
                let (from, to) = (floor_boundary(donor, from), floor_boundary(donor, to));
                donor[from..to].to_string()
            }
            _ => snippets[random.next(snippets.len() as u64) as usize].to_string(),
        };
        let change = json!({"range": {"start": start, "end": end}, "text": text});
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uris[which], "version": versions[which]}, "contentChanges": [change]}),
        );
        if step % 25 == 0 {
            let position = json!({"line": random.next(100), "character": random.next(80)});
            client.result(
                "textDocument/hover",
                json!({"textDocument": {"uri": uris[which]}, "position": position}),
            );
            client.result(
                "textDocument/codeAction",
                json!({
                    "textDocument": {"uri": uris[which]},
                    "range": {"start": {"line": 0, "character": 0}, "end": position},
                    "context": {"diagnostics": []},
                }),
            );
        }
    }
    // Every edit was answered with diagnostics, within the time the test allows.
    for (which, uri) in uris.iter().enumerate() {
        client.diagnostics_of_version(uri, versions[which]);
    }
    assert!(started.elapsed() < Duration::from_secs(120), "{:?}", started.elapsed());
    assert_eq!(client.errors_seen(), Vec::<Value>::new());
    let (code, stderr) = client.shut_down();
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// The nearest character boundary at or before `at`.
fn floor_boundary(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}
