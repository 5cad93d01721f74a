"""EventFollower: Berth's event stream, resumed by itself.

Delivery: the follower stores an event's revision (with its epoch) once the
event is handled, so a restarted follower resumes right after it. A graceful
stop (stop(), SIGTERM with install_signal_handlers) hands every event over
exactly once across restarts. After a crash (kill -9) the event being handled
when the process died is delivered again: make handling idempotent, or store
the revision in the same database transaction as the handling (pass
revisions=None and the revision to start from; see Berth's
examples/jobserver_pg.py).

Handler exceptions: an exception raised by handle() (or in the body of a
`for event in follower.events()` loop) leaves the follower as it is: the
event's revision is not stored, the stream is closed, and the exception
propagates unchanged out of run() / the loop (in a thread started with
start(), FollowerThread.join() re-raises it and on_error is called). The
next run delivers that event again.

Reconnection: a stream that ends — Unavailable (berthd stopped, restarting,
or silent past the keepalive), DeadlineExceeded, a CANCELLED not caused by
stop(), or a plain end — is resumed from the last revision stored, after
0.1 s doubling to 5 s (RetryPolicy), forever until stop(). Other errors are
raised: RevisionExpired, HistoryForked, Unauthenticated, PermissionDenied."""

import signal
import threading
from typing import Any, Callable, Iterator, Optional, Protocol, Tuple

import grpc

from berth.errors import BerthError, Unavailable
from berth.retry import RetryPolicy
from berth.v1 import event_pb2

__all__ = ["EventFollower", "FollowerThread", "RevisionStore"]

Handler = Callable[[event_pb2.Event], None]
RetryHook = Callable[[Optional[BerthError], int], None]


class RevisionStore(Protocol):
    """Where the last handled revision lives (berth.RevisionFile is one)."""

    def load_with_epoch(self) -> Tuple[int, str]: ...

    def save(self, value: int, epoch: str = "") -> None: ...


class EventFollower:
    """Follows WatchEvents from a stored revision. One follower per loop;
    stop() may be called from any thread or a signal handler."""

    def __init__(self, client: Any, revisions: Optional[RevisionStore] = None,
                 from_revision: int = 0, epoch: str = "",
                 backoff: RetryPolicy = RetryPolicy(attempts=1 << 30)) -> None:
        """revisions: a RevisionFile (or any RevisionStore) to resume from
        and store each handled revision in; None: start at from_revision in
        epoch and store nothing (the caller stores event.revision and
        event.epoch itself, e.g. in its own transaction)."""
        self._client = client
        self._revisions = revisions
        self._backoff = backoff
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._stream: Any = None
        if revisions is not None:
            self.last_revision, self.epoch = revisions.load_with_epoch()
        else:
            self.last_revision, self.epoch = from_revision, epoch

    def stop(self) -> None:
        """Stops after the event being handled (safe from a signal handler
        and from other threads)."""
        self._stop.set()
        with self._lock:
            stream = self._stream
        if stream is not None:
            stream.cancel()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def install_signal_handlers(self, signals: Tuple[int, ...] = (signal.SIGTERM, signal.SIGINT)
                                ) -> None:
        """SIGTERM / SIGINT stop the follower cleanly (main thread only)."""
        for s in signals:
            signal.signal(s, lambda *_: self.stop())

    def _commit(self, event: event_pb2.Event) -> None:
        epoch = event.epoch or self.epoch
        if self._revisions is not None:
            self._revisions.save(event.revision, epoch)
        self.last_revision = event.revision
        self.epoch = epoch

    def _stream_events(self, on_retry: Optional[RetryHook]) -> Iterator[event_pb2.Event]:
        retry = 0
        while not self._stop.is_set():
            stream = self._client.watch(self.last_revision, wait_for_ready=retry > 0,
                                        epoch=self.epoch)
            with self._lock:
                self._stream = stream
            if self._stop.is_set():  # stop() raced with the call's creation
                stream.cancel()
            error: Optional[BerthError] = None
            try:
                for event in stream:
                    retry = 0
                    yield event
                    if self._stop.is_set():
                        return
            except Unavailable as e:
                error = e
            except BerthError as e:
                if e.code != grpc.StatusCode.CANCELLED:
                    raise
                if self._stop.is_set():
                    return
                error = e  # berthd's side ended the call (its shutdown)
            finally:
                with self._lock:
                    self._stream = None
                stream.cancel()
            retry += 1
            if on_retry is not None:
                on_retry(error, self.last_revision)
            if self._stop.wait(self._backoff.backoff(retry)):
                return

    def events(self, on_retry: Optional[RetryHook] = None) -> Iterator[event_pb2.Event]:
        """The events as an iterator: an event counts as handled (its
        revision is stored) when the loop asks for the next one. A `break`
        leaves the last event unstored (delivered again next time) unless
        commit(event) was called first. Ends after stop()."""
        for event in self._stream_events(on_retry):
            yield event
            self._commit(event)

    def commit(self, event: event_pb2.Event) -> None:
        """Stores `event` as handled now (e.g. before leaving an events()
        loop with break)."""
        self._commit(event)

    def run(self, handle: Handler, until: Optional[Callable[[event_pb2.Event], bool]] = None,
            on_retry: Optional[RetryHook] = None) -> int:
        """Calls handle(event) for each event, then stores its revision,
        until stop() or until(event) is True for a handled event. Returns
        the last revision handled. on_retry(error, revision) is told of each
        reconnection (error None: the stream ended without one)."""
        for event in self._stream_events(on_retry):
            handle(event)
            self._commit(event)
            if until is not None and until(event):
                break
        return self.last_revision

    def start(self, handle: Handler, on_error: Optional[Callable[[BaseException], None]] = None,
              on_retry: Optional[RetryHook] = None) -> "FollowerThread":
        """run(handle) in a daemon thread; see FollowerThread."""
        thread = FollowerThread(self, handle, on_error, on_retry)
        thread.start()
        return thread


class FollowerThread(threading.Thread):
    """A follower running in its own thread. stop() ends it after the event
    being handled; join() re-raises what ended it (a handler's exception or
    a BerthError such as RevisionExpired), which on_error is also given
    first, in the thread."""

    def __init__(self, follower: EventFollower, handle: Handler,
                 on_error: Optional[Callable[[BaseException], None]],
                 on_retry: Optional[RetryHook]) -> None:
        super().__init__(name="berth-follower", daemon=True)
        self.follower = follower
        self.error: Optional[BaseException] = None
        self._handle = handle
        self._on_error = on_error
        self._on_retry = on_retry

    def run(self) -> None:
        try:
            self.follower.run(self._handle, on_retry=self._on_retry)
        except BaseException as e:  # surfaced by join() and on_error
            self.error = e
            if self._on_error is not None:
                self._on_error(e)

    def stop(self) -> None:
        self.follower.stop()

    def join(self, timeout: Optional[float] = None) -> None:
        super().join(timeout)
        if not self.is_alive() and self.error is not None:
            raise self.error
