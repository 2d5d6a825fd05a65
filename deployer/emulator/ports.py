"""What the CloudFlow engine and the services need from each other, declared once.

The engine (``emulator/engine/``) and the services (``emulator/services/``) never import each
other (contract ``engine-services-independent``); both import these ports, and
``emulator/app.py`` plugs one into the other:

* the engine carries out tasks through a :class:`TaskRunner` (``services.fc_tasks``'s
  ``FunctionInvoker`` for ``FC:InvokeFunction``) and fires the schedules of a
  :class:`ScheduleSource` (``services.schedules.ScheduleService``);
* the services drive executions through an :class:`ExecutionEngine` and tell the engine's
  schedule mirror about changes through :class:`ScheduleTimers` (both ``engine.FlowEngine``).

A task is asynchronous end to end: :meth:`TaskRunner.start` returns at once and the runner
calls ``done`` later, from a thread of its own. Waiting on a function (or anything else a task
waits on) never holds one of the engine's threads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from deployer.emulator.records import ExecutionLinks, FlowRecord, ScheduleKey
from deployer.fdl.interpreter import Event, Execution, InvokeTask

__all__ = ["ExecutionEngine", "ExecutionLinks", "ScheduleKey", "ScheduleSource",
           "ScheduleTimers", "TaskDone", "TaskOutcome", "TaskRequest", "TaskRunner"]


@dataclass(frozen=True, slots=True)
class TaskOutcome:
    """How a task ended: ``output`` (JSON text) on success, else ``error`` (CloudFlow's
    error code, e.g. ``FC.Unknown``) and ``cause``."""

    output: str = ""
    error: str = ""
    cause: str = ""

    @classmethod
    def failed(cls, error: str, cause: str) -> TaskOutcome:
        return cls("", error, cause)

    @property
    def succeeded(self) -> bool:
        return not self.error


@dataclass(frozen=True, slots=True)
class TaskRequest:
    """One task to carry out: the interpreter's command, the execution's account and region,
    its execution role (``role_arn``, "" for none) and the execution's ``seq`` (0: none)."""

    command: InvokeTask
    account_id: str
    region: str
    role_arn: str = ""
    execution_seq: int = 0


TaskDone = Callable[[TaskOutcome | None], None]
"""Called once when a task has ended (its :class:`TaskOutcome`), or with None when it now
waits for a callback (ReportTaskSucceeded/Failed)."""


class TaskRunner(Protocol):
    """Carries out interpreter tasks for the engine."""

    def handles(self, cmd: InvokeTask) -> bool:
        """True when this runner carries out the task's action itself."""
        ...

    def start(self, request: TaskRequest, done: TaskDone) -> None:
        """Begin carrying out ``request`` and return without waiting for it: ``done`` is
        called exactly once, later and from another thread (or before this returns, when the
        outcome is known at once). Never blocks on the function or anything it waits for."""
        ...

    def cancel(self, execution_seq: int, task_id: str) -> None:
        """The task is no longer awaited (the execution stopped, a sibling branch failed, its
        Timeout passed): drop what it started that CloudFlow cancels (a sub-flow's running
        child). Returns at once."""
        ...


class ScheduleSource(Protocol):
    """The time-based schedules the engine fires (``services.schedules.ScheduleService``)."""

    def pending(self, *, after_downtime: bool) -> list[tuple[ScheduleKey, float]]:
        """Every enabled schedule and its next fire instant. ``after_downtime`` (the emulator
        starts again): fires missed while it was down are handled as documented first."""
        ...

    def fire(self, key: ScheduleKey, fire_at: float) -> float | None:
        """Start the execution due at ``fire_at``; return the schedule's next fire instant
        (None when it no longer fires: disabled, deleted, changed meanwhile)."""
        ...


class ScheduleTimers(Protocol):
    """The engine's schedule mirror (``engine.FlowEngine.schedule_changed``)."""

    def schedule_changed(self, key: ScheduleKey, next_fire_at: float | None) -> None:
        """A schedule was created, updated or deleted: it fires next at ``next_fire_at``."""
        ...


class ExecutionEngine(Protocol):
    """The engine that runs executions' steps, as the execution service uses it
    (``engine.FlowEngine``)."""

    def begin(self, flow: FlowRecord, *, name: str, input_text: str, input_value: Any,
              flow_version: str = "", qualifier: str = "",
              links: ExecutionLinks | None = None) -> Execution:
        """Create an execution and commit it, not yet started (``Running``): its first step
        runs after this returns; ExecutionNameTaken when the name is in use. It records the
        published version and the alias it was started with ('' for LATEST / none), and its
        ``links`` (mock case, parent task, callback token, map run) in the same commit."""
        ...

    def post(self, seq: int, make_event: Callable[[float], Event]) -> None:
        """Queue one event for execution ``seq`` and return at once (no answer)."""
        ...



    def on_ended(self, listener: Callable[[int], None]) -> None:
        """Call ``listener(seq)`` (on an engine thread, not the committing one) each time an
        execution ends."""
        ...

    def deliver(self, seq: int, make_event: Callable[[float], Event]) -> Execution | None:
        """Apply one event now; the new execution (None if it is gone or finished)."""
        ...

    def wait_ended(self, is_ended: Callable[[], bool], timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until ``is_ended()``."""
        ...

    def resync(self) -> None:
        """Rows changed behind the engine (a flow was deleted): reload, wake waiters."""
        ...

    def watch_changes(self, seq: int, after_version: int,
                      wake: Callable[[], None]) -> Callable[[], None]:
        """Call ``wake()`` once execution ``seq`` commits a version above ``after_version``;
        returns the unsubscribe function."""
        ...
