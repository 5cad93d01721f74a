#!/usr/bin/env python3
# `berth-plan now` on a large queue against its floor, measured in the same run
# (docs/BENCHMARKS.md "`berth-plan now` on a million jobs against its floor").
#
# The floor (//tools/plan:plan-read-floor) parses the same file with simdjson
# and sorts one key per job: what any planner must pay to read the queue. The
# two run alternately, one process each, so that a noisy machine slows both
# sides of a pair alike; each figure is the process's CPU (user + sys, from
# wait4) and peak RSS, and the ratio is taken pair by pair.
#
#   python3 tools/plan/now_benchmark.py --berth-plan=bazel-out/k8-opt/bin/tools/berth-plan \
#       --floor=bazel-out/k8-opt/bin/tools/plan/plan-read-floor --jobs=1000000 --runs=3
#
# Without --workload, the workload is made by tools/plan/gen_queue.py (seeded:
# same --jobs, same file) in a temporary directory. Exits non-zero if either
# program fails or `now` prints no plan.
import argparse
import os
import statistics
import subprocess
import sys
import tempfile


def run(argv):
    """Runs argv to completion; returns (cpu seconds, peak RSS MiB, stdout bytes)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(argv, stdout=out, stderr=err)
        except OSError as e:
            sys.exit("cannot run %s: %s" % (argv[0], e))
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            tail = err.read().decode(errors="replace").strip()[-500:]
            sys.exit("%s exited %d: %s" % (argv[0], proc.returncode, tail))
        out.seek(0)
        text = out.read()
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, text


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--berth-plan", required=True)
    p.add_argument("--floor", required=True, help="the plan-read-floor binary")
    p.add_argument("--workload", help="a workload file (default: gen_queue.py --jobs)")
    p.add_argument("--jobs", type=int, default=1000000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--limit", type=int, default=100, help="rows `now` lists (and dates)")
    a = p.parse_args()
    if a.runs < 1:
        sys.exit("--runs must be at least 1")

    with tempfile.TemporaryDirectory() as tmp:
        workload = a.workload
        if workload is None:
            workload = os.path.join(tmp, "queue.json")
            gen = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_queue.py")
            subprocess.run([sys.executable, gen, str(a.jobs), workload], check=True)
        now_argv = [a.berth_plan, "now", workload, "--limit", str(a.limit)]
        rows = []
        for i in range(a.runs):
            floor_cpu, floor_rss, _ = run([a.floor, workload])
            now_cpu, now_rss, text = run(now_argv)
            if b"Plan now" not in text:
                sys.exit("berth-plan now printed no plan (run %d)" % (i + 1))
            rows.append((floor_cpu, floor_rss, now_cpu, now_rss))
            print("run %d: floor %.2f s CPU %.0f MiB | now %.2f s CPU %.0f MiB | now/floor %.2fx"
                  % (i + 1, floor_cpu, floor_rss, now_cpu, now_rss, now_cpu / max(floor_cpu, 1e-9)),
                  flush=True)

    ratios = [r[2] / max(r[0], 1e-9) for r in rows]
    median = lambda k: statistics.median(r[k] for r in rows)
    print("workload: %s" % (a.workload or "gen_queue.py %d" % a.jobs))
    print("floor (parse + sort keys): median %.2f s CPU, %.0f MiB peak" % (median(0), median(1)))
    print("now --limit %d: median %.2f s CPU, %.0f MiB peak" % (a.limit, median(2), median(3)))
    print("now / floor, pair by pair: median %.2fx (%.2f-%.2f)"
          % (statistics.median(ratios), min(ratios), max(ratios)))


if __name__ == "__main__":
    main()
