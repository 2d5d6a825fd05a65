"""Events: everything that can happen *to* an execution, the only way time and results get in.

Each event carries ``now`` (Unix epoch seconds, float): the interpreter never reads a clock. All
events are frozen and round-trip through JSON (``to_json()`` / :func:`event_from_json`), so a
store can keep the list of events fed to an execution and replay it after a crash.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Union

__all__ = [
    "Event",
    "Started",
    "StopRequested",
    "TaskFailed",
    "TaskSucceeded",
    "TimerFired",
    "event_from_json",
]


@dataclass(frozen=True, slots=True)
class _EventBase:
    kind: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        """``{"type": <kind>, ...fields}``: plain JSON data."""
        return {"type": self.kind, **asdict(self)}


@dataclass(frozen=True, slots=True)
class Started(_EventBase):
    """The execution starts: enter the first top-level state with the execution input."""

    now: float
    kind: ClassVar[str] = "Started"


@dataclass(frozen=True, slots=True)
class TaskSucceeded(_EventBase):
    """A pending task returned. ``output`` is the *raw* response text (the function's response
    body, or the ``Output`` of ``ReportTaskSucceeded``); the interpreter shapes it into
    ``$Output`` (``{"Body": <decoded>}`` for Function Compute). Unknown ids are ignored."""

    now: float
    task_id: str
    output: str
    kind: ClassVar[str] = "TaskSucceeded"


@dataclass(frozen=True, slots=True)
class TaskFailed(_EventBase):
    """A pending task failed with an already-mapped error code (see ``fc.map_function_error``)
    and a detail text. Unknown ids are ignored."""

    now: float
    task_id: str
    code: str
    detail: str = ""
    kind: ClassVar[str] = "TaskFailed"


@dataclass(frozen=True, slots=True)
class TimerFired(_EventBase):
    """A timer started by a ``StartTimer`` command is due. Unknown or cancelled ids are
    ignored."""

    now: float
    timer_id: str
    kind: ClassVar[str] = "TimerFired"


@dataclass(frozen=True, slots=True)
class StopRequested(_EventBase):
    """``StopExecution``: cancel everything pending and end the execution ``Stopped``."""

    now: float
    error: str = ""
    cause: str = ""
    kind: ClassVar[str] = "StopRequested"


Event = Union[Started, TaskSucceeded, TaskFailed, TimerFired, StopRequested]  # noqa: UP007

_KINDS: dict[str, type[Any]] = {
    cls.kind: cls for cls in (Started, TaskSucceeded, TaskFailed, TimerFired, StopRequested)
}


def event_from_json(data: dict[str, Any]) -> Event:
    """Rebuild an event from :meth:`to_json` output; ``ValueError`` on an unknown type."""
    fields = dict(data)
    cls = _KINDS.get(str(fields.pop("type", "")))
    if cls is None:
        raise ValueError(f"unknown event type {data.get('type')!r}")
    event: Event = cls(**fields)
    return event
