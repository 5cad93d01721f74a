"""BerthClient: a connection to berthd (berth.v1.Executor) for job-server.

Every call has a deadline (`timeout`, default 30 s) and raises only
berth.errors types. Idempotent calls — reads, and a sync (a generation
re-sent with the same jobs is answered already_applied) — are retried on
UNAVAILABLE with the client's RetryPolicy. The channel pings berthd every
`keepalive_time` seconds while a call is open and fails the connection when
a ping is unanswered for `keepalive_timeout`: a hung berthd fails a watch
(and a follower reconnects) within keepalive_time + keepalive_timeout,
15 s by default; a unary call ends at its deadline sooner or later."""

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, Optional, Sequence, Tuple

import grpc

from berth.errors import GenerationConflict, Unavailable, from_rpc_error
from berth.records import Record, job_specs, snapshot_requests
from berth.retry import RetryPolicy, call_with_retries
from berth.state_files import GenerationFile
from berth.v1 import event_pb2
from berth.v1 import executor_pb2
from berth.v1 import executor_pb2_grpc
from berth.v1 import job_pb2
from berth.v1 import logs_pb2
from berth.v1 import plan_pb2

__all__ = ["BerthClient", "SyncResult", "WatchStream", "LogChunks"]

# berthd accepts a ping at most every 5 s from a client with an open call
# (more often and it ends the connection, "too many pings").
_MIN_KEEPALIVE_TIME = 5.0


@dataclass(frozen=True)
class SyncResult:
    """What berthd answered a sync (SyncSnapshotResponse), enough to update
    job-server without another call.

    generation: the generation now applied; already_applied: it had been
    applied before (a re-send: nothing changed, the counts are 0);
    revision: the event revision after it (the last event it wrote);
    added, updated, unchanged, cancelled, rejected, terminal_unchanged:
    job counts; rejections: the JobRejection of each rejected job (job_id,
    reason, field, message); response: the message itself."""
    generation: int
    already_applied: bool
    revision: int
    added: int
    updated: int
    unchanged: int
    cancelled: int
    rejected: int
    terminal_unchanged: int
    rejections: Tuple[executor_pb2.JobRejection, ...] = field(repr=False)
    response: executor_pb2.SyncSnapshotResponse = field(repr=False)

    @classmethod
    def of(cls, r: executor_pb2.SyncSnapshotResponse) -> "SyncResult":
        return cls(r.generation, r.already_applied, r.revision, r.added, r.updated,
                   r.unchanged, r.cancelled, r.rejected, r.terminal_unchanged,
                   tuple(r.rejections), r)


class WatchStream:
    """An open WatchEvents call: iterate for Event messages (typed errors
    instead of grpc.RpcError); cancel() ends it from any thread."""

    def __init__(self, call: Any) -> None:
        self._call = call

    def __iter__(self) -> Iterator[event_pb2.Event]:
        try:
            for event in self._call:
                yield event
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def cancel(self) -> None:
        self._call.cancel()


class LogChunks:
    """ReadJobLog's chunks as (attempt, "stdout"|"stderr", bytes)."""

    def __init__(self, call: Any) -> None:
        self.call = call

    def __iter__(self) -> Iterator[Tuple[int, str, bytes]]:
        try:
            for chunk in self.call:
                if chunk.data:
                    name = "stderr" if chunk.stream == logs_pb2.LOG_STREAM_KIND_STDERR else "stdout"
                    yield chunk.attempt, name, chunk.data
        except grpc.RpcError as e:
            raise from_rpc_error(e) from None

    def cancel(self) -> None:
        self.call.cancel()


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


class BerthClient:
    """A connection to berthd; thread-safe (a gRPC channel and immutable
    settings). Use as a context manager or call close()."""

    def __init__(self, target: str, token: str, ca_file: Optional[str] = None,
                 cert_file: Optional[str] = None, key_file: Optional[str] = None,
                 timeout: float = 30.0, retry: RetryPolicy = RetryPolicy(),
                 keepalive_time: float = 10.0, keepalive_timeout: float = 5.0,
                 on_retry: Optional[Callable[[Unavailable, int], None]] = None) -> None:
        """target "host:port"; token the bearer token (pusher for sync and
        watch, operator for logs); ca_file enables TLS, cert_file/key_file
        mTLS. timeout: each call's deadline in seconds (not for watch and a
        followed log). retry: see RetryPolicy; on_retry(error, n) is told of
        each retry (e.g. to log it). keepalive_time >= 5 s."""
        if not token:
            raise ValueError("no token: pass the bearer token from berthd's token file")
        if keepalive_time < _MIN_KEEPALIVE_TIME:
            raise ValueError("keepalive_time: %r s is below the %g s berthd permits"
                             % (keepalive_time, _MIN_KEEPALIVE_TIME))
        if timeout <= 0:
            raise ValueError("timeout: must be > 0 seconds, got %r" % (timeout,))
        self._metadata = (("authorization", "Bearer " + token),)
        self.timeout = timeout
        self.retry = retry
        self._on_retry = on_retry
        options = [("grpc.max_receive_message_length", 256 << 20),
                   ("grpc.keepalive_time_ms", int(keepalive_time * 1000)),
                   ("grpc.keepalive_timeout_ms", int(keepalive_timeout * 1000)),
                   ("grpc.http2.max_pings_without_data", 0)]
        if ca_file:
            creds = grpc.ssl_channel_credentials(
                root_certificates=_read(ca_file),
                private_key=_read(key_file) if key_file else None,
                certificate_chain=_read(cert_file) if cert_file else None)
            self._channel = grpc.secure_channel(target, creds, options)
        else:
            self._channel = grpc.insecure_channel(target, options)
        self._stub = executor_pb2_grpc.ExecutorStub(self._channel)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "BerthClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Waits until the channel connects; Unavailable if it does not."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise Unavailable("cannot connect to berthd within %g s" % timeout) from None

    def _unary(self, method: Callable[..., Any], request: Any, idempotent: bool = True,
               snapshot: bool = False, retry: Optional[RetryPolicy] = None) -> Any:
        def once() -> Any:
            try:
                return method(request() if callable(request) else request,
                              timeout=self.timeout, metadata=self._metadata)
            except grpc.RpcError as e:
                raise from_rpc_error(e, snapshot=snapshot) from None
        if not idempotent:
            return once()
        return call_with_retries(retry or self.retry, once, self._on_retry)

    # ---- snapshots ----

    def sync(self, records: Iterable[Record], generation: int, allow_mass_cancel: bool = False,
             batch_size: int = 500, policies: Optional[Dict[str, bool]] = None) -> SyncResult:
        """Sends the whole list of wanted jobs as snapshot `generation`
        (all or nothing on berthd). records: dicts (see job_spec) or
        JobSpec messages. Retried on UNAVAILABLE with the same generation.
        Raises InvalidSnapshot (a record or the stream refused),
        GenerationConflict (a stale generation: its last_applied_generation
        says where to continue; or a refused mass cancel), Unavailable,
        DeadlineExceeded, Unauthenticated, PermissionDenied."""
        specs = job_specs(records)
        return SyncResult.of(self._unary(
            self._stub.SyncSnapshot,
            lambda: snapshot_requests(specs, generation, allow_mass_cancel, batch_size, policies),
            snapshot=True))

    def push(self, records: Iterable[Record], generations: GenerationFile,
             allow_mass_cancel: bool = False,
             policies: Optional[Dict[str, bool]] = None) -> SyncResult:
        """sync() with the next generation of `generations`; if berthd has
        applied a higher one (a lost or copied state file), continues once
        above berthd's last applied generation. No GetPlan is needed."""
        specs = job_specs(records)
        generation = generations.next()
        try:
            return self.sync(specs, generation, allow_mass_cancel, policies=policies)
        except GenerationConflict as e:
            if e.last_applied_generation < generation:
                raise  # not a stale generation (e.g. a refused mass cancel)
            generation = generations.next(floor=e.last_applied_generation)
            return self.sync(specs, generation, allow_mass_cancel, policies=policies)

    def dry_run(self, records: Iterable[Record], generation: int,
                allow_mass_cancel: bool = False) -> executor_pb2.DryRunResponse:
        """What sync() would change and the plan that would result."""
        specs = job_specs(records)
        return self._unary(self._stub.DryRun,
                           lambda: snapshot_requests(specs, generation, allow_mass_cancel),
                           snapshot=True)

    # ---- reads ----

    def get_job(self, job_id: str) -> job_pb2.Job:
        return self._unary(self._stub.GetJob, executor_pb2.GetJobRequest(job_id=job_id))

    def explain(self, job_id: str) -> plan_pb2.Explanation:
        return self._unary(self._stub.ExplainJob, executor_pb2.ExplainJobRequest(job_id=job_id))

    def plan(self, limit: int = 0) -> plan_pb2.Plan:
        return self._unary(self._stub.GetPlan, executor_pb2.GetPlanRequest(limit=limit))

    def list_jobs(self, states: Sequence[int] = (), workspace: str = "", pool: str = "",
                  page_size: int = 500) -> Iterator[job_pb2.Job]:
        """Every matching Job, across pages (a generator)."""
        request = executor_pb2.ListJobsRequest(states=list(states), workspace=workspace,
                                               pool=pool, page_size=page_size)
        while True:
            response = self._unary(self._stub.ListJobs, request)
            yield from response.jobs
            if not response.next_page_token:
                return
            request.page_token = response.next_page_token

    def last_applied_generation(self) -> int:
        """The generation of the last snapshot berthd applied (0 = none)."""
        return self.plan(limit=1).last_applied_generation

    def watch(self, from_revision: int, wait_for_ready: bool = False,
              epoch: str = "") -> WatchStream:
        """WatchEvents: events with revision > from_revision, no deadline
        (keepalive notices a hung berthd). wait_for_ready: wait for berthd
        to be reachable instead of failing Unavailable at once. epoch: the
        history epoch from_revision belongs to (HistoryForked if berthd's
        is another). Prefer EventFollower, which resumes by itself."""
        return WatchStream(self._stub.WatchEvents(
            executor_pb2.WatchEventsRequest(from_revision=from_revision, epoch=epoch),
            metadata=self._metadata, wait_for_ready=wait_for_ready))

    def read_log(self, job_id: str, attempt: int = 0, follow: bool = False,
                 stream: Optional[str] = None, stdout_offset: int = 0,
                 stderr_offset: int = 0) -> LogChunks:
        """A job's complete log (ReadJobLog; an operator token, or a reader
        token where berthd runs with --readers_read_logs) as (attempt,
        "stdout"|"stderr", bytes). attempt 0: the latest; stream None: both.
        follow: a running attempt live, then each next attempt after a
        requeue, until the job has finished (no deadline then)."""
        kinds = {None: logs_pb2.LOG_STREAM_KIND_UNSPECIFIED,
                 "stdout": logs_pb2.LOG_STREAM_KIND_STDOUT,
                 "stderr": logs_pb2.LOG_STREAM_KIND_STDERR}
        if stream not in kinds:
            raise ValueError("stream: expected None, 'stdout' or 'stderr', got %r" % (stream,))
        call = self._stub.ReadJobLog(
            logs_pb2.ReadJobLogRequest(job_id=job_id, attempt=attempt, stream=kinds[stream],
                                       stdout_offset=stdout_offset,
                                       stderr_offset=stderr_offset, follow=follow),
            timeout=None if follow else self.timeout, metadata=self._metadata)
        return LogChunks(call)
