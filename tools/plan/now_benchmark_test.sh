#!/usr/bin/env bash
# now_benchmark.py on a small generated queue: it reports each pair and the
# median ratio, and it fails (non-zero, a message) when a program fails or
# `now` prints no plan, so that a broken run is never reported as a figure.
set -uo pipefail

BENCH="$1"
PLAN="$2"
FLOOR="$3"
PY=/usr/bin/python3
OUT="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

if "$PY" "$BENCH" --berth-plan="$PLAN" --floor="$FLOOR" --jobs=3000 --runs=2 > "$OUT/ok.txt" 2>&1; then
  [ "$(grep -c '^run [0-9]: floor .* | now .* | now/floor ' "$OUT/ok.txt")" = 2 ] ||
    fail "expected two pairs in: $(cat "$OUT/ok.txt")"
  ratio=$(sed -n 's/^now \/ floor, pair by pair: median \([0-9.]*\)x.*/\1/p' "$OUT/ok.txt")
  "$PY" -c "import sys; sys.exit(0 if float('$ratio') > 0 else 1)" 2>/dev/null ||
    fail "no positive median ratio in: $(cat "$OUT/ok.txt")"
  grep -q '^workload: gen_queue.py 3000$' "$OUT/ok.txt" || fail "workload not named"
else
  fail "benchmark failed: $(cat "$OUT/ok.txt")"
fi

# A program that fails, and one that prints no plan, are errors.
if "$PY" "$BENCH" --berth-plan=/bin/false --floor="$FLOOR" --jobs=500 --runs=1 > "$OUT/false.txt" 2>&1; then
  fail "a failing berth-plan was reported as a figure"
fi
grep -q 'exited 1' "$OUT/false.txt" || fail "no exit status in: $(cat "$OUT/false.txt")"
if "$PY" "$BENCH" --berth-plan=/bin/echo --floor="$FLOOR" --jobs=500 --runs=1 > "$OUT/echo.txt" 2>&1; then
  fail "a berth-plan printing no plan was reported as a figure"
fi
grep -q 'printed no plan' "$OUT/echo.txt" || fail "no message in: $(cat "$OUT/echo.txt")"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "PASS"
