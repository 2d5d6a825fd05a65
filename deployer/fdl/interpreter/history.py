"""Execution history: the events an execution's history serves, in the order they happen.

Each ``step`` appends its events to ``Execution.new_events`` (only the events of that step); a
store writes them together with the new execution in one transaction. ``event_id`` is 1-based
and sequential per execution; ``schedule_event_id`` is the id of the event that opened the
activity the event belongs to (see docs/fdl-semantics.md, "Execution"). ``time`` is ISO-8601
UTC with milliseconds, taken from the ``now`` of the event being processed; ``detail`` is
compact JSON text. The model is CloudFlow's history event with snake_case fields: the API
layers give events their wire names.
"""

from __future__ import annotations

from datetime import datetime, timezone
from enum import Enum
from time import gmtime, strftime
from typing import Any, NamedTuple

from deployer.fdl.interpreter.stored import event_record, event_values

__all__ = ["TERMINAL_TYPES", "HistoryEvent", "HistoryEventType", "format_time"]


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
#: ".000Z" to ".999Z": the milliseconds and zone of a formatted time
_MILLIS = tuple(f".{millis:03d}Z" for millis in range(1000))
#: the last second formatted, and its text (one tuple: replaced whole, read whole)
_LAST_SECOND: tuple[int | None, str] = (None, "")


def format_time(epoch: float) -> str:
    """``2019-05-05T08:33:59.384Z``: ISO-8601 UTC with milliseconds (years 1970-9999 through
    ``time.strftime``, others through ``datetime``: ``ValueError``/``OverflowError`` where it
    cannot represent the year)."""
    seconds, millis = divmod(round(epoch * 1000), 1000)
    global _LAST_SECOND
    last = _LAST_SECOND
    if last[0] == seconds:  # times of one execution, or of one step, share their second
        return last[1] + _MILLIS[millis]
    if 0 <= seconds < _YEAR_10000:
        text = strftime("%Y-%m-%dT%H:%M:%S", gmtime(seconds))
        _LAST_SECOND = (seconds, text)
        return text + _MILLIS[millis]
    stamp = datetime.fromtimestamp(seconds, tz=timezone.utc)
    return (
        f"{stamp.year:04d}-{stamp.month:02d}-{stamp.day:02d}T{stamp.hour:02d}:"
        f"{stamp.minute:02d}:{stamp.second:02d}" + _MILLIS[millis]
    )


class HistoryEvent(NamedTuple):
    """One history event: ``time`` as :func:`format_time` writes it, ``detail`` JSON text.
    Immutable (a named tuple: a step builds several, and a frozen dataclass costs three times
    as much to build)."""

    event_id: int
    schedule_event_id: int
    type: HistoryEventType
    step_name: str
    time: str
    detail: str

    def to_json(self) -> dict[str, Any]:
        """The event as an execution's JSON stores it (:mod:`.stored`)."""
        return event_record(self.event_id, self.schedule_event_id, self.type.value,
                            self.step_name, self.time, self.detail)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> HistoryEvent:
        """Inverse of :meth:`to_json`."""
        event_id, schedule, type_name, step_name, time, detail = event_values(data)
        return cls(event_id, schedule, HistoryEventType(type_name), step_name, time, detail)
