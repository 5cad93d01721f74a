"""Typed errors of the Berth client: every failure the public API raises is a
BerthError (never a bare grpc.RpcError), with a subclass for each case a
job-server handles differently.

    BerthError                      code, details, trailers
    ├── Unauthenticated             wrong or missing token
    ├── PermissionDenied            the token's role may not do this
    ├── InvalidSnapshot             (also a ValueError) field, job_id
    ├── GenerationConflict          last_applied_generation
    ├── Unavailable                 berthd unreachable, restarting, hung
    │   └── DeadlineExceeded        the call's deadline passed
    ├── NotFound                    no such job
    ├── RevisionExpired             current (the events are no longer kept)
    └── HistoryForked               epoch, resume_revision, current_revision
"""

import re
from typing import Mapping, Optional, Tuple

import grpc

__all__ = [
    "BerthError", "Unauthenticated", "PermissionDenied", "InvalidSnapshot",
    "GenerationConflict", "Unavailable", "DeadlineExceeded", "NotFound",
    "RevisionExpired", "HistoryForked", "from_rpc_error",
]


class BerthError(Exception):
    """Base of every error the client raises for a failed call.

    code: the grpc.StatusCode (None for an error found before any call);
    details: berthd's message; trailers: its trailing metadata as a dict."""

    def __init__(self, details: str, code: Optional[grpc.StatusCode] = None,
                 trailers: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(details if code is None else "%s: %s" % (code.name, details))
        self.code = code
        self.details = details
        self.trailers = dict(trailers or {})


class Unauthenticated(BerthError):
    """UNAUTHENTICATED: the token is wrong, missing or no longer in berthd's
    token file. Retrying with the same token cannot help."""


class PermissionDenied(BerthError):
    """PERMISSION_DENIED: the token's role may not make this call (e.g. a
    reader token pushing a snapshot)."""


class InvalidSnapshot(BerthError, ValueError):
    """A snapshot (or one record of it) refused as a whole, nothing changed:
    by this client before sending (a record it cannot convert: code None) or
    by berthd (INVALID_ARGUMENT, RESOURCE_EXHAUSTED).

    field: the field named, e.g. "memory", "jobs[3].id", "header.generation"
    (None if the message names none); job_id: the job concerned, or None."""

    def __init__(self, details: str, code: Optional[grpc.StatusCode] = None,
                 trailers: Optional[Mapping[str, str]] = None,
                 field: Optional[str] = None, job_id: Optional[str] = None) -> None:
        super().__init__(details, code, trailers)
        self.field = field
        self.job_id = job_id


class GenerationConflict(BerthError):
    """FAILED_PRECONDITION on a sync: the generation is below the last applied
    one, or re-uses it with different content (or the sync would cancel
    more running jobs than berthd's mass-cancel limit allows).
    last_applied_generation: berthd's, from its berth-last-generation
    trailer; send a generation above it."""

    def __init__(self, details: str, code: Optional[grpc.StatusCode] = None,
                 trailers: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(details, code, trailers)
        self.last_applied_generation = int(self.trailers.get("berth-last-generation", 0))


class Unavailable(BerthError):
    """UNAVAILABLE (berthd unreachable, shutting down, recovering, or its
    connection's keepalive failed) after the client's retries ran out.
    Safe to retry later."""


class DeadlineExceeded(Unavailable):
    """DEADLINE_EXCEEDED: no answer within the call's deadline (a hung or
    overloaded berthd). Whether a write took effect is unknown; a sync can
    be re-sent with the same generation (berthd answers already_applied)."""


class NotFound(BerthError):
    """NOT_FOUND: no such job (or attempt)."""


class RevisionExpired(BerthError):
    """WatchEvents answered OUT_OF_RANGE: the events after the stored
    revision are no longer retained. Re-list the jobs (BerthClient.list_jobs),
    then follow from `current` (RevisionFile.save(current, epoch))."""

    def __init__(self, details: str, code: Optional[grpc.StatusCode] = None,
                 trailers: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(details, code, trailers)
        self.current = int(self.trailers.get("berth-current-revision", 0))


class HistoryForked(BerthError):
    """WatchEvents answered FAILED_PRECONDITION with an epoch: berthd's event
    history is not the one followed (its store was restored from a backup:
    a new epoch, revisions are never reused), or the revision is beyond it.
    Re-list the jobs, then resume from `resume_revision` in `epoch`
    (RevisionFile.save(e.resume_revision, e.epoch))."""

    def __init__(self, details: str, code: Optional[grpc.StatusCode] = None,
                 trailers: Optional[Mapping[str, str]] = None) -> None:
        super().__init__(details, code, trailers)
        self.epoch = self.trailers.get("berth-epoch", "")
        self.resume_revision = int(self.trailers.get("berth-resume-revision", 0))
        self.current_revision = int(self.trailers.get("berth-current-revision", 0))


# berthd's snapshot messages begin with the field they are about
# ("jobs[3].id: job id 'a' repeats jobs[1]", "header.generation: must be >= 1").
_FIELD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:\[[0-9]+\])?(?:\.[A-Za-z_][A-Za-z0-9_]*)*):")
_JOB = re.compile(r"job (?:id )?'([^']*)'")


def _field_and_job(details: str) -> Tuple[Optional[str], Optional[str]]:
    field = _FIELD.match(details)
    job = _JOB.search(details)
    return (field.group(1) if field else None, job.group(1) if job else None)


def from_rpc_error(error: grpc.RpcError, snapshot: bool = False) -> BerthError:
    """The typed error for a failed call. snapshot: the call was a
    SyncSnapshot or DryRun (its FAILED_PRECONDITION is a GenerationConflict,
    its INVALID_ARGUMENT an InvalidSnapshot)."""
    code = error.code() if callable(getattr(error, "code", None)) else grpc.StatusCode.UNKNOWN
    details = (error.details() if callable(getattr(error, "details", None)) else None) or str(error)
    trailers = {}
    if callable(getattr(error, "trailing_metadata", None)):
        for key, value in error.trailing_metadata() or ():
            trailers[key] = value if isinstance(value, str) else value.decode("utf-8", "replace")
    S = grpc.StatusCode
    if code == S.UNAUTHENTICATED:
        return Unauthenticated(details, code, trailers)
    if code == S.PERMISSION_DENIED:
        return PermissionDenied(details, code, trailers)
    if code == S.UNAVAILABLE:
        return Unavailable(details, code, trailers)
    if code == S.DEADLINE_EXCEEDED:
        return DeadlineExceeded(details, code, trailers)
    if code == S.NOT_FOUND:
        return NotFound(details, code, trailers)
    if code == S.OUT_OF_RANGE and "berth-current-revision" in trailers:
        return RevisionExpired(details, code, trailers)
    if code == S.FAILED_PRECONDITION and "berth-epoch" in trailers:
        return HistoryForked(details, code, trailers)
    if code == S.FAILED_PRECONDITION and (snapshot or "berth-last-generation" in trailers):
        return GenerationConflict(details, code, trailers)
    if snapshot and code in (S.INVALID_ARGUMENT, S.RESOURCE_EXHAUSTED):
        field, job = _field_and_job(details)
        return InvalidSnapshot(details, code, trailers, field=field, job_id=job)
    return BerthError(details, code, trailers)
