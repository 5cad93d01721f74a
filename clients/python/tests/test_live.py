"""The installed package against a real berthd (real gRPC, RocksDB, Docker):
typed errors from the server, a sync's answer, retries across a restart,
keepalive noticing a hung (SIGSTOPped) berthd, the follower reconnecting by
itself in a thread and as an iterator."""

import os
import signal
import threading
import time
import unittest

import berth
from berth.v1 import job_pb2
from berthd_fixture import Berthd, busybox_record, wait_for


class LiveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.berthd = Berthd()

    @classmethod
    def tearDownClass(cls):
        cls.berthd.stop()

    def client(self, role="pusher", **kwargs):
        c = berth.BerthClient(self.berthd.target, self.berthd.tokens[role], **kwargs)
        self.addCleanup(c.close)
        c.wait_ready(30)
        return c

    def test_1_errors_are_typed(self):
        bad = berth.BerthClient(self.berthd.target, "not-a-token-of-this-berthd")
        self.addCleanup(bad.close)
        with self.assertRaises(berth.Unauthenticated):
            bad.plan()
        with self.assertRaises(berth.PermissionDenied):
            self.client("reader").sync([], 1)
        with self.assertRaises(berth.NotFound):
            self.client("reader").get_job("no-such-job")
        pusher = self.client()
        # Two jobs with one id: refused as a whole by berthd, naming both.
        rec = busybox_record("dup")
        with self.assertRaises(berth.InvalidSnapshot) as raised:
            pusher.sync([rec, rec], 1)
        self.assertEqual(raised.exception.field, "jobs[1].id")
        self.assertEqual(raised.exception.job_id, "dup")

    def test_2_sync_answers_generation_and_counts_and_conflicts_are_typed(self):
        pusher = self.client()
        base = pusher.last_applied_generation()
        ids = ["s%d-%s" % (i, self.berthd.instance) for i in range(3)]
        first = pusher.sync([busybox_record(i, 30) for i in ids], base + 1)
        self.assertEqual((first.generation, first.added, first.already_applied),
                         (base + 1, 3, False))
        self.assertGreater(first.revision, 0)
        again = pusher.sync([busybox_record(i, 30) for i in ids], base + 1)
        self.assertTrue(again.already_applied)
        second = pusher.sync([busybox_record(i, 30) for i in ids[:2]], base + 2)
        self.assertEqual((second.generation, second.cancelled, second.unchanged),
                         (base + 2, 1, 2))
        with self.assertRaises(berth.GenerationConflict) as raised:
            pusher.sync([], base + 1)
        self.assertEqual(raised.exception.last_applied_generation, base + 2)
        pusher.sync([], base + 3, allow_mass_cancel=True)

    def test_3_retries_cover_a_restart(self):
        pusher = self.client(retry=berth.RetryPolicy(attempts=30, max_backoff=1.0))
        generation = pusher.last_applied_generation() + 1
        retries = []
        pusher._on_retry = lambda e, n: retries.append(type(e))
        self.berthd.kill9()
        restarted = threading.Timer(1.0, self.berthd.start)
        restarted.start()
        result = pusher.sync([busybox_record("r-" + self.berthd.instance)], generation)
        restarted.join()
        self.assertEqual(result.generation, generation)
        self.assertGreater(len(retries), 0)
        self.assertTrue(all(t is berth.Unavailable for t in retries), retries)
        pusher.sync([], generation + 1, allow_mass_cancel=True)

    def test_4_keepalive_notices_a_hung_berthd_and_the_follower_resumes(self):
        pusher = self.client(keepalive_time=5, keepalive_timeout=2)
        base = pusher.last_applied_generation()
        start_revision = pusher.sync([], base + 1, allow_mass_cancel=True).revision
        follower = berth.EventFollower(pusher, None, from_revision=start_revision,
                                       backoff=berth.RetryPolicy(attempts=1 << 30,
                                                                 max_backoff=0.5))
        seen, retried = [], threading.Event()
        retry_errors = []

        def on_retry(error, revision):
            retry_errors.append(error)
            retried.set()
        thread = follower.start(lambda e: seen.append(e.revision), on_retry=on_retry)
        pusher.sync([busybox_record("k1-" + self.berthd.instance, 0.1)], base + 2)
        wait_for(lambda: seen, 30, "the first event")
        os.kill(self.berthd.proc.pid, signal.SIGSTOP)
        stopped = time.monotonic()
        try:
            # Stated bound: keepalive_time + keepalive_timeout (7 s), plus slack.
            self.assertTrue(retried.wait(20), "a hung berthd went unnoticed")
            noticed = time.monotonic() - stopped
            print("\nhung berthd noticed after %.1f s (keepalive 5 s + 2 s)" % noticed)
            self.assertLess(noticed, 12)
            self.assertIsInstance(retry_errors[0], berth.Unavailable)
            # A unary call to the hung berthd ends at its deadline, typed.
            quick = berth.BerthClient(self.berthd.target, self.berthd.tokens["reader"],
                                      timeout=1.0)
            self.addCleanup(quick.close)
            t0 = time.monotonic()
            with self.assertRaises(berth.Unavailable):  # DeadlineExceeded is one
                quick.plan()
            self.assertLess(time.monotonic() - t0, 5)
        finally:
            os.kill(self.berthd.proc.pid, signal.SIGCONT)
        # Resumed by itself after SIGCONT: the job's events arrive, contiguous.
        info = pusher.sync([], base + 3, allow_mass_cancel=True)
        wait_for(lambda: seen and seen[-1] >= info.revision, 60, "events after SIGCONT")
        thread.stop()
        thread.join(10)
        self.assertEqual(seen, list(range(start_revision + 1, seen[-1] + 1)))

    def test_5_iterator_follows_and_resumes_across_a_restart(self):
        pusher = self.client()
        revisions = berth.RevisionFile(os.path.join(self.berthd.dir, "revision"))
        base = pusher.last_applied_generation()
        revisions.save(pusher.sync([], base + 1, allow_mass_cancel=True).revision)
        job = "it-" + self.berthd.instance
        pusher.sync([busybox_record(job, 0.5)], base + 2)
        follower = berth.EventFollower(pusher, revisions,
                                       backoff=berth.RetryPolicy(attempts=1 << 30,
                                                                 max_backoff=0.5))
        states, restarted = [], False
        for event in follower.events():
            if event.job_id == job and event.state:
                states.append(event.state)
                if not restarted:
                    restarted = True
                    self.berthd.restart()  # the iterator reconnects by itself
                if event.state in berth.TERMINAL_STATES:
                    follower.commit(event)
                    break
        self.assertEqual(states[-1], job_pb2.JOB_STATE_SUCCEEDED)
        self.assertEqual(revisions.load(), follower.last_revision)


if __name__ == "__main__":
    unittest.main()
