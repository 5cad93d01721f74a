#!/usr/bin/python3
"""Runs every grpcurl command of README.md and of every guide in docs/*.md, as
written there, with the real grpcurl against a live berthd, and checks exit codes and
key output. The commands are read from the docs themselves, so the docs
cannot drift from what works.

    /usr/bin/python3 tests/grpcurl_docs_test.py --berthd bazel-bin/server/berthd \\
        --grpcurl ../shared/bin/grpcurl [--promtool /usr/bin/promtool]

tools/run_operator_tests.sh runs it (and finds grpcurl and promtool).

What is run: in each ```sh block, every command that starts with `grpcurl`
(with its continuation lines, multi-line quotes and here-documents), after
the block's variable assignments (`T=...`, `export H=...`). Only these
stand-ins are replaced: the placeholders `<operator token>`, `<pusher token>`
and the example operator token `81b0d4...2c` by this berthd's tokens, and the
default address 127.0.0.1:7070 by its address. Streams that run until the
operator stops them (WatchEvents) get `-max-time 3`, so they end with
DeadlineExceeded (exit 68). Every command must match one entry of EXPECTED
(a command nobody wrote an expectation for fails the test), and every entry
must match at least one command.

With --promtool, berthd's live /metrics must also pass `promtool check
metrics`, and a WatchEvents stream ended by its deadline must be counted as
DEADLINE_EXCEEDED, outside berth_rpc_seconds; and every metric that
docs/monitoring/berth.rules.yml uses must be on that /metrics.

Exit status 0 when everything passed, 1 otherwise. Standard library only.
"""

import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# README.md, then every page of docs/ (the guides), so a guide added later is
# checked without a change here.
DOCS = ["README.md"] + sorted(
    os.path.relpath(os.path.join(ROOT, "docs", f), ROOT)
    for f in os.listdir(os.path.join(ROOT, "docs")) if f.endswith(".md"))
# The docs held 31 grpcurl commands when they were split into guides; fewer
# means commands were lost (or no longer found), not that the docs are done.
MIN_COMMANDS = 31

TOKENS = {
    "pusher": "pusher-token-docs-0123456789",
    "operator": "operator-token-docs-0123456789",
    "reader": "reader-token-docs-0123456789",
}
PLACEHOLDERS = {
    "<operator token>": TOKENS["operator"],
    "<pusher token>": TOKENS["pusher"],
    "81b0d4...2c": TOKENS["operator"],
}
DEADLINE_EXIT = 64 + 4  # grpcurl exits with 64 + the gRPC status code

# (pattern on the command, exit code, strings the output must contain,
#  strings it must not contain). The first matching entry applies.
EXPECTED = [
    (r" list berth\.v1\.Executor$", 0, ["berth.v1.Executor.SetBudgets", "berth.v1.Executor.WatchEvents"], []),
    (r" list( |$)", 0, ["berth.v1.Executor", "grpc.health.v1.Health",
                        "grpc.reflection.v1alpha.ServerReflection"], []),
    # describe through reflection shows the .proto files' comments.
    (r"describe berth\.v1\.Executor$", 0,
     ["service Executor {", "rpc SetBudgets", "// Replaces Berth's view of what job-server wants run"], []),
    (r"describe berth\.v1\.JobSpec$", 0, ["message JobSpec {", "repeated string depends_on"], []),
    # The enum of PlanDecision.reason / Explanation.reason ("wait reason").
    (r"describe berth\.v1\.WaitReason$", 0, ["enum WaitReason {", "WAITING_FOR_MEMORY = 2"], []),
    (r"-msg-template .*describe berth\.v1\.SetBudgetsRequest$", 0,
     ['"updateMask": {', '"memoryBytes"', "Fields of budgets to set"], []),
    (r"Health/Check", 0, ['"status": "SERVING"'], []),
    # Output names are the JSON names, through reflection as with -proto.
    (r"includeState.*Executor/GetPlan", 0, ['"state": {', '"startTime"', '"description"'], []),
    (r"Executor/GetPlan", 0, ['"budgets": {', '"memoryBytes"', '"revision"'], ['"memory_bytes"']),
    (r"Executor/ExplainJob", 0, ['"jobId": "'], []),
    (r"Executor/ListJobs", 0, [], []),
    (r"Executor/GetJob", 0, ['"id": "ws-alpha.extract-1"'], []),
    # The docs' jobs never run: no attempt has a log yet.
    (r"Executor/ReadJobLog", 64 + 5, ["NotFound", "attempt 1 never ran"], []),
    (r"Executor/WatchEvents", DEADLINE_EXIT, ['"revision": "1"', "EVENT_TYPE_SNAPSHOT_APPLIED"], []),
    (r"Executor/GetBudgets", 0, ['"memoryBytes"', '"maxWorkers"'], []),
    (r'"pools".*Executor/SetBudgets', 0, ['"database": {', '"maxWorkers": 4'], []),
    (r"Executor/SetBudgets", 0, ['"memoryBytes": "274877906944"'], []),
    (r"Executor/Pause", 0, ['"paused": true', '"pauseReason": "upgrading the VM"'], []),
    (r"Executor/Resume", 0, [], ['"paused": true']),
    (r"Executor/SetPoolMaintenance", 0, ['"poolsInMaintenance": [', '"database"',
                                         '"maintenanceReasons": {', '"database": "db upgrade"'], []),
    (r"Executor/Drain", 0, ['"paused": true', '"pauseReason": "reboot"'], []),
    (r"Executor/SyncSnapshot", 0, ['"generation": "7"'], []),
    # No job of the docs' berthd ever runs: an empty report, not an error.
    (r"Executor/RightSize", 0, ["{"], ['"actions"']),
]

# Jobs the docs' commands name, pushed before the docs run. Their image is
# allowed but not on the host, so no container is ever created (with Docker
# up berthd REJECTS them at sync, IMAGE_NOT_FOUND; the commands still answer).
SETUP_SNAPSHOT = """\
{"header": {"generation": "1", "expectedJobCount": "3"}}
{"batch": {"jobs": [
  {"id": "big-c.genome", "workspace": "big-c", "image": "registry.local/runner:v3", "argv": ["run"],
   "resources": {"cpuMillis": "500", "memoryBytes": "268435456"}},
  {"id": "ws-alpha.analyse-1", "workspace": "ws-alpha", "image": "registry.local/runner:v3", "argv": ["run"],
   "resources": {"cpuMillis": "500", "memoryBytes": "201326592"}},
  {"id": "ws-alpha.extract-1", "workspace": "ws-alpha", "image": "registry.local/runner:v3",
   "argv": ["run"], "resources": {"cpuMillis": "500", "memoryBytes": "67108864"}}]}}
{"end": {"jobCount": "3"}}
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def commands_of(path):
    """(line number, setup lines, command) for each grpcurl command of `path`."""
    out = []
    lines = open(os.path.join(ROOT, path)).read().split("\n")
    i = 0
    in_sh = False
    setup = []
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            # Assignments hold for the rest of the document, as for a reader.
            in_sh = line.strip() == "```sh" and not in_sh
            i += 1
            continue
        if not in_sh:
            i += 1
            continue
        if re.match(r"^(export )?[A-Z_]+=", line):
            setup.append(line)
            i += 1
            continue
        if not line.startswith("grpcurl "):
            i += 1
            continue
        start = i
        cmd = [line]
        heredoc = re.search(r"<<'?(\w+)'?", line)
        # Continuation lines, quotes left open, here-documents.
        while (cmd[-1].endswith("\\") or "".join(cmd).count("'") % 2 == 1) and i + 1 < len(lines):
            i += 1
            cmd.append(lines[i])
            heredoc = heredoc or re.search(r"<<'?(\w+)'?", lines[i])
        if heredoc:
            while i + 1 < len(lines) and lines[i].strip() != heredoc.group(1):
                i += 1
                cmd.append(lines[i])
        out.append((start + 1, list(setup), "\n".join(cmd)))
        i += 1
    return out


def expectation(command):
    flat = re.sub(r"\s+", " ", command.split("<<")[0]).strip()
    flat = re.sub(r"\s*#.*$", "", flat)
    for index, (pattern, code, want, unwanted) in enumerate(EXPECTED):
        if re.search(pattern, flat):
            return index, code, want, unwanted
    return None


def substitute(text, address):
    for k, v in PLACEHOLDERS.items():
        text = text.replace(k, v)
    return text.replace("127.0.0.1:7070", address)


class Berthd:
    def __init__(self, binary, work):
        self.port = free_port()
        self.metrics_port = free_port()
        self.address = "127.0.0.1:%d" % self.port
        tokens = os.path.join(work, "tokens")
        with open(tokens, "w") as f:
            for role, token in TOKENS.items():
                f.write("%s docs-%s %s\n" % (role, role, token))
        os.chmod(tokens, 0o600)
        self.instance = "docs-test-%d" % os.getpid()
        self.log_path = os.path.join(work, "berthd.log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(
            [binary, "--token_file=" + tokens, "--data_dir=" + os.path.join(work, "data"),
             "--listen=" + self.address, "--metrics_listen=127.0.0.1:%d" % self.metrics_port,
             "--memory=1Gi", "--cpus=2", "--max_workers=8", "--pool_max=database=2",
             "--instance=" + self.instance, "--allowed_images=registry.local/*", "--tick=500ms"],
            stdout=self.log, stderr=subprocess.STDOUT)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()

    def tail(self):
        with open(self.log_path) as f:
            return "".join(f.readlines()[-20:])

    def metrics(self):
        with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % self.metrics_port, timeout=10) as r:
            return r.read().decode()


def run(grpcurl, berthd, setup, command, stdin=None):
    # `grpcurl` in the docs' commands is the real one; streams the operator
    # would stop with Ctrl-C end after 3 s.
    prelude = textwrap_prelude(grpcurl)
    script = "\n".join([prelude] + setup + [command])
    env = dict(os.environ, BERTH_SERVER=berthd.address, PUSHER_TOKEN=TOKENS["pusher"])
    p = subprocess.run(["bash", "-c", script], input=stdin, capture_output=True, text=True,
                       env=env, timeout=60)
    return p.returncode, p.stdout + p.stderr


def textwrap_prelude(grpcurl):
    return ("grpcurl() { case \" $* \" in *Executor/WatchEvents*) "
            "set -- -max-time 3 \"$@\";; esac; %s \"$@\"; }" % shlex_quote(grpcurl))


def shlex_quote(s):
    return "'" + s.replace("'", "'\"'\"'") + "'"


def await_serving(grpcurl, berthd):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if berthd.proc.poll() is not None:
            return "berthd exited:\n" + berthd.tail()
        code, out = run(grpcurl, berthd, [], "grpcurl -plaintext -max-time 2 -d "
                        "'{\"service\":\"berth.runtime\"}' $BERTH_SERVER grpc.health.v1.Health/Check")
        if code == 0 and '"SERVING"' in out:
            return None
        time.sleep(0.1)  # polling for readiness, not synchronisation
    return "berthd (and Docker) not SERVING within 30 s:\n" + berthd.tail()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--berthd", required=True)
    parser.add_argument("--grpcurl", required=True)
    parser.add_argument("--promtool")
    args = parser.parse_args()

    failures = []
    commands = []
    for doc in DOCS:
        commands += [(doc, n, s, c) for n, s, c in commands_of(doc)]
    if len(commands) < MIN_COMMANDS:
        print("FAIL: only %d grpcurl commands found in %s (at least %d expected)"
              % (len(commands), DOCS, MIN_COMMANDS))
        return 1
    # A job id a command names must be one of a snapshot the docs load
    # (README: snapshot-demo.json; the guides: snapshot-small.json), or a
    # reader's copy of the command finds nothing.
    loaded = set()
    for example in ("examples/snapshot-demo.json", "examples/snapshot-small.json"):
        with open(os.path.join(ROOT, example)) as f:
            loaded |= {j["id"] for j in json.load(f)["jobs"]}
    for doc, n, _, cmd in commands:
        for job_id in re.findall(r'"job_?[iI]d": ?"([^"]+)"', cmd):
            if job_id not in loaded:
                failures.append("%s:%d: job id %r is in no example snapshot the docs load"
                                % (doc, n, job_id))
    used = set()
    for doc, n, _, cmd in commands:
        e = expectation(cmd)
        if e is None:
            failures.append("%s:%d: no expectation in tests/grpcurl_docs_test.py for:\n  %s" % (doc, n, cmd))
        else:
            used.add(e[0])
    for index, entry in enumerate(EXPECTED):
        if index not in used:
            failures.append("expectation %r matches no command of the docs" % entry[0])

    work = tempfile.mkdtemp(prefix="grpcurl-docs-")
    berthd = Berthd(os.path.abspath(args.berthd), work)
    try:
        problem = await_serving(args.grpcurl, berthd)
        if problem:
            print("FAIL: " + problem)
            return 1
        code, out = run(args.grpcurl, berthd, [],
                        "grpcurl -plaintext -H 'authorization: Bearer %s' -d @ $BERTH_SERVER "
                        "berth.v1.Executor/SyncSnapshot" % TOKENS["pusher"], stdin=SETUP_SNAPSHOT)
        if code != 0:
            print("FAIL: setup snapshot: exit %d\n%s" % (code, out))
            return 1
        for doc, n, setup, cmd in commands:
            e = expectation(cmd)
            if e is None:
                continue
            _, want_code, want, unwanted = e
            code, out = run(args.grpcurl, berthd, [substitute(s, berthd.address) for s in setup],
                            substitute(cmd, berthd.address))
            problems = []
            if code != want_code:
                problems.append("exit %d, expected %d" % (code, want_code))
            problems += ["output lacks %r" % w for w in want if w not in out]
            problems += ["output has %r" % u for u in unwanted if u in out]
            status = "ok" if not problems else "FAIL"
            print("%-4s %s:%d: %s" % (status, doc, n, cmd.split("\n")[0][:110]))
            if problems:
                failures.append("%s:%d: %s\n  %s\n--- output:\n%s" % (doc, n, "; ".join(problems), cmd, out[-3000:]))

        metrics = berthd.metrics()
        if 'berth_rpcs_total{method="WatchEvents",code="DEADLINE_EXCEEDED"}' not in metrics:
            failures.append("/metrics: WatchEvents ended by the deadline not counted as DEADLINE_EXCEEDED")
        if 'berth_rpcs_total{method="WatchEvents",code="OK"}' in metrics:
            failures.append("/metrics: a WatchEvents stream ended by the client was counted OK")
        if 'berth_rpc_seconds_bucket{method="WatchEvents"' in metrics:
            failures.append("/metrics: WatchEvents durations are in berth_rpc_seconds")
        # Every metric the alerting rules use is one berthd exposes.
        rules = open(os.path.join(ROOT, "docs/monitoring/berth.rules.yml")).read()
        for name in sorted(set(re.findall(r"\b(berth_[a-z_]+)", rules))):
            if not re.search(r"^%s[{ ]" % name, metrics, re.M):
                failures.append("docs/monitoring/berth.rules.yml uses %s, which /metrics lacks" % name)
        if args.promtool:
            p = subprocess.run([args.promtool, "check", "metrics"], input=metrics, capture_output=True,
                               text=True)
            print("%-4s promtool check metrics on the live /metrics" % ("ok" if p.returncode == 0 and not p.stdout.strip() and not p.stderr.strip() else "FAIL"))
            if p.returncode != 0 or p.stdout.strip() or p.stderr.strip():
                failures.append("promtool check metrics:\n" + p.stdout + p.stderr)
    finally:
        berthd.stop()
        shutil.rmtree(work, ignore_errors=True)

    for f in failures:
        print("\nFAIL: " + f)
    print("\n%d grpcurl commands from %s; %d failures" % (len(commands), ", ".join(DOCS), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
