"""Unit tests of berth_client's record conversion and state files (no server)."""

import datetime
import os
import tempfile
import unittest

import grpc

import berth_client
from berth.v1 import event_pb2
from berth.v1 import executor_pb2
from berth.v1 import plan_pb2


class UnitsTest(unittest.TestCase):
    def test_bytes(self):
        self.assertEqual(berth_client.parse_bytes("16Gi"), 16 << 30)
        self.assertEqual(berth_client.parse_bytes("512Mi"), 512 << 20)
        self.assertEqual(berth_client.parse_bytes("1.5G"), 1500000000)
        self.assertEqual(berth_client.parse_bytes(1000), 1000)
        for bad in ("lots", "16Gx", "-1", True):
            with self.assertRaises(ValueError):
                berth_client.parse_bytes(bad)

    def test_cpu(self):
        self.assertEqual(berth_client.parse_cpu_millis(1.5), 1500)
        self.assertEqual(berth_client.parse_cpu_millis("500m"), 500)
        self.assertEqual(berth_client.parse_cpu_millis("2"), 2000)
        with self.assertRaises(ValueError):
            berth_client.parse_cpu_millis("two")

    def test_duration(self):
        self.assertEqual(berth_client.parse_duration_seconds("1h30m"), 5400)
        self.assertEqual(berth_client.parse_duration_seconds(45), 45)
        with self.assertRaises(ValueError):
            berth_client.parse_duration_seconds("soon")


class JobSpecTest(unittest.TestCase):
    def test_full_record(self):
        spec = berth_client.job_spec({
            "id": "job-1", "workspace": "ws", "action": "extract",
            "image": "reg/runner:v3", "argv": ["run", "--x"], "env": {"A": "1"},
            "priority": 2, "memory": "16Gi", "cpu": 1.5, "pool": "database",
            "expected_duration": "2h", "max_duration": 7200.5, "depends_on": ["job-0"],
            "created_at": datetime.datetime(2026, 11, 22, 10, 0, 0),
            "labels": {"request": 42},
        })
        self.assertEqual(spec.resources.memory_bytes, 16 << 30)
        self.assertEqual(spec.resources.cpu_millis, 1500)
        self.assertEqual(spec.expected_duration.seconds, 7200)
        self.assertEqual(spec.max_duration.nanos, 500000000)
        self.assertEqual(spec.created_at.ToJsonString(), "2026-11-22T10:00:00Z")
        self.assertEqual(spec.labels["request"], "42")
        self.assertEqual(list(spec.depends_on), ["job-0"])

    def test_iso_created_at(self):
        spec = berth_client.job_spec({"id": "a", "workspace": "w", "image": "i",
                                      "created_at": "2026-11-22T10:00:00Z"})
        self.assertEqual(spec.created_at.seconds, 1795341600)

    def test_errors_name_job_and_key(self):
        with self.assertRaisesRegex(ValueError, "job 'a'.*memroy"):
            berth_client.job_spec({"id": "a", "workspace": "w", "image": "i", "memroy": 1})
        with self.assertRaisesRegex(ValueError, "job 'b'.*memory"):
            berth_client.job_spec({"id": "b", "workspace": "w", "image": "i", "memory": "x"})
        with self.assertRaisesRegex(ValueError, "job 'c'.*image is required"):
            berth_client.job_spec({"id": "c", "workspace": "w"})

    def test_snapshot_stream(self):
        specs = [berth_client.job_spec({"id": "j%d" % i, "workspace": "w", "image": "i"})
                 for i in range(5)]
        parts = list(berth_client.snapshot_requests(specs, 7, batch_size=2))
        self.assertEqual(parts[0].header.generation, 7)
        self.assertEqual(parts[0].header.expected_job_count, 5)
        self.assertEqual([len(p.batch.jobs) for p in parts[1:-1]], [2, 2, 1])
        self.assertEqual(parts[-1].end.job_count, 5)
        self.assertIsInstance(parts[-1], executor_pb2.SyncSnapshotRequest)
        self.assertFalse(parts[0].header.requeue_oom_once)
        parts = list(berth_client.snapshot_requests(specs, 8, policies={"requeue_oom_once": True}))
        self.assertTrue(parts[0].header.requeue_oom_once)
        self.assertFalse(parts[0].header.fill_memory_from_history)


class StateFilesTest(unittest.TestCase):
    def test_generation_and_revision_files(self):
        with tempfile.TemporaryDirectory() as d:
            g = berth_client.GenerationFile(os.path.join(d, "generation"))
            self.assertEqual(g.next(), 1)
            self.assertEqual(g.next(), 2)
            self.assertEqual(berth_client.GenerationFile(g.path).next(), 3)
            r = berth_client.RevisionFile(os.path.join(d, "revision"))
            self.assertEqual(r.load(), 0)
            r.save(41)
            self.assertEqual(berth_client.RevisionFile(r.path).load(), 41)
            self.assertEqual(sorted(os.listdir(d)), ["generation", "revision"])
            with open(r.path, "w") as f:
                f.write("garbage")
            with self.assertRaises(ValueError):
                r.load()

    def test_no_token(self):
        with self.assertRaisesRegex(ValueError, "no token"):
            berth_client.BerthClient("127.0.0.1:1", "")


class GenerationFloorTest(unittest.TestCase):
    def test_next_starts_above_the_server_floor(self):
        with tempfile.TemporaryDirectory() as d:
            g = berth_client.GenerationFile(os.path.join(d, "generation"))
            # A fresh state dir against a berthd that applied generation 10.
            self.assertEqual(g.next(floor=10), 11)
            self.assertEqual(g.next(floor=10), 12)  # the file is ahead now
            self.assertEqual(g.next(), 13)


class ExpectedStartTest(unittest.TestCase):
    def test_every_kind(self):
        utc = datetime.timezone.utc
        at = datetime.datetime(2026, 11, 27, 12, 0, 5, tzinfo=utc)
        d = plan_pb2.PlanDecision(eta_kind=plan_pb2.ETA_KIND_IF_ESTIMATES_HOLD)
        d.estimated_start.FromDatetime(at.replace(tzinfo=None))
        self.assertEqual(berth_client.expected_start(d),
                         ("if_estimates_hold", at, None))
        # Beyond the bounded forecast: no start, only a lower bound.
        b = plan_pb2.PlanDecision(eta_kind=plan_pb2.ETA_KIND_BEYOND_FORECAST)
        b.not_before.FromDatetime(at.replace(tzinfo=None))
        e = berth_client.expected_start(b)
        self.assertEqual(e, ("beyond_forecast", None, at))
        self.assertIn("beyond the forecast", str(e))
        # The same on an Explanation; unknown without a start.
        x = plan_pb2.Explanation(eta_kind=plan_pb2.ETA_KIND_UNKNOWN)
        self.assertEqual(berth_client.expected_start(x), ("unknown", None, None))
        self.assertEqual(str(berth_client.expected_start(x)), "unknown")
        r = plan_pb2.Explanation(eta_kind=plan_pb2.ETA_KIND_RESERVED)
        r.estimated_start.FromDatetime(at.replace(tzinfo=None))
        self.assertEqual(berth_client.expected_start(r).kind, "reserved")


class _RpcError(grpc.RpcError):
    def __init__(self, code, trailers=()):
        super().__init__()
        self._code = code
        self._trailers = trailers

    def code(self):
        return self._code

    def details(self):
        return "berthd is shutting down"

    def trailing_metadata(self):
        return self._trailers


class _Stream:
    """A fake WatchEvents call: some events, then an error (or a plain end)."""

    def __init__(self, revisions, error=None, epoch=""):
        self._revisions = revisions
        self._error = error
        self._epoch = epoch

    def __iter__(self):
        for r in self._revisions:
            yield event_pb2.Event(revision=r, epoch=self._epoch)
        if self._error is not None:
            raise self._error

    def cancel(self):
        pass


class _FakeClient:
    def __init__(self, streams):
        self._streams = list(streams)
        self.calls = []
        self.epochs = []

    def watch(self, from_revision, wait_for_ready=False, epoch=""):
        self.calls.append((from_revision, wait_for_ready))
        self.epochs.append(epoch)
        return self._streams.pop(0)


class FollowerRetryTest(unittest.TestCase):
    def setUp(self):
        self._saved = berth_client._FIRST_RETRY
        berth_client._FIRST_RETRY = 0.001
        self._dir = tempfile.TemporaryDirectory()
        self.revisions = berth_client.RevisionFile(os.path.join(self._dir.name, "revision"))

    def tearDown(self):
        berth_client._FIRST_RETRY = self._saved
        self._dir.cleanup()

    def test_unavailable_resumes_from_the_last_revision(self):
        unavailable = _RpcError(grpc.StatusCode.UNAVAILABLE)
        client = _FakeClient([_Stream([1, 2], unavailable), _Stream([3], unavailable),
                              _Stream([4])])
        handled, retries = [], []
        follower = berth_client.EventFollower(client, self.revisions)
        last = follower.run(lambda e: handled.append(e.revision),
                            until=lambda e: e.revision == 4,
                            on_retry=lambda err, rev: retries.append((err.code(), rev)))
        self.assertEqual(last, 4)
        self.assertEqual(handled, [1, 2, 3, 4])
        self.assertEqual(client.calls, [(0, False), (2, True), (3, True)])
        self.assertEqual(retries, [(grpc.StatusCode.UNAVAILABLE, 2),
                                   (grpc.StatusCode.UNAVAILABLE, 3)])
        self.assertEqual(self.revisions.load(), 4)

    def test_a_restored_history_raises_history_changed(self):
        # Events of epoch "aaaa"; berthd comes back on a store restored from a
        # backup of revision 1 (epoch "bbbb") and refuses to continue at 2.
        unavailable = _RpcError(grpc.StatusCode.UNAVAILABLE)
        refused = _RpcError(grpc.StatusCode.FAILED_PRECONDITION,
                            (("berth-epoch", "bbbb"), ("berth-resume-revision", "1"),
                             ("berth-current-revision", "5")))
        client = _FakeClient([_Stream([1, 2], unavailable, epoch="aaaa"), _Stream([], refused)])
        follower = berth_client.EventFollower(client, self.revisions)
        with self.assertRaises(berth_client.HistoryChanged) as raised:
            follower.run(lambda e: None)
        self.assertEqual(raised.exception.epoch, "bbbb")
        self.assertEqual(raised.exception.resume_revision, 1)
        self.assertEqual(raised.exception.current_revision, 5)
        # The reconnect named the epoch it had read.
        self.assertEqual(client.epochs, ["", "aaaa"])
        self.assertEqual(self.revisions.load_with_epoch(), (2, "aaaa"))
        # The caller resyncs: the next follower resumes in the new epoch.
        self.revisions.save(raised.exception.resume_revision, raised.exception.epoch)
        client = _FakeClient([_Stream([2], None, epoch="bbbb")])
        follower = berth_client.EventFollower(client, self.revisions)
        self.assertEqual(follower.run(lambda e: None, until=lambda e: True), 2)
        self.assertEqual(client.calls, [(1, False)])
        self.assertEqual(client.epochs, ["bbbb"])

    def test_other_errors_are_raised(self):
        client = _FakeClient([_Stream([1], _RpcError(grpc.StatusCode.PERMISSION_DENIED))])
        follower = berth_client.EventFollower(client, self.revisions)
        with self.assertRaises(grpc.RpcError):
            follower.run(lambda e: None)
        self.assertEqual(follower.last_revision, 1)

    def test_stop_while_waiting_to_reconnect_returns(self):
        client = _FakeClient([_Stream([1], _RpcError(grpc.StatusCode.UNAVAILABLE))])
        follower = berth_client.EventFollower(client, self.revisions)
        # stop() from the retry callback: no second call is made.
        last = follower.run(lambda e: None, on_retry=lambda err, rev: follower.stop())
        self.assertEqual(last, 1)
        self.assertEqual(len(client.calls), 1)


if __name__ == "__main__":
    unittest.main()
