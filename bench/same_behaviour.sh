#!/usr/bin/env bash
# Checks that a build behaves exactly as an earlier one: for refactors that must change nothing.
#
#   bench/same_behaviour.sh BASE_BINARY [NEW_BINARY]
#
# NEW_BINARY defaults to target/release/synclint (build it first). Both binaries are run on the
# benchmark corpus (bench/run.sh downloads it) and on the repository's own Python (fixtures/,
# examples/), each without configuration or cache: `check --output-format json`, the exit code and
# stderr, and `graph` as JSON and as the hot call tree must be byte for byte the same. Then the
# labelled set's scores (bench/accuracy/run.py, when its packages are fetched) must print the
# same. With FULL=1 it also runs bench/fix_check.py and bench/cache_check.py on the new binary.
# Exits 1 on the first difference, naming it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if (($# < 1)); then
  echo "usage: bench/same_behaviour.sh BASE_BINARY [NEW_BINARY]" >&2
  exit 2
fi
BASE="$(realpath "$1")"
NEW="$(realpath "${2:-target/release/synclint}")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# One run of `synclint ARGS...` by both binaries; stdout, stderr and the exit code compared.
compare() {
  local label="$1"
  shift
  local side binary
  for side in base new; do
    if [[ $side == base ]]; then binary="$BASE"; else binary="$NEW"; fi
    set +e
    "$binary" "$@" >"$WORK/$side.out" 2>"$WORK/$side.err"
    echo $? >"$WORK/$side.rc"
    set -e
  done
  local part
  for part in out err rc; do
    if ! cmp -s "$WORK/base.$part" "$WORK/new.$part"; then
      echo "DIFFERENT: $label ($part)" >&2
      diff "$WORK/base.$part" "$WORK/new.$part" | head -20 >&2
      exit 1
    fi
  done
  echo "same: $label ($(wc -c <"$WORK/new.out") bytes)"
}

TARGETS=(fixtures examples)
if [[ -d bench/corpus ]]; then
  TARGETS+=(bench/corpus)
else
  echo "note: bench/corpus is missing (bench/run.sh fetches it); checking the repository's own Python only" >&2
fi
for target in "${TARGETS[@]}"; do
  compare "check $target" check --isolated --no-cache --output-format json "$target"
  compare "graph json $target" graph --isolated --no-cache --output-format json "$target"
  compare "graph text $target" graph --isolated --no-cache "$target"
done

if [[ -d bench/accuracy/cache ]]; then
  SYNCLINT_BIN="$BASE" python3 bench/accuracy/run.py >"$WORK/base.scores"
  SYNCLINT_BIN="$NEW" python3 bench/accuracy/run.py >"$WORK/new.scores"
  if ! cmp -s "$WORK/base.scores" "$WORK/new.scores"; then
    echo "DIFFERENT: labelled set scores" >&2
    diff "$WORK/base.scores" "$WORK/new.scores" >&2
    exit 1
  fi
  echo "same: labelled set scores ($(grep -c . "$WORK/new.scores") lines)"
fi

if [[ ${FULL:-0} == 1 ]]; then
  python3 bench/fix_check.py --synclint "$NEW"
  python3 bench/cache_check.py --synclint "$NEW"
fi
