#!/usr/bin/python3
"""Turns the output of several runs of one benchmark into the Markdown table
docs/BENCHMARKS.md shows. Standard library only.

    table.py gbench RUN1.json RUN2.json ...   # Google Benchmark --benchmark_format=json
    table.py lines RUN1.txt RUN2.txt ...      # a tool printing one measurement a line

gbench: one row per benchmark, the median of the runs' wall and CPU times and
of each user counter, with every run's wall time in brackets.
lines: one row per line of output, named by its text with the figures that
differ between runs shown as "·" (figures equal in every run stay in the
name); one column per run with those figures, and their medians. A line that
appears in only some runs is still shown (blank elsewhere).
"""

import json
import re
import statistics
import sys

# A figure: not part of a name (ws7, v1.41), a minus sign only where no word precedes it.
NUMBER = re.compile(r"(?<![A-Za-z_\d.])(?:(?<![\w])-)?\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+]?\d+)?")


def fmt(x):
    if x != 0 and abs(x) < 0.01:
        return "%.3g" % x
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
            if not NUMBER.search(line):
                continue
            key = re.sub(r"\s+", " ", NUMBER.sub("#", line)).strip()
            if key not in order:
                order.append(key)
            table[key] = NUMBER.findall(line)
        runs.append(table)
    print("| measurement | " + " | ".join("run %d" % (i + 1) for i in range(len(runs)))
          + " | median |")
    print("|---|" + "---|" * len(runs) + "---|")
    for key in order:
        values = [t[key] for t in runs if key in t]
        width = min(len(v) for v in values)
        # A figure equal in every run (a size, a count asked for) stays in the
        # measurement's name; the others are the runs' figures. With one run,
        # every figure is a figure.
        varying = [j for j in range(width)
                   if len(runs) == 1 or len({v[j] for v in values}) > 1 or len(values) < len(runs)]
        parts = key.split("#")
        name = parts[0]
        for j in range(1, len(parts)):
            name += ("·" if (j - 1) in varying or j - 1 >= width else values[0][j - 1]) + parts[j]
        cells = [" / ".join(t[key][j] for j in varying) if key in t else "" for t in runs]
        medians = " / ".join(fmt(statistics.median(float(v[j].replace(",", "")) for v in values))
                             for j in varying)
        print("| %s | %s | %s |" % (name.replace("|", "/"), " | ".join(cells), medians))


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("gbench", "lines"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    (gbench if sys.argv[1] == "gbench" else lines)(sys.argv[2:])
