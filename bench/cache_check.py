"""The cache never changes a result, on the benchmark corpus or on any folders given.

Runs `synclint check --output-format full` on the folders without a cache, then with an empty
cache (cold), again (warm), after adding a small package (a helper whose `.item()` is cold: its
caller does not loop), and after editing only the caller so that a loop makes the unchanged,
cached helper hot; each time stdout, stderr and exit code must be byte for byte those of an
uncached run. Then the helper and the file with the most findings, each named alone (pre-commit's
way), must get the findings the whole run gives them. The package is removed at the end. Exits 1
on any difference.

Usage: python3 bench/cache_check.py [--synclint target/release/synclint] [--corpus PATH ...]
On the repository's own Python (no corpus needed, a debug build):
    python3 bench/cache_check.py --synclint target/debug/synclint --corpus fixtures examples
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The package the check adds inside the first folder, and what its files say.
PROBE = "_synclint_cache_check"
HELPER = "def _synclint_cache_check(x):\n    return x.item()\n"
COLD_CALLER = (
    "from .helper import _synclint_cache_check\n\n\n"
    "def run(x):\n    return _synclint_cache_check(x.cuda())\n"
)
HOT_CALLER = (
    "from .helper import _synclint_cache_check\n\n\n"
    "def run(loader):\n    for x in loader:\n        _synclint_cache_check(x.cuda())\n"
)
Result = tuple[int, str, str]


def run(synclint: str, args: list[str], cache: Path | None) -> Result:
    flags = ["--cache-dir", str(cache)] if cache else ["--no-cache"]
    done = subprocess.run([synclint, "check", *flags, *args], capture_output=True, text=True, cwd=REPO)
    return done.returncode, done.stdout, done.stderr


def same(what: str, got: Result, expected: Result) -> bool:
    if got == expected:
        print(f"ok    {what}: {expected[1].count(chr(10)):,} lines, exit {expected[0]}")
        return True
    print(f"FAIL  {what}: output differs from the uncached run", file=sys.stderr)
    return False


def write_old(path: Path, text: str) -> None:
    """Writes a file an hour old: old enough for the cache to trust its size and time."""
    path.write_text(text)
    an_hour_ago = time.time() - 3600
    os.utime(path, (an_hour_ago, an_hour_ago))


def findings_of(output: Result, path: str) -> list[str]:
    """The concise output's lines about one file, sorted."""
    return sorted(line for line in output[1].splitlines() if line.startswith(f"{path}:"))


def shown(path: Path) -> str:
    """The path as synclint shows it from the repository: relative below it, else absolute."""
    path = path.resolve()
    return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)


def alone_as_in_whole(synclint: str, folders: list[str], path: Path, cache: Path) -> bool:
    """Whether `path`, named alone, gets the findings the whole run gives it."""
    name = shown(path)
    alone = run(synclint, ["--output-format", "concise", str(path)], cache)
    whole = run(synclint, ["--output-format", "concise", *folders], cache)
    if findings_of(alone, name) == findings_of(whole, name) and findings_of(alone, name):
        print(f"ok    {name} alone: its {len(findings_of(alone, name))} findings of the whole run")
        return True
    print(f"FAIL  {name} alone: findings differ from the whole run", file=sys.stderr)
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--synclint", default=str(REPO / "target" / "release" / "synclint"))
    ap.add_argument("--corpus", type=Path, nargs="+", default=[REPO / "bench" / "corpus"],
                    help="the folders to check (default: bench/corpus)")
    args = ap.parse_args()
    roots = [path.resolve() for path in args.corpus]
    missing = [str(path) for path in roots if not path.is_dir()]
    if missing:
        print(f"error: not a folder: {', '.join(missing)}", file=sys.stderr)
        return 1
    folders = [str(path) for path in roots]
    whole = ["--output-format", "full", *folders]
    probe = roots[0] / PROBE
    if probe.exists():
        print(f"error: {probe} exists (left by a killed run?): remove it first", file=sys.stderr)
        return 1
    ok = True
    with tempfile.TemporaryDirectory() as cache:
        cache = Path(cache)
        expected = run(args.synclint, whole, None)
        ok &= same("cold cache", run(args.synclint, whole, cache), expected)
        ok &= same("warm cache", run(args.synclint, whole, cache), expected)
        try:
            probe.mkdir()
            write_old(probe / "__init__.py", "")
            write_old(probe / "helper.py", HELPER)
            write_old(probe / "caller.py", COLD_CALLER)
            cold = run(args.synclint, whole, None)
            ok &= same("a new package", run(args.synclint, whole, cache), cold)
            write_old(probe / "caller.py", HOT_CALLER)
            hot = run(args.synclint, whole, None)
            ok &= same("after an edit of its caller", run(args.synclint, whole, cache), hot)
            helper = shown(probe / "helper.py")
            if hot[1].count(f"{helper}:") <= cold[1].count(f"{helper}:"):
                print("FAIL  the edit made no finding in the helper", file=sys.stderr)
                ok = False
            ok &= alone_as_in_whole(args.synclint, folders, probe / "helper.py", cache)
        finally:
            shutil.rmtree(probe, ignore_errors=True)
        # The file the whole run reports most, named alone: its findings come through the
        # project as in the whole run.
        concise = run(args.synclint, ["--output-format", "concise", *folders], cache)
        counts = Counter(line.split(":", 1)[0] for line in concise[1].splitlines() if ": SYNC" in line)
        if counts:
            most = max(sorted(counts), key=counts.__getitem__)
            ok &= alone_as_in_whole(args.synclint, folders, REPO / most, cache)
        else:
            print("FAIL  the whole run reported no findings", file=sys.stderr)
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
