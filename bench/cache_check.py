"""The cache never changes a result, on the benchmark corpus.

Runs `synclint check --output-format full` on bench/corpus without a cache, then with an empty
cache (cold), again (warm), and after editing one file (a helper that a new loop elsewhere
calls), comparing stdout, stderr and exit code byte for byte with an uncached run each time. Then
one file named alone inside the corpus (pre-commit's way) must get the findings the whole run
gives it. The edited files are restored. Exits 1 on any difference.

Usage: python3 bench/cache_check.py [--synclint target/release/synclint] [--corpus bench/corpus]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The file the edit adds a hazard to, and the new file that makes it hot.
HELPER = "torchvision/torchvision/ops/_utils.py"
CALLER = "torchvision/torchvision/ops/_synclint_cache_check.py"


def run(synclint: str, args: list[str], cache: Path | None) -> tuple[int, str, str]:
    flags = ["--cache-dir", str(cache)] if cache else ["--no-cache"]
    done = subprocess.run([synclint, "check", *flags, *args], capture_output=True, text=True, cwd=REPO)
    return done.returncode, done.stdout, done.stderr


def same(what: str, got: tuple[int, str, str], expected: tuple[int, str, str]) -> bool:
    if got == expected:
        print(f"ok    {what}: {expected[1].count(chr(10)):,} lines, exit {expected[0]}")
        return True
    print(f"FAIL  {what}: output differs from the uncached run", file=sys.stderr)
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--synclint", default=str(REPO / "target" / "release" / "synclint"))
    ap.add_argument("--corpus", type=Path, default=REPO / "bench" / "corpus")
    args = ap.parse_args()
    corpus = args.corpus.resolve()
    whole = ["--output-format", "full", str(corpus)]
    ok = True
    helper, caller = corpus / HELPER, corpus / CALLER
    original = helper.read_bytes()
    stat = helper.stat()
    with tempfile.TemporaryDirectory() as cache:
        cache = Path(cache)
        expected = run(args.synclint, whole, None)
        ok &= same("cold cache", run(args.synclint, whole, cache), expected)
        ok &= same("warm cache", run(args.synclint, whole, cache), expected)
        try:
            helper.write_bytes(original + b"\n\ndef _synclint_cache_check(x):\n    return x.item()\n")
            caller.write_text(
                "from ._utils import _synclint_cache_check\n\n\n"
                "def run(loader):\n    for x in loader:\n        _synclint_cache_check(x.cuda())\n"
            )
            expected_edit = run(args.synclint, whole, None)
            ok &= same("after an edit", run(args.synclint, whole, cache), expected_edit)
            if expected_edit[1].count(f"{HELPER}:") <= expected[1].count(f"{HELPER}:"):
                print("FAIL  the edit made no finding in the helper", file=sys.stderr)
                ok = False
        finally:
            helper.write_bytes(original)
            os.utime(helper, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            caller.unlink(missing_ok=True)
        # One file named alone: the findings the whole run gives it, through the project.
        one = "transformers/transformers/trainer.py"
        alone = run(args.synclint, ["--output-format", "concise", str(corpus / one)], cache)
        in_whole = run(args.synclint, ["--output-format", "concise", str(corpus)], cache)
        lines = lambda out: sorted(l for l in out[1].splitlines() if one in l)  # noqa: E731
        if lines(alone) == lines(in_whole) and lines(alone):
            print(f"ok    {one} alone: its {len(lines(alone))} findings of the whole run")
        else:
            print(f"FAIL  {one} alone: findings differ from the whole run", file=sys.stderr)
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
