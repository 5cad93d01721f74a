"""Record conversion, units, ETAs and state files (no server)."""

import datetime
import os
import tempfile
import unittest

import berth
from berth.v1 import executor_pb2
from berth.v1 import plan_pb2


class UnitsTest(unittest.TestCase):
    def test_bytes(self):
        self.assertEqual(berth.parse_bytes("16Gi"), 16 << 30)
        self.assertEqual(berth.parse_bytes("512Mi"), 512 << 20)
        self.assertEqual(berth.parse_bytes("1.5G"), 1500000000)
        self.assertEqual(berth.parse_bytes(1000), 1000)
        for bad in ("lots", "16Gx", "-1", True):
            with self.assertRaises(ValueError):
                berth.parse_bytes(bad)

    def test_cpu(self):
        self.assertEqual(berth.parse_cpu_millis(1.5), 1500)
        self.assertEqual(berth.parse_cpu_millis("500m"), 500)
        self.assertEqual(berth.parse_cpu_millis("2"), 2000)
        with self.assertRaises(ValueError):
            berth.parse_cpu_millis("two")

    def test_duration(self):
        self.assertEqual(berth.parse_duration_seconds("1h30m"), 5400)
        self.assertEqual(berth.parse_duration_seconds(45), 45)
        with self.assertRaises(ValueError):
            berth.parse_duration_seconds("soon")


class JobSpecTest(unittest.TestCase):
    def test_full_record(self):
        spec = berth.job_spec({
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
        self.assertIs(berth.job_spec(spec), spec)

    def test_iso_created_at(self):
        spec = berth.job_spec({"id": "a", "workspace": "w", "image": "i",
                               "created_at": "2026-11-22T10:00:00Z"})
        self.assertEqual(spec.created_at.seconds, 1795341600)

    def test_errors_are_invalid_snapshot_naming_job_and_field(self):
        cases = [
            ({"id": "a", "workspace": "w", "image": "i", "memroy": 1}, "a", "memroy",
             "unknown key"),
            ({"id": "b", "workspace": "w", "image": "i", "memory": "x"}, "b", "memory",
             "expected bytes"),
            ({"id": "c", "workspace": "w"}, "c", "image", "image is required"),
            ({"id": "d", "workspace": "w", "image": "i", "cpu": "two"}, "d", "cpu", "cores"),
            ({"id": "e", "workspace": "w", "image": "i", "max_duration": "soon"}, "e",
             "max_duration", "duration"),
        ]
        for record, job, field, words in cases:
            with self.subTest(job=job):
                with self.assertRaises(berth.InvalidSnapshot) as raised:
                    berth.job_spec(record)
                e = raised.exception
                self.assertIsInstance(e, ValueError)  # callers catching ValueError still do
                self.assertIsInstance(e, berth.BerthError)
                self.assertEqual((e.job_id, e.field), (job, field))
                self.assertIn(words, str(e))
                self.assertIn("job %r" % job, str(e))
                self.assertIsNone(e.code)

    def test_snapshot_stream(self):
        specs = [berth.job_spec({"id": "j%d" % i, "workspace": "w", "image": "i"})
                 for i in range(5)]
        parts = list(berth.snapshot_requests(specs, 7, batch_size=2))
        self.assertEqual(parts[0].header.generation, 7)
        self.assertEqual(parts[0].header.expected_job_count, 5)
        self.assertEqual([len(p.batch.jobs) for p in parts[1:-1]], [2, 2, 1])
        self.assertEqual(parts[-1].end.job_count, 5)
        self.assertIsInstance(parts[-1], executor_pb2.SyncSnapshotRequest)
        self.assertFalse(parts[0].header.requeue_oom_once)
        parts = list(berth.snapshot_requests(specs, 8, policies={"requeue_oom_once": True}))
        self.assertTrue(parts[0].header.requeue_oom_once)
        self.assertFalse(parts[0].header.fill_memory_from_history)


class StateFilesTest(unittest.TestCase):
    def test_generation_and_revision_files(self):
        with tempfile.TemporaryDirectory() as d:
            g = berth.GenerationFile(os.path.join(d, "generation"))
            self.assertEqual(g.next(), 1)
            self.assertEqual(g.next(), 2)
            self.assertEqual(berth.GenerationFile(g.path).next(), 3)
            r = berth.RevisionFile(os.path.join(d, "revision"))
            self.assertEqual(r.load_with_epoch(), (0, ""))
            r.save(41, "abcd")
            self.assertEqual(berth.RevisionFile(r.path).load_with_epoch(), (41, "abcd"))
            self.assertEqual(sorted(os.listdir(d)), ["generation", "revision"])
            with open(r.path, "w") as f:
                f.write("garbage")
            with self.assertRaisesRegex(ValueError, "revision"):
                r.load()

    def test_next_starts_above_the_server_floor(self):
        with tempfile.TemporaryDirectory() as d:
            g = berth.GenerationFile(os.path.join(d, "generation"))
            self.assertEqual(g.next(floor=10), 11)
            self.assertEqual(g.next(floor=10), 12)  # the file is ahead now
            self.assertEqual(g.next(), 13)


class ExpectedStartTest(unittest.TestCase):
    def test_every_kind(self):
        utc = datetime.timezone.utc
        at = datetime.datetime(2026, 11, 27, 12, 0, 5, tzinfo=utc)
        d = plan_pb2.PlanDecision(eta_kind=plan_pb2.ETA_KIND_IF_ESTIMATES_HOLD)
        d.estimated_start.FromDatetime(at.replace(tzinfo=None))
        self.assertEqual(berth.expected_start(d), ("if_estimates_hold", at, None))
        b = plan_pb2.PlanDecision(eta_kind=plan_pb2.ETA_KIND_BEYOND_FORECAST)
        b.not_before.FromDatetime(at.replace(tzinfo=None))
        e = berth.expected_start(b)
        self.assertEqual(e, ("beyond_forecast", None, at))
        self.assertIn("beyond the forecast", str(e))
        x = plan_pb2.Explanation(eta_kind=plan_pb2.ETA_KIND_UNKNOWN)
        self.assertEqual(berth.expected_start(x), ("unknown", None, None))
        self.assertEqual(str(berth.expected_start(x)), "unknown")
        r = plan_pb2.Explanation(eta_kind=plan_pb2.ETA_KIND_RESERVED)
        r.estimated_start.FromDatetime(at.replace(tzinfo=None))
        self.assertEqual(berth.expected_start(r).kind, "reserved")

    def test_eta_range(self):
        at = datetime.datetime(2026, 11, 22, 14, 20, tzinfo=datetime.timezone.utc)
        d = plan_pb2.PlanDecision(eta_kind=plan_pb2.ETA_KIND_IF_ESTIMATES_HOLD)
        # No history: no range, never an invented one.
        self.assertIsNone(berth.eta_range(d))
        self.assertIsNone(berth.eta_range(plan_pb2.Explanation()))
        r = d.eta_range
        r.earliest.FromDatetime((at - datetime.timedelta(minutes=5)).replace(tzinfo=None))
        r.likely.FromDatetime(at.replace(tzinfo=None))
        r.latest.FromDatetime((at + datetime.timedelta(minutes=30)).replace(tzinfo=None))
        r.basis, r.runs = "action", 20
        r.p10_ratio, r.p50_ratio, r.p90_ratio = 0.5, 1.0, 2.0
        got = berth.eta_range(d)
        self.assertEqual(got.earliest, at - datetime.timedelta(minutes=5))
        self.assertEqual(got.likely, at)
        self.assertEqual(got.latest, at + datetime.timedelta(minutes=30))
        self.assertEqual((got.basis, got.runs), ("action", 20))
        self.assertEqual((got.p10_ratio, got.p50_ratio, got.p90_ratio), (0.5, 1.0, 2.0))
        self.assertIn("20 runs of its action", str(got))
        x = plan_pb2.Explanation()
        x.eta_range.CopyFrom(r)
        self.assertEqual(berth.eta_range(x), got)


class PackageTest(unittest.TestCase):
    def test_installed_not_the_source_tree(self):
        # CI runs these tests against the installed package: it must come
        # from site-packages, with its generated stubs and type information.
        root = os.path.dirname(berth.__file__)
        self.assertIn("site-packages", root)
        for name in ("py.typed", "v1/executor_pb2.py", "v1/executor_pb2.pyi",
                     "v1/executor_pb2_grpc.py", "_version.py"):
            self.assertTrue(os.path.exists(os.path.join(root, name)), name)
        expected = os.environ.get("BERTH_EXPECTED_VERSION")
        self.assertTrue(expected, "BERTH_EXPECTED_VERSION is not set")
        self.assertEqual(berth.__version__, expected)


if __name__ == "__main__":
    unittest.main()
