#!/usr/bin/env bash
# Runs //planner:plan_benchmark RUNS times per size, each size in a fresh
# process (for a meaningful peak RSS), and prints the medians as the
# Markdown table of docs/BENCHMARKS.md ("Planner (issue 3)").
#
#   planner/run_plan_benchmark.sh [runs=3] [sizes="10000 100000 1000000"]
#
# Uses its own Bazel output base so it does not block other builds.
set -euo pipefail
runs="${1:-3}"
sizes="${2:-10000 100000 1000000}"
root="$(cd "$(dirname "$0")/.." && pwd)"
ob="${BERTH_BENCH_OUTPUT_BASE:-/root/.cache/bazel-ob/planner}"
cd "$root"
bazel --output_base="$ob" build -c opt --symlink_prefix=/ //planner:plan_benchmark >&2
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
print("| queued jobs | Plan() wall, median (runs) | Plan() CPU, median | ns/job (wall) | "
      "std::sort 16-byte keys wall (CPU) | Plan/sort (wall) | Plan/sort (CPU) | "
      "planner peak RSS | bytes/job | process maxrss |")
print("|---|---|---|---|---|---|---|---|---|---|")
for size in sizes:
    plan_wall, plan_cpu, sort_wall, sort_cpu, peak, per_job, maxrss = ([] for _ in range(7))
    for run in range(1, runs + 1):
        data = json.load(open(f"{out}/{size}.{run}.json"))
        for b in data["benchmarks"]:
            if b["name"].startswith("BM_Plan/"):
                plan_wall.append(b["real_time"]); plan_cpu.append(b["cpu_time"])
                peak.append(b["plan_peak_MiB"]); per_job.append(b["plan_bytes_per_job"])
                maxrss.append(b["process_maxrss_MiB"])
            elif b["name"].startswith("BM_SortReference/"):
                sort_wall.append(b["real_time"]); sort_cpu.append(b["cpu_time"])
    m = statistics.median
    n = int(size)
    print(f"| {n:,} | {m(plan_wall):.1f} ms ({', '.join(f'{x:.1f}' for x in plan_wall)}) "
          f"| {m(plan_cpu):.1f} ms | {m(plan_wall) * 1e6 / n:.0f} "
          f"| {m(sort_wall):.1f} ms ({m(sort_cpu):.1f} ms) "
          f"| {m(plan_wall) / m(sort_wall):.2f}x | {m(plan_cpu) / m(sort_cpu):.2f}x "
          f"| {m(peak):.1f} MiB | {m(per_job):.0f} | {m(maxrss):.0f} MiB |")
PY
