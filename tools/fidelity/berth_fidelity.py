#!/usr/bin/python3
"""berth-fidelity: runs a sleep-job workload for real on a fresh berthd and
compares it with berth-plan's simulation of the same snapshot (issue 15).

It generates a snapshot of --jobs sleep jobs (three projects of priority 1
plus background work of priority 0; durations uniform in 1-10 simulated
minutes, background 10-20, scaled to --scale seconds per minute; all created at the
same instant, aging off so that berthd and the simulation rank alike),
starts berthd on 127.0.0.1 with budgets 1 GiB / 2 cores / 24 workers and a
500 ms tick against the real dockerd, pushes the snapshot, waits for every
job to end, and reads each job's admitted/started/finished times (berthctl)
and each container's exit time (Docker's "die" events). Then it runs
berth-plan simulate three times: the planner alone; with the executor
latencies berthd measured in this run (medians of one start's own time --
admission to RUNNING of jobs admitted while a start slot was free -- with
berthd's 4 start slots, and of container exit to outcome recorded); and
with what berthd exported (berth-plan --executor-metrics on its metrics,
saved before it stopped).
Reported per simulation:
  makespan error    (simulated - real) / real; the real makespan runs from
                    the push to the last outcome recorded
  tau               Kendall's tau-b between the real and the simulated
                    admission times. Jobs admitted in one planning pass
                    carry the same admission time on either side (berthd
                    stamps a pass's admissions with one instant), and tau-b
                    counts such pairs as ties, not as orderings to agree on
  start error       |real - simulated| admission offset per job, median, p95
and for the real run: start latency and capacity held beyond the run
(outcome recorded - container exit), median and p95; "stability", the tau
of the calibrated simulation against itself with the start latency 20%
off (below 1: the workload has near-ties the executor's noise can flip).

Every run is kept (--dir, or a temporary directory): --replay DIR compares
a kept run again without running it (e.g. another berth-plan), --against
DIR2 also compares it with a second real run of the same workload (how far
the real executor repeats its own order: the ceiling of any simulation's
tau), --passes prints the admitted sets pass by pass up to the first
difference.

--max-makespan-error / --min-tau: exit 1 unless the simulations named by
--gate (default calibrated) meet them; --min-stability likewise (the CI
test, //tools/fidelity:fidelity_test). Needs root-equivalent access to the Docker socket
and the image berth-test/busybox:1 (tools/setup.sh). Uses only Debian's
python3 and the docker CLI (events).
"""
import argparse, datetime, json, os, random, signal, subprocess, sys, tempfile, time
import urllib.request

p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
p.add_argument("--berthd")
p.add_argument("--berthctl")
p.add_argument("--berth-plan", required=True)
p.add_argument("--jobs", type=int, default=60)
p.add_argument("--scale", type=float, default=0.5, help="seconds per simulated minute")
p.add_argument("--seed", type=int, default=1)
p.add_argument("--json", action="store_true", help="one JSON object instead of text")
p.add_argument("--max-makespan-error", type=float, default=None, help="fraction, e.g. 0.05")
p.add_argument("--min-tau", type=float, default=None)
p.add_argument("--replay", metavar="DIR",
               help="no real run: compare with the run kept in DIR (real.json, die.txt)")
p.add_argument("--sim-arg", action="append", default=[],
               help="extra argument for berth-plan simulate (repeatable)")
p.add_argument("--against", metavar="DIR",
               help="also compare the real run with another real run kept in DIR (same "
                    "--jobs/--seed): how far the executor repeats itself, the ceiling of tau")
p.add_argument("--min-stability", type=float, default=None,
               help="exit 1 unless the simulated order survives a 20%% start-latency change "
                    "with tau >= this (the workload has no near-tie the noise could flip)")
p.add_argument("--dir", help="keep the run in DIR (created; default: a new temporary directory)")
p.add_argument("--gate", action="append", choices=["calibrated", "metrics", "planner_only"],
               help="the simulation(s) --max-makespan-error/--min-tau apply to "
                    "(repeatable; default calibrated)")
p.add_argument("--latency-factor", type=float, default=1.0,
               help="multiply the measured latencies by F in the calibrated simulation "
                    "(to check that the gate can fail)")
p.add_argument("--passes", action="store_true",
               help="print the admitted sets per pass, real against calibrated")
a = p.parse_args()
if not a.replay and not (a.berthd and a.berthctl):
    p.error("--berthd and --berthctl are needed unless --replay")
PARALLELISM = 4  # berthd's --start_parallelism default

rnd = random.Random(a.seed)

def run_real():
    """Runs the workload on a fresh berthd; returns (run dir, push time, jobs by id)."""
    if a.dir:
        os.makedirs(a.dir)
        d = a.dir
    else:
        d = tempfile.mkdtemp(prefix="berth-fidelity.")
    # Unique per run (container names are berth-<job id>, labels carry the
    # instance): concurrent runs, in or out of Bazel's sandbox, never meet.
    tag = os.urandom(3).hex()
    inst = f"fidelity-{tag}"
    port = 20000 + 2 * random.Random().randrange(10000)
    metrics = f"http://127.0.0.1:{port + 1}/metrics"
    tok = os.urandom(16).hex()
    old = os.umask(0o077)
    with open(f"{d}/tokens", "w") as f:
        f.write(f"pusher fidelity {tok}\n")
    os.umask(old)
    created = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    jobs = []
    for i in range(a.jobs):
        ws = ["proj-a", "proj-b", "proj-c", "background"][i % 4 if rnd.random() < 0.8 else 3]
        # Continuous durations: no two jobs end at the same simulated instant by
        # construction (the simulation would plan such ends together, berthd one
        # by one as its events come).
        minutes = rnd.uniform(10, 20) if ws == "background" else rnd.uniform(1, 10)
        secs = round(minutes * a.scale, 3)
        jobs.append({"id": f"{ws}.{i:03d}.{tag}", "workspace": ws, "action": "run",
                     "image": "berth-test/busybox:1", "argv": ["sleep", str(secs)],
                     "priority": 0 if ws == "background" else 1,
                     "resources": {"cpuMillis": str(rnd.choice([250, 500, 1000])),
                                   "memoryBytes": str(rnd.choice([64, 96, 128, 192, 256]) << 20)},
                     "expectedDuration": f"{secs}s", "maxDuration": f"{round(secs * 10 + 60)}s",
                     "createdAt": created})
    with open(f"{d}/snapshot.json", "w") as f:
        json.dump({"generation": "1", "jobs": jobs}, f)

    berthd = subprocess.Popen(
        [a.berthd, f"--listen=127.0.0.1:{port}", f"--token_file={d}/tokens", f"--data_dir={d}/state",
         f"--instance={inst}", "--allowed_images=berth-test/*", "--tick=500ms", "--aging_interval=0s",
         "--memory=1Gi", "--cpus=2", "--max_workers=24", f"--metrics_listen=127.0.0.1:{port + 1}"],
        stderr=open(f"{d}/berthd.log", "w"))
    events = subprocess.Popen(
        ["docker", "events", "--filter", f"label=berth.instance={inst}", "--filter", "event=die",
         "--format", '{{.TimeNano}} {{index .Actor.Attributes "berth.job"}}'],
        stdout=open(f"{d}/die.txt", "w"), stderr=subprocess.DEVNULL)
    env = dict(os.environ, BERTH_SERVER=f"127.0.0.1:{port}", BERTH_TOKEN=tok)

    def ctl(*args):
        return subprocess.run([a.berthctl, *args], env=env, capture_output=True, text=True)

    def active():
        out = ctl("--json", "list", "--state", "QUEUED", "--state", "ADMITTED", "--state", "RUNNING",
                  "--all").stdout.strip()
        return bool(out) and bool(json.loads(out).get("jobs"))

    try:
        deadline = time.time() + 60
        while ctl("list").returncode != 0:  # berthd answers once it has recovered
            if berthd.poll() is not None or time.time() > deadline:
                sys.exit("berthd did not come up: " + open(f"{d}/berthd.log").read()[-2000:])
            time.sleep(0.1)
        t0 = time.time()
        pushed = ctl("push", f"{d}/snapshot.json")
        if pushed.returncode != 0:
            sys.exit("push failed: " + pushed.stderr)
        limit = t0 + 60 + 40 * a.scale * a.jobs
        while active():
            if time.time() > limit:
                sys.exit("jobs did not finish in time")
            time.sleep(0.2)
        real = {j["spec"]["id"]: j for j in json.loads(ctl("--json", "list", "--all").stdout)["jobs"]}
        # What berth-plan --executor-metrics reads from a live berthd.
        with urllib.request.urlopen(metrics, timeout=10) as r, open(f"{d}/metrics.txt", "wb") as f:
            f.write(r.read())
    except BaseException:
        events.terminate()
        raise
    finally:
        berthd.send_signal(signal.SIGTERM)
        berthd.wait()
    # Every container has ended (each job's outcome is recorded) and berthd is
    # gone; give the events stream a moment to deliver the last "die".
    time.sleep(0.5)
    events.terminate()
    events.wait()
    with open(f"{d}/real.json", "w") as f:
        json.dump({"t0": t0, "jobs": real, "scale": a.scale, "seed": a.seed,
                   "load_average": os.getloadavg()[0]}, f)
    return d, t0, real


if a.replay:
    d = a.replay
    with open(f"{d}/real.json") as f:
        kept = json.load(f)
    t0, real, load = kept["t0"], kept["jobs"], kept.get("load_average", float("nan"))
    a.jobs, a.scale, a.seed = len(real), kept.get("scale", a.scale), kept.get("seed", a.seed)
else:
    d, t0, real = run_real()
    load = os.getloadavg()[0]


def ts(s):
    main, _, frac = s.rstrip("Z").partition(".")
    t = datetime.datetime.strptime(main, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc)
    return t.timestamp() + float("0." + (frac or "0"))


def quantile(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * q))] if xs else float("nan")


def tau_b(x, y):
    conc = disc = tx = ty = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            dx = (x[i] > x[j]) - (x[i] < x[j])
            dy = (y[i] > y[j]) - (y[i] < y[j])
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tx += 1
            elif dy == 0:
                ty += 1
            elif dx == dy:
                conc += 1
            else:
                disc += 1
    denom = ((conc + disc + tx) * (conc + disc + ty)) ** 0.5
    return (conc - disc) / denom if denom else 1.0


def passes(times):
    """Jobs grouped by admission time (one group per planning pass), in order."""
    groups = {}
    for i, t in times.items():
        groups.setdefault(round(t, 6), set()).add(i)
    return [groups[t] for t in sorted(groups)]


def print_passes(simulated):
    """The admitted sets pass by pass, real against simulated, up to the first difference
    and a few beyond it (the diagnosis of a low tau)."""
    rp, sp = passes(admitted), passes(simulated)
    rt = sorted({round(t, 6) for t in admitted.values()})
    st = sorted({round(t, 6) for t in simulated.values()})
    shown = 0
    for k in range(max(len(rp), len(sp))):
        r = rp[k] if k < len(rp) else set()
        s = sp[k] if k < len(sp) else set()
        same = r == s
        if not same or shown:
            shown += 1
        mark = "  " if same else "!="
        print(f"{mark} pass {k}: real {rt[k] if k < len(rt) else float('nan'):8.2f}s "
              f"{sorted(r - s) if not same else len(r)}  sim "
              f"{st[k] if k < len(st) else float('nan'):8.2f}s {sorted(s - r) if not same else ''}")
        if shown > 8:
            break


died = {}
for line in open(f"{d}/die.txt"):
    t, job = line.split()
    died.setdefault(job, int(t) / 1e9)
ids = sorted(real)
failed = [i for i in ids if real[i]["state"] != "JOB_STATE_SUCCEEDED"]
if failed or len(ids) != a.jobs:
    sys.exit(f"{len(failed)} jobs did not succeed: {failed[:5]} (logs in {d})")
admitted = {i: ts(real[i]["admittedAt"]) - t0 for i in ids}
start_latency = [ts(real[i]["startedAt"]) - ts(real[i]["admittedAt"]) for i in ids]
# One start's own time (what the simulation's start slots take): the latency
# of jobs admitted while a start slot was free (fewer than --start_parallelism
# other starts in flight), so that waiting for a slot is not counted twice.
spans = [(ts(real[i]["admittedAt"]), ts(real[i]["startedAt"])) for i in ids]
service = [e - b for b, e in spans
           if sum(1 for b2, e2 in spans if b2 < b and e2 > b) < PARALLELISM]
held = [ts(real[i]["finishedAt"]) - died[i] for i in ids if i in died]
real_makespan = max(ts(real[i]["finishedAt"]) for i in ids) - t0
result = {"jobs": a.jobs, "scale_s_per_min": a.scale, "seed": a.seed,
          "load_average": load, "real_makespan_s": real_makespan,
          "start_latency_median_s": quantile(start_latency, 0.5),
          "start_latency_p95_s": quantile(start_latency, 0.95),
          "held_beyond_run_median_s": quantile(held, 0.5),
          "held_beyond_run_p95_s": quantile(held, 0.95), "simulations": {}}
def latency_flags(sl, fl):
    return ["--start-latency", f"{sl:.3f}s", "--finish-latency", f"{fl:.3f}s",
            "--start-parallelism", str(PARALLELISM if sl > 0 else 0)]


# planner_only: no executor latencies; calibrated: the latencies measured
# per job in this run; metrics: what berthd exported (its histograms'
# medians), as an operator would run berth-plan --executor-metrics.
variants = [("planner_only", latency_flags(0.0, 0.0)),
            ("calibrated", latency_flags(quantile(service or start_latency, 0.5) * a.latency_factor,
                                         quantile(held, 0.5) * a.latency_factor))]
if os.path.exists(f"{d}/metrics.txt"):
    variants.append(("metrics", ["--executor-metrics", f"{d}/metrics.txt"]))


def simulate(flags):
    """berth-plan simulate of the snapshot: (its JSON report, its jobs by id)."""
    sim = subprocess.run([a.berth_plan, "simulate", f"{d}/snapshot.json", "--json", "--memory", "1Gi",
                          "--cpus", "2", "--max-workers", "24", "--aging-interval", "0s",
                          *flags, *a.sim_arg],
                         capture_output=True, text=True)
    if sim.returncode != 0:
        sys.exit("berth-plan failed: " + sim.stderr)
    out = json.loads(sim.stdout)
    return out, {r["job"]: r for r in out["tables"]["jobs"]}


calibrated_rows = {}
for name, flags in variants:
    out, rows = simulate(flags)
    if name == "calibrated":
        calibrated_rows = rows
    sl, fl = out["summary"]["start_latency_s"], out["summary"]["finish_latency_s"]
    if a.passes and name == "calibrated":
        print_passes({i: rows[i]["admitted_s"] for i in ids})
    makespan = max(r["finished_s"] for r in rows.values()) + fl
    error = [abs(admitted[i] - rows[i]["admitted_s"]) for i in ids]
    result["simulations"][name] = {
        "start_latency_s": sl, "finish_latency_s": fl, "makespan_s": makespan,
        "makespan_error": (makespan - real_makespan) / real_makespan,
        "tau": tau_b([admitted[i] for i in ids], [rows[i]["admitted_s"] for i in ids]),
        "start_error_median_s": quantile(error, 0.5), "start_error_p95_s": quantile(error, 0.95)}

# Near-ties: how far the simulation itself moves when the start latency is
# 20% off. A workload whose order changes there cannot be predicted to
# that order by any simulation: the real latencies vary more than that.
cal_sl = quantile(service or start_latency, 0.5)
result["stability_tau"] = min(
    tau_b([calibrated_rows[i]["admitted_s"] for i in ids], [rows[i]["admitted_s"] for i in ids])
    for rows in (simulate(latency_flags(cal_sl * f, quantile(held, 0.5)))[1] for f in (0.8, 1.2)))

if a.against:
    with open(f"{a.against}/real.json") as f:
        other = json.load(f)
    def base(i):  # the id without the run's tag
        return ".".join(i.split(".")[:2])
    theirs = {base(i): j for i, j in other["jobs"].items()}
    if sorted(theirs) != sorted(base(i) for i in ids):
        sys.exit(f"--against {a.against}: not the same workload")
    other_admitted = {i: ts(theirs[base(i)]["admittedAt"]) - other["t0"] for i in ids}
    other_makespan = max(ts(j["finishedAt"]) for j in theirs.values()) - other["t0"]
    result["against_real"] = {
        "dir": a.against, "makespan_s": other_makespan,
        "makespan_difference": (other_makespan - real_makespan) / real_makespan,
        "tau": tau_b([admitted[i] for i in ids], [other_admitted[i] for i in ids])}

if a.json:
    print(json.dumps(result, indent=2))
else:
    r = result
    print(f"{r['jobs']} jobs, {r['scale_s_per_min']} s per simulated minute, seed {r['seed']}, "
          f"load average {r['load_average']:.2f}")
    print(f"real: makespan {r['real_makespan_s']:.2f} s; start latency median "
          f"{r['start_latency_median_s']*1000:.0f} ms, p95 {r['start_latency_p95_s']*1000:.0f} ms; "
          f"capacity held beyond the run median {r['held_beyond_run_median_s']*1000:.0f} ms, "
          f"p95 {r['held_beyond_run_p95_s']*1000:.0f} ms")
    for name, s in r["simulations"].items():
        print(f"{name} (start {s['start_latency_s']*1000:.0f} ms, finish "
              f"{s['finish_latency_s']*1000:.0f} ms): makespan {s['makespan_s']:.2f} s "
              f"({s['makespan_error']*100:+.1f}%), "
              f"tau {s['tau']:.3f}, start error median {s['start_error_median_s']*1000:.0f} ms, "
              f"p95 {s['start_error_p95_s']*1000:.0f} ms")
    print(f"stability: tau of the calibrated simulation against itself with the start "
          f"latency 20% off: {r['stability_tau']:.3f}")
    if "against_real" in r:
        o = r["against_real"]
        print(f"another real run ({o['dir']}): makespan {o['makespan_s']:.2f} s "
              f"({o['makespan_difference']*100:+.1f}%), tau {o['tau']:.3f}")
problems = []
for name in a.gate or ["calibrated"]:
    if name not in result["simulations"]:
        sys.exit(f"fidelity: no {name} simulation (metrics need a real run, not an old replay)")
    sim = result["simulations"][name]
    if a.max_makespan_error is not None and abs(sim["makespan_error"]) > a.max_makespan_error:
        problems.append(f"{name}: makespan error {sim['makespan_error']*100:+.1f}% beyond "
                        f"±{a.max_makespan_error*100:.1f}%")
    if a.min_tau is not None and sim["tau"] < a.min_tau:
        problems.append(f"{name}: tau {sim['tau']:.3f} below {a.min_tau}")
if a.min_stability is not None and result["stability_tau"] < a.min_stability:
    problems.append(f"the workload sits on a near-tie (stability tau {result['stability_tau']:.3f} "
                    f"below {a.min_stability}): a different --seed, not a lower bar")
if problems:
    sys.exit("fidelity: " + "; ".join(problems) + f" (run kept in {d})")
