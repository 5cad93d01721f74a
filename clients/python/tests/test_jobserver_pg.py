"""The reference job-server integration (examples/jobserver_pg.py) on a real
PostgreSQL against a real berthd driving the real Docker: job requests
arrive and are cancelled while berthd and the loop are each killed with
kill -9 at seeded random moments and started again. In the end every job's
row equals berthd's final state (0 lost), and the applied events are exactly
berthd's state-change events, each once (0 applied twice, none missing).
The seed is printed; BERTH_PG_SEED replays one."""

import json
import os
import random
import signal
import subprocess
import sys
import time
import unittest

import psycopg2

import berth
from berth.v1 import event_pb2
from berth.v1 import job_pb2
from berthd_fixture import Berthd, wait_for
from postgres_fixture import Postgres

LOOP = os.environ.get("BERTH_JOBSERVER_PG", "")
TERMINAL = {job_pb2.JobState.Name(s) for s in berth.TERMINAL_STATES}


class JobServerPgTest(unittest.TestCase):
    def setUp(self):
        self.seed = int(os.environ.get("BERTH_PG_SEED", random.randrange(1 << 31)))
        print("\nseed %d (BERTH_PG_SEED=%d replays it)" % (self.seed, self.seed), flush=True)
        self.rng = random.Random(self.seed)
        self.pg = Postgres()
        self.addCleanup(self.pg.stop)
        self.berthd = Berthd(max_workers=4)
        self.addCleanup(self.berthd.stop)
        self.token_file = os.path.join(self.berthd.dir, "pusher.token")
        with open(self.token_file, "w") as f:
            f.write(self.berthd.tokens["pusher"])
        self.loop_log = open(os.path.join(self.berthd.dir, "loop.log"), "a")
        self.addCleanup(self.loop_log.close)
        self.loop = None
        self.assertEqual(subprocess.run(self.loop_argv("init")).returncode, 0)
        self.db = psycopg2.connect(self.pg.dsn)
        self.db.autocommit = True
        self.addCleanup(self.db.close)

    def loop_argv(self, command):
        return [sys.executable, LOOP, "--dsn", self.pg.dsn, "--server", self.berthd.target,
                "--token-file", self.token_file, "--interval", "0.5", "--allow-mass-cancel",
                command]

    def start_loop(self):
        self.loop = subprocess.Popen(self.loop_argv("run"), stdout=self.loop_log,
                                     stderr=self.loop_log)

    def tearDown(self):
        if self.loop is not None and self.loop.poll() is None:
            self.loop.kill()
            self.loop.wait()

    def sql(self, query, args=()):
        with self.db.cursor() as cur:
            cur.execute(query, args)
            return cur.fetchall() if cur.description else None

    def context(self):
        with open(self.loop_log.name) as f:
            loop = f.read()[-3000:]
        return "seed %d\n--- loop\n%s\n--- berthd\n%s" % (self.seed, loop,
                                                          self.berthd.log_text())

    def test_outcomes_exactly_once_across_kill9_of_berthd_and_loop(self):
        self.start_loop()
        started = time.monotonic()
        # The script: 12 rounds of 1.5 s; requests arrive each round, some
        # are cancelled; berthd and the loop are each killed twice, at
        # rounds the seed picks.
        rounds = 12
        kills = {r: "berthd" for r in self.rng.sample(range(1, rounds), 2)}
        for r in self.rng.sample([r for r in range(1, rounds) if r not in kills], 2):
            kills[r] = "loop"
        requested = []
        for r in range(rounds):
            for _ in range(self.rng.randint(2, 4)):
                job = "pg-%d-%s" % (len(requested), self.berthd.instance)
                seconds = self.rng.choice([0.2, 1, 2, 4])
                self.sql("INSERT INTO job_requests (id, workspace, image, argv, memory, cpu) "
                         "VALUES (%s, %s, 'berth-test/busybox:1', %s, '32Mi', '100m')",
                         (job, "ws%d" % self.rng.randint(0, 2),
                          json.dumps(["sh", "-c", "echo %s; sleep %g" % (job, seconds)])))
                requested.append(job)
            for job in self.rng.sample(requested, min(len(requested), self.rng.randint(0, 2))):
                self.sql("UPDATE job_requests SET cancelled = true WHERE id = %s", (job,))
            time.sleep(self.rng.uniform(0.5, 1.5))
            what = kills.get(r)
            if what == "berthd":
                self.berthd.kill9()
                time.sleep(self.rng.uniform(0.2, 2.0))
                self.berthd.start()
            elif what == "loop":
                self.loop.kill()  # SIGKILL, by PID
                self.loop.wait()
                time.sleep(self.rng.uniform(0.1, 1.0))
                self.start_loop()
        print("%d requests, %d cancelled; kills %s" % (
            len(requested), self.sql("SELECT count(*) FROM job_requests WHERE cancelled")[0][0],
            sorted(kills.items())), flush=True)

        reader = berth.BerthClient(self.berthd.target, self.berthd.tokens["reader"])
        self.addCleanup(reader.close)

        def berth_states():
            return {j.spec.id: job_pb2.JobState.Name(j.state) for j in reader.list_jobs()}

        def settled():
            states = berth_states()
            if not states or any(s not in TERMINAL for s in states.values()):
                return False
            rows = dict(self.sql("SELECT id, state FROM jobs"))
            return rows == states and self.loop.poll() is None
        wait_for(settled, 90, "every job finished and every row equal to berthd's state")
        self.loop.send_signal(signal.SIGTERM)
        self.assertEqual(self.loop.wait(60), 0, self.context())

        # 0 lost: every request berthd knows has a row with its final state;
        # a request berthd never saw was cancelled before any push.
        states = berth_states()
        rows = dict(self.sql("SELECT id, state FROM jobs"))
        self.assertEqual(rows, states, self.context())
        for job in requested:
            if job not in states:
                self.assertEqual(self.sql("SELECT cancelled FROM job_requests WHERE id = %s",
                                          (job,)), [(True,)], job)
        self.assertGreater(sum(s == "JOB_STATE_SUCCEEDED" for s in states.values()), 0)
        # 0 applied twice, none missing: the applied events are berthd's own
        # state-change events, each exactly once.
        applied = self.sql("SELECT revision, job_id, state FROM applied_events ORDER BY revision")
        self.assertEqual(len(applied), len({r for r, _, _ in applied}), "an event applied twice")
        expected = []
        last = self.sql("SELECT revision FROM berth_cursor")[0][0]
        for event in reader.watch(0):
            if event.type == event_pb2.EVENT_TYPE_JOB_STATE_CHANGED:
                expected.append((event.revision, event.job_id,
                                 job_pb2.JobState.Name(event.state)))
            if event.revision >= last:
                break
        self.assertEqual(applied, expected, self.context())
        finals = {}
        for s in states.values():
            finals[s] = finals.get(s, 0) + 1
        print("%d jobs %s, %d state changes applied once each, in %.0f s"
              % (len(states), sorted(finals.items()), len(applied), time.monotonic() - started),
              flush=True)


if __name__ == "__main__":
    unittest.main()
