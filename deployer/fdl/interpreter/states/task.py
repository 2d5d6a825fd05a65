"""Task: evaluate Parameters, ask for the call (``InvokeTask``), wait for its result, time out.

Events for one attempt: ``TaskScheduled`` (parameters) -> ``TaskStarted`` -> ``TaskSubmitted``
(callback modes) -> ``TaskSucceeded`` | ``TaskFailed`` | ``TaskTimedOut``. A retry repeats them.
"""

from __future__ import annotations

from deployer.fdl.ast import Expr, TaskMode, TaskState
from deployer.fdl.interpreter.commands import (
    CancelTask,
    CancelTimer,
    StartTimer,
    TimerPurpose,
)
from deployer.fdl.interpreter.fc import shape_output
from deployer.fdl.interpreter.history import HistoryEventType as H
from deployer.fdl.interpreter.model import ActiveState, Phase, ScopeRun
from deployer.fdl.interpreter.runtime import (
    EMPTY_DETAIL,
    RUNTIME_ERROR_CODE,
    Ctx,
    Done,
    StateFailure,
    construct,
    dump,
    evaluate_expr,
    expression_scope,
    invoke_task,
    state_path,
    task_token,
)
from deployer.fdl.interpreter.states.simple import whole_number
from deployer.fdl.limits import MAX_TIMEOUT_SECONDS

__all__ = ["MAX_TIMEOUT_SECONDS", "begin_task", "task_returned", "task_stopped"]

_MODE_TEXT = {mode: mode.value for mode in TaskMode}


def begin_task(ctx: Ctx, run: ScopeRun, state: TaskState, st: ActiveState) -> None:
    """Schedule one attempt of the task."""
    ex = ctx.ex
    scheduled_id = ex.next_event_id
    st.task_token = task_token(ex.flow_name, ex.name, scheduled_id)
    scope = expression_scope(ctx, st, input_value=st.input)
    parameters = (
        construct(state.parameters, scope, "Parameters") if state.parameters is not None else {}
    )
    timeout = 0 if state.timeout is None else _timeout(state.timeout, scope)
    mode = state.task_mode
    event = ctx.emit(
        H.TASK_SCHEDULED, st.name, st.entered_event,
        dump({"Resource": state.action, "TaskMode": _MODE_TEXT[mode], "Parameters": parameters}),
    )
    task_id = f"{ex.name}:task:{event}"
    st.phase, st.task_id, st.task_event = Phase.TASK, task_id, event
    ctx.emit(H.TASK_STARTED, st.name, event, EMPTY_DETAIL)
    if mode is not TaskMode.REQUEST_COMPLETE:
        ctx.emit(H.TASK_SUBMITTED, st.name, event, {"TaskToken": st.task_token})
    ex.tasks[task_id] = run.run_id
    path = (st.name,) if not run.path else state_path(run, st.name)
    ctx.commands.append(
        invoke_task(task_id, path, state.action, parameters, mode, st.task_token, timeout)
    )
    if timeout > 0:
        timer_id = f"{ex.name}:timeout:{event}"
        st.timeout_timer = timer_id
        ex.timers[timer_id] = run.run_id
        ctx.command(StartTimer(timer_id, ctx.now + timeout, TimerPurpose.TASK_TIMEOUT))
    return None


def _timeout(value: int | Expr | None, scope: object) -> int:
    if value is None:
        return 0
    raw: object = value
    if isinstance(value, Expr):
        raw = evaluate_expr(value, scope, "Timeout.$")  # type: ignore[arg-type]
    seconds = whole_number(raw)
    if seconds is None and isinstance(raw, str) and raw.strip().isdigit():
        seconds = int(raw.strip())
    if seconds is None or not 0 <= seconds <= MAX_TIMEOUT_SECONDS:
        raise StateFailure(
            RUNTIME_ERROR_CODE,
            f"Timeout must be a whole number of seconds from 0 to {MAX_TIMEOUT_SECONDS}, "
            f"got {raw!r}",
        )
    return seconds


def _clear(ctx: Ctx, st: ActiveState) -> None:
    if st.timeout_timer:
        if ctx.ex.timers.pop(st.timeout_timer, None) is not None:
            ctx.command(CancelTimer(st.timeout_timer))
        st.timeout_timer = ""
    ctx.ex.tasks.pop(st.task_id, None)


def task_returned(ctx: Ctx, state: TaskState, st: ActiveState, raw: str) -> Done:
    """The pending task succeeded: shape ``$Output`` and finish the state."""
    _clear(ctx, st)
    output = shape_output(state.action, state.task_mode, raw)
    ctx.emit(H.TASK_SUCCEEDED, st.name, st.task_event, '{"Output":' + ctx.text(output) + "}")
    return Done(output, None if state.end else state.next)


def task_stopped(ctx: Ctx, st: ActiveState, code: str, detail: str, *, timed_out: bool) -> None:
    """The pending task failed or timed out: record it; the caller fails the state."""
    if timed_out:
        ctx.ex.tasks.pop(st.task_id, None)
        ctx.command(CancelTask(st.task_id))
        st.timeout_timer = ""
        kind = H.TASK_TIMED_OUT
    else:
        _clear(ctx, st)
        kind = H.TASK_FAILED
    ctx.emit(kind, st.name, st.task_event, {"Error": code, "Cause": detail})

