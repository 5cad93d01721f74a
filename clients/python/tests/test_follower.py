"""EventFollower: reconnection, delivery, iterator and thread forms, handler
exceptions (fake WatchEvents calls, no server)."""

import os
import tempfile
import threading
import time
import unittest

import grpc

import berth
from berth.v1 import event_pb2
from test_errors import FakeRpcError

S = grpc.StatusCode
FAST = berth.RetryPolicy(attempts=1 << 30, first_backoff=0.001, max_backoff=0.002)


class FakeCall:
    """A WatchEvents call: some events, then an error (or a plain end)."""

    def __init__(self, revisions, error=None, epoch=""):
        self._revisions, self._error, self._epoch = revisions, error, epoch
        self.cancelled = False

    def __iter__(self):
        for r in self._revisions:
            yield event_pb2.Event(revision=r, epoch=self._epoch)
        if self._error is not None:
            raise self._error

    def cancel(self):
        self.cancelled = True


class FakeClient:
    def __init__(self, calls):
        self._calls = list(calls)
        self.watches = []

    def watch(self, from_revision, wait_for_ready=False, epoch=""):
        self.watches.append((from_revision, wait_for_ready, epoch))
        return berth.WatchStream(self._calls.pop(0))


class FollowerTest(unittest.TestCase):
    def setUp(self):
        d = tempfile.TemporaryDirectory()
        self.addCleanup(d.cleanup)
        self.revisions = berth.RevisionFile(os.path.join(d.name, "revision"))

    def follower(self, client):
        return berth.EventFollower(client, self.revisions, backoff=FAST)

    def test_unavailable_resumes_from_the_last_revision(self):
        down = FakeRpcError(S.UNAVAILABLE, "berthd is shutting down")
        client = FakeClient([FakeCall([1, 2], down), FakeCall([3], down), FakeCall([4])])
        handled, retries = [], []
        last = self.follower(client).run(
            lambda e: handled.append(e.revision), until=lambda e: e.revision == 4,
            on_retry=lambda err, rev: retries.append((type(err), rev)))
        self.assertEqual(last, 4)
        self.assertEqual(handled, [1, 2, 3, 4])
        self.assertEqual([w[:2] for w in client.watches], [(0, False), (2, True), (3, True)])
        self.assertEqual(retries, [(berth.Unavailable, 2), (berth.Unavailable, 3)])
        self.assertEqual(self.revisions.load(), 4)

    def test_keepalive_and_deadline_failures_and_plain_ends_reconnect(self):
        client = FakeClient([FakeCall([1], FakeRpcError(S.DEADLINE_EXCEEDED)),
                             FakeCall([2]), FakeCall([3], FakeRpcError(S.CANCELLED)),
                             FakeCall([4])])
        retries = []
        self.follower(client).run(lambda e: None, until=lambda e: e.revision == 4,
                                  on_retry=lambda err, rev: retries.append(type(err)))
        self.assertEqual(retries, [berth.DeadlineExceeded, type(None), berth.BerthError])

    def test_a_restored_history_raises_history_forked(self):
        down = FakeRpcError(S.UNAVAILABLE)
        refused = FakeRpcError(S.FAILED_PRECONDITION, "restored",
                               (("berth-epoch", "bbbb"), ("berth-resume-revision", "1"),
                                ("berth-current-revision", "5")))
        client = FakeClient([FakeCall([1, 2], down, epoch="aaaa"), FakeCall([], refused)])
        with self.assertRaises(berth.HistoryForked) as raised:
            self.follower(client).run(lambda e: None)
        e = raised.exception
        self.assertEqual((e.epoch, e.resume_revision, e.current_revision), ("bbbb", 1, 5))
        self.assertEqual([w[2] for w in client.watches], ["", "aaaa"])
        self.assertEqual(self.revisions.load_with_epoch(), (2, "aaaa"))
        # The caller re-lists and resumes in the new epoch.
        self.revisions.save(e.resume_revision, e.epoch)
        client = FakeClient([FakeCall([2], epoch="bbbb")])
        self.assertEqual(self.follower(client).run(lambda e: None, until=lambda e: True), 2)
        self.assertEqual(client.watches, [(1, False, "bbbb")])

    def test_expired_and_denied_are_raised_typed(self):
        gone = FakeRpcError(S.OUT_OF_RANGE, "gone", (("berth-current-revision", "99"),))
        with self.assertRaises(berth.RevisionExpired) as raised:
            self.follower(FakeClient([FakeCall([], gone)])).run(lambda e: None)
        self.assertEqual(raised.exception.current, 99)
        f = self.follower(FakeClient([FakeCall([1], FakeRpcError(S.PERMISSION_DENIED))]))
        with self.assertRaises(berth.PermissionDenied):
            f.run(lambda e: None)
        self.assertEqual(f.last_revision, 1)

    def test_a_handler_exception_propagates_and_its_event_is_not_stored(self):
        client = FakeClient([FakeCall([1, 2, 3])])
        f = self.follower(client)

        def handle(e):
            if e.revision == 2:
                raise KeyError("job-server's database said no")
        with self.assertRaises(KeyError):
            f.run(handle)
        self.assertEqual(self.revisions.load(), 1)
        self.assertEqual(f.last_revision, 1)
        # The next run is delivered event 2 again.
        client = FakeClient([FakeCall([2, 3])])
        seen = []
        self.follower(client).run(lambda e: seen.append(e.revision), until=lambda e: e.revision == 3)
        self.assertEqual((client.watches[0][0], seen), (1, [2, 3]))

    def test_stop_while_waiting_to_reconnect_returns(self):
        client = FakeClient([FakeCall([1], FakeRpcError(S.UNAVAILABLE))])
        f = self.follower(client)
        self.assertEqual(f.run(lambda e: None, on_retry=lambda err, rev: f.stop()), 1)
        self.assertEqual(len(client.watches), 1)

    def test_iterator_stores_an_event_when_the_next_is_asked_for(self):
        down = FakeRpcError(S.UNAVAILABLE)
        client = FakeClient([FakeCall([1, 2], down), FakeCall([3, 4, 5])])
        f = self.follower(client)
        seen = []
        for event in f.events():
            seen.append(event.revision)
            self.assertEqual(self.revisions.load(), event.revision - 1)
            if event.revision == 4:
                break  # 4 is not stored: delivered again next time
        self.assertEqual(seen, [1, 2, 3, 4])
        self.assertEqual(self.revisions.load(), 3)
        client = FakeClient([FakeCall([4, 5])])
        f = self.follower(client)
        for event in f.events():
            f.commit(event)
            break
        self.assertEqual(self.revisions.load(), 4)

    def test_without_a_revision_store_the_caller_keeps_the_revision(self):
        client = FakeClient([FakeCall([8, 9], FakeRpcError(S.UNAVAILABLE)), FakeCall([10])])
        f = berth.EventFollower(client, None, from_revision=7, epoch="cccc", backoff=FAST)
        f.run(lambda e: None, until=lambda e: e.revision == 10)
        self.assertEqual([w[0] for w in client.watches], [7, 9])
        self.assertEqual(client.watches[0][2], "cccc")
        self.assertFalse(os.path.exists(self.revisions.path))

    def test_thread_surfaces_the_handler_exception(self):
        client = FakeClient([FakeCall([1, 2])])
        errors = []

        def handle(e):
            raise RuntimeError("handler failed at %d" % e.revision)
        t = self.follower(client).start(handle, on_error=errors.append)
        with self.assertRaisesRegex(RuntimeError, "handler failed at 1"):
            t.join(10)
        self.assertEqual(len(errors), 1)
        self.assertIs(errors[0], t.error)

    def test_thread_stops_cleanly(self):
        blocked = threading.Event()

        class Blocking(FakeCall):
            def __iter__(self):
                yield event_pb2.Event(revision=1)
                blocked.wait(10)
                if self.cancelled:
                    raise FakeRpcError(S.CANCELLED)

            def cancel(self):
                self.cancelled = True
                blocked.set()
        handled = []
        t = self.follower(FakeClient([Blocking([])])).start(lambda e: handled.append(e.revision))
        deadline = time.monotonic() + 10
        while not handled and time.monotonic() < deadline:
            t.join(0.01)  # the thread is blocked in the stream after event 1
        self.assertEqual(handled, [1])
        t.stop()
        t.join(10)
        self.assertFalse(t.is_alive())
        self.assertIsNone(t.error)
        self.assertEqual(self.revisions.load(), 1)


if __name__ == "__main__":
    unittest.main()
