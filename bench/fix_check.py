"""`--fix` keeps its guarantees on the benchmark corpus.

Copies bench/corpus, runs `synclint check --isolated --fix --unsafe-fixes` on the copy, then
checks every file it changed: it still parses (Python's own parser), it keeps its byte-order
mark and its line endings (no LF line added to a CRLF file or the reverse), and a second `--fix`
changes nothing. Prints the counts; exits 1 on any failure.

Usage: python3 bench/fix_check.py [--synclint target/release/synclint] [--corpus bench/corpus]
"""
import argparse
import ast
import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def changed_files(before: Path, after: Path):
    for path in sorted(after.rglob("*.py")):
        original = before / path.relative_to(after)
        if not filecmp.cmp(original, path, shallow=False):
            yield original, path


def line_endings(data: bytes):
    crlf = data.count(b"\r\n")
    return crlf, data.count(b"\n") - crlf


def fix(synclint: str, folder: Path) -> str:
    run = subprocess.run(
        [synclint, "check", "--isolated", "--fix", "--unsafe-fixes", "--output-format", "concise", str(folder)],
        capture_output=True,
        text=True,
    )
    if run.returncode == 2:
        sys.exit(f"synclint failed:\n{run.stderr}")
    return run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--synclint", default=str(REPO / "target/release/synclint"))
    parser.add_argument("--corpus", type=Path, default=REPO / "bench/corpus")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fix_check_"))
    try:
        once, twice = work / "once", work / "twice"
        shutil.copytree(args.corpus, once)
        print("first --fix:", fix(args.synclint, once))
        failures = []
        changed = list(changed_files(args.corpus, once))
        for original, fixed in changed:
            before, after = original.read_bytes(), fixed.read_bytes()
            name = fixed.relative_to(once)
            try:
                ast.parse(after.decode("utf-8"))
            except (SyntaxError, UnicodeDecodeError) as error:
                failures.append(f"{name}: does not parse: {error}")
            if before.startswith(b"\xef\xbb\xbf") != after.startswith(b"\xef\xbb\xbf"):
                failures.append(f"{name}: byte-order mark changed")
            (crlf_before, lf_before), (crlf_after, lf_after) = line_endings(before), line_endings(after)
            if (crlf_before == 0 and crlf_after > 0) or (lf_before == 0 and crlf_before > 0 and lf_after > 0):
                failures.append(f"{name}: line endings mixed")
        shutil.copytree(once, twice)
        print("second --fix:", fix(args.synclint, twice))
        again = [str(path.relative_to(twice)) for _, path in changed_files(once, twice)]
        failures.extend(f"{name}: a second --fix changed it" for name in again)
        print(f"files changed: {len(changed)}; failures: {len(failures)}")
        for failure in failures:
            print("  " + failure)
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
