"""Run a flow to its end in-process on a virtual clock (a discrete-event loop).

Tasks are answered by a callback; timers fire in time order without any wall-clock wait, so a
day-long Wait costs nothing. Used by ``deploy flow test``, the tests and the benchmarks.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from deployer.fdl.ast import Flow
from deployer.fdl.interpreter.commands import (
    CancelTask,
    CancelTimer,
    Command,
    InvokeTask,
    StartTimer,
)
from deployer.fdl.interpreter.events import Event, Started, TaskFailed, TaskSucceeded, TimerFired
from deployer.fdl.interpreter.history import HistoryEvent
from deployer.fdl.interpreter.machine import new_execution, step
from deployer.fdl.interpreter.model import Execution, ExecutionStatus

__all__ = ["Simulation", "TaskAnswer", "simulate"]


@dataclass(frozen=True, slots=True)
class TaskAnswer:
    """How a task ends: ``output`` (raw response text) on success, else ``error_code`` and
    ``detail``; ``after`` seconds of virtual time after the call."""

    output: str | None = None
    error_code: str = ""
    detail: str = ""
    after: float = 0.0

    @classmethod
    def failure(cls, code: str, detail: str = "", after: float = 0.0) -> TaskAnswer:
        return cls(None, code, detail, after)


#: Called for every InvokeTask at virtual time ``now``; None means "never answered".
Answerer = Callable[[InvokeTask, float], "TaskAnswer | None"]


@dataclass(slots=True)
class Simulation:
    """The outcome: final execution, full history, every event fed and command issued."""

    execution: Execution
    history: list[HistoryEvent] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)
    started_at: float = 0.0
    ended_at: float = 0.0

    @property
    def duration_seconds(self) -> float:
        return self.ended_at - self.started_at


def simulate(
    flow: Flow,
    answer: Answerer,
    *,
    input: Any,
    execution_name: str = "simulation",
    start_time: float = 0.0,
    role_arn: str = "",
    execution_mode: str = "Standard",
    max_events: int = 5000,
    max_duration_seconds: float | None = None,
    keep_history: bool = True,
) -> Simulation:
    """Run ``flow`` from ``Started(start_time)`` until the execution ends.

    Every ``InvokeTask`` is answered through ``answer`` (exceptions it raises propagate to the
    caller); cancelled timers and tasks are dropped. Ends when the execution is terminal (the
    execution-timeout timer guarantees that when nothing else is pending)."""
    execution = new_execution(
        flow, input=input, execution_name=execution_name, now=start_time, role_arn=role_arn,
        execution_mode=execution_mode, max_events=max_events,
        max_duration_seconds=max_duration_seconds,
    )
    result = Simulation(execution, started_at=start_time, ended_at=start_time)
    agenda: list[tuple[float, int, Event]] = [(start_time, 0, Started(start_time))]
    cancelled: set[str] = set()
    seq = 1
    events, running = result.events, ExecutionStatus.RUNNING
    push, pop = heapq.heappush, heapq.heappop
    while agenda and execution.status is running:
        now, _, event = pop(agenda)
        if cancelled:
            key = _key(event)
            if key is not None and key in cancelled:
                cancelled.discard(key)
                continue
        execution, commands = step(flow, execution, event)
        events.append(event)
        result.ended_at = now
        if keep_history:
            result.history.extend(execution.new_events)
            result.commands.extend(commands)
        for command in commands:
            if type(command) is StartTimer:
                fire_at = command.fire_at
                push(agenda, (fire_at, seq, _timer_fired(fire_at, command.timer_id)))
            elif type(command) is CancelTimer:
                cancelled.add(command.timer_id)
            elif type(command) is CancelTask:
                cancelled.add(command.task_id)
            elif type(command) is InvokeTask:
                reply = answer(command, now)
                if reply is None:
                    continue
                at = now + reply.after
                if reply.output is not None:
                    push(agenda, (at, seq, _task_succeeded(at, command.task_id, reply.output)))
                else:
                    push(agenda, (at, seq, TaskFailed(at, command.task_id, reply.error_code,
                                                      reply.detail)))
            seq += 1
    result.execution = execution
    return result


_new_object = object.__new__
_SET_FIRED_NOW, _SET_FIRED_ID = (getattr(TimerFired, name).__set__ for name in ("now", "timer_id"))
_SET_TASK_NOW, _SET_TASK_ID, _SET_TASK_OUTPUT = (
    getattr(TaskSucceeded, name).__set__ for name in ("now", "task_id", "output")
)
assert [f.name for f in fields(TimerFired)] == ["now", "timer_id"]
assert [f.name for f in fields(TaskSucceeded)] == ["now", "task_id", "output"]


def _timer_fired(now: float, timer_id: str) -> TimerFired:
    """``TimerFired(now, timer_id)`` filled through its slots (one per timer: the frozen
    ``__init__`` costs twice as much)."""
    event = _new_object(TimerFired)
    _SET_FIRED_NOW(event, now)
    _SET_FIRED_ID(event, timer_id)
    return event


def _task_succeeded(now: float, task_id: str, output: str) -> TaskSucceeded:
    """``TaskSucceeded(now, task_id, output)`` filled through its slots."""
    event = _new_object(TaskSucceeded)
    _SET_TASK_NOW(event, now)
    _SET_TASK_ID(event, task_id)
    _SET_TASK_OUTPUT(event, output)
    return event


def _key(event: Event) -> str | None:
    if isinstance(event, TimerFired):
        return event.timer_id
    if isinstance(event, (TaskSucceeded, TaskFailed)):
        return event.task_id
    return None
