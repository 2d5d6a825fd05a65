"""The data a history fold produces (see :mod:`deployer.fdl.progress`): execution, scope,
state, visit and task-attempt progress, the :class:`Status` vocabulary, the
:class:`HistoryRecord` shape the fold reads, and the deterministic task ids and FC request ids
the emulator derives from history. Plain data, no I/O, no clock.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any, Protocol

__all__ = [
    "TERMINAL_EXECUTION_EVENTS",
    "Attempt",
    "ExecutionProgress",
    "HistoryRecord",
    "ScopeProgress",
    "StateProgress",
    "Status",
    "Visit",
    "parse_time",
    "task_id",
    "task_request_id",
]

TERMINAL_EXECUTION_EVENTS = {
    "ExecutionSucceeded": "Succeeded",
    "ExecutionFailed": "Failed",
    "ExecutionTimedOut": "TimedOut",
    "ExecutionStopped": "Stopped",
}


class Status(str, Enum):
    """The status of a state (its latest visit) or of one visit."""

    RUNNING = "running"
    WAITING = "waiting"
    RETRYING = "retrying"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CAUGHT = "caught"
    STOPPED = "stopped"
    TIMED_OUT = "timed-out"
    NOT_REACHED = "not-reached"

    @property
    def active(self) -> bool:
        """True while the visit is still in progress."""
        return self in (Status.RUNNING, Status.WAITING, Status.RETRYING)


class HistoryRecord(Protocol):
    """One ``GetExecutionHistory`` event (``detail``: parsed ``EventDetail``, or its text)."""

    @property
    def event_id(self) -> int: ...
    @property
    def schedule_event_id(self) -> int: ...
    @property
    def type(self) -> str: ...
    @property
    def step_name(self) -> str: ...
    @property
    def time(self) -> str: ...
    @property
    def detail(self) -> Any: ...


_TASK_REQUESTS = uuid.UUID("6f1d4a52-6c1b-4d0e-9a8e-3b7c0e5f2a11")


def task_id(execution_name: str, scheduled_event_id: int) -> str:
    """The id of the task a ``TaskScheduled`` event opened (docs/fdl-semantics.md: "Ids are
    deterministic")."""
    return f"{execution_name}:task:{scheduled_event_id}"


def task_request_id(task: str) -> str:
    """The Function Compute request id the emulator gives the invocation of task ``task``
    (a UUID derived from the task id), so a visit finds its function log."""
    return str(uuid.uuid5(_TASK_REQUESTS, task))


def parse_time(text: str) -> float | None:
    """A history ``Time`` (``2024-05-01T08:00:00.123Z``) as epoch seconds; None if not one."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


@dataclass(slots=True)
class Attempt:
    """One try of a Task's work: ``TaskScheduled`` to its result."""

    number: int
    scheduled_event_id: int
    scheduled_at: str
    resource: str
    task_mode: str
    parameters: Any
    started_at: str | None = None
    ended_at: str | None = None
    output: Any = None
    error: str | None = None
    cause: str | None = None
    outcome: str = "scheduled"  # scheduled | started | succeeded | failed | timed-out

    @property
    def body(self) -> Any:
        """FC's ``Body`` of the task output (None when the output has none)."""
        if isinstance(self.output, dict) and "Body" in self.output:
            return self.output["Body"]
        return None


@dataclass(slots=True)
class Visit:
    """One entry into a state, ``StepEntered`` to ``StepExited``."""

    state: str
    number: int
    entered_event_id: int
    entered_at: str
    status: Status
    raw_input: Any = None
    input: Any = None
    output: Any = None
    error: str | None = None
    cause: str | None = None
    exited_at: str | None = None
    last_event_id: int = 0
    attempts: list[Attempt] = field(default_factory=list)
    scopes: list[ScopeProgress] = field(default_factory=list)
    fires_at: float | None = None  # a running Wait: when it fires (clock seconds)

    @property
    def event_range(self) -> tuple[int, int]:
        """The first and last EventId of this visit's own events."""
        return self.entered_event_id, self.last_event_id or self.entered_event_id

    @property
    def task(self) -> Attempt | None:
        """The latest task attempt, if any."""
        return self.attempts[-1] if self.attempts else None


@dataclass(slots=True)
class StateProgress:
    """A state of one scope and its visits (none: never reached)."""

    name: str
    type: str = ""
    visits: list[Visit] = field(default_factory=list)

    @property
    def status(self) -> Status:
        return self.visits[-1].status if self.visits else Status.NOT_REACHED

    @property
    def latest(self) -> Visit | None:
        return self.visits[-1] if self.visits else None


@dataclass(slots=True)
class ScopeProgress:
    """The flow, a Parallel branch (``kind`` branch) or a Map iteration (``kind`` iteration)."""

    kind: str = "flow"
    index: int = 0
    opened_event_id: int = 1
    states: dict[str, StateProgress] = field(default_factory=dict)
    edges: dict[tuple[str, str], int] = field(default_factory=dict)
    path: list[Visit] = field(default_factory=list)
    output: Any = None
    error: str | None = None

    def active(self) -> list[Visit]:
        """Visits in progress here and in nested scopes, outermost first."""
        found: list[Visit] = []
        for visit in self.path:
            if visit.status.active:
                found.append(visit)
            for child in visit.scopes:
                found.extend(child.active())
        return found


@dataclass(slots=True)
class ExecutionProgress:
    """The whole fold: execution status (CloudFlow's word) and the top-level scope."""

    status: str = "Running"
    root: ScopeProgress = field(default_factory=ScopeProgress)
    input: Any = None
    output: Any = None
    error: str | None = None
    cause: str | None = None
    started_at: str | None = None
    stopped_at: str | None = None
    last_event_id: int = 0
    transitions: int = 0

    @property
    def finished(self) -> bool:
        return self.status != "Running"

    def current(self) -> list[Visit]:
        """The visits in progress (empty once the execution ended)."""
        return self.root.active()
