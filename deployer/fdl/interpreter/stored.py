"""The stored JSON layout of an execution (``Execution.to_json`` / ``Execution.from_json``).

The layout is kept stable so that executions stored by earlier versions load unchanged. Two
records in it have a fixed shape:

* the state active in a scope is written flat, with every key of :func:`state_layout`: the
  lifecycle fills in its own keys, the state kind those of what it waits for (its record's
  ``stored_fields``), and every other key keeps its default;
* a history event of the last step (``new_events``) is written with the key names the format
  has always used. They are CloudFlow's own, because the first version stored events in the
  shape ``GetExecutionHistory`` serves; the history model itself uses snake_case fields, and
  the API layers map them to the wire themselves.
"""

from __future__ import annotations

from typing import Any

__all__ = ["event_record", "event_values", "state_layout"]

#: Keys of a stored history event, in the order of ``HistoryEvent``'s fields.
_EVENT_KEYS = ("EventId", "ScheduleEventId", "Type", "StepName", "Time", "EventDetail")


def event_record(
    event_id: int, schedule_event_id: int, type_name: str, step_name: str, time: str,
    detail: str,
) -> dict[str, Any]:
    """A history event as stored inside an execution."""
    return dict(zip(_EVENT_KEYS, (event_id, schedule_event_id, type_name, step_name, time,
                                  detail), strict=True))


def event_values(data: dict[str, Any]) -> tuple[int, int, str, str, str, str]:
    """Inverse of :func:`event_record`: the event's field values (``KeyError`` when one is
    missing)."""
    event_id, schedule, type_name, step_name, time, detail = (data[key] for key in _EVENT_KEYS)
    return int(event_id), int(schedule), str(type_name), str(step_name), str(time), str(detail)


def state_layout() -> dict[str, Any]:
    """A fresh stored active-state record with every key at its default, in stored order.

    ``phase`` names what the state waits for (``task``, ``wait``, ``children`` or ``retry``);
    ``timer_id`` holds the state's own timer (a Wait's) or else its latest retry back-off
    timer."""
    return {
        "name": "", "raw_input": None, "entered_event": 0, "input": None,
        "input_ready": False, "phase": "task", "retry_counts": [], "retry_count": 0,
        "task_id": "", "task_token": "", "task_event": 0, "timer_id": "", "timeout_timer": "",
        "children": [], "results": [], "items": [], "queue": [], "remaining": 0,
    }
