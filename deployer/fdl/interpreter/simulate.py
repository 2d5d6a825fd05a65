"""Run a flow to its end in-process on a virtual clock (a discrete-event loop).

Tasks are answered by a callback; timers fire in time order without any wall-clock wait, so a
day-long Wait costs nothing. Used by ``deploy flow test``, the tests and the benchmarks.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

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
from deployer.fdl.interpreter.program import FlowLike, as_compiled

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
    flow: FlowLike, answer: Answerer, *, input: Any, execution_name: str = "simulation",
    start_time: float = 0.0, role_arn: str = "", execution_mode: str = "Standard",
    max_events: int = 5000, max_duration_seconds: float | None = None, keep_history: bool = True,
    until: Callable[[Execution], bool] | None = None,
) -> Simulation:
    """Run ``flow`` from ``Started(start_time)`` until the execution ends, or until
    ``until(execution)`` is true after a step (that step's commands are then not carried out).

    Every ``InvokeTask`` is answered through ``answer`` (exceptions it raises propagate to the
    caller); cancelled timers and tasks are dropped. Ends when the execution is terminal (the
    execution-timeout timer guarantees that when nothing else is pending). A plain ``Flow`` is
    compiled once for the run."""
    program = as_compiled(flow)
    execution = new_execution(
        program, input=input, execution_name=execution_name, now=start_time, role_arn=role_arn,
        execution_mode=execution_mode, max_events=max_events,
        max_duration_seconds=max_duration_seconds,
    )
    result = Simulation(execution, started_at=start_time, ended_at=start_time)
    agenda = _Agenda(answer, start_time)
    events, running = result.events, ExecutionStatus.RUNNING
    while agenda.heap and execution.status is running:
        now, event = agenda.next()
        if event is None:
            continue
        execution, commands = step(program, execution, event)
        events.append(event)
        result.ended_at = now
        if keep_history:
            result.history.extend(execution.new_events)
            result.commands.extend(commands)
        if until is not None and until(execution):
            break
        agenda.carry_out(commands, now)
    result.execution = execution
    return result


class _Agenda:
    """The events to come, in virtual time order (ties in the order they were scheduled)."""

    __slots__ = ("_answer", "_cancelled", "_seq", "heap")

    def __init__(self, answer: Answerer, start_time: float) -> None:
        self._answer = answer
        self._cancelled: set[str] = set()  # ids of cancelled timers and tasks
        self._seq = 1
        self.heap: list[tuple[float, int, Event]] = [(start_time, 0, Started(start_time))]

    def next(self) -> tuple[float, Event | None]:
        """The next event and its time; None in place of one for a cancelled timer/task."""
        now, _, event = heapq.heappop(self.heap)
        cancelled = self._cancelled
        if cancelled:
            key = _key(event)
            if key is not None and key in cancelled:
                cancelled.discard(key)
                return now, None
        return now, event

    def carry_out(self, commands: list[Command], now: float) -> None:
        """Schedule what ``commands`` ask for at virtual time ``now``."""
        heap, seq, push = self.heap, self._seq, heapq.heappush
        for command in commands:
            if type(command) is StartTimer:
                fire_at = command.fire_at
                push(heap, (fire_at, seq, TimerFired(fire_at, command.timer_id)))
            elif type(command) is CancelTimer:
                self._cancelled.add(command.timer_id)
            elif type(command) is CancelTask:
                self._cancelled.add(command.task_id)
            elif type(command) is InvokeTask:
                reply = self._answer(command, now)
                if reply is None:  # never answered
                    continue
                at = now + reply.after
                push(heap, (at, seq, TaskSucceeded(at, command.task_id, reply.output)
                            if reply.output is not None
                            else TaskFailed(at, command.task_id, reply.error_code, reply.detail)))
            seq += 1
        self._seq = seq


def _key(event: Event) -> str | None:
    if isinstance(event, TimerFired):
        return event.timer_id
    if isinstance(event, (TaskSucceeded, TaskFailed)):
        return event.task_id
    return None
