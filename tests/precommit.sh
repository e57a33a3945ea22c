#!/usr/bin/env bash
# End-to-end test of .pre-commit-hooks.yaml.
#
# Makes a throwaway git project (a pyproject.toml marks its root) whose training loop in
# train.py calls a helper in pkg/helpers.py that reads `x.item()`, plus one clean file, then
# runs the hook the way pre-commit runs it when only the helper and the clean file changed:
#
#   pre-commit try-repo <this repository> synclint --files pkg/helpers.py clean.py
#
# and checks that the hook fails, reports SYNC101 in the helper (a hazard it can only see
# through train.py, which is not passed), and says nothing about train.py or the clean file;
# a notebook passed beside them is linted, its findings named by cell.
# pre-commit's `rust` language builds the hook with `cargo install --bins --path .` inside a
# fresh clone, so this takes as long as a release build (try-repo uses a throwaway store: it
# builds again on every run).
#
# try-repo sees this repository's HEAD plus staged and modified tracked files;
# untracked files are NOT included: `git add` new sources before running it.
#
# Usage: tests/precommit.sh [HOOK_REPO]     (default: this repository)
# Environment:
#   PRE_COMMIT=path      pre-commit to use (default: one on PATH, else installed
#                        with pip into a temporary venv)
#   CARGO_TARGET_DIR     where cargo builds (default: this repository's target/, so
#                        the dependencies of `cargo build --release` are reused)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOOK_REPO="$(cd "${1:-$ROOT}" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# pre-commit itself.
if [[ -n "${PRE_COMMIT:-}" ]]; then
  PC="$PRE_COMMIT"
elif command -v pre-commit >/dev/null 2>&1; then
  PC="pre-commit"
else
  echo "installing pre-commit into a temporary venv" >&2
  python3 -m venv "$WORK/venv"
  "$WORK/venv/bin/python" -m pip install --quiet pre-commit
  PC="$WORK/venv/bin/pre-commit"
fi
"$PC" --version >&2

# A project: a loop in train.py, the sync in a helper it calls, and one clean file.
PROJ="$WORK/project"
mkdir -p "$PROJ/pkg"
cd "$PROJ"
git init --quiet
touch pyproject.toml pkg/__init__.py
cat > pkg/helpers.py <<'EOF'
def record_value(x):
    return x.item()
EOF
cat > train.py <<'EOF'
import torch.nn.functional as F

from pkg.helpers import record_value


def train(model, loader, opt):
    history = []
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(record_value(loss))
    return history
EOF
cat > clean.py <<'EOF'
import torch
import torch.nn.functional as F


def train(model, loader, opt):
    total = torch.zeros((), device="cuda")
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.detach()
    return total
EOF
# A notebook: the hook's file types take it (`jupyter`), and it is linted cell by cell.
cp "$ROOT/fixtures/notebooks/train.ipynb" explore.ipynb
git add pyproject.toml pkg train.py clean.py explore.ipynb
git -c user.name=test -c user.email=test@example.com commit --quiet -m "project"

# One try-repo run (each one rebuilds the hook): the helper and the clean file, as pre-commit
# passes the files a commit changes.
set +e
out="$("$PC" try-repo "$HOOK_REPO" synclint --files pkg/helpers.py clean.py explore.ipynb --color never 2>&1)"
rc=$?
set -e
printf '%s\n' "$out"

((rc != 0)) || fail "the hook passed on a helper whose x.item() runs in a training loop"
grep -q "SYNC101" <<<"$out" || fail "no SYNC101 in the hook's output (exit code $rc)"
grep -q "pkg/helpers.py" <<<"$out" || fail "the hazard's file is not named in the output"
grep -q "loop at train.py" <<<"$out" || fail "the note does not name the loop in train.py"
grep -q "explore.ipynb:cell 4:7:20" <<<"$out" || fail "the notebook's finding in cell 4 is not reported"
if grep -q "clean.py" <<<"$out"; then
  fail "the hook reported something in clean.py"
fi
if grep -qE "^ *(┌─|-->) train.py|^train.py:" <<<"$out"; then
  fail "the hook reported a finding in train.py, which was not passed"
fi
echo "OK: the synclint hook fails on pkg/helpers.py with SYNC101 through train.py's loop, reports the notebook's cells, and passes clean.py" >&2
