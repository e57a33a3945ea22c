"""Notebooks: speed beside Python files, and `--fix` keeping every byte outside the source it fixes.

Downloads the source distributions of two pinned PyPI packages that ship PyTorch training
notebooks (BoTorch's and GPyTorch's tutorials), extracts their `.ipynb` files into
bench/notebooks/ (git-ignored) with fixtures/notebooks beside them, then:

1. times `synclint check --isolated --no-cache` on them (and Ruff, where bench/run.sh installed
   it), and prints files per second beside the same measure on bench/corpus;
2. copies them, runs `--fix --unsafe-fixes` on the copy, and checks every notebook it changed:
   nbformat validates it (where nbformat is installed), its JSON equals the original's apart from
   the `source` of code cells, every line of the file that changed is a line of a cell's source,
   and a second `--fix` changes nothing.

Usage: python3 bench/notebooks.py [--synclint target/release/synclint] [--runs 5]
Exits 1 on any failed check.
"""
import argparse
import difflib
import json
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOWNLOADS = REPO / "bench" / "downloads"
NOTEBOOKS = REPO / "bench" / "notebooks"
PACKAGES = [("botorch", "0.18.1"), ("gpytorch", "1.15.2")]
# A line of a source list in the file: one JSON string, perhaps followed by a comma.
SOURCE_LINE = re.compile(r'^\s*"(?:[^"\\]|\\.)*",?\s*$')


def fetch() -> None:
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    for name, version in PACKAGES:
        archive = DOWNLOADS / f"{name}-{version}.tar.gz"
        if not archive.exists():
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                 "-d", str(DOWNLOADS), f"{name}=={version}"],
                check=True,
            )
        target = NOTEBOOKS / name
        if target.exists():
            continue
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                if member.isfile() and member.name.endswith(".ipynb"):
                    member.name = str(Path(*Path(member.name).parts[1:]))
                    tar.extract(member, target, filter="data")
    own = NOTEBOOKS / "fixtures"
    own.mkdir(exist_ok=True)
    for notebook in (REPO / "fixtures" / "notebooks").glob("*.ipynb"):
        shutil.copy(notebook, own / notebook.name)


def timed(command: list, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def speed(synclint: str, runs: int) -> None:
    notebooks = sorted(NOTEBOOKS.rglob("*.ipynb"))
    size = sum(path.stat().st_size for path in notebooks) / 2**20
    print(f"notebooks: {len(notebooks)} files, {size:.1f} MiB")
    check = [synclint, "check", "--isolated", "--no-cache", "--exit-zero", "--output-format", "concise"]
    seconds = timed(check + [str(NOTEBOOKS)], runs)
    print(f"synclint on notebooks: {seconds:.3f} s, {len(notebooks) / seconds:,.0f} files/s")
    ruff = REPO / "bench" / ".venv" / "bin" / "ruff"
    if ruff.exists():
        ruff_check = [str(ruff), "check", "--isolated", "--no-cache", "--exit-zero", "--output-format", "concise"]
        ruff_seconds = timed(ruff_check + [str(NOTEBOOKS)], runs)
        print(f"ruff on notebooks:     {ruff_seconds:.3f} s ({ruff_seconds / seconds:.2f}x synclint's time)")
    corpus = REPO / "bench" / "corpus"
    if corpus.exists():
        files = sum(1 for _ in corpus.rglob("*.py"))
        seconds = timed(check + [str(corpus)], max(1, runs // 2))
        print(f"synclint on bench/corpus: {seconds:.3f} s, {files / seconds:,.0f} files/s")


def without_sources(notebook: dict) -> dict:
    cells = [dict(cell, source=None) if cell.get("cell_type") == "code" else cell for cell in notebook["cells"]]
    return dict(notebook, cells=cells)


def has_nbformat() -> bool:
    try:
        import nbformat  # noqa: F401
    except ImportError:
        return False
    return True


def validate(path: Path) -> str:
    """Why nbformat rejects the notebook; empty where it accepts it or is not installed."""
    if not has_nbformat():
        return ""
    import nbformat

    try:
        nbformat.validate(nbformat.read(str(path), as_version=nbformat.NO_CONVERT))
    except Exception as error:  # nbformat raises several kinds
        return f"nbformat: {error}"
    return ""


def check_fixed(original: Path, fixed: Path) -> list:
    problems = []
    before, after = original.read_text(encoding="utf-8"), fixed.read_text(encoding="utf-8")
    if without_sources(json.loads(before)) != without_sources(json.loads(after)):
        problems.append("JSON changed outside code cells' source")
    old_lines, new_lines = before.splitlines(keepends=True), after.splitlines(keepends=True)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        for line in old_lines[i1:i2] + new_lines[j1:j2]:
            if not SOURCE_LINE.match(line):
                problems.append(f"a changed line is not a source line: {line.rstrip()[:80]}")
    problem = validate(fixed)
    if problem:
        problems.append(problem)
    return problems


def fix(synclint: str, runs_folder: Path) -> None:
    copy = runs_folder / "notebooks"
    shutil.copytree(NOTEBOOKS, copy)
    command = [synclint, "check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", "--output-format", "concise", str(copy)]
    first = subprocess.run(command, capture_output=True, text=True)
    if first.returncode == 2:
        print(first.stderr, file=sys.stderr)
        sys.exit(1)
    changed, failures = 0, 0
    for fixed in sorted(copy.rglob("*.ipynb")):
        original = NOTEBOOKS / fixed.relative_to(copy)
        if original.read_bytes() == fixed.read_bytes():
            continue
        changed += 1
        for problem in check_fixed(original, fixed):
            failures += 1
            print(f"{fixed.relative_to(copy)}: {problem}")
    snapshot = {path: path.read_bytes() for path in copy.rglob("*.ipynb")}
    subprocess.run(command, capture_output=True)
    again = sum(1 for path, data in snapshot.items() if path.read_bytes() != data)
    checker = "nbformat" if has_nbformat() else "JSON only (nbformat not installed)"
    print(f"--fix changed {changed} notebooks; checked with {checker}: {failures} problems; a second --fix changed {again}")
    if failures or again:
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synclint", default=str(REPO / "target" / "release" / "synclint"))
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    fetch()
    speed(args.synclint, args.runs)
    with tempfile.TemporaryDirectory() as folder:
        fix(args.synclint, Path(folder))


if __name__ == "__main__":
    main()
