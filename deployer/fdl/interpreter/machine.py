"""``start`` and ``step``: the deterministic, durable-by-construction interpreter.

``step(flow, execution, event) -> (execution, commands)`` is a pure function: it never reads a
clock (time arrives as ``event.now``), never sleeps, performs no I/O and does not modify the
execution it is given. Feeding the same events to a fresh execution (same name, input and
options) reproduces the same executions and commands, so the list of events is a recovery log.
"""

from __future__ import annotations

from typing import Any

from deployer.fdl.interpreter.active import ROOT_RUN, ExecutionStatus, ScopeRun
from deployer.fdl.interpreter.commands import Command, StartTimer, TimerPurpose
from deployer.fdl.interpreter.events import (
    Event,
    Started,
    StopRequested,
    TaskFailed,
    TaskSucceeded,
    TimerFired,
)
from deployer.fdl.interpreter.history import HistoryEventType as H
from deployer.fdl.interpreter.history import format_time
from deployer.fdl.interpreter.lifecycle import drain, terminate, wake
from deployer.fdl.interpreter.model import Execution
from deployer.fdl.interpreter.program import CompiledFlow, FlowLike, as_compiled
from deployer.fdl.interpreter.runtime import (
    EVENT_LIMIT_CODE,
    EXECUTION_TIMEOUT_CODE,
    INTERNAL_ERROR_CODE,
    Ctx,
    EventLimitReached,
    StateFailure,
    check_size,
    dump,
)
from deployer.fdl.legacy.ast import AnyFlow
from deployer.fdl.limits import MAX_DURATION_SECONDS

__all__ = ["execution_duration", "new_execution", "start", "step"]


def execution_duration(flow: FlowLike, execution_mode: str,
                       max_duration_seconds: float | None = None) -> float:
    """How long an execution may run (0 = no limit): ``max_duration_seconds`` when given,
    else the mode's maximum (1 year Standard, 5 minutes Express), shortened by the flow's own
    ``Timeout`` when it has one (docs/fdl-semantics.md, "Flow Timeout")."""
    duration = (
        float(MAX_DURATION_SECONDS.get(execution_mode, MAX_DURATION_SECONDS["Standard"]))
        if max_duration_seconds is None
        else max_duration_seconds
    )
    timeout = _flow_of(flow).timeout
    if timeout:
        duration = float(timeout) if duration <= 0 else min(duration, float(timeout))
    return duration


def _flow_of(flow: FlowLike) -> AnyFlow:
    return flow.flow if isinstance(flow, CompiledFlow) else flow


def new_execution(
    flow: FlowLike,
    *,
    input: Any,
    execution_name: str,
    now: float,
    role_arn: str = "",
    flow_name: str | None = None,
    execution_mode: str = "Standard",
    max_events: int = 5000,
    max_duration_seconds: float | None = None,
) -> Execution:
    """A fresh, not yet started execution (feed it ``Started`` to run it); it may run for
    :func:`execution_duration`."""
    duration = execution_duration(flow, execution_mode or "Standard", max_duration_seconds)
    return Execution(
        name=execution_name, flow_name=flow.name if flow_name is None else flow_name,
        input=input, role_arn=role_arn, execution_mode=execution_mode or "Standard",
        started_at=now, max_events=max_events, max_duration_seconds=duration,
    )


def start(
    flow: FlowLike,
    *,
    input: Any,
    execution_name: str,
    now: float,
    role_arn: str = "",
    flow_name: str | None = None,
    execution_mode: str = "Standard",
    max_events: int = 5000,
    max_duration_seconds: float | None = None,
) -> tuple[Execution, list[Command]]:
    """Create an execution and process ``Started(now)``: ``ExecutionStarted``, then every
    state up to the first one that waits. ``max_duration_seconds`` (default: 1 year Standard,
    5 minutes Express; 0 = none), or the flow's ``Timeout`` when shorter, ends a still-running
    execution ``TimedOut`` (``ExecutionTimedOut``, ``FnF.ExecutionTimeout``)."""
    execution = new_execution(
        flow, input=input, execution_name=execution_name, now=now, role_arn=role_arn,
        flow_name=flow_name, execution_mode=execution_mode, max_events=max_events,
        max_duration_seconds=max_duration_seconds,
    )
    return step(flow, execution, Started(now))


def step(flow: FlowLike, execution: Execution, event: Event) -> tuple[Execution, list[Command]]:
    """Advance ``execution`` by one event; return the new execution and the commands to run.

    ``flow`` is best compiled once (:func:`compile_flow`); a plain ``Flow`` is compiled on
    every call. ``execution.new_events`` of the result holds the history events of this step
    only. Events for a finished execution, unknown task ids or unknown/cancelled timer ids
    change nothing. Errors of the flow (bad expressions, size limits, ...) fail states, never
    raise. Reaching ``max_events`` fails the execution with ``FnF.EventLimitExceeded``; an
    unexpected internal error fails it with ``FnF.InternalError`` rather than escaping.
    """
    if execution.status is not ExecutionStatus.RUNNING or (
        not isinstance(event, Started) and execution.next_event_id == 1
    ):
        return execution.clone(), []
    program, time = as_compiled(flow), format_time(event.now)
    ctx = Ctx(program, execution.clone(), event.now, time)
    try:
        _dispatch(ctx, event)
        drain(ctx)
    except EventLimitReached:
        terminate(ctx, ExecutionStatus.FAILED, code=EVENT_LIMIT_CODE,
                  detail=f"the execution reached {ctx.ex.max_events} history events")
    except Exception as exc:
        ctx = Ctx(program, execution.clone(), event.now, time)
        terminate(ctx, ExecutionStatus.FAILED, code=INTERNAL_ERROR_CODE,
                  detail=f"{type(exc).__name__}: {exc}")
    return ctx.ex, ctx.commands


def _dispatch(ctx: Ctx, event: Event) -> None:
    ex = ctx.ex
    if isinstance(event, TimerFired):
        run_id = ex.timers.pop(event.timer_id, None)
        if run_id is None:
            return
        if run_id < 0:
            terminate(ctx, ExecutionStatus.TIMED_OUT, code=EXECUTION_TIMEOUT_CODE,
                      detail=_timed_out(ctx))
        else:
            wake(ctx, run_id, event)
    elif isinstance(event, (TaskSucceeded, TaskFailed)):
        run_id = ex.tasks.get(event.task_id)
        if run_id is not None:
            wake(ctx, run_id, event)
    elif isinstance(event, Started):
        _started(ctx)
    elif isinstance(event, StopRequested):
        terminate(ctx, ExecutionStatus.STOPPED, code=event.error, detail=event.cause)


def _timed_out(ctx: Ctx) -> str:
    seconds = ctx.ex.max_duration_seconds
    if ctx.program.flow.timeout and seconds == ctx.program.flow.timeout:
        return f"the execution ran longer than the flow's Timeout of {seconds:g} seconds"
    return f"the execution ran longer than {seconds:g} seconds"


def _started(ctx: Ctx) -> None:
    ex = ctx.ex
    if ex.next_event_id != 1:
        return
    ctx.emit(H.EXECUTION_STARTED, "", 0, dump({"Input": ex.input}))
    if ex.max_duration_seconds > 0:
        timer_id = f"{ex.name}:execution-timeout"
        ex.timers[timer_id] = -1
        ctx.commands.append(StartTimer(timer_id, ex.started_at + ex.max_duration_seconds,
                                       TimerPurpose.EXECUTION_TIMEOUT))
    frame, first_input = None, ex.input
    try:
        check_size(ex.input, "input", "(execution)")
        if ctx.program.opening is not None:
            frame, first_input = ctx.program.opening(ctx, ex.input)
    except StateFailure as failure:
        terminate(ctx, ExecutionStatus.FAILED, code=failure.code, detail=failure.detail)
        return
    ctx.add_run(ScopeRun(ROOT_RUN, (), -1, 0, 1, frame))
    ex.next_run_id = ROOT_RUN + 1
    ctx.queue.append((ROOT_RUN, ctx.program.root.start_at, first_input, None))
