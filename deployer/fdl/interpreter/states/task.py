"""Task: evaluate Parameters, ask for the call (``InvokeTask``), wait for its result, time out.

Events of one attempt: ``TaskScheduled`` (parameters) -> ``TaskStarted`` -> ``TaskSubmitted``
(callback modes) -> ``TaskSucceeded`` | ``TaskFailed`` | ``TaskTimedOut``. A retry repeats them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, NoReturn

from deployer.fdl.interpreter.active import ActiveState, ScopeRun, Waiting
from deployer.fdl.interpreter.commands import (
    CancelTask,
    CancelTimer,
    InvokeTask,
    StartTimer,
    TimerPurpose,
)
from deployer.fdl.interpreter.compiled import (
    CompiledExpression,
    CompiledTemplate,
    compiled,
    draws,
    expression_scope,
)
from deployer.fdl.interpreter.events import TaskFailed, TaskSucceeded, TimerFired
from deployer.fdl.interpreter.fc import shape_output
from deployer.fdl.interpreter.history import HistoryEventType as H
from deployer.fdl.interpreter.runtime import (
    EMPTY_DETAIL,
    RUNTIME_ERROR_CODE,
    TIMEOUT_CODE,
    Ctx,
    StateFailure,
    dump,
    task_token,
)
from deployer.fdl.interpreter.states.base import Done, Site, StateEvaluator, WakeEvent
from deployer.fdl.interpreter.states.wait import whole_number
from deployer.fdl.limits import MAX_TIMEOUT_SECONDS
from deployer.fdl.syntax.ast import Expr, TaskMode, TaskState

__all__ = ["TASK_PHASE", "TaskCall", "TaskEvaluator"]

_SCHEDULED, _STARTED, _SUCCEEDED = H.TASK_SCHEDULED, H.TASK_STARTED, H.TASK_SUCCEEDED


#: The stored phase of a waiting Task.
TASK_PHASE = "task"


class TaskCall(NamedTuple):
    """A Task waits for its pending task ``task_id`` (scheduled by event ``task_event``, with
    ``$Context.Current.TaskToken`` ``task_token``) and, with a Timeout, its timeout timer."""

    task_id: str
    task_token: str
    task_event: int
    timeout_timer: str = ""

    def stored_fields(self) -> dict[str, Any]:
        return {"phase": TASK_PHASE, "task_id": self.task_id, "task_token": self.task_token,
                "task_event": self.task_event, "timeout_timer": self.timeout_timer}

    @classmethod
    def from_stored(cls, data: dict[str, Any]) -> TaskCall:
        return cls(str(data["task_id"]), str(data["task_token"]), int(data["task_event"]),
                   str(data["timeout_timer"]))


@dataclass(frozen=True, slots=True)
class TaskEvaluator(StateEvaluator):
    """``timeout`` is literal seconds (0: none) or ``Timeout.$``."""

    action: str
    task_mode: TaskMode
    parameters: CompiledTemplate | None
    timeout: int | CompiledExpression | None
    path: tuple[str, ...]  # the names of the enclosing states, then the Task's
    draws: bool  # whether Parameters or Timeout.$ draw random numbers
    mode_text: str  # TaskScheduled's TaskMode
    submits: bool  # a callback mode: TaskSubmitted gives the token
    scheduled_prefix: str  # TaskScheduled's detail up to its Parameters' text
    timeout_code: ClassVar[str] = TIMEOUT_CODE  # the error of a task past its Timeout

    @classmethod
    def compile(cls, state: TaskState, site: Site) -> TaskEvaluator:
        parameters = compiled(state.parameters)
        timeout = CompiledExpression.of(state.timeout) if isinstance(state.timeout, Expr) \
            else state.timeout
        return cls(
            **cls.lifecycle_of(state), action=state.action, task_mode=state.task_mode,
            parameters=parameters, timeout=timeout, path=site.path(state.name),
            draws=draws(parameters, timeout if isinstance(timeout, CompiledExpression) else None),
            mode_text=state.task_mode.value,
            submits=state.task_mode is not TaskMode.REQUEST_COMPLETE,
            scheduled_prefix=(f'{{"Resource":{dump(state.action)},'
                              f'"TaskMode":{dump(state.task_mode.value)},"Parameters":'),
        )

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> TaskCall:
        """Schedule one attempt of the task."""
        ex, name = ctx.ex, self.name
        token = self.new_token(ctx, st)
        try:
            parameters, timeout = self.prepare(ctx, st, token)
            parameters_text = ctx.sized(parameters, "Parameters", name)
        except StateFailure as failure:
            raise StateFailure(failure.code, failure.detail, TaskCall("", token, 0)) from None
        event = ctx.emit(  # the text dump({"Resource", "TaskMode", "Parameters"}) gives
            _SCHEDULED, name, st.entered_event, self.scheduled_prefix + parameters_text + "}")
        task_id = f"{ex.name}:task:{event}"
        ctx.emit(_STARTED, name, event, EMPTY_DETAIL)
        if self.submits:
            ctx.emit(H.TASK_SUBMITTED, name, event, dump({"TaskToken": token}))
        ex.tasks[task_id] = run.run_id
        ctx.commands.append(
            InvokeTask(task_id, self.path, self.action, parameters, self.task_mode, token,
                       timeout))
        timer_id = ""
        if timeout > 0:
            timer_id = f"{ex.name}:timeout:{event}"
            ex.timers[timer_id] = run.run_id
            ctx.commands.append(StartTimer(timer_id, ctx.now + timeout, TimerPurpose.TASK_TIMEOUT))
        return TaskCall(task_id, token, event, timer_id)

    def new_token(self, ctx: Ctx, st: ActiveState) -> str:
        """The task token of the attempt about to be scheduled (one per attempt)."""
        ex = ctx.ex
        return task_token(ex.flow_name, ex.name, ex.next_event_id)

    def prepare(self, ctx: Ctx, st: ActiveState, token: str) -> tuple[Any, int]:
        """The attempt's Parameters and Timeout (seconds, 0: none)."""
        scope = expression_scope(ctx, self.name, st.input, st.retry_count, token,
                                 draws=self.draws)
        parameters = {} if self.parameters is None else self.parameters.build(
            scope, "Parameters")
        return parameters, self._timeout(scope)

    def shape(self, raw: str) -> Any:
        """The task's result (``Done.output``) from the raw response text."""
        return shape_output(self.action, self.task_mode, raw)

    def failure_code(self, code: str, detail: str) -> str:
        """The error a task failure with ``code``/``detail`` raises."""
        return code

    def _timeout(self, scope: Any) -> int:
        raw: object = self.timeout
        if raw is None:
            return 0
        if isinstance(raw, CompiledExpression):
            raw = raw.evaluate(scope, "Timeout.$")
        seconds = whole_number(raw)
        if seconds is None and isinstance(raw, str) and raw.isascii() \
                and raw.strip().isdigit():
            seconds = int(raw.strip())
        if seconds is None or not 0 <= seconds <= MAX_TIMEOUT_SECONDS:
            raise StateFailure(
                RUNTIME_ERROR_CODE,
                f"Timeout must be a whole number of seconds from 0 to {MAX_TIMEOUT_SECONDS}, "
                f"got {raw!r}",
            )
        return seconds

    def resume(self, ctx: Ctx, run: ScopeRun, st: ActiveState, record: Waiting,
               wake: WakeEvent) -> Done | None:
        """The task's result, or its timeout timer; a failure fails the state."""
        call = record
        if not isinstance(call, TaskCall):
            return None
        if isinstance(wake, TaskSucceeded):
            if wake.task_id != call.task_id:
                return None
            self._forget(ctx, call)
            output = self.shape(wake.output)
            ctx.emit(_SUCCEEDED, self.name, call.task_event,
                     '{"Output":' + ctx.text(output) + "}")
            return Done(output, self.next)
        if isinstance(wake, TaskFailed) and wake.task_id == call.task_id:
            self._forget(ctx, call)
            self._stopped(ctx, call, H.TASK_FAILED, self.failure_code(wake.code, wake.detail),
                          wake.detail)
        elif isinstance(wake, TimerFired) and call.timeout_timer \
                and wake.timer_id == call.timeout_timer:
            ctx.ex.tasks.pop(call.task_id, None)
            ctx.commands.append(CancelTask(call.task_id))
            detail = f"task {self.name!r} did not finish within its Timeout"
            self._stopped(ctx, call, H.TASK_TIMED_OUT, self.timeout_code, detail)
        return None

    def _stopped(self, ctx: Ctx, call: TaskCall, kind: H, code: str, detail: str) -> NoReturn:
        ctx.emit(kind, self.name, call.task_event, dump({"Error": code, "Cause": detail}))
        raise StateFailure(code, detail)

    def _forget(self, ctx: Ctx, call: TaskCall) -> None:
        """The task ended: forget it and cancel its timeout timer."""
        ex = ctx.ex
        if call.timeout_timer and ex.timers.pop(call.timeout_timer, None) is not None:
            ctx.commands.append(CancelTimer(call.timeout_timer))
        ex.tasks.pop(call.task_id, None)

    def cancel(self, ctx: Ctx, record: Waiting) -> None:
        assert isinstance(record, TaskCall)
        ex = ctx.ex
        if ex.tasks.pop(record.task_id, None) is not None:
            ctx.commands.append(CancelTask(record.task_id))
        if record.timeout_timer and ex.timers.pop(record.timeout_timer, None) is not None:
            ctx.commands.append(CancelTimer(record.timeout_timer))

    def task_token(self, record: Waiting | None) -> str:
        return record.task_token if isinstance(record, TaskCall) else ""
