"""`--fix` keeps its guarantees on the benchmark corpus, or on the repository's own fixtures.

Copies the folders, runs `synclint check --isolated --fix --unsafe-fixes` on the copy, then
checks every file it changed: a changed Python file still parses (Python's own parser), keeps
its byte-order mark and its line endings (no LF line added to a CRLF file or the reverse), no
temporary file or journal of the write is left beside any file, and a second `--fix` changes
nothing. Prints the counts; exits 1 on any failure.

Usage: python3 bench/fix_check.py [--synclint PATH] [--corpus bench/corpus]
       python3 bench/fix_check.py --in-repo

`--in-repo` checks fixtures/ and examples/ (about 120 files, seconds) with the debug build
`cargo test` leaves, in place of the corpus (7,380 files) with the release build: for CI.
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
IN_REPO = [REPO / "fixtures", REPO / "examples"]


def changed_files(before: Path, after: Path):
    for path in sorted(p for p in after.rglob("*") if p.is_file()):
        original = before / path.relative_to(after)
        if not original.is_file() or not filecmp.cmp(original, path, shallow=False):
            yield original, path


def line_endings(data: bytes):
    crlf = data.count(b"\r\n")
    return crlf, data.count(b"\n") - crlf


def fix(synclint: str, folders) -> str:
    run = subprocess.run(
        [synclint, "check", "--isolated", "--fix", "--unsafe-fixes", "--output-format", "concise", *map(str, folders)],
        capture_output=True,
        text=True,
    )
    if run.returncode == 2:
        sys.exit(f"synclint failed:\n{run.stderr}")
    return run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""


def changed_in(folders, copies):
    """The files of `copies` (of `folders`, one for one) that differ from their original."""
    return [pair for folder, copied in zip(folders, copies) for pair in changed_files(folder, copied)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--synclint", help="the binary (default: target/release/synclint, target/debug with --in-repo)")
    parser.add_argument("--corpus", type=Path, default=REPO / "bench/corpus")
    parser.add_argument("--in-repo", action="store_true", help="check fixtures/ and examples/ instead of the corpus")
    args = parser.parse_args()
    folders = IN_REPO if args.in_repo else [args.corpus]
    synclint = args.synclint or str(REPO / "target" / ("debug" if args.in_repo else "release") / "synclint")
    for folder in folders:
        if not folder.is_dir():
            sys.exit(f"no folder {folder} (bench/run.sh makes bench/corpus)")
    work = Path(tempfile.mkdtemp(prefix="fix_check_"))
    try:
        once, twice = work / "once", work / "twice"
        fixed = [once / folder.name for folder in folders]
        for folder, copied in zip(folders, fixed):
            shutil.copytree(folder, copied)
        print("first --fix:", fix(synclint, fixed))
        failures = []
        changed = changed_in(folders, fixed)
        for original, fixed_path in changed:
            before, after = original.read_bytes(), fixed_path.read_bytes()
            name = fixed_path.relative_to(once)
            if fixed_path.suffix == ".py":
                try:
                    ast.parse(after.decode("utf-8"))
                except (SyntaxError, UnicodeDecodeError) as error:
                    failures.append(f"{name}: does not parse: {error}")
            if before.startswith(b"\xef\xbb\xbf") != after.startswith(b"\xef\xbb\xbf"):
                failures.append(f"{name}: byte-order mark changed")
            (crlf_before, lf_before), (crlf_after, lf_after) = line_endings(before), line_endings(after)
            if (crlf_before == 0 and crlf_after > 0) or (lf_before == 0 and crlf_before > 0 and lf_after > 0):
                failures.append(f"{name}: line endings mixed")
        failures.extend(f"{path.relative_to(once)}: left beside the files written" for path in once.rglob("*synclint*"))
        shutil.copytree(once, twice)
        again_folders = [twice / folder.name for folder in folders]
        print("second --fix:", fix(synclint, again_folders))
        again = [str(path.relative_to(twice)) for _, path in changed_in(fixed, again_folders)]
        failures.extend(f"{name}: a second --fix changed it" for name in again)
        print(f"files changed: {len(changed)}; failures: {len(failures)}")
        for failure in failures:
            print("  " + failure)
        return 1 if failures else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
