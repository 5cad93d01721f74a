#!/usr/bin/env bash
# The operator surface, checked with the operators' own tools, outside Bazel
# (the tools are not Bazel inputs). tools/test.sh runs it after `bazel test`.
#
#   bash tools/run_operator_tests.sh
#
# 1. promtool rules: `promtool check rules` and `promtool test rules` on
#    docs/monitoring/berth.rules.yml and its recorded series.
# 2. grpcurl docs: tests/grpcurl_docs_test.py runs every grpcurl command of
#    README.md and the guides in docs/*.md with the real grpcurl against a live
#    berthd, and `promtool check metrics` on that berthd's /metrics.
# 3. Python guide: tests/python_guide_test.py runs every block of
#    docs/job-server.md "The Python client" as written (a fresh virtualenv,
#    `pip install ./clients/python`, the guide's code) against a live berthd.
#
# grpcurl is $GRPCURL, else ../shared/bin/grpcurl (from the project root),
# else grpcurl on PATH. Without any, check 2 is SKIPPED (never counted as
# passed) with how to get grpcurl — except in CI (CI=true), where it FAILS. promtool comes from Debian's prometheus
# package (tools/setup.sh installs it); without it both checks FAIL.
#
# Prints one line per check, "operator: NAME PASSED|FAILED|SKIPPED (...)",
# with the output of a failed check before it; exits non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=0
promtool="$(command -v promtool || true)"

if [ -z "${GRPCURL:-}" ]; then
  if [ -x ../shared/bin/grpcurl ]; then
    GRPCURL="$(cd ../shared/bin && pwd)/grpcurl"
  else
    GRPCURL="$(command -v grpcurl || true)"
  fi
fi

# 1. Alerting rules.
if [ -z "$promtool" ]; then
  echo "promtool not found: install Debian's prometheus package (bash tools/setup.sh does)"
  echo "operator: promtool rules FAILED"
  failed=$((failed + 1))
else
  out="$(cd docs/monitoring && "$promtool" check rules berth.rules.yml 2>&1 &&
         "$promtool" test rules berth.rules.test.yml 2>&1)"
  if [ $? -eq 0 ]; then
    echo "operator: promtool rules PASSED ($(grep -o '[0-9]* rules found' <<<"$out"); unit tests SUCCESS)"
  else
    echo "$out"
    echo "operator: promtool rules FAILED"
    failed=$((failed + 1))
  fi
fi

# 2. The docs' grpcurl commands against a live berthd.
if { [ -z "$GRPCURL" ] || [ ! -x "$GRPCURL" ]; } && [ "${CI:-}" = true ]; then
  echo "operator: grpcurl docs FAILED (no grpcurl in CI: ../shared/bin/grpcurl is missing)"
  failed=$((failed + 1))
elif [ -z "$GRPCURL" ] || [ ! -x "$GRPCURL" ]; then
  echo "operator: grpcurl docs SKIPPED (no grpcurl: set GRPCURL, or put grpcurl v1.8.7+ on PATH —" \
       "it is not packaged in Debian 12; get it from grpcurl's releases, or use ../shared/bin/grpcurl)"
elif ! bazel build --color=no --curses=no //server:berthd >/dev/null 2>&1; then
  bazel build --color=no --curses=no //server:berthd 2>&1 | tail -n 30
  echo "operator: grpcurl docs FAILED (berthd did not build)"
  failed=$((failed + 1))
else
  bin="$(bazel info bazel-bin 2>/dev/null)"
  log="$(mktemp)"
  if /usr/bin/python3 tests/grpcurl_docs_test.py --berthd "$bin/server/berthd" \
       --grpcurl "$GRPCURL" ${promtool:+--promtool "$promtool"} > "$log" 2>&1 && [ -n "$promtool" ]; then
    echo "operator: grpcurl docs PASSED ($(tail -n 1 "$log"); promtool check metrics on the live /metrics)"
  else
    cat "$log"
    echo "operator: grpcurl docs FAILED"
    failed=$((failed + 1))
  fi
  rm -f "$log"
fi

# 3. The Python client's guide, as written, in a fresh virtualenv.
if ! bazel build --color=no --curses=no //server:berthd >/dev/null 2>&1; then
  echo "operator: python guide FAILED (berthd did not build)"
  failed=$((failed + 1))
else
  bin="$(bazel info bazel-bin 2>/dev/null)"
  log="$(mktemp)"
  if /usr/bin/python3 tests/python_guide_test.py --berthd "$bin/server/berthd" > "$log" 2>&1; then
    echo "operator: python guide PASSED ($(tail -n 1 "$log"))"
  else
    cat "$log"
    echo "operator: python guide FAILED"
    failed=$((failed + 1))
  fi
  rm -f "$log"
fi
[ "$failed" -eq 0 ]
