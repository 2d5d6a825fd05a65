"""How the console shows things: status icons and words, times, durations, JSON values."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from deployer.fdl.progress import Status, parse_time
from deployer.timestamps import iso_seconds

__all__ = ["EXECUTION_STATUS", "STATUS", "HistoryEntry", "StoredEvent", "duration",
           "event_from_record", "pretty", "rows_of", "since", "summarize", "utc_time"]

#: status -> (icon, word): never colour alone.
STATUS: dict[str, tuple[str, str]] = {
    Status.RUNNING.value: ("▶", "running"),
    Status.WAITING.value: ("◷", "waiting"),
    Status.RETRYING.value: ("↻", "retrying"),
    Status.SUCCEEDED.value: ("✓", "succeeded"),
    Status.FAILED.value: ("✕", "failed"),
    Status.CAUGHT.value: ("⚠", "caught"),
    Status.STOPPED.value: ("■", "stopped"),
    Status.TIMED_OUT.value: ("■", "timed out"),
    Status.NOT_REACHED.value: ("—", "not reached"),
}
EXECUTION_STATUS: dict[str, tuple[str, str, str]] = {  # status -> (icon, word, css class)
    "Starting": ("▶", "Starting", "running"),
    "Running": ("▶", "Running", "running"),
    "Succeeded": ("✓", "Succeeded", "succeeded"),
    "Failed": ("✕", "Failed", "failed"),
    "TimedOut": ("■", "Timed out", "timed-out"),
    "Stopped": ("■", "Stopped", "stopped"),
}


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One history event as the fold reads it (``detail`` parsed)."""

    event_id: int
    schedule_event_id: int
    type: str
    step_name: str
    time: str
    detail: Any
    raw: str  # EventDetail as stored


class StoredEvent(Protocol):
    """A history event as the emulator's execution service returns it."""

    event_id: int
    schedule_event_id: int
    type: str
    step_name: str
    time: str
    detail: str


def event_from_record(record: StoredEvent) -> HistoryEntry:
    """A stored history event (``detail`` as JSON text) as a :class:`HistoryEntry`."""
    raw = str(record.detail or "")
    try:
        detail = json.loads(raw) if raw else {}
    except ValueError:
        detail = raw
    return HistoryEntry(int(record.event_id), int(record.schedule_event_id), str(record.type),
                        str(record.step_name), str(record.time), detail, raw)


def utc_time(epoch: float | None) -> str:
    """Epoch seconds as ``2026-12-01T07:22:58Z`` (UTC); "" for None."""
    return "" if epoch is None else iso_seconds(epoch)


def since(start: str | float | None, end: str | float | None) -> float | None:
    """Seconds from ``start`` to ``end`` (history times or epoch seconds)."""
    a = parse_time(start) if isinstance(start, str) else start
    b = parse_time(end) if isinstance(end, str) else end
    return None if a is None or b is None else round(b - a, 3)


def duration(seconds: float | None) -> str:
    """``0.4 s``, ``12 s``, ``02:05`` (minutes:seconds), ``1:02:05``."""
    if seconds is None:
        return ""
    if seconds < 10:
        return f"{seconds:.1f} s".replace(".0 s", " s")
    if seconds < 60:
        return f"{seconds:.0f} s"
    whole = int(seconds)
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def pretty(value: Any) -> str:
    """A JSON value, indented (text stays text)."""
    if value is None:
        return "null"
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False)


def rows_of(value: Any) -> list[tuple[str, str]] | None:
    """A mapping as (key, compact value) rows; None when ``value`` is not a mapping."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not isinstance(value, dict):
        return None
    return [(str(k), v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
            for k, v in value.items()]


def summarize(value: Any, width: int = 80) -> str:
    """``key=value`` of a mapping's scalars (an FC ``Body`` first), else compact JSON."""
    if isinstance(value, dict) and "Body" in value:
        value = value["Body"]
    if isinstance(value, dict) and value and all(
            not isinstance(v, (dict, list)) for v in value.values()):
        text = " ".join(f"{k}={v}" for k, v in value.items())
    else:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"
