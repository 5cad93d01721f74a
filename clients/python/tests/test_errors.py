"""Typed errors, retries and the sync answer (fake stubs, no server)."""

import os
import tempfile
import unittest

import grpc

import berth
from berth import errors
from berth.v1 import executor_pb2

S = grpc.StatusCode


class FakeRpcError(grpc.RpcError):
    def __init__(self, code, details="x", trailers=()):
        super().__init__()
        self._code, self._details, self._trailers = code, details, trailers

    def code(self):
        return self._code

    def details(self):
        return self._details

    def trailing_metadata(self):
        return self._trailers


class FromRpcErrorTest(unittest.TestCase):
    def test_each_code_maps_to_its_class(self):
        cases = [
            (S.UNAUTHENTICATED, (), False, berth.Unauthenticated),
            (S.PERMISSION_DENIED, (), False, berth.PermissionDenied),
            (S.UNAVAILABLE, (), False, berth.Unavailable),
            (S.DEADLINE_EXCEEDED, (), False, berth.DeadlineExceeded),
            (S.NOT_FOUND, (), False, berth.NotFound),
            (S.OUT_OF_RANGE, (("berth-current-revision", "9"),), False, berth.RevisionExpired),
            (S.FAILED_PRECONDITION, (("berth-epoch", "e"),), False, berth.HistoryForked),
            (S.FAILED_PRECONDITION, (("berth-last-generation", "4"),), True,
             berth.GenerationConflict),
            (S.INVALID_ARGUMENT, (), True, berth.InvalidSnapshot),
            (S.RESOURCE_EXHAUSTED, (), True, berth.InvalidSnapshot),
            (S.INVALID_ARGUMENT, (), False, berth.BerthError),
            (S.INTERNAL, (), False, berth.BerthError),
        ]
        for code, trailers, snapshot, cls in cases:
            with self.subTest(code=code, snapshot=snapshot):
                e = errors.from_rpc_error(FakeRpcError(code, "why", trailers), snapshot=snapshot)
                self.assertIs(type(e), cls)
                self.assertNotIsInstance(e, grpc.RpcError)
                self.assertEqual((e.code, e.details), (code, "why"))
        self.assertTrue(issubclass(berth.DeadlineExceeded, berth.Unavailable))

    def test_fields_from_trailers_and_messages(self):
        e = errors.from_rpc_error(FakeRpcError(S.FAILED_PRECONDITION, "stale",
                                               (("berth-last-generation", "41"),)), True)
        self.assertEqual(e.last_applied_generation, 41)
        e = errors.from_rpc_error(FakeRpcError(
            S.FAILED_PRECONDITION, "forked", (("berth-epoch", "bbbb"), ("berth-resume-revision", "3"),
                                              ("berth-current-revision", "7"))))
        self.assertEqual((e.epoch, e.resume_revision, e.current_revision), ("bbbb", 3, 7))
        e = errors.from_rpc_error(FakeRpcError(S.OUT_OF_RANGE, "gone",
                                               (("berth-current-revision", "120"),)))
        self.assertEqual(e.current, 120)
        e = errors.from_rpc_error(FakeRpcError(
            S.INVALID_ARGUMENT, "jobs[3].id: job id 'a-1' repeats jobs[1]; ids must be unique"),
            snapshot=True)
        self.assertEqual((e.field, e.job_id), ("jobs[3].id", "a-1"))
        e = errors.from_rpc_error(FakeRpcError(S.INVALID_ARGUMENT,
                                               "header.generation: must be >= 1"), snapshot=True)
        self.assertEqual((e.field, e.job_id), ("header.generation", None))


class RetryTest(unittest.TestCase):
    def test_unavailable_is_retried_until_attempts_run_out(self):
        policy = berth.RetryPolicy(attempts=4, first_backoff=0.5, max_backoff=1.0, jitter=0)
        waits, calls = [], []

        def failing():
            calls.append(1)
            raise berth.Unavailable("down", S.UNAVAILABLE)
        with self.assertRaises(berth.Unavailable):
            berth.retry.call_with_retries(policy, failing, sleep=waits.append)
        self.assertEqual(len(calls), 4)
        self.assertEqual(waits, [0.5, 1.0, 1.0])

    def test_deadline_and_other_errors_are_not_retried(self):
        for error in (berth.DeadlineExceeded("slow", S.DEADLINE_EXCEEDED),
                      berth.PermissionDenied("no", S.PERMISSION_DENIED)):
            calls = []

            def failing():
                calls.append(1)
                raise error
            with self.assertRaises(type(error)):
                berth.retry.call_with_retries(berth.RetryPolicy(), failing, sleep=lambda s: None)
            self.assertEqual(len(calls), 1)

    def test_bad_policies_are_refused(self):
        with self.assertRaisesRegex(ValueError, "attempts"):
            berth.RetryPolicy(attempts=0)
        with self.assertRaisesRegex(ValueError, "jitter"):
            berth.RetryPolicy(jitter=1.5)


class FakeStub:
    """SyncSnapshot: fails with the given errors first, then answers."""

    def __init__(self, failures, applied=0):
        self.failures = list(failures)
        self.generations = []
        self.deadlines = []
        self.applied = applied

    def SyncSnapshot(self, requests, timeout=None, metadata=None):
        parts = list(requests)
        generation = parts[0].header.generation
        self.generations.append(generation)
        self.deadlines.append(timeout)
        if self.failures:
            raise self.failures.pop(0)
        if generation <= self.applied:
            raise FakeRpcError(S.FAILED_PRECONDITION, "generation %d is not above %d"
                               % (generation, self.applied),
                               (("berth-last-generation", str(self.applied)),))
        self.applied = generation
        return executor_pb2.SyncSnapshotResponse(
            generation=generation, revision=10, added=len(parts[1].batch.jobs), cancelled=1)


RECORDS = [{"id": "a", "workspace": "w", "image": "i"}, {"id": "b", "workspace": "w", "image": "i"}]


class ClientSyncTest(unittest.TestCase):
    def client(self, stub):
        c = berth.BerthClient("127.0.0.1:1", "t" * 16, timeout=7.5,
                              retry=berth.RetryPolicy(first_backoff=0.001, max_backoff=0.002))
        c._stub = stub
        self.addCleanup(c.close)
        return c

    def test_sync_is_retried_with_the_same_generation_and_answers_counts(self):
        stub = FakeStub([FakeRpcError(S.UNAVAILABLE, "berthd is recovering")] * 2)
        result = self.client(stub).sync(RECORDS, 5)
        self.assertEqual(stub.generations, [5, 5, 5])
        self.assertEqual(stub.deadlines, [7.5] * 3)
        self.assertEqual((result.generation, result.revision, result.added, result.cancelled),
                         (5, 10, 2, 1))
        self.assertFalse(result.already_applied)

    def test_sync_errors_are_typed(self):
        stub = FakeStub([FakeRpcError(S.PERMISSION_DENIED, "reader may not push")])
        with self.assertRaises(berth.PermissionDenied):
            self.client(stub).sync(RECORDS, 1)
        self.assertEqual(stub.generations, [1])
        with self.assertRaises(berth.InvalidSnapshot) as raised:
            self.client(FakeStub([])).sync([{"id": "x", "workspace": "w", "image": "i",
                                             "memory": "lots"}], 1)
        self.assertEqual((raised.exception.job_id, raised.exception.field), ("x", "memory"))

    def test_push_continues_above_a_higher_applied_generation(self):
        with tempfile.TemporaryDirectory() as d:
            generations = berth.GenerationFile(os.path.join(d, "generation"))
            stub = FakeStub([], applied=40)  # a fresh state dir, berthd at 40
            result = self.client(stub).push(RECORDS, generations)
            self.assertEqual(stub.generations, [1, 41])
            self.assertEqual(result.generation, 41)
            self.assertEqual(generations.load(), 41)
            self.assertEqual(self.client(stub).push(RECORDS, generations).generation, 42)

    def test_push_does_not_retry_other_conflicts(self):
        refused = FakeRpcError(S.FAILED_PRECONDITION, "would cancel 9 running jobs",
                               (("berth-last-generation", "3"),))
        with tempfile.TemporaryDirectory() as d:
            generations = berth.GenerationFile(os.path.join(d, "generation"))
            generations.save(3)
            stub = FakeStub([refused], applied=3)
            with self.assertRaises(berth.GenerationConflict) as raised:
                self.client(stub).push(RECORDS, generations)
            self.assertEqual(raised.exception.last_applied_generation, 3)
            self.assertEqual(stub.generations, [4])

    def test_bad_settings_are_refused(self):
        with self.assertRaisesRegex(ValueError, "no token"):
            berth.BerthClient("127.0.0.1:1", "")
        with self.assertRaisesRegex(ValueError, "keepalive_time"):
            berth.BerthClient("127.0.0.1:1", "t" * 16, keepalive_time=1)
        with self.assertRaisesRegex(ValueError, "timeout"):
            berth.BerthClient("127.0.0.1:1", "t" * 16, timeout=0)


if __name__ == "__main__":
    unittest.main()
