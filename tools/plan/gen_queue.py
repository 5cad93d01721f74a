#!/usr/bin/env python3
# Writes a workload of N jobs all queued at the start (berth.v1.Workload JSON) for timing
# `berth-plan now` on large queues (docs/BENCHMARKS.md "Simulator and berth-plan"):
# 60 workspaces, priorities 0-3, memory 0.5-64 GiB, 10% of createdAt values equal, 5% in the
# database pool, 48 running jobs; budgets 1 TiB, 256 cores, 64 workers. Seeded: same N, same file.
#   python3 tools/plan/gen_queue.py 1000000 /tmp/q1m.json
import json, random, sys
random.seed(42)
n = int(sys.argv[1]); out = sys.argv[2]
with open(out, "w") as f:
    f.write('{"description":"%d queued jobs (planner timing)","startTime":"2026-11-23T09:00:00Z",' % n)
    f.write('"budgets":{"memoryBytes":"1099511627776","cpuMillis":"256000","maxWorkers":64,"pools":{"database":{"maxWorkers":8}},"workspaceMaxWorkers":16},')
    f.write('"running":[')
    for i in range(48):
        if i: f.write(",")
        f.write('{"spec":{"id":"run-%d","workspace":"ws-%02d","resources":{"cpuMillis":"2000","memoryBytes":"%d"},"expectedDuration":"%ds"},"startedAt":"2026-11-23T08:%02d:00Z"}' % (i, i % 60, random.choice([2,4,8,16]) << 30, random.randint(600, 7200), random.randint(0, 59)))
    f.write('],"jobs":[')
    for i in range(n):
        if i: f.write(",")
        ws = random.randrange(60)
        # created_at: a tenth of the jobs share one instant (ties), the rest spread over a day
        t = 0 if random.random() < 0.1 else random.randint(0, 86400)
        f.write('{"spec":{"id":"ws-%02d.job-%07d","workspace":"ws-%02d","priority":%d,"resources":{"cpuMillis":"%d","memoryBytes":"%d"},"expectedDuration":"%ds","createdAt":"2026-11-22T%02d:%02d:%02dZ"%s}}' % (
            ws, i, ws, random.choice([0,0,1,1,2,3]), random.choice([500,1000,2000,4000,8000]),
            int(2 ** random.uniform(29, 36)), random.randint(60, 14400), t // 3600 % 24, t // 60 % 60, t % 60,
            ',"pool":"database"' if random.random() < 0.05 else ""))
    f.write("]}\n")
