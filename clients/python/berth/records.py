"""job-server records to Berth's messages, and Berth's answers back to
plain values: job_spec, snapshot_requests, expected_start and the units
parsers (memory "16Gi", cpu "500m", durations "1h30m")."""

import datetime
import re
from typing import Any, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Union

from google.protobuf import json_format

from berth.errors import InvalidSnapshot
from berth.v1 import event_pb2
from berth.v1 import executor_pb2
from berth.v1 import job_pb2
from berth.v1 import plan_pb2

__all__ = [
    "TERMINAL_STATES", "parse_bytes", "parse_cpu_millis", "parse_duration_seconds",
    "job_spec", "snapshot_requests", "ExpectedStart", "expected_start", "EtaRange",
    "eta_range", "event_json",
    "Record",
]

#: A job-server record: a dict (see job_spec) or a ready JobSpec.
Record = Union[Mapping[str, Any], job_pb2.JobSpec]

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


def parse_bytes(value: Union[int, str]) -> int:
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


def parse_cpu_millis(value: Union[int, float, str]) -> int:
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


def parse_duration_seconds(value: Union[int, float, str, datetime.timedelta]) -> float:
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


def _set_duration(field: Any, seconds: float) -> None:
    field.seconds = int(seconds)
    field.nanos = int(round((seconds - int(seconds)) * 1e9))


class ExpectedStart(NamedTuple):
    """A queued job's ETA, as GetPlan's PlanDecision or ExplainJob's
    Explanation gives it (docs/DESIGN.md "ETAs are the planner's own forecast").

    kind: "now", "reserved", "if_estimates_hold", "beyond_forecast", "unknown".
    at: the expected start (aware UTC datetime), or None for "unknown" and
        "beyond_forecast".
    not_before: for "beyond_forecast", the last instant the bounded forecast
        covered (the job starts after it, if at all); else None."""
    kind: str
    at: Optional[datetime.datetime]
    not_before: Optional[datetime.datetime]

    def __str__(self) -> str:
        if self.kind == "beyond_forecast" and self.not_before is not None:
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


def expected_start(message: Union[plan_pb2.PlanDecision, plan_pb2.Explanation]) -> ExpectedStart:
    """ExpectedStart of a PlanDecision or an Explanation (of a queued job)."""
    def when(field: str) -> Optional[datetime.datetime]:
        if not message.HasField(field):
            return None
        return getattr(message, field).ToDatetime().replace(tzinfo=datetime.timezone.utc)
    kind = _ETA_KINDS.get(message.eta_kind, "unknown")
    if kind == "beyond_forecast":
        return ExpectedStart(kind, None, when("not_before"))
    at = when("estimated_start")
    return ExpectedStart(kind if at is not None else "unknown", at, None)


class EtaRange(NamedTuple):
    """How sure a queued job's ETA is (PlanDecision.eta_range,
    Explanation.eta_range): its start forecast again with every duration
    scaled by the P10, median and P90 of the real/estimated run time ratios
    Berth observed (docs/DESIGN.md "Promises").

    earliest, likely, latest: aware UTC datetimes (earliest <= likely <= latest).
    basis: "action" (its workspace's action) or "workspace" (every action of
        its workspace): where its ratios were learned.
    runs: how many finished runs they were learned from.
    p10_ratio, p50_ratio, p90_ratio: the ratios themselves."""
    earliest: datetime.datetime
    likely: datetime.datetime
    latest: datetime.datetime
    basis: str
    runs: int
    p10_ratio: float
    p50_ratio: float
    p90_ratio: float

    def __str__(self) -> str:
        return "%s .. %s (likely %s; from %d runs of its %s)" % (
            self.earliest.isoformat(), self.latest.isoformat(), self.likely.isoformat(),
            self.runs, self.basis)


def eta_range(message: Union[plan_pb2.PlanDecision, plan_pb2.Explanation]) -> Optional[EtaRange]:
    """The EtaRange of a PlanDecision or an Explanation, or None when Berth
    gives none (too little history for the job's action or workspace, or a
    start beyond the forecast): never an invented one."""
    if not message.HasField("eta_range"):
        return None
    r = message.eta_range

    def utc(ts: Any) -> datetime.datetime:
        return ts.ToDatetime().replace(tzinfo=datetime.timezone.utc)
    return EtaRange(utc(r.earliest), utc(r.likely), utc(r.latest), r.basis, r.runs,
                    r.p10_ratio, r.p50_ratio, r.p90_ratio)


def _field_of(message: str) -> Optional[str]:
    m = re.match(r"([a-z_]+):", message)
    return m.group(1) if m else None


def job_spec(record: Record) -> job_pb2.JobSpec:
    """A berth.v1.JobSpec from a job-server record (a dict; a JobSpec is
    returned as it is).

    Keys: id, workspace, image (required); action, argv (list), env (dict),
    priority (int), memory (bytes or "16Gi"), cpu (cores or "500m"), pool,
    expected_duration / max_duration ("2h" or seconds), depends_on (list of
    ids), created_at (datetime, ISO 8601 string or epoch seconds), labels.
    InvalidSnapshot (a ValueError) naming the job (job_id) and the key
    (field) for unknown keys or bad values."""
    if isinstance(record, job_pb2.JobSpec):
        return record
    job_id = str(record.get("id", "?"))
    unknown = sorted(set(record) - _RECORD_KEYS)
    if unknown:
        raise InvalidSnapshot("job %r: unknown key(s) %s" % (job_id, ", ".join(unknown)),
                              field=unknown[0], job_id=job_id)
    for key in ("id", "workspace", "image"):
        if not record.get(key):
            raise InvalidSnapshot("job %r: %s is required" % (job_id, key),
                                  field=key, job_id=job_id)
    field = None
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
            field = "memory"
            spec.resources.memory_bytes = parse_bytes(record["memory"])
        if "cpu" in record:
            field = "cpu"
            spec.resources.cpu_millis = parse_cpu_millis(record["cpu"])
        for key in ("expected_duration", "max_duration"):
            if record.get(key) is not None:
                field = key
                _set_duration(getattr(spec, key), parse_duration_seconds(record[key]))
        created = record.get("created_at")
        field = "created_at"
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
        raise InvalidSnapshot("job %r: %s" % (job_id, e), field=field or _field_of(str(e)),
                              job_id=job_id) from None
    return spec


def snapshot_requests(specs: List[job_pb2.JobSpec], generation: int,
                      allow_mass_cancel: bool = False, batch_size: int = 500,
                      policies: Optional[Dict[str, bool]] = None
                      ) -> Iterator[executor_pb2.SyncSnapshotRequest]:
    """The SyncSnapshot stream for `specs`: header, batches, end. `policies`:
    the header's policy switches for this snapshot's jobs, e.g.
    {"requeue_oom_once": True, "fill_memory_from_history": True}."""
    yield executor_pb2.SyncSnapshotRequest(header=executor_pb2.SnapshotHeader(
        generation=generation, expected_job_count=len(specs),
        allow_mass_cancel=allow_mass_cancel, **(policies or {})))
    for start in range(0, len(specs), batch_size):
        yield executor_pb2.SyncSnapshotRequest(
            batch=executor_pb2.JobBatch(jobs=specs[start:start + batch_size]))
    yield executor_pb2.SyncSnapshotRequest(end=executor_pb2.SnapshotEnd(job_count=len(specs)))


def job_specs(records: Iterable[Record]) -> List[job_pb2.JobSpec]:
    """job_spec of each record."""
    return [job_spec(r) for r in records]


def event_json(event: event_pb2.Event) -> str:
    """One line of proto3 JSON for an Event (e.g. for a log)."""
    return json_format.MessageToJson(event, indent=None, sort_keys=True)
