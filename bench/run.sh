#!/usr/bin/env bash
# Benchmark synclint against Ruff on a corpus of real PyTorch-ecosystem code.
#
#   bench/run.sh                 # download, extract, install Ruff, build, time (5 runs each)
#   bench/run.sh --runs 10 --write   # extra arguments go to bench/bench.py
#
# Environment:
#   PYTHON=python3        interpreter used for pip, the venv and bench.py (3.11+)
#   SKIP_BUILD=1          do not run `cargo build --release` (use the binary that is there)
#   SYNCLINT_BIN=path     time this synclint binary instead of target/release/synclint
#                         (implies SKIP_BUILD=1)
#   SKIP_RUFF=1           do not install or time Ruff
#
# Everything it creates (bench/downloads, bench/corpus, bench/.venv) is git-ignored.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

PYTHON="${PYTHON:-python3}"
DOWNLOADS="bench/downloads"
VENV="bench/.venv"
RUFF_VERSION="0.17.6"

# name  version  extra pip arguments (for packages that only ship platform wheels).
# torch is the macOS arm64 wheel: the same Python sources as the Linux one, without
# the multi-GiB CUDA libraries.
PACKAGES=(
  "transformers 5.23.0"
  "diffusers 0.42.1"
  "timm 1.0.31"
  "torchmetrics 1.9.0"
  "lightning 2.6.6"
  "torchvision 0.29.2 --platform manylinux_2_28_x86_64 --python-version 3.11"
  "accelerate 1.15.0"
  "torch 2.11.0 --platform macosx_11_0_arm64 --python-version 3.11"
)

log() { printf '==> %s\n' "$*" >&2; }

# 1. Download the pinned wheels (skipping those already present).
mkdir -p "$DOWNLOADS"
for spec in "${PACKAGES[@]}"; do
  read -r name version extra <<<"$spec"
  shopt -s nullglob
  have=("$DOWNLOADS/${name}-${version}-"*.whl)
  shopt -u nullglob
  if ((${#have[@]} > 0)); then
    log "have $(basename "${have[0]}")"
    continue
  fi
  log "downloading ${name}==${version}"
  # shellcheck disable=SC2086  # $extra is a list of arguments
  "$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: \
    -d "$DOWNLOADS" ${extra:-} "${name}==${version}"
done

# 2. Extract the .py files into bench/corpus/<pkg>/ and print the corpus size.
log "extracting .py files into bench/corpus"
"$PYTHON" bench/bench.py corpus

# 3. Ruff, pinned, in its own venv.
if [[ "${SKIP_RUFF:-0}" != 1 ]]; then
  if [[ "$("$VENV/bin/ruff" --version 2>/dev/null || true)" != "ruff $RUFF_VERSION" ]]; then
    log "installing ruff==$RUFF_VERSION into $VENV"
    [[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet "ruff==$RUFF_VERSION"
  fi
  log "$("$VENV/bin/ruff" --version)"
fi

# 4. synclint, release build.
if [[ -n "${SYNCLINT_BIN:-}" ]]; then
  SKIP_BUILD=1
else
  SYNCLINT_BIN="target/release/synclint"
fi
if [[ "${SKIP_BUILD:-0}" != 1 ]]; then
  log "cargo build --release"
  cargo build --release
fi
[[ -x "$SYNCLINT_BIN" ]] || { echo "error: no synclint binary at $SYNCLINT_BIN" >&2; exit 1; }
log "$("$SYNCLINT_BIN" --version)"

# 5. Time it.
tools="synclint,synclint-1t,synclint-cold,synclint-warm,synclint-file,parse-only"
[[ "${SKIP_RUFF:-0}" == 1 ]] || tools="$tools,ruff,ruff-1t"
exec "$PYTHON" bench/bench.py time --synclint "$SYNCLINT_BIN" --ruff "$VENV/bin/ruff" \
  --tools "$tools" "$@"
