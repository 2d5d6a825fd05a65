"""The execution: plain, JSON-serialisable data that ``step`` advances.

An :class:`Execution` holds everything needed to continue a run after a crash: status, input,
output or error, ``$Global``, the running scopes (:class:`ScopeRun`: the top level, each
running Parallel branch and Map iteration) with the state active in each (its
:class:`ActiveState` and the record of what it waits for), the pending task and timer ids, the
next history event id, and the history events emitted by the *last* step only
(``new_events``; a store appends them to the history in the same transaction as the new
execution).

Runs, active states and their records are immutable and JSON values (inputs, outputs,
``$Global``) are never changed in place, so :meth:`Execution.clone` only copies containers.
``to_json``/``from_json`` keep the stored layout of :mod:`.stored`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from deployer.fdl.interpreter.active import (
    BACKOFF,
    RETRY_PHASE,
    ActiveState,
    ExecutionStatus,
    Frame,
    ScopeRun,
    Waiting,
)
from deployer.fdl.interpreter.history import HistoryEvent
from deployer.fdl.interpreter.states import RECORDS
from deployer.fdl.interpreter.states.task import TaskCall
from deployer.fdl.interpreter.states.wait import WAIT_PHASE
from deployer.fdl.interpreter.stored import state_layout

__all__ = ["ActiveState", "Execution", "ExecutionStatus", "ScopeRun"]


@dataclass(slots=True)
class Execution:
    """One execution of a flow; see the module docstring. ``runs``, ``active`` and
    ``waiting`` are keyed by run id (a run has no active state only while ``step`` moves it to
    its next state)."""

    name: str
    flow_name: str
    input: Any
    role_arn: str = ""
    execution_mode: str = "Standard"
    status: ExecutionStatus = ExecutionStatus.RUNNING
    output: Any = None
    error_code: str = ""
    error_detail: str = ""
    started_at: float = 0.0
    stopped_at: float | None = None
    global_vars: dict[str, Any] = field(default_factory=dict)
    runs: dict[int, ScopeRun] = field(default_factory=dict)
    active: dict[int, ActiveState] = field(default_factory=dict)
    waiting: dict[int, Waiting] = field(default_factory=dict)
    next_run_id: int = 0
    next_event_id: int = 1
    tasks: dict[str, int] = field(default_factory=dict)  # task id -> run id
    timers: dict[str, int] = field(default_factory=dict)  # timer id -> run id (-1: execution)
    max_events: int = 5000
    max_duration_seconds: float = 0.0
    new_events: list[HistoryEvent] = field(default_factory=list)

    @property
    def last_event_id(self) -> int:
        """Id of the newest history event (0 before the start)."""
        return self.next_event_id - 1

    def task_for_token(self, token: str) -> str | None:
        """The pending task id whose ``$Context.Current.TaskToken`` is ``token``, if any."""
        for task_id, run_id in self.tasks.items():
            call = self.waiting.get(run_id)
            if isinstance(call, TaskCall) and call.task_id == task_id \
                    and call.task_token == token:
                return task_id
        return None

    def clone(self) -> Execution:
        """A copy that ``step`` may change without touching this one (no new events): its
        containers are new, their immutable contents shared. Copied field by field (the
        generated ``__init__``, with its defaults, costs twice as much; a step clones once)."""
        copy = object.__new__(Execution)
        copy.name, copy.flow_name, copy.input = self.name, self.flow_name, self.input
        copy.role_arn, copy.execution_mode = self.role_arn, self.execution_mode
        copy.status, copy.output = self.status, self.output
        copy.error_code, copy.error_detail = self.error_code, self.error_detail
        copy.started_at, copy.stopped_at = self.started_at, self.stopped_at
        copy.global_vars = self.global_vars
        copy.runs, copy.active = dict(self.runs), dict(self.active)
        copy.waiting = dict(self.waiting)
        copy.next_run_id, copy.next_event_id = self.next_run_id, self.next_event_id
        copy.tasks, copy.timers = dict(self.tasks), dict(self.timers)
        copy.max_events = self.max_events
        copy.max_duration_seconds = self.max_duration_seconds
        copy.new_events = []
        return copy

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data in the stored layout, the last step's events included."""
        return {
            "name": self.name, "flow_name": self.flow_name, "input": self.input,
            "role_arn": self.role_arn, "execution_mode": self.execution_mode,
            "status": self.status.value, "output": self.output,
            "error_code": self.error_code, "error_detail": self.error_detail,
            "started_at": self.started_at, "stopped_at": self.stopped_at,
            "global_vars": self.global_vars,
            "runs": [_run_json(run, self.active.get(run_id), self.waiting.get(run_id))
                     for run_id, run in self.runs.items()],
            "next_run_id": self.next_run_id, "next_event_id": self.next_event_id,
            "tasks": dict(self.tasks), "timers": dict(self.timers),
            "max_events": self.max_events, "max_duration_seconds": self.max_duration_seconds,
            "new_events": [event.to_json() for event in self.new_events],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Execution:
        """Inverse of :meth:`to_json` (also reads executions stored by earlier versions)."""
        fields = dict(data)
        fields["status"] = ExecutionStatus(fields["status"])
        runs, active, waiting = {}, {}, {}
        for stored in fields["runs"]:
            frame = stored.get("frame")
            run = ScopeRun(int(stored["run_id"]), tuple((str(name), int(index))
                                                        for name, index in stored["path"]),
                           int(stored["parent"]), int(stored["slot"]), int(stored["open_event"]),
                           None if frame is None else Frame(frame[0], frame[1]))
            runs[run.run_id] = run
            state = stored.get("state")
            if state is not None:
                active[run.run_id], waiting[run.run_id] = _state_from_json(state)
        fields["runs"], fields["active"], fields["waiting"] = runs, active, waiting
        fields["new_events"] = [HistoryEvent.from_json(e) for e in fields.get("new_events", [])]
        return cls(**fields)


def _run_json(run: ScopeRun, st: ActiveState | None, record: Waiting | None) -> dict[str, Any]:
    data = {
        "run_id": run.run_id, "path": [[name, index] for name, index in run.path],
        "parent": run.parent, "slot": run.slot, "open_event": run.open_event,
        "state": None if st is None else _state_json(st, record),
    }
    if run.frame is not None:  # a legacy steps list: [input, local]
        data["frame"] = [run.frame.input, run.frame.local]
    return data


def _state_json(st: ActiveState, record: Waiting | None) -> dict[str, Any]:
    data = state_layout()
    data.update(
        name=st.name, raw_input=st.raw_input, entered_event=st.entered_event, input=st.input,
        input_ready=st.input_ready, retry_counts=list(st.retry_counts),
        retry_count=st.retry_count, timer_id=st.retry_timer,
    )
    if record is not None:
        data.update(record.stored_fields())
    return data


def _state_from_json(data: dict[str, Any]) -> tuple[ActiveState, Waiting]:
    phase = str(data["phase"])
    waiting: Waiting = BACKOFF if phase == RETRY_PHASE else RECORDS[phase](data)
    return ActiveState(
        str(data["name"]), data["raw_input"], int(data["entered_event"]), data["input"],
        bool(data["input_ready"]), tuple(int(n) for n in data["retry_counts"]),
        int(data["retry_count"]),
        "" if phase == WAIT_PHASE else str(data["timer_id"]),  # a Wait's is its own
    ), waiting
