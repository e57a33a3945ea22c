#!/usr/bin/env python3
"""How soon `synclint server` answers an edit with diagnostics.

Opens a 2,000-line file (the first 2,000 lines of fixtures/facts.py, cut at a top-level
statement) in a throwaway project whose other files are the rest of fixtures/ (about 80 files,
read back from the cache after the first project pass), then types: each keystroke is a `textDocument/didChange`
of one character, and its latency is the time from sending it to reading the
`textDocument/publishDiagnostics` of that version. Two rhythms:

- typing: 20 keystrokes a second, so the project pass (300 ms after the last edit) never runs
  in between: every answer is the quick check;
- pausing: a keystroke every 600 ms, so a project pass runs after each one, and the next
  keystroke may arrive while one is still under way.

The server logs how long each project pass took; those are reported too.

    python3 bench/server_latency.py                         # target/release/synclint
    python3 bench/server_latency.py --binary PATH --keys 200
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import queue

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def two_thousand_lines():
    """The first 2,000 lines of fixtures/facts.py, cut before the top-level statement that
    would cross line 2,000."""
    with open(os.path.join(ROOT, "fixtures", "facts.py"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    cut = 2000
    while cut > 0 and not re.match(r"(def|class|@|[A-Za-z_])", lines[cut]):
        cut -= 1
    return "\n".join(lines[:cut]) + "\n"


class Server:
    def __init__(self, binary, folder):
        self.process = subprocess.Popen(
            [binary, "server"],
            cwd=folder,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.messages = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self):
        out = self.process.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line == b"\r\n":
                    break
                name, value = line.decode().split(":", 1)
                if name.lower() == "content-length":
                    length = int(value)
            self.messages.put((time.perf_counter(), json.loads(out.read(length))))

    def send(self, message):
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()
        return time.perf_counter()

    def notify(self, method, params):
        return self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == self.next_id and "method" not in m)[1]

    def wait(self, wanted, timeout=60.0, seen=None):
        deadline = time.perf_counter() + timeout
        while True:
            at, message = self.messages.get(timeout=max(0.0, deadline - time.perf_counter()))
            if seen is not None:
                seen.append(message)
            if wanted(message):
                return at, message


def pass_times(messages):
    times = []
    for message in messages:
        if message.get("method") == "window/logMessage":
            found = re.match(r"project pass over \d+ open files: ([\d.]+) ms", message["params"]["message"])
            if found:
                times.append(float(found.group(1)))
    return times


def type_keys(server, uri, text, keys, interval, version, seen):
    """Types `keys` characters at the end of a function body line in the middle of the file,
    alternating an insertion and its deletion. Returns the latencies (ms) and the last version."""
    lines = text.split("\n")
    line = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("    ") and lines[i].strip())
    column = len(lines[line].encode("utf-16-le")) // 2
    latencies = []
    for key in range(keys):
        version += 1
        if key % 2 == 0:
            change = {"range": {"start": {"line": line, "character": column},
                                "end": {"line": line, "character": column}}, "text": "x"}
        else:
            change = {"range": {"start": {"line": line, "character": column},
                                "end": {"line": line, "character": column + 1}}, "text": ""}
        sent = server.notify("textDocument/didChange",
                             {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
        answered, _ = server.wait(
            lambda m, v=version: m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri and m["params"].get("version") == v,
            seen=seen,
        )
        latencies.append((answered - sent) * 1000.0)
        time.sleep(max(0.0, interval - (answered - sent)))
    return latencies, version


def summary(name, values):
    values = sorted(values)
    p90 = values[int(0.9 * (len(values) - 1))]
    return f"| {name} | {len(values)} | {statistics.median(values):.1f} | {p90:.1f} | {max(values):.1f} |"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "synclint"))
    parser.add_argument("--keys", type=int, default=100, help="keystrokes per rhythm")
    args = parser.parse_args()
    if not os.path.exists(args.binary):
        sys.exit(f"no {args.binary}: build it first (cargo build --release)")

    folder = tempfile.mkdtemp(prefix="synclint-server-bench-")
    try:
        text = two_thousand_lines()
        with open(os.path.join(folder, "pyproject.toml"), "w") as f:
            f.write("")
        shutil.copytree(os.path.join(ROOT, "fixtures"), os.path.join(folder, "fixtures"))
        path = os.path.join(folder, "big.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        uri = "file://" + path
        server = Server(args.binary, folder)
        server.request("initialize", {"processId": None, "rootUri": "file://" + folder, "capabilities": {}})
        server.notify("initialized", {})
        seen = []
        sent = server.notify("textDocument/didOpen",
                             {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
        opened, message = server.wait(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri, seen=seen)
        found = len(message["params"]["diagnostics"])
        server.wait(lambda m: pass_times([m]), seen=seen)

        typing, version = type_keys(server, uri, text, args.keys, 0.05, 1, seen)
        pausing, version = type_keys(server, uri, text, args.keys, 0.6, version, seen)
        time.sleep(1.0)
        while not server.messages.empty():
            seen.append(server.messages.get()[1])
        passes = pass_times(seen)

        server.request("shutdown", None)
        server.notify("exit", None)
        server.process.wait(timeout=10)

        print(f"file: {text.count(chr(10))} lines, {len(text)} bytes, {found} diagnostics; "
              f"first diagnostics {1000 * (opened - sent):.1f} ms after didOpen")
        print(f"machine: {os.cpu_count()} CPUs; binary: {args.binary}")
        print()
        print("| what | n | median (ms) | p90 (ms) | max (ms) |")
        print("|---|---:|---:|---:|---:|")
        print(summary("keystroke to diagnostics, typing (20 keys/s)", typing))
        print(summary("keystroke to diagnostics, a pause after each", pausing))
        print(summary("project pass (logged by the server)", passes))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
