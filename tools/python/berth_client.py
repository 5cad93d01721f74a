"""A small client of Berth's gRPC API (berth.v1.Executor) for job-server.

Uses only Debian's python3-grpcio and python3-protobuf. The stubs
(berth/v1/*_pb2.py, executor_pb2_grpc.py) are generated at build time by
//tools/python:berth_v1_py; put that directory and this one on PYTHONPATH.

What it does:
  * job_spec(record): a JobSpec from a job-server-like dict (id, workspace,
    image, argv, priority, memory "16Gi", cpu 1.5 or "500m", ...);
  * BerthClient.sync(records, generation): one whole snapshot, streamed as
    header / batches / end (all or nothing on the server);
  * GenerationFile: increasing generations that survive restarts (next(floor)
    continues above berthd's last applied generation,
    BerthClient.last_applied_generation(), e.g. after the state was lost);
  * RevisionFile + EventFollower: follow WatchEvents, persisting the last
    handled revision after each event so that a restarted client resumes
    exactly where the previous one stopped;
  * BerthClient.read_log(job_id, follow=True): a job's complete logs;
  * expected_start(decision_or_explanation): a queued job's ETA and what it
    promises (now, reserved, if estimates hold, beyond the forecast, unknown).

Delivery: a graceful stop (EventFollower.stop(), SIGTERM with
install_signal_handlers) hands every event over exactly once across
restarts. After a crash (kill -9) the event being handled when the process
died is delivered again: make handlers idempotent (e.g. "set job state").
"""

import collections
import datetime
import os
import re
import signal
import tempfile
import threading

import grpc
from google.protobuf import json_format

from berth.v1 import executor_pb2
from berth.v1 import executor_pb2_grpc
from berth.v1 import job_pb2
from berth.v1 import logs_pb2
from berth.v1 import plan_pb2

TERMINAL_STATES = frozenset([
    job_pb2.JOB_STATE_SUCCEEDED,
    job_pb2.JOB_STATE_FAILED,
    job_pb2.JOB_STATE_CANCELLED,
    job_pb2.JOB_STATE_REJECTED,
])

_BYTE_UNITS = {
    "": 1, "B": 1,
    "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50,
}
_DURATION_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400}

_RECORD_KEYS = frozenset([
    "id", "workspace", "action", "image", "argv", "env", "priority", "memory",
    "cpu", "pool", "expected_duration", "max_duration", "depends_on",
    "created_at", "labels",
])


def parse_bytes(value):
    """Bytes from an int or a string like "16Gi", "512Mi", "1.5G", "100"."""
    if isinstance(value, bool):
        raise ValueError("memory: expected bytes, got %r" % (value,))
    if isinstance(value, int):
        return value
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGTP]i?|B)?B?\s*", str(value))
    if not m or (m.group(2) or "") not in _BYTE_UNITS:
        raise ValueError(
            "memory: %r: expected bytes like 16Gi, 512Mi, 1.5G or 1000000" % (value,))
    return int(round(float(m.group(1)) * _BYTE_UNITS[m.group(2) or ""]))


def parse_cpu_millis(value):
    """Millicores from cores (1, 1.5, "2") or millicores ("500m")."""
    if isinstance(value, bool):
        raise ValueError("cpu: expected cores, got %r" % (value,))
    if isinstance(value, (int, float)):
        return int(round(value * 1000))
    text = str(value).strip()
    m = re.fullmatch(r"([0-9]+)m", text)
    if m:
        return int(m.group(1))
    if re.fullmatch(r"[0-9]+(\.[0-9]+)?", text):
        return int(round(float(text) * 1000))
    raise ValueError("cpu: %r: expected cores (1.5) or millicores (500m)" % (value,))


def parse_duration_seconds(value):
    """Seconds from a number or a string like "2h", "90m", "1h30m", "45s"."""
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    parts = re.findall(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError("duration: %r: expected e.g. 2h, 90m, 1h30m, 45s" % (value,))
    return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)


def _set_duration(field, seconds):
    field.seconds = int(seconds)
    field.nanos = int(round((seconds - int(seconds)) * 1e9))


class ExpectedStart(collections.namedtuple("ExpectedStart", "kind at not_before")):
    """A queued job's ETA, as GetPlan's PlanDecision or ExplainJob's
    Explanation gives it (docs/DESIGN.md "ETAs are the planner's own forecast").

    kind: "now", "reserved", "if_estimates_hold", "beyond_forecast", "unknown".
    at: the expected start (aware UTC datetime), or None for "unknown" and
        "beyond_forecast".
    not_before: for "beyond_forecast", the last instant the bounded forecast
        covered (the job starts after it, if at all); else None."""

    def __str__(self):
        if self.kind == "beyond_forecast":
            return "beyond the forecast (after %s)" % self.not_before.isoformat()
        if self.at is None:
            return "unknown"
        return "%s (%s)" % (self.at.isoformat(), self.kind)


_ETA_KINDS = {
    plan_pb2.ETA_KIND_NOW: "now",
    plan_pb2.ETA_KIND_RESERVED: "reserved",
    plan_pb2.ETA_KIND_IF_ESTIMATES_HOLD: "if_estimates_hold",
    plan_pb2.ETA_KIND_BEYOND_FORECAST: "beyond_forecast",
}


def expected_start(message):
    """ExpectedStart of a PlanDecision or an Explanation (of a queued job)."""
    def when(field):
        if not message.HasField(field):
            return None
        return getattr(message, field).ToDatetime().replace(tzinfo=datetime.timezone.utc)
    kind = _ETA_KINDS.get(message.eta_kind, "unknown")
    if kind == "beyond_forecast":
        return ExpectedStart(kind, None, when("not_before"))
    at = when("estimated_start")
    return ExpectedStart(kind if at is not None else "unknown", at, None)


def job_spec(record):
    """A berth.v1.JobSpec from a job-server record (a dict).

    Keys: id, workspace, image (required); action, argv (list), env (dict),
    priority (int), memory (bytes or "16Gi"), cpu (cores or "500m"), pool,
    expected_duration / max_duration ("2h" or seconds), depends_on (list of
    ids), created_at (datetime, ISO 8601 string or epoch seconds), labels.
    ValueError naming the job and the key for unknown keys or bad values.
    """
    job_id = record.get("id", "?")
    unknown = sorted(set(record) - _RECORD_KEYS)
    if unknown:
        raise ValueError("job %r: unknown key(s) %s" % (job_id, ", ".join(unknown)))
    for key in ("id", "workspace", "image"):
        if not record.get(key):
            raise ValueError("job %r: %s is required" % (job_id, key))
    try:
        spec = job_pb2.JobSpec(
            id=record["id"],
            workspace=record["workspace"],
            action=record.get("action", ""),
            image=record["image"],
            argv=list(record.get("argv", [])),
            env=dict(record.get("env", {})),
            priority=int(record.get("priority", 0)),
            pool=record.get("pool", ""),
            depends_on=list(record.get("depends_on", [])),
            labels={str(k): str(v) for k, v in record.get("labels", {}).items()},
        )
        if "memory" in record:
            spec.resources.memory_bytes = parse_bytes(record["memory"])
        if "cpu" in record:
            spec.resources.cpu_millis = parse_cpu_millis(record["cpu"])
        if record.get("expected_duration") is not None:
            _set_duration(spec.expected_duration,
                          parse_duration_seconds(record["expected_duration"]))
        if record.get("max_duration") is not None:
            _set_duration(spec.max_duration, parse_duration_seconds(record["max_duration"]))
        created = record.get("created_at")
        if isinstance(created, datetime.datetime):
            if created.tzinfo is None:
                created = created.replace(tzinfo=datetime.timezone.utc)
            spec.created_at.FromDatetime(created.astimezone(datetime.timezone.utc)
                                         .replace(tzinfo=None))
        elif isinstance(created, str):
            spec.created_at.FromJsonString(created)
        elif isinstance(created, (int, float)):
            _set_duration(spec.created_at, float(created))
    except (TypeError, ValueError) as e:
        raise ValueError("job %r: %s" % (job_id, e)) from None
    return spec


def snapshot_requests(specs, generation, allow_mass_cancel=False, batch_size=500, policies=None):
    """The SyncSnapshot stream for `specs` (a list of JobSpec). `policies`: the
    header's policy switches for this snapshot's jobs, e.g.
    {"requeue_oom_once": True, "fill_memory_from_history": True}."""
    yield executor_pb2.SyncSnapshotRequest(header=executor_pb2.SnapshotHeader(
        generation=generation, expected_job_count=len(specs),
        allow_mass_cancel=allow_mass_cancel, **(policies or {})))
    for start in range(0, len(specs), batch_size):
        yield executor_pb2.SyncSnapshotRequest(
            batch=executor_pb2.JobBatch(jobs=specs[start:start + batch_size]))
    yield executor_pb2.SyncSnapshotRequest(end=executor_pb2.SnapshotEnd(job_count=len(specs)))


def _write_atomically(path, text):
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-" + os.path.basename(path))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class _CounterFile:
    def __init__(self, path):
        self.path = path

    def load(self):
        """The stored number; 0 if the file does not exist."""
        try:
            with open(self.path) as f:
                text = f.read().strip()
        except FileNotFoundError:
            return 0
        if not text.isdigit():
            raise ValueError("%s: expected a number, found %r" % (self.path, text))
        return int(text)

    def save(self, value):
        """Stores `value` atomically (temporary file, fsync, rename)."""
        _write_atomically(self.path, "%d\n" % value)


class RevisionFile(_CounterFile):
    """The last event revision handled, persisted (0 = from the beginning),
    with the history epoch it belongs to (Event.epoch): "<revision> <epoch>"
    (a file of an older client holds the revision alone)."""

    def load(self):
        return self.load_with_epoch()[0]

    def load_with_epoch(self):
        """(revision, epoch); (0, "") if the file does not exist."""
        try:
            with open(self.path) as f:
                text = f.read().strip()
        except FileNotFoundError:
            return 0, ""
        parts = text.split()
        if not parts or len(parts) > 2 or not parts[0].isdigit():
            raise ValueError("%s: expected a revision (and an epoch), found %r" % (self.path, text))
        return int(parts[0]), parts[1] if len(parts) == 2 else ""

    def save(self, value, epoch=""):
        """Stores `value` (and `epoch`) atomically."""
        _write_atomically(self.path, "%d %s\n" % (value, epoch) if epoch else "%d\n" % value)


class GenerationFile(_CounterFile):
    """Snapshot generations that keep increasing across restarts."""

    def next(self, floor=0):
        """Reserves and returns the next generation (persisted first): above
        both the stored one and `floor` (pass the server's last applied
        generation so that a fresh state directory does not start below it)."""
        value = max(self.load(), floor) + 1
        self.save(value)
        return value


class RevisionExpired(Exception):
    """WatchEvents said OUT_OF_RANGE: the events after the stored revision are
    no longer retained. Re-list the jobs, then follow from `current`."""

    def __init__(self, message, current):
        super().__init__(message)
        self.current = current


class HistoryChanged(Exception):
    """WatchEvents said FAILED_PRECONDITION with an epoch: berthd's event
    history is not the one the follower read (its store was restored from a
    backup: revisions are never reused), or the revision is beyond it.
    Re-list the jobs, then resume from `resume_revision` in `epoch`, e.g.
    revision_file.save(e.resume_revision, e.epoch) and run the follower again."""

    def __init__(self, message, epoch, resume_revision, current_revision):
        super().__init__(message)
        self.epoch = epoch
        self.resume_revision = resume_revision
        self.current_revision = current_revision


class BerthClient:
    """A connection to berthd. Not for concurrent use from several threads
    without care (gRPC channels are thread-safe; this class adds no state)."""

    def __init__(self, target, token, ca_file=None, cert_file=None, key_file=None,
                 timeout=30.0):
        """target "host:port"; token the bearer token (a pusher token for
        sync and watch); ca_file enables TLS, cert_file/key_file mTLS."""
        if not token:
            raise ValueError("no token: pass the bearer token from berthd's token file")
        self._metadata = (("authorization", "Bearer " + token),)
        self._timeout = timeout
        # Keepalive, as berthctl's: a ping every 10 s on a connection with a
        # call (however quiet: a watch waiting for events), the connection
        # failing if one is unanswered for 5 s. A berthd that stops answering
        # then fails the call (UNAVAILABLE) within about 15 s, and
        # EventFollower reconnects; berthd permits pings from every 5 s.
        options = [("grpc.max_receive_message_length", 256 << 20),
                   ("grpc.keepalive_time_ms", 10000),
                   ("grpc.keepalive_timeout_ms", 5000),
                   ("grpc.http2.max_pings_without_data", 0)]
        if ca_file:
            def read(path):
                with open(path, "rb") as f:
                    return f.read()
            creds = grpc.ssl_channel_credentials(
                root_certificates=read(ca_file),
                private_key=read(key_file) if key_file else None,
                certificate_chain=read(cert_file) if cert_file else None)
            self._channel = grpc.secure_channel(target, creds, options)
        else:
            self._channel = grpc.insecure_channel(target, options)
        self._stub = executor_pb2_grpc.ExecutorStub(self._channel)

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def wait_ready(self, timeout=30.0):
        """Waits until the channel connects; grpc.FutureTimeoutError if not."""
        grpc.channel_ready_future(self._channel).result(timeout=timeout)

    def sync(self, records, generation, allow_mass_cancel=False, batch_size=500, policies=None):
        """Sends the whole list of wanted jobs as snapshot `generation`.
        records: dicts (see job_spec) or JobSpec messages. policies: see
        snapshot_requests. Returns the SyncSnapshotResponse; grpc.RpcError on
        a refused snapshot."""
        specs = [r if isinstance(r, job_pb2.JobSpec) else job_spec(r) for r in records]
        return self._stub.SyncSnapshot(
            snapshot_requests(specs, generation, allow_mass_cancel, batch_size, policies),
            timeout=self._timeout, metadata=self._metadata)

    def dry_run(self, records, generation, allow_mass_cancel=False):
        specs = [r if isinstance(r, job_pb2.JobSpec) else job_spec(r) for r in records]
        return self._stub.DryRun(snapshot_requests(specs, generation, allow_mass_cancel),
                                 timeout=self._timeout, metadata=self._metadata)

    def get_job(self, job_id):
        return self._stub.GetJob(executor_pb2.GetJobRequest(job_id=job_id),
                                 timeout=self._timeout, metadata=self._metadata)

    def explain(self, job_id):
        return self._stub.ExplainJob(executor_pb2.ExplainJobRequest(job_id=job_id),
                                     timeout=self._timeout, metadata=self._metadata)

    def plan(self, limit=0):
        return self._stub.GetPlan(executor_pb2.GetPlanRequest(limit=limit),
                                  timeout=self._timeout, metadata=self._metadata)

    def list_jobs(self, states=(), workspace="", pool="", page_size=500):
        """Every matching Job, across pages (a generator)."""
        request = executor_pb2.ListJobsRequest(states=list(states), workspace=workspace,
                                               pool=pool, page_size=page_size)
        while True:
            response = self._stub.ListJobs(request, timeout=self._timeout,
                                           metadata=self._metadata)
            yield from response.jobs
            if not response.next_page_token:
                return
            request.page_token = response.next_page_token

    def watch(self, from_revision, wait_for_ready=False, epoch=""):
        """The WatchEvents stream of events with revision > from_revision: an
        iterator of Event with .cancel(). No deadline. wait_for_ready: wait
        for berthd to be reachable instead of failing UNAVAILABLE at once.
        epoch: the history epoch from_revision belongs to (Event.epoch);
        berthd refuses another (FAILED_PRECONDITION, see HistoryChanged)."""
        return self._stub.WatchEvents(
            executor_pb2.WatchEventsRequest(from_revision=from_revision, epoch=epoch),
            metadata=self._metadata, wait_for_ready=wait_for_ready)

    def last_applied_generation(self):
        """The generation of the last snapshot berthd applied (0 = none): a
        new snapshot must send a higher one (GetPlan)."""
        return self.plan(limit=1).last_applied_generation


    def read_log(self, job_id, attempt=0, follow=False, stream=None,
                 stdout_offset=0, stderr_offset=0):
        """A job's complete log (ReadJobLog; an operator token, or a reader
        token where berthd runs with --readers_read_logs): an iterator of
        (attempt, stream, data) with stream "stdout" or "stderr" and data
        bytes, with .cancel() via the underlying call at
        `read_log(...).call`. attempt 0: the latest; stream None: both.
        follow: a running attempt live, then each next attempt after a
        requeue, until the job has finished. No deadline when following."""
        kinds = {None: logs_pb2.LOG_STREAM_KIND_UNSPECIFIED,
                 "stdout": logs_pb2.LOG_STREAM_KIND_STDOUT,
                 "stderr": logs_pb2.LOG_STREAM_KIND_STDERR}
        if stream not in kinds:
            raise ValueError("stream: expected None, 'stdout' or 'stderr', got %r" % (stream,))
        call = self._stub.ReadJobLog(
            logs_pb2.ReadJobLogRequest(job_id=job_id, attempt=attempt, stream=kinds[stream],
                                       stdout_offset=stdout_offset,
                                       stderr_offset=stderr_offset, follow=follow),
            timeout=None if follow else self._timeout, metadata=self._metadata)
        return _LogChunks(call)


# EventFollower reconnects after UNAVAILABLE (berthd stopped or restarting)
# with this backoff in seconds, doubling up to the maximum.
_FIRST_RETRY = 0.1
_MAX_RETRY = 5.0


class _LogChunks:
    """Iterator over ReadJobLog's chunks as (attempt, "stdout"|"stderr", bytes)."""

    def __init__(self, call):
        self.call = call

    def __iter__(self):
        for chunk in self.call:
            if chunk.data:
                name = "stderr" if chunk.stream == logs_pb2.LOG_STREAM_KIND_STDERR else "stdout"
                yield chunk.attempt, name, chunk.data

    def cancel(self):
        self.call.cancel()


class EventFollower:
    """Follows WatchEvents from a RevisionFile, calling handle(event) for each
    event and then persisting its revision, so that a new process resumes
    right after the last event handled: no gap, no repeat (see the module
    docstring for crashes). A stream berthd ends (UNAVAILABLE: shutting down,
    restarting, unreachable; or CANCELLED not caused by stop()) is resumed from the last revision handled, with
    a backoff of 0.1 s doubling to 5 s, until stop()."""

    def __init__(self, client, revision_file):
        self._client = client
        self._revisions = revision_file
        self._stop = threading.Event()
        self._call = None
        self.last_revision, self.epoch = revision_file.load_with_epoch()

    def stop(self):
        """Stops after the event being handled (safe from a signal handler
        and from other threads)."""
        self._stop.set()
        call = self._call
        if call is not None:
            call.cancel()

    def install_signal_handlers(self, signals=(signal.SIGTERM, signal.SIGINT)):
        """SIGTERM / SIGINT stop the follower cleanly (main thread only)."""
        for s in signals:
            signal.signal(s, lambda *_: self.stop())

    def run(self, handle, until=None, on_retry=None):
        """Follows events until stop(), or until(event) returns True after an
        event was handled. Returns the last revision handled. On UNAVAILABLE
        calls on_retry(error, revision) if given, waits and reconnects from
        the last revision handled. Raises RevisionExpired on OUT_OF_RANGE,
        HistoryChanged when berthd's history is not the one followed (a
        restore from a backup), grpc.RpcError on other failures."""
        retry = _FIRST_RETRY
        reconnect = False
        while not self._stop.is_set():
            self._call = self._client.watch(self.last_revision, wait_for_ready=reconnect,
                                            epoch=self.epoch)
            if self._stop.is_set():  # stop() raced with the call's creation
                self._call.cancel()
            try:
                for event in self._call:
                    handle(event)
                    epoch = event.epoch or self.epoch
                    self._revisions.save(event.revision, epoch)
                    self.last_revision = event.revision
                    self.epoch = epoch
                    retry = _FIRST_RETRY
                    if self._stop.is_set() or (until is not None and until(event)):
                        self._call.cancel()
                        return self.last_revision
                error = None  # ended without a status error: resume as well
            except grpc.RpcError as e:
                if e.code() == grpc.StatusCode.CANCELLED and self._stop.is_set():
                    return self.last_revision
                trailers = dict(e.trailing_metadata() or ())
                if (e.code() == grpc.StatusCode.FAILED_PRECONDITION and
                        trailers.get("berth-epoch")):
                    raise HistoryChanged(e.details(), trailers["berth-epoch"],
                                         int(trailers.get("berth-resume-revision", 0)),
                                         int(trailers.get("berth-current-revision", 0))) from None
                if e.code() == grpc.StatusCode.OUT_OF_RANGE:
                    trailers = dict(e.trailing_metadata() or ())
                    raise RevisionExpired(e.details(),
                                          int(trailers.get("berth-current-revision", 0))) from None
                # Not stopped here, so a CANCELLED came from berthd's side (a
                # call caught in its shutdown), like an UNAVAILABLE.
                if e.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED):
                    raise
                error = e
            finally:
                self._call = None
            if on_retry is not None:
                on_retry(error, self.last_revision)
            if self._stop.wait(retry):
                break
            retry = min(retry * 2, _MAX_RETRY)
            reconnect = True
        return self.last_revision


def event_json(event):
    """One line of proto3 JSON for an Event (e.g. for a log)."""
    return json_format.MessageToJson(event, indent=None, sort_keys=True)
