#!/usr/bin/env bash
# Runs //planner/testing:plan_benchmark RUNS times per size, each size in a fresh
# process (for a meaningful peak RSS), and prints the medians as the
# Markdown table of docs/BENCHMARKS.md ("Planner").
#
#   planner/testing/run_plan_benchmark.sh [runs=3] [sizes="10000 100000 1000000"]
#
# Uses its own Bazel output base so it does not block other builds.
set -euo pipefail
runs="${1:-3}"
sizes="${2:-10000 100000 1000000}"
root="$(cd "$(dirname "$0")/.." && pwd)"
ob="${BERTH_BENCH_OUTPUT_BASE:-/root/.cache/bazel-ob/planner}"
cd "$root"
bazel --output_base="$ob" build -c opt --symlink_prefix=/ //planner/testing:plan_benchmark >&2
bin="$(bazel --output_base="$ob" info -c opt --symlink_prefix=/ bazel-bin 2>/dev/null)/planner/plan_benchmark"
out="$(mktemp -d)"
for size in $sizes; do
  for run in $(seq "$runs"); do
    echo "size $size run $run (load: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    "$bin" --benchmark_filter="/$size/" --benchmark_format=json \
      > "$out/$size.$run.json"
  done
done
/usr/bin/python3 - "$out" "$runs" $sizes <<'PY'
import json, statistics, sys
out, runs, sizes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = {}
for size in sizes:
    r = {k: [] for k in ("pw", "pc", "rw", "rc", "sw", "sc", "peak", "bpj", "maxrss")}
    for run in range(1, runs + 1):
        for b in json.load(open(f"{out}/{size}.{run}.json"))["benchmarks"]:
            name = b["name"]
            if name.startswith("BM_Plan/"):
                r["pw"].append(b["real_time"]); r["pc"].append(b["cpu_time"])
                r["peak"].append(b["plan_peak_MiB"]); r["bpj"].append(b["plan_bytes_per_job"])
                r["maxrss"].append(b["process_maxrss_MiB"])
            elif name.startswith("BM_PlanReused/"):
                r["rw"].append(b["real_time"]); r["rc"].append(b["cpu_time"])
            elif name.startswith("BM_SortReference/"):
                r["sw"].append(b["real_time"]); r["sc"].append(b["cpu_time"])
    rows[size] = r
m = statistics.median
runs_of = lambda xs: ", ".join(f"{x:.1f}" for x in xs)
print("| queued jobs | Plan() wall (runs) | Plan() CPU | ns/job wall (CPU) | Planner reused wall (CPU) | "
      "std::sort 16-byte keys wall (CPU) | Plan/sort wall (CPU) | reused/sort wall (CPU) | "
      "planner peak RSS (bytes/job) | process maxrss |")
print("|---|---|---|---|---|---|---|---|---|---|")
for size, r in rows.items():
    n = int(size)
    print(f"| {n:,} | {m(r['pw']):.1f} ms ({runs_of(r['pw'])}) | {m(r['pc']):.1f} ms "
          f"| {m(r['pw'])*1e6/n:.0f} ({m(r['pc'])*1e6/n:.0f}) "
          f"| {m(r['rw']):.1f} ms ({m(r['rc']):.1f} ms) "
          f"| {m(r['sw']):.1f} ms ({m(r['sc']):.1f} ms) "
          f"| {m(r['pw'])/m(r['sw']):.2f}x ({m(r['pc'])/m(r['sc']):.2f}x) "
          f"| {m(r['rw'])/m(r['sw']):.2f}x ({m(r['rc'])/m(r['sc']):.2f}x) "
          f"| {m(r['peak']):.1f} MiB ({m(r['bpj']):.0f}) | {m(r['maxrss']):.0f} MiB |")
PY
