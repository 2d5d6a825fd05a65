"""Execution history: the events ``GetExecutionHistory`` serves, in the order they happen.

Each ``step`` appends its events to ``Execution.new_events`` (only the events of that step); a
store writes them together with the new execution in one transaction. ``EventId`` is 1-based and
sequential per execution; ``ScheduleEventId`` is the id of the event that opened the activity the
event belongs to (see docs/fdl-semantics.md, "Execution"). ``Time`` is ISO-8601 UTC with
milliseconds, taken from the ``now`` of the event being processed. ``EventDetail`` is compact
JSON text.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime, timezone
from enum import Enum
from time import gmtime
from typing import Any

__all__ = ["HistoryEvent", "HistoryEventType", "format_time"]


class HistoryEventType(str, Enum):
    """Event types of §9.4."""

    EXECUTION_STARTED = "ExecutionStarted"
    EXECUTION_STOPPED = "ExecutionStopped"
    EXECUTION_SUCCEEDED = "ExecutionSucceeded"
    EXECUTION_FAILED = "ExecutionFailed"
    EXECUTION_TIMED_OUT = "ExecutionTimedOut"
    STEP_ENTERED = "StepEntered"
    STEP_STARTED = "StepStarted"
    STEP_SUCCEEDED = "StepSucceeded"
    STEP_FAILED = "StepFailed"
    STEP_EXITED = "StepExited"
    BRANCH_ENTERED = "BranchEntered"
    BRANCH_EXITED = "BranchExited"
    ITERATION_ENTERED = "IterationEntered"
    ITERATION_EXITED = "IterationExited"
    TASK_SCHEDULED = "TaskScheduled"
    TASK_STARTED = "TaskStarted"
    TASK_SUBMITTED = "TaskSubmitted"
    TASK_SUBMIT_FAILED = "TaskSubmitFailed"
    TASK_SUCCEEDED = "TaskSucceeded"
    TASK_FAILED = "TaskFailed"
    TASK_TIMED_OUT = "TaskTimedOut"


TERMINAL_TYPES = frozenset(
    {
        HistoryEventType.EXECUTION_STOPPED,
        HistoryEventType.EXECUTION_SUCCEEDED,
        HistoryEventType.EXECUTION_FAILED,
        HistoryEventType.EXECUTION_TIMED_OUT,
    }
)


_YEAR_10000 = 253_402_300_800  # first second datetime cannot represent
_TIMES: dict[float, str] = {}
_TIMES_LIMIT = 4096


def format_time(epoch: float) -> str:
    """``2019-05-05T08:33:59.384Z``: ISO-8601 UTC with milliseconds (recent results are
    remembered: steps often share ``now``, and simulations replay the same virtual times)."""
    text = _TIMES.get(epoch)
    if text is None:
        text = _format_time(epoch)
        if len(_TIMES) >= _TIMES_LIMIT:
            _TIMES.clear()
        _TIMES[epoch] = text
    return text


def _format_time(epoch: float) -> str:
    millis = round(epoch * 1000)
    seconds = millis // 1000
    if 0 <= seconds < _YEAR_10000:
        moment = gmtime(seconds)
        return (
            f"{moment.tm_year:04d}-{moment.tm_mon:02d}-{moment.tm_mday:02d}T"
            f"{moment.tm_hour:02d}:{moment.tm_min:02d}:{moment.tm_sec:02d}.{millis % 1000:03d}Z"
        )
    stamp = datetime.fromtimestamp(millis // 1000, tz=timezone.utc)
    return (
        f"{stamp.year:04d}-{stamp.month:02d}-{stamp.day:02d}T{stamp.hour:02d}:"
        f"{stamp.minute:02d}:{stamp.second:02d}.{millis % 1000:03d}Z"
    )


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    """One history event, ready to be served as is (``to_json()`` gives the wire keys)."""

    event_id: int
    schedule_event_id: int
    type: HistoryEventType
    step_name: str
    time: str
    detail: str

    def to_json(self) -> dict[str, Any]:
        """The ``GetExecutionHistory`` shape."""
        return {
            "EventId": self.event_id,
            "ScheduleEventId": self.schedule_event_id,
            "Type": self.type.value,
            "StepName": self.step_name,
            "Time": self.time,
            "EventDetail": self.detail,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HistoryEvent:
        """Inverse of :meth:`to_json`."""
        return cls(
            event_id=int(data["EventId"]),
            schedule_event_id=int(data["ScheduleEventId"]),
            type=HistoryEventType(data["Type"]),
            step_name=str(data["StepName"]),
            time=str(data["Time"]),
            detail=str(data["EventDetail"]),
        )



#: HistoryEvent's fields in order (the interpreter fills events through their slots).
EVENT_FIELD_NAMES = ("event_id", "schedule_event_id", "type", "step_name", "time", "detail")
assert tuple(f.name for f in fields(HistoryEvent)) == EVENT_FIELD_NAMES
