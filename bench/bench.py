#!/usr/bin/env python3
"""Benchmark synclint against Ruff on a corpus of PyTorch-ecosystem sources.

Standard library only (Python 3.11+). Two subcommands:

  bench.py corpus   extract the .py files of the wheels in bench/downloads into
                    bench/corpus/<package>/ and print the corpus size
  bench.py time     time the linters over the corpus and print a Markdown table

`bench/run.sh` downloads the wheels, installs Ruff, builds synclint and runs both.

Timing: every tool runs once per round, rounds alternate the tools (the starting
tool rotates each round so none always runs first), one warm-up round is
discarded, and the medians of `--runs` rounds are reported. Wall time is
measured around fork/exec/wait; user time, system time and peak RSS come from
os.wait4(), i.e. the rusage of that one child process.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DOWNLOADS = BENCH / "downloads"
CORPUS = BENCH / "corpus"
STAMP = ".wheel"  # bench/corpus/<pkg>/.wheel holds the name of the wheel it came from

MIB = 1 << 20


# --------------------------------------------------------------------------- corpus


def wheel_dist(path: Path) -> tuple[str, str]:
    """('torch', '2.11.0') from 'torch-2.11.0-cp311-cp311-macosx_11_0_arm64.whl'."""
    name, version = path.name.split("-")[:2]
    return name.lower().replace("_", "-"), version


def extract(wheel: Path, dest: Path) -> bool:
    """Extract the .py members of `wheel` into `dest`. False if already done."""
    stamp = dest / STAMP
    if stamp.is_file() and stamp.read_text().strip() == wheel.name:
        return False
    if dest.exists():
        shutil.rmtree(dest)
    tmp = dest.with_name(dest.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if not info.is_dir() and info.filename.endswith(".py"):
                zf.extract(info, tmp)  # zipfile sanitizes absolute and '..' paths
    (tmp / STAMP).write_text(wheel.name + "\n")
    tmp.rename(dest)
    return True


@dataclass
class Size:
    files: int = 0
    lines: int = 0
    bytes: int = 0

    def add(self, other: Size) -> None:
        self.files += other.files
        self.lines += other.lines
        self.bytes += other.bytes


def measure_tree(root: Path) -> Size:
    size = Size()
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            if not f.endswith(".py"):
                continue
            data = Path(dirpath, f).read_bytes()
            size.files += 1
            size.bytes += len(data)
            size.lines += data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    return size


def corpus_packages(corpus: Path) -> dict[str, str]:
    """{package dir: wheel file name} for the extracted packages."""
    out = {}
    if corpus.is_dir():
        for d in sorted(corpus.iterdir()):
            stamp = d / STAMP
            if d.is_dir() and stamp.is_file():
                out[d.name] = stamp.read_text().strip()
    return out


def corpus_size(corpus: Path) -> tuple[Size, dict[str, Size]]:
    per_pkg = {pkg: measure_tree(corpus / pkg) for pkg in corpus_packages(corpus)}
    total = Size()
    for s in per_pkg.values():
        total.add(s)
    return total, per_pkg


def fmt_int(n: int) -> str:
    return f"{n:,}"


def describe_corpus(corpus: Path, total: Size) -> str:
    pkgs = corpus_packages(corpus)
    versions = ", ".join(f"{p} {wheel_dist(Path(w))[1]}" for p, w in pkgs.items())
    return (
        f"{fmt_int(total.files)} files, {fmt_int(total.lines)} lines, "
        f"{total.bytes / MIB:.1f} MiB of Python ({versions})"
    )


def mark_project(corpus: Path) -> None:
    """Makes the corpus one project: a file of it named alone is checked with the rest of it
    (otherwise the repository, which git-ignores the corpus, would be its project)."""
    marker = corpus / "pyproject.toml"
    if not marker.exists():
        marker.write_text('# The benchmark corpus is one project.\n[project]\nname = "synclint-bench-corpus"\n'
                          'version = "0"\n')


def cmd_corpus(args: argparse.Namespace) -> int:
    wheels = sorted(args.downloads.glob("*.whl"))
    if not wheels:
        print(f"error: no wheels in {args.downloads}; run bench/run.sh", file=sys.stderr)
        return 1
    args.corpus.mkdir(parents=True, exist_ok=True)
    for wheel in wheels:
        name, _ = wheel_dist(wheel)
        if extract(wheel, args.corpus / name):
            print(f"extracted {wheel.name}", file=sys.stderr)
    mark_project(args.corpus)
    total, per_pkg = corpus_size(args.corpus)
    print(f"{'package':<14} {'files':>7} {'lines':>11} {'MiB':>8}")
    for pkg, s in per_pkg.items():
        print(f"{pkg:<14} {s.files:>7,} {s.lines:>11,} {s.bytes / MIB:>8.1f}")
    print(f"{'total':<14} {total.files:>7,} {total.lines:>11,} {total.bytes / MIB:>8.1f}")
    return 0


# --------------------------------------------------------------------------- timing


@dataclass
class Tool:
    key: str
    label: str
    argv: list[str]
    env: dict[str, str | None] = field(default_factory=dict)  # None: unset
    runs: list[dict[str, float]] = field(default_factory=list)
    # Run before each timed run (not timed), e.g. to empty a cache.
    prepare: Callable[[], None] | None = None


# A file of the corpus linted alone (pre-commit's way): its project is the whole corpus.
ONE_FILE = "transformers/transformers/trainer.py"


def make_tools(args: argparse.Namespace) -> list[Tool]:
    s, r, corpus = args.synclint, args.ruff, str(args.corpus_arg)
    base = [s, "check", "--isolated", "--exit-zero", "--quiet"]
    cold_cache, warm_cache = args.cache_root / "cold", args.cache_root / "warm"
    ruff = [r, "check", "--isolated", "--no-cache", "--exit-zero", "--quiet"]
    n = str(len(os.sched_getaffinity(0))) if hasattr(os, "sched_getaffinity") else "all"
    all_tools = {
        "synclint": Tool("synclint", f"synclint, all rules, no cache ({n} threads)",
                         base + ["--no-cache", corpus], {"SYNCLINT_THREADS": None}),
        "synclint-1t": Tool("synclint-1t", "synclint, all rules, no cache, 1 thread",
                            base + ["--no-cache", corpus], {"SYNCLINT_THREADS": "1"}),
        "synclint-cold": Tool("synclint-cold", f"synclint, empty cache, writing it ({n} threads)",
                              base + ["--cache-dir", str(cold_cache), corpus], {"SYNCLINT_THREADS": None},
                              prepare=lambda: shutil.rmtree(cold_cache, ignore_errors=True)),
        "synclint-warm": Tool("synclint-warm", f"synclint, warm cache ({n} threads)",
                              base + ["--cache-dir", str(warm_cache), corpus], {"SYNCLINT_THREADS": None}),
        "synclint-file": Tool("synclint-file", f"synclint, one file in the corpus project, warm cache ({n} threads)",
                              [s, "check", "--exit-zero", "--quiet", "--cache-dir", str(warm_cache),
                               f"{corpus}/{ONE_FILE}"], {"SYNCLINT_THREADS": None}),
        "parse-only": Tool("parse-only", f"synclint --parse-only (read + parse floor, {n} threads)",
                           base + ["--no-cache", "--parse-only", corpus], {"SYNCLINT_THREADS": None}),
        "ruff": Tool("ruff", f"ruff, default rules ({n} threads)", ruff + [corpus],
                     {"RAYON_NUM_THREADS": None}),
        "ruff-1t": Tool("ruff-1t", "ruff, default rules, 1 thread", ruff + [corpus],
                        {"RAYON_NUM_THREADS": "1"}),
    }
    tools = []
    for key in args.tools.split(","):
        key = key.strip()
        if key not in all_tools:
            raise SystemExit(f"error: unknown tool {key!r}; choose from {', '.join(all_tools)}")
        tools.append(all_tools[key])
    for t in tools:
        exe = t.argv[0]
        if shutil.which(exe) is None:
            raise SystemExit(f"error: {t.key}: {exe} not found or not executable")
    return tools


def run_once(tool: Tool) -> dict[str, float]:
    if tool.prepare:
        tool.prepare()
    env = dict(os.environ)
    for k, v in tool.env.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(tool.argv, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=ROOT)
        _, status, ru = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            msg = err.read().decode(errors="replace")[-4000:]
            raise SystemExit(f"error: {tool.key} exited with {proc.returncode}:\n"
                             f"  {' '.join(tool.argv)}\n{msg}")
    # ru_maxrss is KiB on Linux, bytes on macOS.
    rss = ru.ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    return {"wall": wall, "user": ru.ru_utime, "sys": ru.ru_stime, "rss": rss}


def tool_version(exe: str) -> str:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.strip() or out.stderr.strip()
    except OSError as e:
        return f"? ({e})"


def machine() -> dict[str, str]:
    info = {"nproc": str(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                         else os.cpu_count())}
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info["cpu"] = cpu
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / (1 << 20):.1f} GiB"
                break
    except OSError:
        pass
    info["memory"] = mem
    info["os"] = f"{platform.system()} {platform.release()}"
    return info


def ruff_file_count(ruff: str, corpus: str) -> int | None:
    """How many files Ruff would check (guards against it skipping the corpus)."""
    try:
        out = subprocess.run([ruff, "check", "--isolated", "--show-files", corpus],
                             capture_output=True, text=True, cwd=ROOT, timeout=300)
    except OSError:
        return None
    return sum(1 for line in out.stdout.splitlines() if line.strip().endswith(".py"))


def render(tools: list[Tool], args: argparse.Namespace, total: Size, info: dict[str, str],
           versions: dict[str, str], notes: list[str]) -> str:
    med = lambda t, k: statistics.median(r[k] for r in t.runs)  # noqa: E731
    lines = [
        f"Machine: {info['nproc']} CPUs (nproc), {info['cpu']}, {info['memory']} RAM, "
        f"{info['os']}.  ",
        f"Corpus: {describe_corpus(args.corpus, total)}.  ",
        f"Versions: {'; '.join(versions.values())}.  ",
        f"Method: {args.runs} runs per tool, alternating, after {args.warmup} discarded "
        f"warm-up round(s); medians (wall range in brackets). MiB/s counts source bytes. "
        f"Measured {datetime.date.today().isoformat()}.",
        "",
        "| Tool | Wall (s) | User (s) | Sys (s) | CPU | Max RSS (MiB) | Files/s | MiB/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for t in tools:
        wall, user, sys_ = med(t, "wall"), med(t, "user"), med(t, "sys")
        walls = [r["wall"] for r in t.runs]
        lines.append(
            f"| {t.label} | {wall:.3f} [{min(walls):.3f}–{max(walls):.3f}] | {user:.2f} | "
            f"{sys_:.2f} | {(user + sys_) / wall * 100:.0f}% | {med(t, 'rss') / MIB:.0f} | "
            f"{total.files / wall:,.0f} | {total.bytes / MIB / wall:.1f} |"
        )
    lines += ["", "Commands (run from the repository root):", ""]
    for t in tools:
        env = " ".join(f"{k}={v}" for k, v in t.env.items() if v is not None)
        argv = [Path(t.argv[0]).name] + t.argv[1:]
        lines.append(f"- {t.label}: `{(env + ' ') if env else ''}{' '.join(argv)}`")
    if notes:
        lines += [""] + [f"Note: {n}" for n in notes]
    return "\n".join(lines) + "\n"


def cmd_time(args: argparse.Namespace) -> int:
    # Paths with a slash are relative to where we were started; make them absolute.
    for attr in ("synclint", "ruff"):
        exe = getattr(args, attr)
        if "/" in exe:
            setattr(args, attr, str(Path(exe).resolve()))
    corpus = args.corpus.resolve()
    try:
        args.corpus_arg = corpus.relative_to(ROOT)
    except ValueError:
        args.corpus_arg = corpus
    total, _ = corpus_size(corpus)
    if total.files == 0:
        print(f"error: empty corpus {corpus}; run bench/run.sh (or bench.py corpus)",
              file=sys.stderr)
        return 1
    os.chdir(ROOT)
    mark_project(corpus)
    args.cache_root = Path(tempfile.mkdtemp(prefix="synclint-bench-cache-"))
    tools = make_tools(args)
    # The warm cache is filled before any timed run.
    if any(t.key in ("synclint-warm", "synclint-file") for t in tools):
        subprocess.run([args.synclint, "check", "--isolated", "--exit-zero", "--quiet", "--cache-dir",
                        str(args.cache_root / "warm"), str(args.corpus_arg)], cwd=ROOT,
                       stdout=subprocess.DEVNULL, check=True)
    versions = {t.argv[0]: tool_version(t.argv[0]) for t in tools}
    notes = []
    if any(t.key.startswith("ruff") for t in tools):
        n = ruff_file_count(args.ruff, str(args.corpus_arg))
        if n is not None:
            notes.append(f"Ruff checks {n:,} of the {total.files:,} corpus files.")
    info = machine()
    print(f"corpus: {describe_corpus(corpus, total)}", file=sys.stderr)
    rounds = args.warmup + args.runs
    for i in range(rounds):
        k = i % len(tools)
        order = tools[k:] + tools[:k]
        for t in order:
            r = run_once(t)
            if i >= args.warmup:
                t.runs.append(r)
            tag = "warm-up" if i < args.warmup else f"run {i - args.warmup + 1}/{args.runs}"
            print(f"  {tag:>9} {t.key:<12} wall {r['wall']:7.3f}s user {r['user']:7.2f}s "
                  f"rss {r['rss'] / MIB:6.0f} MiB", file=sys.stderr)
    shutil.rmtree(args.cache_root, ignore_errors=True)
    table = render(tools, args, total, info, versions, notes)
    print(table)
    if args.write:
        out = Path(args.write)
        out.write_text("# Benchmark results\n\n" + table)
        print(f"wrote {out}", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"machine": info, "versions": versions, "corpus": total.__dict__,
             "runs": {t.key: t.runs for t in tools},
             "commands": {t.key: t.argv for t in tools}}, indent=2) + "\n")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)

    c = sub.add_parser("corpus", help="extract .py files from bench/downloads/*.whl")
    c.add_argument("--downloads", type=Path, default=DOWNLOADS)
    c.add_argument("--corpus", type=Path, default=CORPUS)
    c.set_defaults(func=cmd_corpus)

    t = sub.add_parser("time", help="time the linters over the corpus")
    t.add_argument("--runs", type=int, default=5, help="timed runs per tool (default 5)")
    t.add_argument("--warmup", type=int, default=1, help="discarded warm-up rounds (default 1)")
    t.add_argument("--tools", default="synclint,synclint-1t,synclint-cold,synclint-warm,synclint-file,parse-only,ruff",
                   help="comma-separated: synclint, synclint-1t, synclint-cold, synclint-warm, "
                        "synclint-file, parse-only, ruff, ruff-1t (default: all but ruff-1t)")
    t.add_argument("--synclint", default=str(ROOT / "target" / "release" / "synclint"))
    t.add_argument("--ruff", default=str(BENCH / ".venv" / "bin" / "ruff"))
    t.add_argument("--corpus", type=Path, default=CORPUS)
    t.add_argument("--write", nargs="?", const=str(BENCH / "results.md"), default=None,
                   metavar="PATH", help="also write the table to PATH (default bench/results.md)")
    t.add_argument("--json", metavar="PATH", help="also write every run as JSON")
    t.set_defaults(func=cmd_time)

    args = ap.parse_args()
    if getattr(args, "runs", 1) < 1:
        ap.error("--runs must be at least 1")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
