#!/usr/bin/env bash
# CLI tests of berth-plan on the examples: exact outputs (goldens) where the
# output is deterministic, bad input (exit 2, clear message, no output file),
# the SVG parsed as XML with the expected series, and the count-only
# baseline's overcommit on a hand-computed case.
#
# Update the goldens after a deliberate change:
#   bazel run //tools:berth_plan_test -- --update
set -uo pipefail

BIN="$1"
shift
UPDATE=0
[ "${1:-}" = "--update" ] && UPDATE=1
PY=/usr/bin/python3
TD=tools/plan/testdata
OUT="${TEST_TMPDIR:-$(mktemp -d)}"
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# golden NAME ARGS...: stdout of berth-plan ARGS must equal $TD/NAME.
golden() {
  local name="$1"
  shift
  local got="$OUT/$name"
  "$BIN" "$@" >"$got" 2>"$OUT/$name.err"
  local rc=$?
  [ "$rc" -eq 0 ] || { fail "$name: exit $rc: $(cat "$OUT/$name.err")"; return; }
  # Progress goes to stderr only on a terminal; here stderr is a file.
  [ ! -s "$OUT/$name.err" ] || fail "$name: wrote to stderr: $(cat "$OUT/$name.err")"
  if [ "$UPDATE" -eq 1 ]; then
    cp "$got" "$BUILD_WORKSPACE_DIRECTORY/$TD/$name"
    echo "updated $TD/$name"
  elif ! diff -u "$TD/$name" "$got" >"$OUT/$name.diff"; then
    fail "$name differs from $TD/$name:"
    head -40 "$OUT/$name.diff" >&2
  fi
}

# bad NAME EXPECTED_SUBSTRING ARGS...: exit 2, message on stderr, no stdout.
bad() {
  local name="$1" want="$2"
  shift 2
  "$BIN" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "$name: exit $rc, want 2"
  grep -qF -- "$want" "$OUT/$name.err" || fail "$name: stderr lacks '$want': $(cat "$OUT/$name.err")"
  [ ! -s "$OUT/$name.out" ] || fail "$name: wrote to stdout"
}

# --- exact outputs -----------------------------------------------------------
golden simulate_burst.txt simulate examples/burst.json
golden compare_starvation.json compare examples/starvation.json --json
golden now_snapshot.txt now examples/snapshot-small.json --memory 256Mi --cpus 2 \
  --max-workers 2 --pool-max database=1
golden sweep_burst.csv sweep examples/burst.json --max-workers 16,24 --memory 128Gi,256Gi \
  --target-p95-wait 3h --csv
golden simulate_budgets_file.txt simulate examples/burst.json --budgets "$TD/budgets.txt" \
  --max-workers 32
golden rightsize_workload.txt rightsize "$TD/rightsize_workload.json"
[ "$UPDATE" -eq 1 ] && exit 0

# --aging-top-memory reaches the planner: 24h is the default, 0 forgets the
# top priority as soon as its last job leaves, which changes week.json's waits.
"$BIN" simulate examples/week.json --json >"$OUT/mem_default"
"$BIN" simulate examples/week.json --json --aging-top-memory 24h >"$OUT/mem_24h"
"$BIN" simulate examples/week.json --json --aging-top-memory 0 >"$OUT/mem_0"
cmp -s "$OUT/mem_default" "$OUT/mem_24h" || fail "--aging-top-memory 24h is not the default"
cmp -s "$OUT/mem_default" "$OUT/mem_0" && fail "--aging-top-memory 0 changed nothing"

# Same input, same bytes.
"$BIN" simulate examples/week.json --json >"$OUT/w1" && "$BIN" simulate examples/week.json --json >"$OUT/w2"
cmp -s "$OUT/w1" "$OUT/w2" || fail "simulate is not deterministic"
$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["summary"]["jobs"] >= 2000; assert d["summary"]["not_run"] == 0' "$OUT/w1" \
  || fail "week --json is not valid JSON with the expected summary"

# --start-jitter: the same seed gives the same bytes, another seed other
# starts; the summary says what was modelled.
J="simulate examples/burst.json --json --start-jitter 2s"
"$BIN" $J --jitter-seed 1 >"$OUT/j1" && "$BIN" $J --jitter-seed 1 >"$OUT/j1b" \
  && "$BIN" $J --jitter-seed 2 >"$OUT/j2" && "$BIN" simulate examples/burst.json --json >"$OUT/j0" \
  || fail "simulate --start-jitter failed"
cmp -s "$OUT/j1" "$OUT/j1b" || fail "simulate --start-jitter is not deterministic for a seed"
$PY - "$OUT/j0" "$OUT/j1" "$OUT/j2" <<'PYEOF' || fail "--start-jitter did not move the starts"
import json, sys
runs = [json.load(open(p)) for p in sys.argv[1:]]
starts = [{j["job"]: j["started_s"] - j["admitted_s"] for j in r["tables"]["jobs"]} for r in runs]
assert "start_jitter_s" not in runs[0]["summary"]
assert runs[1]["summary"]["start_jitter_s"] == 2 and runs[1]["summary"]["jitter_seed"] == 1
assert starts[1] != starts[2] and starts[1] != starts[0]
latency = runs[0]["summary"]["start_latency_s"]
assert all(abs(starts[1][j] - starts[0][j]) <= 2 + 1e-9 for j in starts[0] if starts[0][j] == latency)
PYEOF

# --- the count-only baseline's overcommit, hand-computed ----------------------
# 64 GiB, MAX_WORKERS=4, four 24 GiB jobs at once: 96 GiB committed, 32 GiB over.
"$BIN" compare "$TD/overcommit.json" --json >"$OUT/over.json" || fail "compare overcommit failed"
$PY - "$OUT/over.json" <<'PYEOF' || fail "overcommit figures"
import json, sys
rows = {r["metric"]: r for r in json.load(open(sys.argv[1]))["tables"]["comparison"]}
assert rows["memory_over_budget_bytes"]["count_only"] == 32 * 2**30, rows["memory_over_budget_bytes"]
assert rows["memory_over_budget_bytes"]["berth"] == 0
assert rows["peak_memory_bytes"]["count_only"] == 96 * 2**30
assert rows["peak_memory_bytes"]["berth"] == 49 * 2**30
PYEOF
"$BIN" compare "$TD/overcommit.json" | grep -qF "would have committed up to 32 GiB above the 64 GiB memory budget" \
  || fail "compare's note on the overcommit"
# compare states only what it measured: jobs running above the budget at the
# start put Berth above it too.
"$BIN" compare "$TD/running_above.json" >"$OUT/above.txt" || fail "compare running_above failed"
grep -qF "Berth reserved up to 8 GiB above the 24 GiB memory budget (32 GiB at +0s)" "$OUT/above.txt" \
  || fail "compare's note on Berth above the budget: $(cat "$OUT/above.txt")"
! grep -qi "never exceeds" "$OUT/above.txt" || fail "compare claims Berth never exceeds the budget"
# memory peak (a fraction) and peak memory reserved (bytes) are one measurement.
"$BIN" compare "$TD/running_above.json" --json >"$OUT/above.json" || fail "compare --json"
$PY - "$OUT/above.json" <<'PYEOF' || fail "compare peaks disagree"
import json, sys
rows = {r["metric"]: r for r in json.load(open(sys.argv[1]))["tables"]["comparison"]}
for who in ("berth", "count_only"):
    frac = rows["memory_peak"][who]
    peak = rows["peak_memory_bytes"][who]
    assert abs(frac * 24 * 2**30 - peak) < 2**30 * 0.01, (who, frac, peak)
PYEOF

# The promises' workloads: the big job behind overrunning small jobs
# waits minutes, not the whole stream; identical workspaces get the same p50.
"$BIN" simulate "$TD/overrun.json" --json >"$OUT/overrun.json" || fail "simulate overrun failed"
$PY - "$OUT/overrun.json" <<'PYEOF' || fail "overrun: the big job waited too long"
import json, sys
jobs = {j["job"]: j for j in json.load(open(sys.argv[1]))["tables"]["jobs"]}
assert jobs["big"]["wait_s"] <= 1800, jobs["big"]
PYEOF
"$BIN" simulate "$TD/identical.json" --json >"$OUT/identical.json" || fail "simulate identical failed"
$PY - "$OUT/identical.json" <<'PYEOF' || fail "identical workspaces: p50 waits differ by more than 1.5x"
import json, sys
p50 = [r["p50_wait_s"] for r in json.load(open(sys.argv[1]))["tables"]["by_workspace"]]
assert len(p50) == 20 and min(p50) > 0 and max(p50) <= 1.5 * min(p50), p50
PYEOF

# now --at: jobs that have not arrived (or whose dependency has not) are
# absent, not rejected; c arrives at 10m, b at 30m (its
# dependency a at 2h).
"$BIN" now "$TD/late_dependency.json" --at 10m --json >"$OUT/late.json" || fail "now --at 10m failed"
$PY - "$OUT/late.json" <<'PYEOF' || fail "now --at 10m: a dependant of a job not yet arrived is not absent"
import json, sys
rows = json.load(open(sys.argv[1]))["tables"]["decisions"]
assert [r["job"] for r in rows] == ["c"], rows
PYEOF
# now --limit N lists the first N jobs of the ranking, the summary counts all.
"$BIN" now examples/burst.json --at 30m --limit 3 --json >"$OUT/limit.json" || fail "now --limit 3 failed"
"$BIN" now examples/burst.json --at 30m --json >"$OUT/nolimit.json" || fail "now failed"
$PY - "$OUT/limit.json" "$OUT/nolimit.json" <<'PYEOF' || fail "now --limit 3: not the first 3 rows of the full listing"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
rows_a, rows_b = a["tables"]["decisions"], b["tables"]["decisions"]
assert len(rows_a) == 3 and rows_a == rows_b[:3], (len(rows_a), len(rows_b))
assert a["summary"]["queued"] == b["summary"]["queued"] > 3
assert a["summary"]["shown"] == 3
PYEOF
bad bad_limit '--limit: "x": expected a whole number >= 0' now examples/week.json --limit x

# The moment of a run as a workload: simulate --until and now --state-out
# write the same state, and planning it again gives now --at's plan.
"$BIN" simulate examples/burst.json --until 30m >"$OUT/state30.json" || fail "simulate --until failed"
"$BIN" now examples/burst.json --at 30m --state-out "$OUT/state30b.json" --json >"$OUT/at30.json" \
  || fail "now --at --state-out failed"
cmp -s "$OUT/state30.json" "$OUT/state30b.json" || fail "simulate --until and now --state-out differ"
"$BIN" now "$OUT/state30.json" --json >"$OUT/again30.json" || fail "now on the written state failed"
$PY - "$OUT/at30.json" "$OUT/again30.json" <<'PYEOF' || fail "the written state plans differently"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["tables"]["decisions"] == b["tables"]["decisions"], "decisions differ"
assert a["summary"]["running"] == b["summary"]["running"] > 0, (a["summary"], b["summary"])
PYEOF
# The state carries the planner's memory and when each queued job was queued;
# a memory naming a job the file does not have is an error naming the field.
$PY - "$OUT/state30.json" "$OUT/ghost30.json" <<'PYEOF' || fail "the written state lacks the planner's memory"
import json, sys
s = json.load(open(sys.argv[1]))
m = s["plannerMemory"]
assert m.get("workspaceTurns") and m.get("reservationHolder"), m
queued = [j for j in s["jobs"] if "arrivalOffset" not in j]
assert queued and all("queuedAt" in j for j in queued), queued[:2]
m["reservationHolder"] = "ghost"
json.dump(s, open(sys.argv[2], "w"))
PYEOF
bad ghost_holder "plannerMemory.reservationHolder 'ghost' is not a job of the workload's jobs" \
  now "$OUT/ghost30.json"
bad until_zero '--until: must be > 0' simulate examples/burst.json --until 0s
bad state_out_alone '--state-out needs --until' simulate examples/burst.json --state-out x.json

# A waiting job's ETA is never "now" and always after now.
"$BIN" now examples/burst.json --at 30m --json >"$OUT/at.json" || fail "now --at 30m failed"
$PY - "$OUT/at.json" <<'PYEOF' || fail "now --at 30m: ETA now for a waiting job"
import json, sys
rows = json.load(open(sys.argv[1]))["tables"]["decisions"]
waiting = [r for r in rows if r["verdict"] == "WAIT" and r["eta_kind"] != "unknown"]
assert len(waiting) > 50, len(waiting)
for r in waiting:
    assert r["eta_kind"] in ("reserved", "if_estimates_hold") and r["eta_s"] > 0, r
PYEOF

# --- SVG: well-formed XML with the expected series ---------------------------
"$BIN" compare examples/burst.json --svg "$OUT/burst.svg" >/dev/null || fail "compare --svg"
"$BIN" chart examples/starvation.json --svg "$OUT/starv.svg" --baseline >/dev/null || fail "chart --svg"
"$BIN" sweep examples/burst.json --max-workers 8,16,24 --svg "$OUT/sweep.svg" >/dev/null || fail "sweep --svg"
$PY - "$OUT/burst.svg" "$OUT/starv.svg" "$OUT/sweep.svg" <<'PYEOF' || fail "SVG checks"
import sys
import xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
for path, panels, series in ((sys.argv[1], 4, {"Berth", "count-only MAX_WORKERS=24"}),
                             (sys.argv[2], 4, {"Berth", "count-only MAX_WORKERS=24"}),
                             (sys.argv[3], 3, {"memory reserved"})):
    root = ET.parse(path).getroot()
    assert root.tag == NS + "svg", root.tag
    groups = root.iter(NS + "g")
    got_panels = [g for g in root.iter(NS + "g") if g.get("class") == "panel"]
    assert len(got_panels) == panels, (path, len(got_panels))
    names = {g.get("data-name") for g in root.iter(NS + "g") if g.get("class") == "series"}
    assert names == series, (path, names)
    budgets = [l for l in root.iter(NS + "line") if l.get("class") == "budget"]
    assert len(budgets) >= 3 if panels == 4 else len(budgets) == panels, (path, len(budgets))
    texts = [t.text for t in root.iter(NS + "text")]
    if panels == 4:
        for want in ("memory (GiB)", "CPU (cores)", "running jobs", "queued jobs",
                     "time since start (hours)", "budget"):
            assert want in texts, (path, want)
    for poly in root.iter(NS + "polyline"):
        assert len(poly.get("points").split()) >= 2, path
PYEOF

# --- bad input: exit 2, a clear message, nothing written ---------------------
bad unknown_unit '--memory: "256Gx": unknown unit "Gx"' simulate examples/burst.json --memory 256Gx
bad bad_cpu '--cpus: "lots": not a CPU amount' simulate examples/burst.json --cpus lots
bad bad_wait '--target-p95-wait: "2 hours": unknown unit "hours"' \
  sweep examples/burst.json --max-workers 8,16 --target-p95-wait "2 hours"
bad zero_budget 'flags: budgets: max workers must be > 0, got 0' simulate examples/burst.json --max-workers 0
bad list_outside_sweep 'comma lists are for' simulate examples/burst.json --max-workers 8,16
bad unknown_flag "unknown flag --colour for 'simulate'" simulate examples/burst.json --colour red
bad negative_top_memory '--aging-top-memory: "-1h": must not be negative' simulate examples/burst.json \
  --aging-top-memory -1h
bad negative_jitter '--start-jitter: "-5ms": must not be negative' simulate examples/burst.json --start-jitter -5ms
bad bad_jitter_seed '--jitter-seed: expected a whole number >= 0' \
  simulate examples/burst.json --start-jitter 5ms --jitter-seed x
bad no_file "'simulate' needs exactly one workload or snapshot FILE" simulate
bad missing_file 'nope.json' simulate nope.json
bad unknown_command "unknown command 'simulat'" simulat examples/burst.json
bad duplicate "$TD/duplicate.json: job 'same' (jobs[1]): duplicate id" simulate "$TD/duplicate.json" \
  --memory 1Gi --cpus 1 --max-workers 1
bad zero_memory "$TD/zero.json: job 'tiny' (jobs[0]): spec.resources.memoryBytes must be > 0, got 0" \
  simulate "$TD/zero.json" --memory 1Gi --cpus 1 --max-workers 1
bad empty "$TD/empty.json: no jobs" simulate "$TD/empty.json" --memory 1Gi --cpus 1 --max-workers 1
bad unknown_field 'gpus' simulate "$TD/unknown_field.json" --memory 1Gi --cpus 1 --max-workers 1
bad no_budgets "has no budgets; pass --memory, --cpus, --max-workers or --budgets FILE" \
  simulate examples/snapshot-small.json
bad unknown_pool "pool 'database' has no budget; add --pool-max database=N" \
  now examples/snapshot-small.json --memory 1Gi --cpus 2 --max-workers 2
bad budgets_file "$TD/bad_budgets.txt:1: memory: \"256Gx\": unknown unit" \
  simulate examples/burst.json --budgets "$TD/bad_budgets.txt"
# No partial output: a failing run with --svg leaves no file (nor temp file).
bad svg_not_written 'duplicate id' simulate "$TD/duplicate.json" --memory 1Gi --cpus 1 \
  --max-workers 1 --svg "$OUT/never.svg"
[ ! -e "$OUT/never.svg" ] || fail "a failed run wrote its --svg file"
ls "$OUT" | grep -q '\.tmp\.' && fail "temporary files left behind"

# Help exits 0.
# (grep reads it all: -q would close the pipe early under pipefail)
"$BIN" help sweep | grep -F -- "--target-p95-wait" >/dev/null || fail "help sweep"

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "all berth-plan CLI checks passed"
