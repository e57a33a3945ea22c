#!/usr/bin/env python3
"""Accuracy of synclint on real training code, against lines labelled by hand.

    bench/accuracy/run.py                 # fetch the pinned packages, lint them, print both splits' scores
    bench/accuracy/run.py --misses        # also list every dev-split line scored wrong
    bench/accuracy/run.py --split test    # score one split (dev, test or all)
    bench/accuracy/run.py fetch           # only download and extract the packages
    bench/accuracy/run.py show PKG==VER PATH LINE   # a line's text and its hash, for labelling
    bench/accuracy/run.py validate FILE...          # check label files' fields and hashes (no linting)

Labels live in bench/accuracy/labels/<split>/*.tsv, one line each, tab-separated:

    location    label    pattern    hash    reason

- location: `package==version:path/in/the/sdist.py:line` (the sdist's top folder left out);
- label: `true_hazard` (syncs on every step), `benign` (syncs, but not per step: setup, once per
  epoch, a logging interval, an eval loop's product) or `not_sync` (looks like a sync, is not);
- pattern: the family (see PATTERNS);
- hash: the first 10 hex digits of the SHA-1 of the line's text, stripped, so a label that no
  longer points at its line is an error instead of a silent miss;
- reason: one line, in our words.

Two splits. `dev` holds the packages the model may be tuned on: its misses are listed with
`--misses`. `test` holds packages labelled blind (every label written before synclint was first
run on the package): they are scored, never tuned on, so `--misses` leaves them out unless
`--split test` asks for them by name. A gap between the two splits is a finding about the design.

No third-party code is stored in this repository: the packages are downloaded from PyPI into
bench/accuracy/cache (git-ignored), by pinned version, as the sdist or the wheel that
bench/accuracy/packages.tsv names (some ship no sdist, or one that does not build).

A labelled line counts as flagged when synclint reports any finding on it. Recall is the share of
`true_hazard` lines flagged; the alarm rates are the shares of `benign` and `not_sync` lines
flagged.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
CACHE = HERE / "cache"
LABELS = HERE / "labels"
LABEL_KINDS = ("true_hazard", "benign", "not_sync")
SPLITS = ("dev", "test")
PATTERNS = (
    "item",  # .item()
    "tolist",  # .tolist()
    "device-to-host",  # .cpu(), .numpy(), .to("cpu")
    "tensor-as-number",  # float(t), int(t), range(t), x[:t], torch.zeros(t)
    "truthiness",  # if t:, while t:, assert t, t and x, not t
    "formatting",  # f"{t}", print(t), str(t), "%f" % t
    "host-comparison",  # torch.equal, allclose, t == python value used on the host
    "nonzero",  # nonzero, argwhere, one-argument torch.where
    "unique",  # unique, unique_consecutive, bincount
    "bool-mask-read",  # x[mask], masked_select
    "bool-mask-write",  # x[mask] = tensor, x[mask] += v
    "index-write",  # x[idx] = python scalar with an index tensor
    "host-index",  # a CUDA tensor indexed with a CPU tensor or list
    "size-from-data",  # repeat_interleave with tensor repeats, one_hot without num_classes
    "data-dependent-shape",  # shapes read from data-dependent results
    "masked-loss",  # a loss on masked logits/targets that should use ignore_index
    "library-sync",  # linalg with checks, distributions with validation, clip_grad error_if_nonfinite, GradScaler
    "host-to-device",  # blocking .to(dev)/.cuda() of host batches, torch.tensor(list, device=)
    "explicit-sync",  # torch.cuda.synchronize, event/stream synchronize, empty_cache
    "collective",  # serial all_reduce, barrier in the step
)


def line_hash(text: str) -> str:
    return hashlib.sha1(text.strip().encode("utf-8")).hexdigest()[:10]


class Label:
    def __init__(self, source: Path, number: int, fields: list[str]):
        self.where = f"{source.parent.name}/{source.name}:{number}"
        self.split = source.parent.name
        if len(fields) != 5:
            raise SystemExit(f"{self.where}: expected 5 tab-separated fields, found {len(fields)}")
        location, self.label, self.pattern, self.hash, self.reason = fields
        try:
            self.package, rest = location.split(":", 1)
            self.path, line = rest.rsplit(":", 1)
            self.line = int(line)
            name, version = self.package.split("==")
        except ValueError:
            raise SystemExit(f"{self.where}: location must be package==version:path:line, got {location!r}")
        self.name, self.version = name, version
        if self.label not in LABEL_KINDS:
            raise SystemExit(f"{self.where}: label must be one of {', '.join(LABEL_KINDS)}")
        if self.pattern not in PATTERNS:
            raise SystemExit(f"{self.where}: unknown pattern {self.pattern!r}")
        if not self.reason.strip():
            raise SystemExit(f"{self.where}: a label needs a reason")

    @property
    def location(self) -> str:
        return f"{self.package}:{self.path}:{self.line}"


def read_label_file(source: Path) -> list[Label]:
    labels = []
    for number, raw in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip() or raw.startswith("#"):
            continue
        labels.append(Label(source, number, raw.split("\t")))
    return labels


def read_labels(sources: list[Path] | None = None) -> list[Label]:
    """Every split's labels (or those of `sources`); a line labelled twice is an error."""
    if sources is None:
        strays = sorted(LABELS.glob("*.tsv"))
        if strays:
            raise SystemExit(f"{strays[0]}: label files belong in a split's folder ({', '.join(SPLITS)})")
        sources = sorted(source for split in SPLITS for source in (LABELS / split).glob("*.tsv"))
    labels = [label for source in sources for label in read_label_file(source)]
    seen = {}
    for label in labels:
        if label.location in seen:
            raise SystemExit(f"{label.where}: {label.location} is labelled twice (also {seen[label.location]})")
        seen[label.location] = label.where
    return labels


def package_dir(package: str) -> Path:
    return CACHE / package.replace("==", "-")


def read_forms() -> dict[str, str]:
    """Which distribution of each package the labels point into: `sdist` or `wheel`."""
    forms = {}
    for raw in (HERE / "packages.tsv").read_text(encoding="utf-8").splitlines():
        if raw.strip() and not raw.startswith("#"):
            package, form = raw.split("\t")
            if form not in ("sdist", "wheel"):
                raise SystemExit(f"packages.tsv: {package}: form must be sdist or wheel, got {form!r}")
            forms[package] = form
    return forms


def fetch(package: str, form: str) -> Path:
    """Downloads the package's sdist or wheel, as packages.tsv says, and extracts it once."""
    target = package_dir(package)
    if target.is_dir():
        return target
    name = package.split("==")[0]
    with tempfile.TemporaryDirectory() as tmp:
        pip = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "-d", tmp]
        # Only the package itself as source: its build tools may come as wheels.
        only = ["--no-binary", name] if form == "sdist" else ["--only-binary", ":all:"]
        result = subprocess.run(pip + only + [package], capture_output=True, text=True)
        if result.returncode != 0:
            raise SystemExit(f"cannot download the {form} of {package}:\n{result.stderr}")
        (archive,) = [p for p in Path(tmp).iterdir() if p.is_file()]
        staging = Path(tmp) / "x"
        if archive.name.endswith(".whl") or archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as z:
                z.extractall(staging)
        else:
            with tarfile.open(archive) as t:
                t.extractall(staging, filter="data")
        entries = list(staging.iterdir())
        # An sdist holds one top folder (`name-version/`); paths in labels leave it out.
        top = entries[0] if len(entries) == 1 and entries[0].is_dir() and form == "sdist" else staging
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(top), str(target))
    return target


def source_line(label: Label) -> str | None:
    path = package_dir(label.package) / label.path
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return lines[label.line - 1] if 0 < label.line <= len(lines) else None


def synclint_binary() -> Path:
    configured = os.environ.get("SYNCLINT_BIN")
    if configured:
        return Path(configured)
    binary = ROOT / "target" / "release" / "synclint"
    if os.environ.get("SKIP_BUILD") != "1":
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    return binary


def findings(binary: Path, root: Path, extra: list[str]) -> set[tuple[str, int]]:
    """(path relative to the package root, row) of every finding synclint reports in it."""
    command = [str(binary), "check", "--isolated", "--exit-zero", "--output-format", "json", *extra, "."]
    result = subprocess.run(command, cwd=root, capture_output=True, text=True)
    if result.returncode not in (0, 1):
        # Errors (an unparsable file) are printed but do not stop the scoring.
        sys.stderr.write(result.stderr)
    flagged = set()
    for finding in json.loads(result.stdout or "[]"):
        name = os.path.relpath(os.path.join(root, finding["filename"]), root)
        flagged.add((name.replace(os.sep, "/"), finding["location"]["row"]))
    return flagged


def score(labels: list[Label], flagged: dict[str, set[tuple[str, int]]]):
    """Per pattern: [true_hazard flagged, true_hazard total, benign flagged, ..., not_sync ...]."""
    table: dict[str, list[int]] = collections.defaultdict(lambda: [0] * 6)
    misses = []
    for label in labels:
        hit = (label.path, label.line) in flagged[label.package]
        slot = LABEL_KINDS.index(label.label) * 2
        for key in (label.pattern, "all"):
            table[key][slot] += hit
            table[key][slot + 1] += 1
        wrong = hit != (label.label == "true_hazard")
        if wrong:
            misses.append(label)
    return table, misses


def rate(hit: int, total: int) -> str:
    return f"{hit}/{total} ({100 * hit / total:.0f}%)" if total else "-"


def print_scores(title: str, labels: list[Label], flagged: dict[str, set[tuple[str, int]]]):
    """One split's (or the whole set's) table; returns the lines it scored wrong."""
    table, misses = score(labels, flagged)
    counts = collections.Counter(label.label for label in labels)
    packages = {label.package for label in labels}
    print(
        f"{title}: {len(labels)} labelled lines from {len(packages)} packages: "
        + ", ".join(f"{counts[k]} {k}" for k in LABEL_KINDS)
    )
    print_table(table)
    return misses


def print_table(table) -> None:
    print(f"{'pattern':<22} {'recall (true_hazard)':>22} {'alarms on benign':>18} {'alarms on not_sync':>20}")
    keys = [p for p in PATTERNS if p in table] + ["all"]
    for key in keys:
        row = table[key]
        print(f"{key:<22} {rate(row[0], row[1]):>22} {rate(row[2], row[3]):>18} {rate(row[4], row[5]):>20}")


def check_hashes(labels: list[Label]) -> None:
    """Fetches the labels' packages and stops where a label no longer points at its line."""
    packages = sorted({label.package for label in labels})
    forms = read_forms()
    unlisted = [package for package in packages if package not in forms]
    if unlisted:
        raise SystemExit(f"packages.tsv does not list {', '.join(unlisted)}")
    for package in packages:
        fetch(package, forms[package])
    stale = [label for label in labels if (text := source_line(label)) is None or line_hash(text) != label.hash]
    for label in stale:
        print(f"{label.where}: {label.location} does not hold the labelled line (hash {label.hash})", file=sys.stderr)
    if stale:
        raise SystemExit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", default="score", choices=["score", "fetch", "show", "validate"])
    parser.add_argument("args", nargs="*")
    parser.add_argument("--split", choices=[*SPLITS, "all"], help="score one split (default: each split, then all)")
    parser.add_argument("--misses", action="store_true", help="list every labelled line scored wrong (dev split unless --split)")
    parser.add_argument("--synclint-arg", action="append", default=[], help="pass an extra argument to synclint")
    options = parser.parse_args()
    if options.command == "show":
        package, path, line = options.args
        root = fetch(package, read_forms().get(package, "sdist"))
        text = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()[int(line) - 1]
        print(f"{line_hash(text)}\t{text}")
        return
    if options.command == "validate":
        labels = read_labels([Path(arg).resolve() for arg in options.args])
        check_hashes(labels)
        counts = collections.Counter(label.label for label in labels)
        patterns = collections.Counter(label.pattern for label in labels)
        print(f"{len(labels)} labels: " + ", ".join(f"{counts[k]} {k}" for k in LABEL_KINDS))
        print("patterns: " + ", ".join(f"{p} {patterns[p]}" for p in PATTERNS if patterns[p]))
        return
    labels = read_labels()
    # A split asked for alone is the only one linted: scoring the dev split never runs synclint
    # on a test package (whose labels may still be being written).
    if options.split and options.split != "all":
        labels = [label for label in labels if label.split == options.split]
    check_hashes(labels)
    if options.command == "fetch":
        return
    binary = synclint_binary()
    packages = sorted({label.package for label in labels})
    flagged = {package: findings(binary, package_dir(package), options.synclint_arg) for package in packages}
    if options.split:
        chosen = [label for label in labels if options.split in ("all", label.split)]
        misses = print_scores(options.split, chosen, flagged)
    else:
        misses = []
        for split in SPLITS:
            chosen = [label for label in labels if label.split == split]
            if chosen:
                found = print_scores(split, chosen, flagged)
                misses += found if split == "dev" else []
                print()
        print_scores("all", labels, flagged)
    if options.misses:
        print()
        for label in misses:
            verdict = "missed" if label.label == "true_hazard" else "alarm"
            print(f"{verdict:<7} {label.pattern:<20} {label.location}  # {label.reason}")


if __name__ == "__main__":
    main()
