#!/usr/bin/env bash
# Builds berthd's snapshot fuzzer (server/ingest/sync_fuzzer.cc: stream assembly,
# job validation, conversion to the planner's model) with clang (libFuzzer,
# ASan, UBSan) against Debian's protobuf and Abseil, and runs it for a
# bounded time.
#
#   tools/fuzz/run_sync_fuzzer.sh [seconds]      (default 30)
#
# Environment: FUZZ_WORKDIR (default /tmp/berth-sync-fuzz) holds the
# generated protobuf code, the binary, the corpus (kept between runs, seeded
# with valid snapshots on the first run) and crash files; extra libFuzzer
# flags can go in FUZZ_FLAGS. Exits non-zero if the fuzzer finds a crash, a
# leak or a violated invariant; the input is saved under $FUZZ_WORKDIR/crashes
# and can be replayed with:  $FUZZ_WORKDIR/sync_fuzzer <file>
set -euo pipefail

seconds="${1:-30}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="${FUZZ_WORKDIR:-/tmp/berth-sync-fuzz}"
gen="$work/gen"
mkdir -p "$work/corpus" "$work/crashes" "$gen"

cxx="${CXX_FUZZ:-clang++}"
protos=(job budgets plan event files logs executor)
# C++ for the API messages (no gRPC stubs needed: only messages are parsed).
(cd "$root/proto" && protoc --cpp_out="$gen" $(printf 'berth/v1/%s.proto ' "${protos[@]}"))

mods="protobuf absl_strings absl_str_format_internal absl_time absl_hash absl_raw_hash_set absl_status absl_statusor"
srcs=(
  server/ingest/sync_fuzzer.cc server/ingest/snapshot_assembler.cc server/ingest/job_validation.cc server/ingest/validate_jobs.cc server/ingest/node_fit.cc
  executor/runtime/runtime_limits.cc
  executor/store/spec_fingerprint.cc planner/convert/convert.cc planner/base/units.cc
)
# The planner library (convert links against it): every source of its core
# packages but tests and benchmarks.
while IFS= read -r f; do srcs+=("$f"); done < <(cd "$root" && ls planner/{model,ranking,timeline,plan,explain,forecast,starts}/*.cc |
  grep -Ev '_test\.cc$|_benchmark\.cc$|fuzzer|_main\.cc$|simulat|workload|test_')
gensrcs=()
for p in "${protos[@]}"; do gensrcs+=("$gen/berth/v1/$p.pb.cc"); done

echo "building $work/sync_fuzzer with $cxx" >&2
# Generated protobuf code is built without sanitizer instrumentation of
# libFuzzer coverage (it only slows the search down); berth code with all.
objs=()
for s in "${gensrcs[@]}"; do
  o="$work/$(basename "$s").o"
  if [[ ! -f "$o" || "$s" -nt "$o" ]]; then
    $cxx -std=c++17 -O1 -g -fsanitize=address -I"$gen" $(pkg-config --cflags protobuf) -c "$s" -o "$o"
  fi
  objs+=("$o")
done
# shellcheck disable=SC2046
(cd "$root" && $cxx -std=c++17 -O1 -g -fno-omit-frame-pointer \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -I. -I"$gen" $(pkg-config --cflags $mods) "${srcs[@]}" "${objs[@]}" \
  $(pkg-config --libs $mods) -lpthread -o "$work/sync_fuzzer")

cd "$work"
if [[ -z "$(ls -A "$work/corpus")" ]]; then
  BERTH_SYNC_FUZZER_SEEDS="$work/corpus" ./sync_fuzzer -runs=0 "$work/corpus" >/dev/null 2>&1 || true
fi
echo "fuzzing for ${seconds}s" >&2
# shellcheck disable=SC2086
./sync_fuzzer -max_total_time="$seconds" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$work/crashes/" -print_final_stats=1 ${FUZZ_FLAGS:-} \
  "$work/corpus"
