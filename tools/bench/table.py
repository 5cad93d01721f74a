#!/usr/bin/python3
"""Turns the output of several runs of one benchmark into the Markdown table
docs/BENCHMARKS.md shows. Standard library only.

    table.py gbench RUN1.json RUN2.json ...   # Google Benchmark --benchmark_format=json
    table.py lines RUN1.txt RUN2.txt ...      # a tool printing one measurement a line

gbench: one row per benchmark, the median of the runs' wall and CPU times and
of each user counter, with every run's wall time in brackets.
lines: one row per line of output (its text with the numbers taken out), one
column per run with that line's numbers, and the median of the first number.
A line whose text appears in only some runs is still shown (blank elsewhere).
"""

import json
import re
import statistics
import sys

NUMBER = re.compile(r"-?\d[\d,]*\.?\d*(?:e[-+]?\d+)?")


def fmt(x):
    if abs(x) >= 100:
        return "%.0f" % x
    if abs(x) >= 10:
        return "%.1f" % x
    return "%.2f" % x


def gbench(paths):
    rows = {}
    order = []
    for p in paths:
        for b in json.load(open(p))["benchmarks"]:
            if b.get("run_type") == "aggregate":
                continue
            name = b["name"]
            if name not in rows:
                rows[name] = {"unit": b.get("time_unit", "ns"), "real": [], "cpu": [], "counters": {}}
                order.append(name)
            r = rows[name]
            r["real"].append(b["real_time"])
            r["cpu"].append(b["cpu_time"])
            for k, v in b.items():
                if k in ("name", "run_name", "run_type", "repetitions", "repetition_index",
                         "threads", "iterations", "real_time", "cpu_time", "time_unit",
                         "family_index", "per_family_instance_index", "label", "error_occurred",
                         "error_message", "aggregate_name", "aggregate_unit"):
                    continue
                if isinstance(v, (int, float)):
                    r["counters"].setdefault(k, []).append(v)
    print("| benchmark | wall, median (runs) | CPU, median | counters (medians) |")
    print("|---|---|---|---|")
    for name in order:
        r = rows[name]
        u = r["unit"]
        counters = ", ".join("%s %s" % (k, fmt(statistics.median(v))) for k, v in sorted(r["counters"].items()))
        print("| %s | %s %s (%s) | %s %s | %s |" % (
            name, fmt(statistics.median(r["real"])), u, ", ".join(fmt(x) for x in r["real"]),
            fmt(statistics.median(r["cpu"])), u, counters))


def lines(paths):
    runs = []
    order = []
    for p in paths:
        table = {}
        for line in open(p, errors="replace"):
            line = line.rstrip()
            numbers = NUMBER.findall(line)
            if not numbers:
                continue
            key = re.sub(r"\s+", " ", NUMBER.sub("#", line)).strip()
            if key not in order:
                order.append(key)
            table[key] = numbers
        runs.append(table)
    print("| measurement | " + " | ".join("run %d" % (i + 1) for i in range(len(runs))) + " | median of the first figure |")
    print("|---|" + "---|" * len(runs) + "---|")
    for key in order:
        cells = [" / ".join(t.get(key, [])) for t in runs]
        firsts = [float(t[key][0].replace(",", "")) for t in runs if key in t]
        print("| %s | %s | %s |" % (key.replace("|", "/"), " | ".join(cells),
                                      fmt(statistics.median(firsts)) if firsts else ""))


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("gbench", "lines"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    (gbench if sys.argv[1] == "gbench" else lines)(sys.argv[2:])
