#!/usr/bin/env bash
# Re-runs one section of docs/BENCHMARKS.md and prints its table (Markdown),
# with the machine and its load, so a figure can be checked against the page.
#
#   bash tools/bench/run.sh SECTION [--quick]
#   bash tools/bench/run.sh list
#
# SECTION: planner forecast simulator store berthd logs dashboard docker launch
# soak fidelity (the page's sections, in its order). --quick runs the smallest
# sizes only: it checks that the section runs, not its figures.
#
# Environment:
#   BENCH_RUNS   runs per measurement, fresh process each (default 3; the
#                page gives medians of 3)
#   BENCH_BUILD  Bazel flags of the build measured (default --config=bench,
#                i.e. -c opt -O2 -DNDEBUG; set it empty for the default
#                build, which is what `bazel build //...` already holds)
#   BENCH_OUT    where the raw outputs are kept (default: a new temp dir)
#   BENCH_PARALLELISM  launch: the start slots measured (default 4, berthd's)
#
# Sections that drive Docker (docker, launch, logs, berthd's overhead, soak,
# fidelity) need the host's dockerd and berth-test/busybox:1 (tools/setup.sh);
# they label and remove their own containers. Nothing here stops or changes
# another process.
set -euo pipefail
cd "$(dirname "$0")/../.."

section="${1:-}"
quick=false
[ "${2:-}" = "--quick" ] && quick=true
runs="${BENCH_RUNS:-3}"
$quick && runs=1
build_flags="${BENCH_BUILD---config=bench}"
out="${BENCH_OUT:-$(mktemp -d /tmp/berth-bench.XXXXXX)}"
mkdir -p "$out"
table=tools/bench/table.py

usage() {
  sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
}

# shellcheck disable=SC2086
build() { bazel build --color=no --curses=no $build_flags "$@" >&2; }
# shellcheck disable=SC2086
bin() { echo "$(bazel info $build_flags bazel-bin 2>/dev/null)/$1"; }

header() {
  echo "## $section ($(date -u '+%Y-%m-%d %H:%M UTC'))"
  echo
  echo "Commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'); $(nproc) cores," \
       "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//');" \
       "load average at the start $(cut -d' ' -f1-3 /proc/loadavg); build: ${build_flags:-default};" \
       "$runs run(s) per measurement; raw outputs in $out."
  echo
}

# Google Benchmark: RUNS fresh processes, medians.
gbench() {  # BINARY FILTER [extra flags...]
  local binary=$1 filter=$2
  shift 2
  local files=()
  for r in $(seq "$runs"); do
    echo "run $r of $runs (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    "$binary" --benchmark_filter="$filter" --benchmark_format=json "$@" > "$out/gbench.$r.json"
    files+=("$out/gbench.$r.json")
  done
  /usr/bin/python3 "$table" gbench "${files[@]}"
}

# A tool printing one measurement a line: RUNS runs, one column each.
lines() {  # NAME COMMAND...
  local name=$1
  shift
  local files=()
  for r in $(seq "$runs"); do
    echo "$name: run $r of $runs (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    local rc=0
    "$@" > "$out/$name.$r.txt" 2> "$out/$name.$r.err" || rc=$?
    if [ "$rc" -ne 0 ]; then
      cat "$out/$name.$r.err" >&2
      echo "$name: run $r failed (exit $rc)" >&2
      return 1
    fi
    files+=("$out/$name.$r.txt")
  done
  /usr/bin/python3 "$table" lines "${files[@]}"
}

# One timed command: wall and CPU (user + sys) seconds, peak RSS.
timed() {  # NAME COMMAND...
  local name=$1
  shift
  lines "$name" /usr/bin/time -f "wall %e s, cpu %U + %S s, peak rss %M KB" \
    -o /dev/stdout "$@" > /dev/null
}

case "$section" in
  planner)
    build //planner/testing:plan_benchmark
    header
    if $quick; then f='BM_(Plan|PlanReused|SortReference)/10000/'
    else f='BM_(Plan|PlanReused|SortReference)/(100000|1000000)/|BM_PlanNodes'; fi
    gbench "$(bin planner/testing/plan_benchmark)" "$f"
    ;;
  forecast)
    build //planner/testing:plan_benchmark
    header
    if $quick; then f='BM_Estimate(Starts|TableFirst100)/10000/'
    else f='BM_Estimate(Starts|TableFirst100)/(100000|1000000)/|BM_SortReference/(100000|1000000)/'; fi
    gbench "$(bin planner/testing/plan_benchmark)" "$f"
    ;;
  simulator)
    build //tools:berth-plan //tools/plan:gen_examples //planner/simulator:simulator_benchmark
    header
    plan="$(bin tools/berth-plan)"
    if $quick; then
      timed simulate_week "$plan" simulate examples/week.json
    else
      "$(bin tools/plan/gen_examples)" --week 10000 120 35 "$out/steady10k.json" >&2
      echo "### simulate, 10,002 jobs over 35 days (steady10k)"; echo
      timed simulate_steady10k "$plan" simulate "$out/steady10k.json"
      echo; echo "### sweep of examples/week.json, 12 combinations"; echo
      timed sweep_week "$plan" sweep examples/week.json --max-workers 8,16,24 \
        --memory 128Gi,256Gi --cpus 16,32 --target-p95-wait 30m
      echo; echo "### the simulator alone (Google Benchmark)"; echo
      gbench "$(bin planner/simulator/simulator_benchmark)" 'BM_Simulate/(2000/7|10000/35)|BM_CountBaseline'
    fi
    ;;
  store)
    build //executor/store:store_benchmark
    header
    dir="$out/store"
    mkdir -p "$dir"
    if $quick; then lines store "$(bin executor/store/store_benchmark)" "$dir" --quick
    else lines store "$(bin executor/store/store_benchmark)" "$dir" --repeat=11; fi
    ;;
  berthd)
    build //server:berthd //tools:berth-load //server/ingest:job_validation_benchmark \
      //executor/reconcile:replan_benchmark
    header
    load="$(bin tools/berth-load)"
    berthd="$(bin server/berthd)"
    if $quick; then
      lines berthd_sync "$load" --berthd="$berthd" --jobs=10000 --readers=0 --duration=6s --work_dir="$out"
    else
      echo "### 100k and 1M jobs, isolated syncs (a fresh berthd per case)"; echo
      lines berthd_sync "$load" --berthd="$berthd" --million --readers=0 --duration=20s --work_dir="$out"
      echo; echo "### one event's replan at 1M queued, beside the incremental planner's"; echo
      lines berthd_replan "$(bin executor/reconcile/replan_benchmark)" --jobs=1000000 --runs=5
      echo; echo "### 100k jobs, 50 readers for 60 s"; echo
      lines berthd_readers "$load" --berthd="$berthd" --jobs=100000 --readers=50 --duration=60s --work_dir="$out"
      echo; echo "### ingest's node check, 100k jobs (Google Benchmark)"; echo
      gbench "$(bin server/ingest/job_validation_benchmark)" '.'
    fi
    ;;
  logs)
    build //executor/logs:log_capture_benchmark //executor/reconcile:log_follow_pass_benchmark
    header
    echo "### capturing a finished job's log (no engine)"; echo
    if $quick; then gbench "$(bin executor/logs/log_capture_benchmark)" '.' --benchmark_min_time=0.01
    else gbench "$(bin executor/logs/log_capture_benchmark)" '.'; fi
    echo; echo "### reconcile pass with a job printing heavily (real dockerd)"; echo
    if $quick; then lines log_follow_pass "$(bin executor/reconcile/log_follow_pass_benchmark)" 1 20
    else lines log_follow_pass "$(bin executor/reconcile/log_follow_pass_benchmark)" 5 200; fi
    ;;
  dashboard)
    build //server/web:dashboard_benchmark
    header
    if $quick; then lines dashboard "$(bin server/web/dashboard_benchmark)" --jobs=10000 --runs=3
    else lines dashboard "$(bin server/web/dashboard_benchmark)" --jobs=100000 --runs=7; fi
    ;;
  docker)
    build //executor/runtime/docker:docker_benchmark //executor/runtime/docker:cgroup_usage_benchmark
    header
    echo "### create, start, list (real dockerd)"; echo
    lines docker "$(bin executor/runtime/docker/docker_benchmark)"
    echo; echo "### one usage sweep over N running containers (fake cgroup tree)"; echo
    gbench "$(bin executor/runtime/docker/cgroup_usage_benchmark)" '.'
    ;;
  launch)
    build //executor/reconcile:launch_latency_benchmark //executor/reconcile:eta_hold_benchmark
    header
    echo "### admission to the job's process, beside a plain create+start loop (real dockerd)"; echo
    echo '```'
    "$(bin executor/reconcile/launch_latency_benchmark)" "$runs" "${BENCH_PARALLELISM:-4}"
    echo '```'
    echo; echo "### ETAs held in a real run, measured and fixed executor model"; echo
    jobs=40
    $quick && jobs=8
    echo '```'
    for model in measured fixed; do
      "$(bin executor/reconcile/eta_hold_benchmark)" "$model" "$jobs" 1
    done
    echo '```'
    ;;
  soak)
    build //server:berthd //tools:berth-load
    header
    minutes=60
    $quick && minutes=2
    sample=1m
    $quick && sample=20s
    # The plan-pass figure reads the child berthd's own metrics port.
    "$(bin tools/berth-load)" --mode=soak --berthd="$(bin server/berthd)" --readers=4 \
      --duration="${minutes}m" --sample_every="$sample" --out_dir="$out" --work_dir="$out" \
      --berthd_flags="--allowed_images=berth-test/* --memory=8Gi --cpus=2 --max_workers=4 --pool_max=database=2 --retain_terminal_jobs=30000" \
      > "$out/soak.txt"
    echo "Samples: $out/soak.csv, plot: $out/soak.svg"; echo
    /usr/bin/python3 "$table" lines "$out/soak.txt"
    ;;
  fidelity)
    build //server:berthd //tools:berthctl //tools:berth-plan //tools/fidelity:berth-fidelity
    header
    jobs=150
    $quick && jobs=16
    lines fidelity "$(bin tools/fidelity/berth-fidelity)" --berthd "$(bin server/berthd)" \
      --berthctl "$(bin tools/berthctl)" --berth-plan "$(bin tools/berth-plan)" \
      --jobs "$jobs" --scale 1.0 --seed 2
    ;;
  list)
    echo "planner forecast simulator store berthd logs dashboard docker launch soak fidelity"
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac
