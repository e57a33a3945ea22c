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

Then two measures of work that comes faster than checks:

- a burst: `--burst` keystrokes (1,000 by default) written at once, timed from the first sent to
  the diagnostics of the last version; the server's `$/logTrace` lines (asked for with
  `"trace": "verbose"`) count the quick checks it ran for them;
- a big document (`--big-mb`, 20 by default: the 2,000-line file repeated), in a server of its
  own: the first diagnostics after `didOpen`, a keystroke's latency, a burst of 50 keystrokes,
  and the server's resident memory (VmRSS) before the open, while open, and after `didClose`.

    python3 bench/server_latency.py                         # target/release/synclint
    python3 bench/server_latency.py --binary PATH --keys 200 --burst 1000 --big-mb 20
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
        return self.send_all([message])

    def send_all(self, messages):
        """Writes `messages` in one write; the time it was made."""
        frames = []
        for message in messages:
            body = json.dumps(message).encode()
            frames.append(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        sent = time.perf_counter()
        self.process.stdin.write(b"".join(frames))
        self.process.stdin.flush()
        return sent

    def rss_mib(self):
        """The server's resident memory (VmRSS) in MiB."""
        with open(f"/proc/{self.process.pid}/status") as f:
            kib = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        return kib / 1024.0

    def drain(self, seen):
        while not self.messages.empty():
            seen.append(self.messages.get()[1])

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


def check_traces(messages):
    """How many quick checks the server traced."""
    return sum(1 for m in messages if m.get("method") == "$/logTrace"
               and m["params"]["message"].startswith("quick check of "))


def typing_place(text):
    """The end of a function body line in the middle of the file (line, UTF-16 column)."""
    lines = text.split("\n")
    line = next(i for i in range(len(lines) // 2, len(lines)) if lines[i].startswith("    ") and lines[i].strip())
    return line, len(lines[line].encode("utf-16-le")) // 2


def keystroke(uri, version, place):
    """The `didChange` of one keystroke at `place`: an insertion on even versions, its deletion
    on odd ones, so that the text comes back after each pair (the first edit is version 2)."""
    line, column = place
    inserts = version % 2 == 0
    end = column if inserts else column + 1
    change = {"range": {"start": {"line": line, "character": column}, "end": {"line": line, "character": end}},
              "text": "x" if inserts else ""}
    return {"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}}


def diagnostics_of(uri, version):
    return lambda m: (m.get("method") == "textDocument/publishDiagnostics"
                      and m["params"]["uri"] == uri and m["params"].get("version") == version)


def type_keys(server, uri, text, keys, interval, version, seen):
    """Types `keys` keystrokes, one each `interval` seconds, each awaited. Returns the latencies
    (ms) and the last version."""
    place = typing_place(text)
    latencies = []
    for _ in range(keys):
        version += 1
        sent = server.send(keystroke(uri, version, place))
        answered, _ = server.wait(diagnostics_of(uri, version), seen=seen)
        latencies.append((answered - sent) * 1000.0)
        time.sleep(max(0.0, interval - (answered - sent)))
    return latencies, version


def burst(server, uri, text, keys, version, seen, timeout=600.0):
    """Writes `keys` keystrokes at once. Returns the time (ms) from writing them to the
    diagnostics of the last version, the versions published meanwhile, the quick checks the
    server traced, and the last version."""
    place = typing_place(text)
    first = len(seen)
    messages = [keystroke(uri, version + key + 1, place) for key in range(keys)]
    version += keys
    sent = server.send_all(messages)
    answered, _ = server.wait(diagnostics_of(uri, version), timeout=timeout, seen=seen)
    published = sum(1 for m in seen[first:] if m.get("method") == "textDocument/publishDiagnostics"
                    and m["params"]["uri"] == uri)
    return (answered - sent) * 1000.0, published, check_traces(seen[first:]), version


def start(binary, folder, trace=True):
    server = Server(binary, folder)
    params = {"processId": None, "rootUri": "file://" + folder, "capabilities": {}}
    if trace:
        params["trace"] = "verbose"
    server.request("initialize", params)
    server.notify("initialized", {})
    return server


def stop(server):
    server.request("shutdown", None)
    server.notify("exit", None)
    server.process.wait(timeout=30)


def open_document(server, uri, text, seen, timeout=60.0):
    """Opens `uri`; the time (ms) to its first diagnostics, and how many there are."""
    sent = server.notify("textDocument/didOpen",
                         {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    opened, message = server.wait(diagnostics_of(uri, 1), timeout=timeout, seen=seen)
    return (opened - sent) * 1000.0, len(message["params"]["diagnostics"])


def big_document(binary, folder, text, megabytes):
    """Times and memory of a document of `megabytes` MB (copies of `text`), in a server of its own."""
    big = text * max(1, round(megabytes * 1e6 / len(text)))
    seen = []
    server = start(binary, folder)
    # Every thread the server runs has started and checked a file once before the baseline.
    small_uri = "file://" + os.path.join(folder, "small.py")
    open_document(server, small_uri, text, seen)
    server.wait(lambda m: pass_times([m]), seen=seen)
    server.notify("textDocument/didClose", {"textDocument": {"uri": small_uri}})
    time.sleep(2.0)
    server.drain(seen)
    before = server.rss_mib()
    uri = "file://" + os.path.join(folder, "huge.py")
    opened_ms, found = open_document(server, uri, big, seen, timeout=600.0)
    server.wait(lambda m: pass_times([m]), timeout=600.0, seen=seen)
    version = 1
    keys = []
    for _ in range(3):
        version += 1
        sent = server.send(keystroke(uri, version, typing_place(text)))
        answered, _ = server.wait(diagnostics_of(uri, version), timeout=600.0, seen=seen)
        keys.append((answered - sent) * 1000.0)
    burst_ms, published, checks, version = burst(server, uri, text, 50, version, seen)
    time.sleep(1.0)
    server.drain(seen)
    open_rss = server.rss_mib()
    server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    server.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                and m["params"].get("version") is None, timeout=600.0, seen=seen)
    closed = time.perf_counter()
    after = []
    for at in (0.0, 0.5, 2.0, 5.0):
        time.sleep(max(0.0, closed + at - time.perf_counter()))
        after.append((at, server.rss_mib()))
    stop(server)
    print(f"big document: {len(big) / 1e6:.1f} MB, {big.count(chr(10))} lines, {found} diagnostics; "
          f"first diagnostics {opened_ms:.0f} ms after didOpen")
    print(f"a keystroke: {', '.join(f'{k:.0f}' for k in keys)} ms; 50 keystrokes at once: "
          f"{burst_ms:.0f} ms to the last version's diagnostics, {published} versions published, "
          f"{checks} quick checks traced")
    print(f"VmRSS: {before:.0f} MiB before didOpen, {open_rss:.0f} MiB open, after didClose "
          + ", ".join(f"{rss:.0f} MiB at {at:.1f} s" for at, rss in after))


def summary(name, values):
    values = sorted(values)
    p90 = values[int(0.9 * (len(values) - 1))]
    return f"| {name} | {len(values)} | {statistics.median(values):.1f} | {p90:.1f} | {max(values):.1f} |"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "synclint"))
    parser.add_argument("--keys", type=int, default=100, help="keystrokes per rhythm")
    parser.add_argument("--burst", type=int, default=1000, help="keystrokes written at once")
    parser.add_argument("--big-mb", type=float, default=20.0, help="the big document's size (0: skip it)")
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
        server = start(args.binary, folder)
        seen = []
        opened_ms, found = open_document(server, uri, text, seen)
        server.wait(lambda m: pass_times([m]), seen=seen)

        typing, version = type_keys(server, uri, text, args.keys, 0.05, 1, seen)
        pausing, version = type_keys(server, uri, text, args.keys, 0.6, version, seen)
        time.sleep(1.0)
        server.drain(seen)
        passes = pass_times(seen)
        burst_ms, published, checks, version = burst(server, uri, text, args.burst, version, seen)
        stop(server)

        print(f"file: {text.count(chr(10))} lines, {len(text)} bytes, {found} diagnostics; "
              f"first diagnostics {opened_ms:.1f} ms after didOpen")
        print(f"machine: {os.cpu_count()} CPUs; binary: {args.binary}")
        print()
        print("| what | n | median (ms) | p90 (ms) | max (ms) |")
        print("|---|---:|---:|---:|---:|")
        print(summary("keystroke to diagnostics, typing (20 keys/s)", typing))
        print(summary("keystroke to diagnostics, a pause after each", pausing))
        print(summary("project pass (logged by the server)", passes))
        print()
        print(f"{args.burst} keystrokes at once: {burst_ms:.0f} ms to the last version's diagnostics, "
              f"{published} versions published, {checks} quick checks traced")
        if args.big_mb > 0:
            big_document(args.binary, folder, text, args.big_mb)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
