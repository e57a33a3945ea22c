#!/usr/bin/env python3
"""Check every rule doc's claim on a real CUDA GPU.

Each rules/SYNCnnn-*.md holds a ```python setup block, an example (under "## Example") and a
rewrite (under "## Use instead"). For every doc this script:

1. runs setup + example and setup + rewrite on the GPU and measures how long the host is blocked
   inside the snippet while ~30 ms of work is queued on the GPU (torch.cuda._sleep). A snippet
   that synchronizes waits for the queued work; one that does not returns at once. The number
   reported is the host time with the queued work minus the host time without it (median of 3
   fresh runs each), so host-only work (allocations, torch.compile) is not counted as blocking.
   Verdict: blocks if that difference is over 15 ms. It also counts the warnings the snippet
   raises under torch.cuda.set_sync_debug_mode("warn") (debug mode misses some real syncs, such
   as torch.cuda.synchronize(); the blocking time is the verdict);
2. compares the two snippets' `result` values, when both define one;
3. with --synclint PATH and a doc whose fix is safe/unsafe: writes setup + example to a file,
   runs `synclint check --fix --unsafe-fixes --isolated --quiet FILE`, and measures and compares
   the fixed code the same way.

It writes docs/verified-on-gpu.md (and --json PATH with the raw numbers) and exits 1 if any doc
fails its claim: the example did not block (unless the doc says <!-- verify: no-host-block -->),
the rewrite blocked, the values differ, or the fixed code blocks / differs. A doc that says
<!-- verify: no-gpu-claim --> (a rule about synclint's own `# noqa` comments) is parsed and
compiled but not run, and gets no row.

--dry-run needs no GPU and no PyTorch: it parses every doc and compiles its blocks.

Needs only the standard library and PyTorch (numpy is used if present).
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import io
import datetime
import gc
import json
import os
import platform
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SLEEP_MS = 30.0          # GPU work queued before each timed run
BLOCK_THRESHOLD_MS = 15.0
RUNS = 3                 # fresh runs per measurement; the median counts
DOC_TIMEOUT_S = 180      # per measured snippet
SYNCLINT_TIMEOUT_S = 60
RTOL, ATOL = 1e-4, 1e-5
# Put between setup and example in the file handed to synclint, so the fixed file can be split
# back into (possibly changed) setup and fixed example.
MARKER = "# ---- synclint-verify: example below ----"
NO_HOST_BLOCK_RE = re.compile(r"<!--\s*verify:\s*no-host-block\s*-->")
NO_GPU_CLAIM_RE = re.compile(r"<!--\s*verify:\s*no-gpu-claim\s*-->")
FENCE_RE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
FIX_KINDS = ("none", "safe", "unsafe")


# --------------------------------------------------------------------------------------------
# Parsing rule docs (no torch needed)
# --------------------------------------------------------------------------------------------

class DocError(Exception):
    """A rule doc does not have the shape docs/rule-docs.md asks for."""


@dataclass
class Block:
    info: str
    body: str
    line: int      # 1-based line of the opening fence
    section: str   # the "## " heading it sits under ("" before the first one)


@dataclass
class RuleDoc:
    path: Path
    code: str
    name: str
    fix: str
    setup: str
    example: str
    rewrite: str
    no_host_block: bool
    no_gpu_claim: bool = False
    setup_line: int = 0
    example_line: int = 0
    rewrite_line: int = 0


def parse_blocks(text: str, where: str) -> list[Block]:
    """All fenced code blocks of a Markdown text, each with the ## section it sits in."""
    blocks: list[Block] = []
    section = ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE_RE.match(line)
        if m is None:
            if line.startswith("## "):
                section = line[3:].strip()
            i += 1
            continue
        fence, info = m.group("fence"), m.group("info").strip()
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines):
            s = lines[i].strip()
            if s and s == s[0] * len(s) and s[0] == fence[0] and len(s) >= len(fence):
                break
            body.append(lines[i])
            i += 1
        else:
            raise DocError(f"{where}:{start + 1}: code fence {fence}{info} is never closed")
        blocks.append(Block(info=info, body="\n".join(body) + "\n", line=start + 1,
                            section=section))
        i += 1
    return blocks


def _one(blocks: list[Block], what: str, where: str) -> Block:
    if len(blocks) != 1:
        lines = ", ".join(f"line {b.line}" for b in blocks) or "none found"
        raise DocError(f"{where}: expected exactly one {what}, found {len(blocks)} ({lines})")
    return blocks[0]


def parse_table(text: str, where: str) -> tuple[str, str, str]:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        cells = [c.strip().lower() for c in line.strip().strip("|").split("|")]
        if line.lstrip().startswith("|") and cells[:3] == ["code", "name", "fix"]:
            if i + 2 >= len(lines):
                break
            row = [c.strip() for c in lines[i + 2].strip().strip("|").split("|")]
            if len(row) < 3:
                raise DocError(f"{where}:{i + 3}: the | code | name | fix | table has no row")
            code, name, fix = row[0].strip("`"), row[1].strip("`"), row[2].strip("`").lower()
            if fix not in FIX_KINDS:
                raise DocError(f"{where}:{i + 3}: fix cell is {row[2]!r}, expected one of "
                               f"{', '.join(FIX_KINDS)}")
            return code, name, fix
    raise DocError(f"{where}: no '| code | name | fix |' table")


def parse_doc(path: Path) -> RuleDoc:
    """Parse one rule doc; raises DocError naming the file on any shape problem."""
    where = str(path)
    text = path.read_text(encoding="utf-8")
    code, name, fix = parse_table(text, where)
    if not path.name.startswith(code):
        raise DocError(f"{where}: table says {code}, but the file name does not start with it")
    blocks = parse_blocks(text, where)
    setup = _one([b for b in blocks if b.info.split() == ["python", "setup"]],
                 "```python setup block", where)
    example = _one([b for b in blocks if b.info.split() == ["python"]
                    and b.section.lower() == "example"],
                   "```python block under '## Example'", where)
    rewrite = _one([b for b in blocks if b.info.split() == ["python"]
                    and b.section.lower() == "use instead"],
                   "```python block under '## Use instead'", where)
    return RuleDoc(path=path, code=code, name=name, fix=fix, setup=setup.body,
                   example=example.body, rewrite=rewrite.body,
                   no_host_block=bool(NO_HOST_BLOCK_RE.search(text)),
                   no_gpu_claim=bool(NO_GPU_CLAIM_RE.search(text)),
                   setup_line=setup.line, example_line=example.line, rewrite_line=rewrite.line)


def load_docs(rules_dir: Path, only: set[str] | None = None) -> tuple[list[RuleDoc], list[str]]:
    """Parse every rules/SYNC*.md. Returns (docs, errors); a bad doc is an error, not a crash."""
    docs: list[RuleDoc] = []
    errors: list[str] = []
    paths = sorted(rules_dir.glob("SYNC*.md"))
    for p in paths:
        if only and not any(p.name.startswith(c) for c in only):
            continue
        try:
            docs.append(parse_doc(p))
        except DocError as e:
            errors.append(str(e))
        except (OSError, UnicodeDecodeError) as e:
            errors.append(f"{p}: cannot read: {e}")
    codes = [d.code for d in docs]
    for c in sorted({c for c in codes if codes.count(c) > 1}):
        errors.append(f"{rules_dir}: more than one doc for {c}")
    return docs, errors


def assigns_result(src: str) -> bool:
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Name) and n.id == "result" and isinstance(n.ctx, ast.Store)
               for n in ast.walk(tree))


def check_docs(rules_dir: Path, only: set[str] | None = None) -> tuple[list[RuleDoc], list[str],
                                                                      list[str]]:
    """The --dry-run check, usable without a GPU or PyTorch: every doc parses and its blocks
    compile (alone and as setup + snippet). Returns (docs, errors, notes)."""
    docs, errors = load_docs(rules_dir, only)
    notes: list[str] = []
    if not docs and not errors:
        errors.append(f"{rules_dir}: no SYNC*.md rule docs found")
    for d in docs:
        for label, src, line in (("setup", d.setup, d.setup_line),
                                 ("example", d.example, d.example_line),
                                 ("use-instead", d.rewrite, d.rewrite_line)):
            try:
                compile(src, f"{d.path}:{label}", "exec")
            except SyntaxError as e:
                errors.append(f"{d.path}: {label} block (fence at line {line}) does not compile:"
                              f" {e.msg} (block line {e.lineno})")
        for label, src in (("setup + example", d.setup + d.example),
                           ("setup + use-instead", d.setup + d.rewrite),
                           ("synclint input", synclint_input(d))):
            try:
                compile(src, f"{d.path}:{label}", "exec")
            except SyntaxError as e:
                errors.append(f"{d.path}: {label} does not compile: {e.msg} (line {e.lineno})")
        ex_r, rw_r = assigns_result(d.example), assigns_result(d.rewrite)
        if ex_r != rw_r:
            notes.append(f"{d.code}: only the {'example' if ex_r else 'rewrite'} defines "
                         "`result`; values will not be compared")
        elif not ex_r:
            notes.append(f"{d.code}: neither block defines `result`; values will not be compared")
    return docs, errors, notes


def synclint_input(d: RuleDoc) -> str:
    return d.setup.rstrip("\n") + "\n\n" + MARKER + "\n" + d.example


# --------------------------------------------------------------------------------------------
# GPU measurement
# --------------------------------------------------------------------------------------------

class SnippetTimeout(Exception):
    pass


def _alarm(signum, frame):  # noqa: ARG001
    raise SnippetTimeout(f"timed out after {DOC_TIMEOUT_S} s")


def calibrate_sleep(torch, target_ms: float = SLEEP_MS) -> tuple[float, float]:
    """Cycles of torch.cuda._sleep per millisecond on this GPU, and the measured length of a
    target_ms sleep with that rate."""
    cycles = 1_000_000
    torch.cuda.synchronize()
    rate = None
    for _ in range(5):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        end.synchronize()
        ms = start.elapsed_time(end)
        rate = cycles / max(ms, 1e-3)
        cycles = max(1000, int(rate * target_ms))
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cuda._sleep(int(rate * target_ms))
    end.record()
    end.synchronize()
    return rate, start.elapsed_time(end)


def _seed_all(torch):
    random.seed(0)
    torch.manual_seed(0)  # also seeds every CUDA device
    try:
        import numpy as np
        np.random.seed(0)
    except ImportError:
        pass


def _cleanup(torch):
    """Tear down what a snippet may leave behind that would stop the next fresh run."""
    torch.cuda.set_sync_debug_mode(0)
    try:
        import torch.distributed as dist
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
    except Exception:  # noqa: BLE001
        pass
    gc.collect()


def _fresh(torch, setup_code):
    _seed_all(torch)
    g = {"__name__": "__main__", "__builtins__": __builtins__}
    exec(setup_code, g)  # noqa: S102
    torch.cuda.synchronize()
    return g


def _err(e: BaseException) -> str:
    """One line: the exception and, if it came from a doc block, the block and line."""
    import traceback
    where = ""
    for fr in traceback.extract_tb(e.__traceback__):
        if fr.filename.startswith("<SYNC"):
            where = f" (at {fr.filename[1:-1]} line {fr.lineno})"
    return f"{type(e).__name__}: {e}{where}"[:400]


def measure(torch, setup: str, snippet: str, label: str, rate: float) -> dict:
    """Run setup (fresh namespace each time) then the snippet; time host blocking."""
    out: dict = {"error": None, "result": None, "has_result": False}
    try:
        setup_code = compile(setup, f"<{label}:setup>", "exec")
        code = compile(snippet, f"<{label}>", "exec")
    except SyntaxError as e:
        out["error"] = _err(e)
        return out

    def run(sleep_cycles: int | None, debug: bool = False):
        g = _fresh(torch, setup_code)
        done_at_return = None
        caught = []
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                if debug:
                    torch.cuda.set_sync_debug_mode("warn")
                if sleep_cycles is not None:
                    torch.cuda._sleep(sleep_cycles)
                    ev = torch.cuda.Event()
                    ev.record()
                t0 = time.perf_counter()
                with contextlib.redirect_stdout(io.StringIO()):  # examples may print
                    exec(code, g)  # noqa: S102
                t1 = time.perf_counter()
                if debug:
                    torch.cuda.set_sync_debug_mode(0)
                if sleep_cycles is not None:
                    done_at_return = ev.query()
                host_ms = (t1 - t0) * 1e3
                torch.cuda.synchronize()
                total_ms = (time.perf_counter() - t0) * 1e3
        finally:
            torch.cuda.set_sync_debug_mode(0)
        n_warn = sum(1 for w in caught if "synchroniz" in str(w.message).lower())
        return g, host_ms, total_ms, done_at_return, n_warn

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(DOC_TIMEOUT_S)
    try:
        # warm-up: allocator, kernels, lazy init, torch.compile
        g, *_ = run(None)
        del g
        _cleanup(torch)
        # sync debug mode
        g, _, _, _, n_warn = run(None, debug=True)
        out["debug_mode_warnings"] = n_warn
        del g
        _cleanup(torch)
        # host time without queued GPU work
        base, totals = [], []
        for i in range(RUNS):
            g, host_ms, total_ms, _, _ = run(None)
            base.append(host_ms)
            totals.append(total_ms)
            if i == 0 and "result" in g:
                try:
                    out["result"] = normalize(torch, g["result"])
                    out["has_result"] = True
                except TypeError as e:
                    out["result_error"] = str(e)
            del g
            _cleanup(torch)
        # host time behind queued GPU work. A slow snippet (torch.compile, big setup work) gets
        # more queued work than its own host time, so a sync inside it still finds some to wait for
        sleep_ms = SLEEP_MS if max(base) < 5.0 else min(SLEEP_MS + 2.0 * max(base), 5000.0)
        cycles = int(rate * sleep_ms)
        slept, done = [], []
        for _ in range(RUNS):
            g, host_ms, _, done_at_return, _ = run(cycles)
            slept.append(host_ms)
            done.append(bool(done_at_return))
            del g
            _cleanup(torch)
    except BaseException as e:  # noqa: BLE001
        if isinstance(e, KeyboardInterrupt):
            raise
        out["error"] = _err(e)
        _cleanup(torch)
        try:
            torch.cuda.synchronize()
        except Exception as e2:  # noqa: BLE001
            out["error"] += f"; then synchronize failed: {_err(e2)}"
        return out
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    b, s = statistics.median(base), statistics.median(slept)
    out.update({
        "host_ms_idle_gpu": [round(x, 3) for x in base],
        "host_ms_busy_gpu": [round(x, 3) for x in slept],
        "total_ms_idle_gpu": [round(x, 3) for x in totals],
        "queued_gpu_ms": round(sleep_ms, 2),
        "gpu_done_at_return": done,
        "blocked_ms": round(max(0.0, s - b), 2),
        "blocked_ms_raw": round(s - b, 3),
    })
    out["blocks"] = out["blocked_ms"] > BLOCK_THRESHOLD_MS
    return out


# --------------------------------------------------------------------------------------------
# Comparing results
# --------------------------------------------------------------------------------------------

def normalize(torch, obj):
    """Tensors / numbers / sequences / dicts -> CPU float64 tensors (lists, dicts kept)."""
    if isinstance(obj, torch.Tensor):
        t = obj.detach()
        if t.is_sparse:
            t = t.to_dense()
        t = t.cpu()
        return t.to(torch.complex128) if t.is_complex() else t.to(torch.float64)
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, (bool, int, float)):
        return torch.tensor(float(obj), dtype=torch.float64)
    if isinstance(obj, complex):
        return torch.tensor(obj, dtype=torch.complex128)
    if type(obj).__module__ == "numpy":
        import numpy as np
        return normalize(torch, torch.as_tensor(np.asarray(obj)))
    if isinstance(obj, dict):
        return {k: normalize(torch, v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        items = [normalize(torch, o) for o in obj]
        if items and all(isinstance(t, torch.Tensor) for t in items) \
                and len({(t.shape, t.dtype) for t in items}) == 1:
            return torch.stack(items)
        if not items:
            return torch.zeros(0, dtype=torch.float64)
        return items
    raise TypeError(f"cannot compare a result of type {type(obj).__name__}")


def compare(torch, a, b, path: str = "result") -> str | None:
    """None when a and b match; otherwise why not."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.shape != b.shape:
            if a.numel() == b.numel() and [s for s in a.shape if s != 1] == \
                    [s for s in b.shape if s != 1]:
                b = b.reshape(a.shape)
            else:
                return f"{path}: shape {tuple(a.shape)} vs {tuple(b.shape)}"
        if a.dtype != b.dtype:
            a, b = a.to(torch.complex128), b.to(torch.complex128)
        try:
            torch.testing.assert_close(a, b, rtol=RTOL, atol=ATOL, equal_nan=True)
        except AssertionError as e:
            msg = " ".join(str(e).split())
            return f"{path}: {msg[:300]}"
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            r = compare(torch, x, y, f"{path}[{i}]")
            if r:
                return r
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{path}: keys {sorted(map(str, a))} vs {sorted(map(str, b))}"
        for k in a:
            r = compare(torch, a[k], b[k], f"{path}[{k!r}]")
            if r:
                return r
        return None
    if type(a) is type(b) and not isinstance(a, torch.Tensor):
        return None if a == b else f"{path}: {a!r} vs {b!r}"
    return f"{path}: {type(a).__name__} vs {type(b).__name__}"


def summarize_result(torch, r):
    if isinstance(r, torch.Tensor):
        flat = r.flatten()
        head = flat[:4].tolist()
        total = flat.real.sum().item() if flat.numel() else 0.0
        return {"shape": list(r.shape), "head": head, "sum": total}
    if isinstance(r, list):
        return [summarize_result(torch, x) for x in r[:4]]
    if isinstance(r, dict):
        return {str(k): summarize_result(torch, v) for k, v in list(r.items())[:8]}
    return r


# --------------------------------------------------------------------------------------------
# synclint --fix
# --------------------------------------------------------------------------------------------

def run_synclint_fix(binary: str, d: RuleDoc, tmpdir: Path) -> dict:
    """Apply synclint's fixes to setup + example; return the fixed setup and snippet."""
    src = synclint_input(d)
    f = tmpdir / f"example_{d.code.lower()}.py"
    f.write_text(src, encoding="utf-8")
    cmd = [binary, "check", "--fix", "--unsafe-fixes", "--isolated", "--quiet", str(f)]
    out: dict = {"command": " ".join(cmd[:-1] + [f.name]), "error": None}
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=SYNCLINT_TIMEOUT_S,
                           cwd=tmpdir)
    except (OSError, subprocess.TimeoutExpired) as e:
        out["error"] = f"synclint did not run: {_err(e)}"
        return out
    out["exit_code"] = p.returncode
    out["output"] = (p.stdout + p.stderr)[-2000:]
    if p.returncode not in (0, 1):
        out["error"] = f"synclint exited {p.returncode}: {(p.stderr or p.stdout).strip()[:300]}"
        return out
    fixed = f.read_text(encoding="utf-8")
    out["fixed_file"] = fixed
    out["changed"] = fixed != src
    if MARKER in fixed:
        fsetup, _, fsnippet = fixed.partition(MARKER)
        out["setup_changed"] = fsetup.rstrip() != d.setup.rstrip()
        out["setup"], out["snippet"] = fsetup, fsnippet.lstrip("\n")
    elif fixed.startswith(d.setup):
        out["setup_changed"] = False
        out["setup"], out["snippet"] = d.setup, fixed[len(d.setup):]
    else:  # cannot split: time the whole file (setup included)
        out["setup_changed"] = True
        out["setup"], out["snippet"] = "", fixed
        out["note"] = "fixed file could not be split; timed as a whole (setup included)"
    return out


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------

def env_info(torch, rate: float, sleep_check_ms: float, synclint: str | None) -> dict:
    driver = None
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=30)
        if p.returncode == 0:
            driver = p.stdout.strip().splitlines()[0].strip()
    except (OSError, subprocess.TimeoutExpired, IndexError):
        pass
    sl_version = None
    if synclint:
        try:
            p = subprocess.run([synclint, "--version"], capture_output=True, text=True,
                               timeout=30)
            lines = (p.stdout or p.stderr).strip().splitlines()
            sl_version = lines[0].strip() if p.returncode == 0 and lines else None
        except (OSError, subprocess.TimeoutExpired):
            pass
    return {
        "device": torch.cuda.get_device_name(),
        "driver": driver,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "sleep_cycles_per_ms": round(rate, 1),
        "queued_ms_check": round(sleep_check_ms, 2),
        "synclint": sl_version,
    }


def _ms(m: dict | None) -> str:
    if m is None:
        return "n/a"
    if m.get("error"):
        return "error"
    return f"{m['blocked_ms']:.2f}"


def write_markdown(path: Path, env: dict, rows: list[dict], parse_errors: list[str],
                   only: set[str] | None):
    L = []
    L.append("# Rule docs verified on a GPU")
    L.append("")
    L.append("Generated by `python3 verify/verify_rules.py` (do not edit by hand). For every rule "
             "doc in `rules/` (but those marked `<!-- verify: no-gpu-claim -->`), the setup block runs, then the example, the rewrite (\"Use "
             "instead\") and, where the rule has a fix, the code `synclint check --fix "
             "--unsafe-fixes` makes of the example.")
    L.append("")
    L.append(f"- Device: {env['device']}")
    L.append(f"- Driver: {env['driver'] or 'unknown'}")
    L.append(f"- PyTorch: {env['torch']} (CUDA {env['cuda']}), Python {env['python']}")
    if env.get("synclint"):
        L.append(f"- synclint: {env['synclint']}")
    L.append(f"- Date: {env['date']}")
    if only:
        L.append(f"- Only these rules were run: {', '.join(sorted(only))}")
    L.append("")
    L.append("How to read it: *blocked ms* is how much longer the host spends inside the snippet "
             f"when {SLEEP_MS:.0f} ms of work is queued on the GPU (`torch.cuda._sleep`) than "
             f"when the GPU is idle, median of {RUNS} fresh runs. A snippet that synchronizes "
             f"waits for the queued work (about {SLEEP_MS:.0f} ms); one that does not returns at "
             f"once. Over {BLOCK_THRESHOLD_MS:.0f} ms counts as blocking. *same values* compares "
             "the `result` of the example with that of the rewrite (float64, "
             f"rtol {RTOL:g}, atol {ATOL:g}); n/a where one of them defines none. *debug-mode "
             "syncs* counts warnings under `torch.cuda.set_sync_debug_mode(\"warn\")` "
             "(example / rewrite / fixed; debug mode misses some real syncs such as "
             "`torch.cuda.synchronize()`, so the blocking time is the verdict).")
    L.append("")
    L.append("| rule | example blocked ms | rewrite blocked ms | same values | "
             "fixed code blocked ms | debug-mode syncs | verdict |")
    L.append("|---|---|---|---|---|---|---|")
    for r in rows:
        ex, rw, fx = r.get("example"), r.get("rewrite"), r.get("fixed")
        same = r.get("same_values", "n/a")
        if "doc did not parse" in r["failures"]:
            fixed_cell = "n/a"
        elif r.get("fix") == "none":
            fixed_cell = "n/a (no fix)"
        elif fx is None:
            fixed_cell = r.get("fixed_skipped", "not run")
        else:
            fixed_cell = _ms(fx)
            if fx.get("same_values") and fx["same_values"] not in ("yes", "n/a"):
                fixed_cell += " (values differ)"
        warn = " / ".join("-" if m is None or m.get("error") else
                          str(m.get("debug_mode_warnings", "?")) for m in (ex, rw, fx))
        notes = []
        if r.get("no_host_block"):
            notes.append("no-host-block¹")
        verdict = "ok" if not r["failures"] else "FAIL: " + "; ".join(r["failures"])
        if notes:
            verdict += " (" + ", ".join(notes) + ")"
        L.append(f"| {r['code']} | {_ms(ex)} | {_ms(rw)} | {same} | {fixed_cell} | {warn} | "
                 f"{verdict} |")
    if any(r.get("no_host_block") for r in rows):
        L.append("")
        L.append("¹ The doc marks its example `<!-- verify: no-host-block -->`: a throughput rule "
             "whose example is not expected to block the host, so only the rewrite (must not "
             "block) and the values are checked.")
    details = [r for r in rows if r["failures"] or r.get("details")]
    if details or parse_errors:
        L.append("")
        L.append("## Details")
        L.append("")
        for r in details:
            for line in r["failures_detail"] + r.get("details", []):
                L.append(f"- {r['code']}: {line}")
    L.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(L), encoding="utf-8")


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------

def verify_doc(torch, d: RuleDoc, rate: float, synclint: str | None, tmpdir: Path) -> dict:
    row: dict = {"code": d.code, "name": d.name, "fix": d.fix, "doc": d.path.name,
                 "no_host_block": d.no_host_block, "failures": [], "failures_detail": [],
                 "details": []}
    try:  # forget what an earlier doc compiled
        import torch._dynamo
        torch._dynamo.reset()
    except Exception:  # noqa: BLE001
        pass
    ex = measure(torch, d.setup, d.example, f"{d.code}:example", rate)
    rw = measure(torch, d.setup, d.rewrite, f"{d.code}:use-instead", rate)
    row["example"], row["rewrite"] = ex, rw

    def fail(short: str, detail: str):
        row["failures"].append(short)
        row["failures_detail"].append(detail)

    if ex["error"]:
        fail("example raised", f"example raised {ex['error']}")
    elif not d.no_host_block and not ex["blocks"]:
        fail("example did not block", f"example blocked only {ex['blocked_ms']} ms "
             f"(host ms idle GPU {ex['host_ms_idle_gpu']}, busy GPU {ex['host_ms_busy_gpu']})")
    if rw["error"]:
        fail("rewrite raised", f"rewrite raised {rw['error']}")
    elif rw["blocks"]:
        fail("rewrite blocked", f"rewrite blocked {rw['blocked_ms']} ms "
             f"(host ms idle GPU {rw['host_ms_idle_gpu']}, busy GPU {rw['host_ms_busy_gpu']})")
    if d.no_host_block and not ex["error"] and not rw["error"]:
        row["details"].append(
            "no-host-block: host + GPU time of one run (idle GPU, median): example "
            f"{statistics.median(ex['total_ms_idle_gpu']):.2f} ms, rewrite "
            f"{statistics.median(rw['total_ms_idle_gpu']):.2f} ms")
    if ex["has_result"] and rw["has_result"]:
        why = compare(torch, ex["result"], rw["result"])
        row["same_values"] = "yes" if why is None else "NO"
        if why:
            fail("values differ", f"example vs rewrite values differ: {why}")
    else:
        row["same_values"] = "n/a"
        for label, m in (("example", ex), ("rewrite", rw)):
            if m.get("result_error"):
                row["details"].append(f"{label} result not compared: {m['result_error']}")

    if d.fix in ("safe", "unsafe"):
        if not synclint:
            row["fixed_skipped"] = "not run (no --synclint)"
        else:
            fx_src = run_synclint_fix(synclint, d, tmpdir)
            row["synclint"] = {k: v for k, v in fx_src.items() if k not in ("setup", "snippet")}
            if fx_src["error"]:
                row["fixed"] = {"error": fx_src["error"]}
                fail("synclint failed", fx_src["error"])
            else:
                if fx_src.get("note"):
                    row["details"].append(fx_src["note"])
                if fx_src.get("setup_changed"):
                    row["details"].append("synclint --fix also changed the setup part")
                if not fx_src["changed"]:
                    row["details"].append("synclint --fix left the example unchanged")
                fx = measure(torch, fx_src["setup"], fx_src["snippet"], f"{d.code}:fixed", rate)
                row["fixed"] = fx
                if fx["error"]:
                    fail("fixed code raised", f"fixed code raised {fx['error']}")
                else:
                    if fx["blocks"]:
                        fail("fixed code blocks", f"fixed code blocked {fx['blocked_ms']} ms"
                             + ("" if fx_src["changed"] else " (--fix changed nothing)"))
                    if ex["has_result"] and fx["has_result"]:
                        why = compare(torch, ex["result"], fx["result"])
                        fx["same_values"] = "yes" if why is None else "NO"
                        if why:
                            fail("fixed values differ",
                                 f"example vs fixed code values differ: {why}")
                    else:
                        fx["same_values"] = "n/a"
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", type=Path, default=REPO / "rules", help="rule docs directory")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "verified-on-gpu.md",
                    help="Markdown report to write")
    ap.add_argument("--json", type=Path, default=None, help="also write raw numbers here")
    ap.add_argument("--synclint", default=None, help="synclint binary: also verify --fix output")
    ap.add_argument("--only", default=None, help="comma-separated codes, e.g. SYNC101,SYNC203")
    ap.add_argument("--dry-run", action="store_true",
                    help="no GPU: only parse the docs and compile their blocks")
    args = ap.parse_args(argv)
    only = {c.strip().upper() for c in args.only.split(",")} if args.only else None

    if args.dry_run:
        docs, errors, notes = check_docs(args.rules, only)
        for d in docs:
            print(f"{d.code:8} {d.name:34} fix={d.fix:7}"
                  f"{' no-host-block' if d.no_host_block else ''}"
                  f"{' no-gpu-claim' if d.no_gpu_claim else ''}")
        for n in notes:
            print(f"note: {n}")
        for e in errors:
            print(f"error: {e}", file=sys.stderr)
        print(f"{len(docs)} docs parsed, {len(errors)} errors")
        return 1 if errors else 0

    import torch
    if not torch.cuda.is_available():
        print("error: no CUDA device; use --dry-run to only check the docs", file=sys.stderr)
        return 2
    for name in ("cache_size_limit", "recompile_limit"):  # fresh namespaces recompile
        try:
            import torch._dynamo.config as dcfg
            if hasattr(dcfg, name):
                setattr(dcfg, name, max(getattr(dcfg, name), 64))
        except Exception:  # noqa: BLE001
            pass
    synclint = None
    if args.synclint:
        synclint = str(Path(args.synclint).resolve())
        if not os.access(synclint, os.X_OK):
            print(f"error: {args.synclint} is not an executable", file=sys.stderr)
            return 2

    docs, parse_errors = load_docs(args.rules, only)
    for e in parse_errors:
        print(f"error: {e}", file=sys.stderr)
    parsed = {d.path for d in docs}
    for d in docs:
        if d.no_gpu_claim:
            print(f"{d.code:8} not run: its doc makes no claim about the GPU", flush=True)
    docs = [d for d in docs if not d.no_gpu_claim]
    torch.cuda.init()
    rate, check_ms = calibrate_sleep(torch)
    env = env_info(torch, rate, check_ms, synclint)
    print(json.dumps(env), flush=True)

    rows = []
    with tempfile.TemporaryDirectory(prefix="synclint-verify-") as tmp:
        for d in docs:
            t0 = time.perf_counter()
            try:
                row = verify_doc(torch, d, rate, synclint, Path(tmp))
            except Exception as e:  # noqa: BLE001  (never lose the whole report)
                row = {"code": d.code, "name": d.name, "fix": d.fix, "doc": d.path.name,
                       "no_host_block": d.no_host_block, "failures": ["harness error"],
                       "failures_detail": [f"harness error: {_err(e)}"], "details": []}
            rows.append(row)
            ex, rw, fx = row.get("example"), row.get("rewrite"), row.get("fixed")
            print(f"{d.code:8} example {_ms(ex):>7}  rewrite {_ms(rw):>7}  "
                  f"same {row.get('same_values', 'n/a'):3}  fixed {_ms(fx):>7}  "
                  f"{'ok' if not row['failures'] else 'FAIL: ' + '; '.join(row['failures'])}"
                  f"  ({time.perf_counter() - t0:.1f} s)", flush=True)
            for line in row["failures_detail"] + row["details"]:
                print(f"         {line}", flush=True)
    for p in sorted(args.rules.glob("SYNC*.md")):  # a doc that did not parse still gets a row
        m = re.match(r"SYNC\d+", p.name)
        if p in parsed or not m or (only and m.group(0) not in only):
            continue
        rows.append({"code": m.group(0), "name": "", "fix": "", "doc": p.name,
                     "no_host_block": False, "failures": ["doc did not parse"],
                     "failures_detail": [e for e in parse_errors if str(p) in e], "details": []})
    rows.sort(key=lambda r: r["code"])
    write_markdown(args.out, env, rows, parse_errors, only)
    print(f"wrote {args.out}")
    if args.json:
        def clean(m):
            if not isinstance(m, dict):
                return m
            m = dict(m)
            if "result" in m:
                try:
                    m["result"] = summarize_result(torch, m["result"]) if m["has_result"] else None
                except Exception as e:  # noqa: BLE001
                    m["result"] = f"<{_err(e)}>"
            return m
        data = {"env": env, "parse_errors": parse_errors,
                "settings": {"sleep_ms": SLEEP_MS, "threshold_ms": BLOCK_THRESHOLD_MS,
                             "runs": RUNS, "rtol": RTOL, "atol": ATOL},
                "rules": [{k: clean(v) for k, v in r.items()} for r in rows]}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
        print(f"wrote {args.json}")
    failed = [r["code"] for r in rows if r["failures"]]
    print(f"{len(rows)} rules, {len(failed)} failed{': ' + ', '.join(failed) if failed else ''}"
          f"{f', {len(parse_errors)} docs did not parse' if parse_errors else ''}")
    return 1 if failed or parse_errors else 0


if __name__ == "__main__":
    sys.exit(main())
