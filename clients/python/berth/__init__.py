"""Berth's Python client for job-server: push the whole list of wanted jobs
(BerthClient.sync / push), follow what happens to them (EventFollower), with
typed errors (berth.errors), retries, deadlines and keepalive.

    import berth
    with berth.BerthClient("127.0.0.1:7070", token) as client:
        result = client.push(records, berth.GenerationFile("state/generation"))
        follower = berth.EventFollower(client, berth.RevisionFile("state/revision"))
        for event in follower.events():
            ...

The generated messages are in berth.v1 (executor_pb2, job_pb2, event_pb2, …).
"""

from berth._version import __version__
from berth.client import BerthClient, LogChunks, SyncResult, WatchStream
from berth.errors import (BerthError, DeadlineExceeded, GenerationConflict, HistoryForked,
                          InvalidSnapshot, NotFound, PermissionDenied, RevisionExpired,
                          Unauthenticated, Unavailable)
from berth.follower import EventFollower, FollowerThread, RevisionStore
from berth.records import (TERMINAL_STATES, EtaRange, ExpectedStart, eta_range, event_json,
                           expected_start, job_spec, job_specs, parse_bytes, parse_cpu_millis,
                           parse_duration_seconds, snapshot_requests)
from berth.retry import RetryPolicy
from berth.state_files import GenerationFile, RevisionFile

__all__ = [
    "__version__", "BerthClient", "SyncResult", "WatchStream", "LogChunks",
    "BerthError", "Unauthenticated", "PermissionDenied", "InvalidSnapshot",
    "GenerationConflict", "Unavailable", "DeadlineExceeded", "NotFound",
    "RevisionExpired", "HistoryForked",
    "EventFollower", "FollowerThread", "RevisionStore",
    "TERMINAL_STATES", "ExpectedStart", "expected_start", "EtaRange", "eta_range",
    "event_json", "job_spec",
    "job_specs", "parse_bytes", "parse_cpu_millis", "parse_duration_seconds",
    "snapshot_requests", "RetryPolicy", "GenerationFile", "RevisionFile",
]
