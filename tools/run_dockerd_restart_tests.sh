#!/usr/bin/env bash
# The two DISRUPTIVE tests that stop the host's real dockerd and start it
# again (live-restore keeps the containers; tools/setup.sh turns it on):
#
#   //executor/runtime/docker:docker_restart_test         the Docker client across a restart
#   //tests:berthd_dockerd_restart_test    berthd with dockerd stopped for 30 s
#
# They cannot run under `bazel test` (it kills the dockerd a test restarts),
# so this script builds them and runs each test binary directly, from its
# runfiles tree, one at a time. tools/test.sh calls it after `bazel test`
# has finished, when nothing else is using Docker. Never run it while other
# work needs dockerd.
#
#   bash tools/run_dockerd_restart_tests.sh
#
# Prints one line "<target> PASSED|FAILED" per test (with the test's output
# on failure) and exits non-zero if any failed. Whatever happens, dockerd is
# running again when it returns (tools/setup.sh is re-run at the end).
set -uo pipefail
cd "$(dirname "$0")/.."

targets=(//executor/runtime/docker:docker_restart_test //tests:berthd_dockerd_restart_test)
# The gtest filters their BUILD targets pass as args (one binary serves both
# outage variants of tests/berthd_outage_test.cc).
declare -A filters=([//tests:berthd_dockerd_restart_test]='*RealDockerd*')
if ! bazel build --color=no --curses=no "${targets[@]}" >/dev/null 2>&1; then
  bazel build --color=no --curses=no "${targets[@]}" 2>&1 | tail -n 30
  for t in "${targets[@]}"; do echo "$t FAILED TO BUILD"; done
  exit 1
fi
bin="$(bazel info bazel-bin 2>/dev/null)"

failed=0
for t in "${targets[@]}"; do
  pkg="${t#//}"; pkg="${pkg%%:*}"; name="${t##*:}"
  runfiles="$bin/$pkg/$name.runfiles/berth"
  tmp="$(mktemp -d)"
  out="$tmp/output.log"
  # The same environment `bazel test` gives a test, plus the permission to
  # restart dockerd (this script restores it below).
  if (cd "$runfiles" && env TEST_TMPDIR="$tmp" BERTH_ALLOW_DOCKERD_RESTART=1 \
        timeout 600 "./$pkg/$name" ${filters[$t]:+"--gtest_filter=${filters[$t]}"} \
        > "$out" 2>&1) &&
     ! grep -q '\[  SKIPPED \]' "$out"; then
    echo "$t PASSED ($(grep -E '^\[  PASSED  \]' "$out"))"
  else
    tail -n 60 "$out"
    echo "$t FAILED"
    failed=$((failed + 1))
  fi
  rm -rf "$tmp"
done

# The tests restart dockerd themselves; make sure, whatever happened.
bash tools/setup.sh >/dev/null 2>&1 || { echo "dockerd did not come back"; failed=$((failed + 1)); }
[ "$failed" -eq 0 ]
