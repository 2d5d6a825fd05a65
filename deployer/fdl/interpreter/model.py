"""The execution: plain, JSON-serialisable data that ``step`` advances.

An :class:`Execution` holds everything needed to continue a run after a crash: status, input,
output or error, ``$Global``, the tree of active scopes (:class:`ScopeRun`: the top level, each
running Parallel branch and Map iteration) with the state active in each
(:class:`ActiveState`: input, retry counters, the task/timer it waits for, the children of a
Parallel/Map and a Map's queue), the pending task and timer ids, the next history event id, and
the history events emitted by the *last* step only (``new_events``; a store appends them to the
history in the same transaction as the new execution).

JSON values inside an execution (inputs, outputs, ``$Global``) are never mutated in place, so
:meth:`Execution.clone` only copies the containers that ``step`` changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from deployer.fdl.interpreter.history import HistoryEvent

__all__ = ["ActiveState", "Execution", "ExecutionStatus", "Phase", "ScopeRun"]

ROOT_RUN = 0

_new_object = object.__new__


class ExecutionStatus(str, Enum):
    """Closed set of execution statuses."""

    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    TIMED_OUT = "TimedOut"
    STOPPED = "Stopped"

    @property
    def is_terminal(self) -> bool:
        return self is not ExecutionStatus.RUNNING


class Phase(str, Enum):
    """What an active state is waiting for."""

    TASK = "task"  # a pending task (and maybe its timeout timer)
    RETRY = "retry"  # a retry back-off timer
    WAIT = "wait"  # a Wait state's timer
    CHILDREN = "children"  # Parallel branches / Map iterations


_TASK = Phase.TASK


@dataclass(slots=True)
class ActiveState:
    """The state currently running in one scope."""

    name: str
    raw_input: Any
    entered_event: int
    input: Any = None
    input_ready: bool = False
    phase: Phase = Phase.TASK
    retry_counts: list[int] = field(default_factory=list)
    retry_count: int = 0
    task_id: str = ""
    task_token: str = ""
    task_event: int = 0
    timer_id: str = ""
    timeout_timer: str = ""
    children: dict[int, int] = field(default_factory=dict)  # slot -> run id
    results: list[Any] = field(default_factory=list)
    items: list[Any] = field(default_factory=list)
    queue: list[int] = field(default_factory=list)  # Map slots not started yet
    remaining: int = 0

    def clone(self) -> ActiveState:
        # slot stores instead of the generated __init__ (a step clones every run it changes)
        copy = _new_object(ActiveState)
        copy.name = self.name
        copy.raw_input = self.raw_input
        copy.entered_event = self.entered_event
        copy.input = self.input
        copy.input_ready = self.input_ready
        copy.phase = self.phase
        copy.retry_counts = list(self.retry_counts)
        copy.retry_count = self.retry_count
        copy.task_id = self.task_id
        copy.task_token = self.task_token
        copy.task_event = self.task_event
        copy.timer_id = self.timer_id
        copy.timeout_timer = self.timeout_timer
        copy.children = dict(self.children)
        copy.results = list(self.results)
        copy.items = self.items
        copy.queue = list(self.queue)
        copy.remaining = self.remaining
        return copy

    @classmethod
    def entered(cls, name: str, raw_input: Any, entered_event: int, rules: int) -> ActiveState:
        """A state just entered (``StepEntered`` is ``entered_event``) with ``rules`` Retry
        rules: ``ActiveState(name, raw_input, entered_event, retry_counts=[0] * rules)``."""
        state = _new_object(cls)
        state.name = name
        state.raw_input = raw_input
        state.entered_event = entered_event
        state.input = None
        state.input_ready = False
        state.phase = _TASK
        state.retry_counts = [0] * rules
        state.retry_count = 0
        state.task_id = ""
        state.task_token = ""
        state.task_event = 0
        state.timer_id = ""
        state.timeout_timer = ""
        state.children = {}
        state.results = []
        state.items = []
        state.queue = []
        state.remaining = 0
        return state

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "raw_input": self.raw_input,
            "entered_event": self.entered_event, "input": self.input,
            "input_ready": self.input_ready, "phase": self.phase.value,
            "retry_counts": list(self.retry_counts), "retry_count": self.retry_count,
            "task_id": self.task_id, "task_token": self.task_token,
            "task_event": self.task_event, "timer_id": self.timer_id,
            "timeout_timer": self.timeout_timer,
            "children": [[slot, run] for slot, run in self.children.items()],
            "results": list(self.results), "items": self.items, "queue": list(self.queue),
            "remaining": self.remaining,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ActiveState:
        fields = dict(data)
        fields["phase"] = Phase(fields["phase"])
        fields["children"] = {int(slot): int(run) for slot, run in fields["children"]}
        return cls(**fields)


@dataclass(slots=True)
class ScopeRun:
    """One running scope. ``path`` locates its ``States`` list in the flow: a list of
    ``[state name, branch index]`` from the top level (index -1 for a Map processor)."""

    run_id: int
    path: list[list[Any]]
    parent: int  # run id of the scope holding the Parallel/Map; -1 for the top level
    slot: int  # branch index or item index in the parent
    open_event: int  # ExecutionStarted / BranchEntered / IterationEntered event id
    state: ActiveState | None = None

    def clone(self) -> ScopeRun:
        copy = _new_object(ScopeRun)
        copy.run_id = self.run_id
        copy.path = self.path
        copy.parent = self.parent
        copy.slot = self.slot
        copy.open_event = self.open_event
        state = self.state
        copy.state = state.clone() if state is not None else None
        return copy

    def to_json(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "path": self.path, "parent": self.parent,
            "slot": self.slot, "open_event": self.open_event,
            "state": self.state.to_json() if self.state is not None else None,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScopeRun:
        state = data.get("state")
        return cls(
            int(data["run_id"]), [list(p) for p in data["path"]], int(data["parent"]),
            int(data["slot"]), int(data["open_event"]),
            ActiveState.from_json(state) if state is not None else None,
        )


@dataclass(slots=True)
class Execution:
    """One execution of a flow; see the module docstring."""

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
    next_run_id: int = 0
    next_event_id: int = 1
    tasks: dict[str, int] = field(default_factory=dict)  # task id -> run id
    timers: dict[str, int] = field(default_factory=dict)  # timer id -> run id (-1: execution)
    max_events: int = 5000
    max_duration_seconds: float = 0.0
    new_events: list[HistoryEvent] = field(default_factory=list)

    @property
    def last_event_id(self) -> int:
        """EventId of the newest history event (0 before the start)."""
        return self.next_event_id - 1

    def task_for_token(self, token: str) -> str | None:
        """The pending task id whose ``$Context.Current.TaskToken`` is ``token``, if any."""
        for task_id, run_id in self.tasks.items():
            run = self.runs.get(run_id)
            if run and run.state and run.state.task_id == task_id and run.state.task_token == token:
                return task_id
        return None

    def clone(self) -> Execution:
        """A copy that ``step`` may change without touching this one."""
        return Execution(
            self.name, self.flow_name, self.input, self.role_arn, self.execution_mode,
            self.status, self.output, self.error_code, self.error_detail, self.started_at,
            self.stopped_at, self.global_vars,
            {run_id: run.clone() for run_id, run in self.runs.items()},
            self.next_run_id, self.next_event_id, dict(self.tasks), dict(self.timers),
            self.max_events, self.max_duration_seconds, [],
        )

    def shallow_clone(self) -> Execution:
        """A copy whose containers are new but whose scope runs are still shared with this
        execution: whoever changes a run must first replace it by ``run.clone()`` (``step``
        does so on first use, see ``Ctx.run``), so a step only copies the runs it touches."""
        copy = _new_object(Execution)
        copy.name = self.name
        copy.flow_name = self.flow_name
        copy.input = self.input
        copy.role_arn = self.role_arn
        copy.execution_mode = self.execution_mode
        copy.status = self.status
        copy.output = self.output
        copy.error_code = self.error_code
        copy.error_detail = self.error_detail
        copy.started_at = self.started_at
        copy.stopped_at = self.stopped_at
        copy.global_vars = self.global_vars
        copy.runs = dict(self.runs)
        copy.next_run_id = self.next_run_id
        copy.next_event_id = self.next_event_id
        copy.tasks = dict(self.tasks)
        copy.timers = dict(self.timers)
        copy.max_events = self.max_events
        copy.max_duration_seconds = self.max_duration_seconds
        copy.new_events = []
        return copy

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (no new events: they belong to the step that produced them)."""
        return {
            "name": self.name, "flow_name": self.flow_name, "input": self.input,
            "role_arn": self.role_arn, "execution_mode": self.execution_mode,
            "status": self.status.value, "output": self.output,
            "error_code": self.error_code, "error_detail": self.error_detail,
            "started_at": self.started_at, "stopped_at": self.stopped_at,
            "global_vars": self.global_vars,
            "runs": [run.to_json() for run in self.runs.values()],
            "next_run_id": self.next_run_id, "next_event_id": self.next_event_id,
            "tasks": dict(self.tasks), "timers": dict(self.timers),
            "max_events": self.max_events, "max_duration_seconds": self.max_duration_seconds,
            "new_events": [event.to_json() for event in self.new_events],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Execution:
        """Inverse of :meth:`to_json`."""
        fields = dict(data)
        fields["status"] = ExecutionStatus(fields["status"])
        runs = [ScopeRun.from_json(run) for run in fields["runs"]]
        fields["runs"] = {run.run_id: run for run in runs}
        fields["new_events"] = [HistoryEvent.from_json(e) for e in fields.get("new_events", [])]
        return cls(**fields)
