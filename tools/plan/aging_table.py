#!/usr/bin/python3
"""Aging table: per-priority p95 / max wait (hours) of the jobs that started, from
`berth-plan simulate FILE --json --aging-interval I` for each interval.
Simulations are deterministic, so one run per interval.

usage: aging_table.py BERTH_PLAN FILE [INTERVAL ...]   (default intervals: 0 1h 2h 4h)

Prints one markdown row per interval; the first interval is the baseline the
ratios are taken against (give 0 first): top p95/max as a multiple of the
baseline's (target <= 1.5x) and the lowest's max as a fraction (target <= 0.5x).
Wait = start - ready (capacity wait, not dependency wait), as berth-plan's jobs table."""
import json, math, subprocess, sys


def waits_by_priority(berth_plan, path, interval):
    out = subprocess.run([berth_plan, 'simulate', path, '--json', '--aging-interval', interval],
                         capture_output=True, text=True)
    if out.returncode:
        sys.exit('berth-plan failed for %s %s: %s' % (path, interval, out.stderr.strip()))
    rows = json.loads(out.stdout)['tables']['jobs']
    by = {}
    for r in rows:
        if r.get('wait_s') is None:
            continue
        by.setdefault(int(r['priority']), []).append(r['wait_s'] / 3600.0)
    return by


def p95(xs):
    xs = sorted(xs)
    return xs[max(0, math.ceil(0.95 * len(xs)) - 1)]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    berth_plan, path = sys.argv[1], sys.argv[2]
    intervals = sys.argv[3:] or ['0', '1h', '2h', '4h']
    base = None
    print('| aging | top p95 / max | lowest p95 / max | middle max | top p95, max vs base | lowest max vs base |')
    print('|---|---|---|---|---|---|')
    for interval in intervals:
        by = waits_by_priority(berth_plan, path, interval)
        prios = sorted(by)
        top, low = by[prios[-1]], by[prios[0]]
        row = (p95(top), max(top), p95(low), max(low))
        if base is None:
            base = row
        mid = ', '.join('p%d %.2f' % (p, max(by[p])) for p in prios[1:-1])
        print('| %s | %.2f / %.2f | %.2f / %.2f | %s | %.2fx, %.2fx | %.2fx |' % (
            interval, row[0], row[1], row[2], row[3], mid,
            row[0] / base[0] if base[0] else float('nan'),
            row[1] / base[1] if base[1] else float('nan'),
            row[3] / base[3] if base[3] else float('nan')))


if __name__ == '__main__':
    main()
