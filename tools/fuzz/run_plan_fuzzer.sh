#!/usr/bin/env bash
# Builds the planner's libFuzzer target with clang (ASan + UBSan) against
# Debian's Abseil and runs it for a bounded time.
#
#   tools/fuzz/run_plan_fuzzer.sh [seconds]      (default 30)
#
# Environment: FUZZ_WORKDIR (default /tmp/berth-plan-fuzz) holds the binary,
# the corpus (kept between runs) and crash files; extra libFuzzer flags can
# go in FUZZ_FLAGS. Exits non-zero if the fuzzer finds a crash or a violated
# invariant; a crashing input is saved under $FUZZ_WORKDIR/crashes and can be
# replayed with:  bazel run //planner/testing:plan_fuzzer_replay -- <file>
set -euo pipefail

seconds="${1:-30}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="${FUZZ_WORKDIR:-/tmp/berth-plan-fuzz}"
mkdir -p "$work/corpus" "$work/crashes"

cxx="${CXX_FUZZ:-clang++}"
absl_mods="absl_strings absl_str_format_internal absl_time absl_hash absl_raw_hash_set absl_status absl_statusor"
# shellcheck disable=SC2046,SC2086
# The planner library: every source of its core packages but tests and
# benchmarks, plus the canonical form and the foundation's formatters.
srcs=(planner/testing/plan_fuzzer.cc planner/testing/canonical.cc planner/base/units.cc)
while IFS= read -r f; do srcs+=("$f"); done < <(cd "$root" && ls planner/{model,ranking,timeline,plan,explain,forecast,starts}/*.cc |
  grep -Ev '_test\.cc$|_benchmark\.cc$|fuzzer|_main\.cc$|simulat|workload|test_')
echo "building $work/plan_fuzzer with $cxx" >&2
(cd "$root" && $cxx -std=c++17 -O1 -g -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I. $(pkg-config --cflags $absl_mods) "${srcs[@]}" \
  $(pkg-config --libs $absl_mods) -o "$work/plan_fuzzer")

echo "fuzzing for ${seconds}s" >&2
cd "$work"
# shellcheck disable=SC2086
./plan_fuzzer -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -artifact_prefix="$work/crashes/" -print_final_stats=1 ${FUZZ_FLAGS:-} \
  "$work/corpus"
