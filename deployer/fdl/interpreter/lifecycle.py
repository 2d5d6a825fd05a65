"""The lifecycle every state shares, written once (reference §3.4):

``StepEntered`` (raw input) -> InputConstructor -> ``StepStarted`` (input) -> the state's own
work (:mod:`.states`) -> GlobalConstructor and OutputConstructor against the same snapshot ->
``StepSucceeded`` (output) -> ``StepExited`` -> transition; or, on failure, Retry (a back-off
timer, then the attempt again) and, when no retry is left, ``StepFailed`` -> ``StepExited`` ->
Catch (its OutputConstructor, else the failed state's input, goes to the Catch's ``Next``) or
failure of the enclosing scope. A failed Parallel branch / Map iteration cancels its siblings and
fails the Parallel/Map, whose own Retry/Catch then apply; a failed top-level scope fails the
execution.

States entered in one step go through a FIFO queue, so a loop of Pass/Choice states never
recurses; the per-execution event limit bounds it.
"""

from __future__ import annotations

from typing import Any

from deployer.fdl.ast import MapState, State
from deployer.fdl.interpreter.commands import (
    CancelTask,
    CancelTimer,
    CompleteExecution,
    StartTimer,
    TimerPurpose,
)
from deployer.fdl.interpreter.history import HistoryEventType as H
from deployer.fdl.interpreter.model import ActiveState, ExecutionStatus, Phase, ScopeRun
from deployer.fdl.interpreter.retry import retry_delay, select_catch, select_retry
from deployer.fdl.interpreter.runtime import (
    RUNTIME_ERROR_CODE,
    Ctx,
    Done,
    Raw,
    StateFailure,
    construct,
    expression_scope,
    next_of,
    scope_of,
    size_checked,
    state_of,
)
from deployer.fdl.interpreter.states import BEGIN, BEGIN_BY_CLASS
from deployer.fdl.interpreter.states.parallel import collect, start_queued

__all__ = ["attempt", "drain", "finish_state", "state_failed", "terminate"]


def drain(ctx: Ctx) -> None:
    """Enter queued states until every scope waits or the execution ended."""
    ex, running, queue, owned = ctx.ex, ExecutionStatus.RUNNING, ctx.queue, ctx.owned
    while queue and ex.status is running:
        run_id, name, raw_input, text = queue.popleft()
        run = ex.runs.get(run_id)
        if run is not None and run.state is None:
            if run_id not in owned:
                run = ctx.run(run_id)
            enter_state(ctx, run, name, raw_input, text)


def enter_state(ctx: Ctx, run: ScopeRun, name: str, raw_input: Any, text: Raw | None) -> None:
    state = (scope_of(ctx.flow, run) if run.path else ctx.flow.scope).by_name[name]
    detail = text if text is not None else ctx.text(raw_input)
    entered = ctx.emit(H.STEP_ENTERED, name, run.open_event, '{"Input":' + detail + "}")
    rules = getattr(state, "retry", ())
    st = run.state = ActiveState.entered(name, raw_input, entered, len(rules))
    attempt(ctx, run, state, st, detail)


def attempt(
    ctx: Ctx, run: ScopeRun, state: State, st: ActiveState, raw_text: Raw | None = None
) -> None:
    """Run (or re-run after a retry back-off) the state's work."""
    try:
        if not st.input_ready:
            value = st.raw_input
            if state.input_constructor is not None:
                scope = expression_scope(ctx, st, input_value=value)
                value = construct(state.input_constructor, scope, "InputConstructor")
                text = size_checked(ctx.text(value), "input", st.name)
            elif raw_text is not None:
                text = raw_text
            else:
                text = size_checked(ctx.text(value), "input", st.name)
            st.input, st.input_ready = value, True
            ctx.emit(H.STEP_STARTED, st.name, st.entered_event, '{"Input":' + text + "}")
        begin = BEGIN_BY_CLASS.get(state.__class__) or BEGIN[state.type]
        done = begin(ctx, run, state, st)
    except StateFailure as failure:
        state_failed(ctx, run, state, st, failure.code, failure.detail)
        return
    if done is not None:
        finish_state(ctx, run, state, st, done)


def finish_state(ctx: Ctx, run: ScopeRun, state: State, st: ActiveState, done: Done) -> None:
    """Output/global constructors, ``StepSucceeded``/``StepExited``, then the transition."""
    output = done.output
    updates: Any = None
    try:
        global_constructor = state.global_constructor
        output_constructor = state.output_constructor
        if global_constructor is not None or output_constructor is not None:
            scope = expression_scope(ctx, st, input_value=st.input, output=output)
            if global_constructor is not None:
                updates = construct(global_constructor, scope, "GlobalConstructor")
                if not isinstance(updates, dict):
                    raise StateFailure(
                        RUNTIME_ERROR_CODE, "GlobalConstructor must build an object"
                    )
            if output_constructor is not None:
                output = construct(output_constructor, scope, "OutputConstructor")
        text = size_checked(ctx.text(output), "output", st.name)
    except StateFailure as failure:
        state_failed(ctx, run, state, st, failure.code, failure.detail)
        return
    if updates:
        ex = ctx.ex
        ex.global_vars = {**ex.global_vars, **updates}
    ctx.emit_exit(st.name, st.entered_event, text)
    run.state = None
    if done.next is None:
        scope_finished(ctx, run, output)
    else:
        ctx.queue.append((run.run_id, done.next, output, text))


def state_failed(
    ctx: Ctx, run: ScopeRun, state: State, st: ActiveState, code: str, detail: str
) -> None:
    """Retry (first matching rule, per-rule attempt count), else Catch, else fail the scope."""
    rules = getattr(state, "retry", ())
    index = select_retry(rules, code)
    if index is not None and st.retry_counts[index] < rules[index].max_attempts:
        st.retry_counts[index] += 1
        st.retry_count += 1
        delay = retry_delay(rules[index], st.retry_counts[index])
        timer_id = f"{ctx.ex.name}:retry:{st.entered_event}:{st.retry_count}"
        st.phase, st.timer_id = Phase.RETRY, timer_id
        ctx.ex.timers[timer_id] = run.run_id
        ctx.command(StartTimer(timer_id, ctx.now + delay, TimerPurpose.RETRY))
        return
    ctx.emit(H.STEP_FAILED, st.name, st.entered_event, {"Error": code, "Cause": detail})
    ctx.emit(H.STEP_EXITED, st.name, st.entered_event, {})
    run.state = None
    rule = select_catch(getattr(state, "catch", ()), code)
    if rule is None or rule.next is None:
        scope_failed(ctx, run, code, detail)
        return
    value = st.input if st.input_ready else st.raw_input
    if rule.output_constructor is not None:
        scope = expression_scope(ctx, st, input_value=value, error=(code, detail))
        try:
            value = construct(rule.output_constructor, scope, "Catch.OutputConstructor")
        except StateFailure as failure:
            scope_failed(ctx, run, failure.code, failure.detail)
            return
    ctx.queue.append((run.run_id, rule.next, value, None))


def scope_finished(ctx: Ctx, run: ScopeRun, output: Any) -> None:
    """A scope ended normally (End or Succeed)."""
    ex = ctx.ex
    del ex.runs[run.run_id]
    if run.parent < 0:
        terminate(ctx, ExecutionStatus.SUCCEEDED, output=output)
        return
    parent = ctx.run(run.parent)
    st = parent.state
    assert st is not None
    state = state_of(ctx.flow, parent)
    kind = H.ITERATION_EXITED if isinstance(state, MapState) else H.BRANCH_EXITED
    ctx.emit(kind, st.name, run.open_event, {"Index": run.slot, "Output": output})
    st.results[run.slot] = output
    st.children.pop(run.slot, None)
    st.remaining -= 1
    if isinstance(state, MapState):
        start_queued(ctx, parent, state, st)
    if st.remaining == 0:
        finish_state(ctx, parent, state, st, Done(collect(state, st), next_of(state)))


def scope_failed(ctx: Ctx, run: ScopeRun, code: str, detail: str) -> None:
    """A scope ended with an uncaught error: cancel its siblings and fail the owner."""
    ex = ctx.ex
    ex.runs.pop(run.run_id, None)
    if run.parent < 0:
        terminate(ctx, ExecutionStatus.FAILED, code=code, detail=detail)
        return
    parent = ctx.run(run.parent)
    st = parent.state
    assert st is not None
    state = state_of(ctx.flow, parent)
    kind = H.ITERATION_EXITED if isinstance(state, MapState) else H.BRANCH_EXITED
    ctx.emit(kind, st.name, run.open_event, {"Index": run.slot, "Error": code, "Cause": detail})
    st.children.pop(run.slot, None)
    for child in list(st.children.values()):
        cancel_run(ctx, child)
    st.children, st.queue = {}, []
    state_failed(ctx, parent, state, st, code, detail)


def cancel_run(ctx: Ctx, run_id: int) -> None:
    """Drop a scope and everything under it, cancelling its pending task and timers."""
    run = ctx.ex.runs.pop(run_id, None)
    if run is None or run.state is None:
        return
    st = run.state
    if st.phase is Phase.TASK and ctx.ex.tasks.pop(st.task_id, None) is not None:
        ctx.command(CancelTask(st.task_id))
    for timer_id in (st.timer_id, st.timeout_timer):
        if timer_id and ctx.ex.timers.pop(timer_id, None) is not None:
            ctx.command(CancelTimer(timer_id))
    for child in list(st.children.values()):
        cancel_run(ctx, child)


def terminate(
    ctx: Ctx, status: ExecutionStatus, *, output: Any = None, code: str = "", detail: str = ""
) -> None:
    """End the execution: cancel what is pending, emit the one terminal event, complete."""
    ex = ctx.ex
    for run_id in sorted(ex.runs):
        cancel_run(ctx, run_id)
    for timer_id in list(ex.timers):
        ctx.command(CancelTimer(timer_id))
    for task_id in list(ex.tasks):
        ctx.command(CancelTask(task_id))
    ex.timers, ex.tasks, ex.runs = {}, {}, {}
    ctx.queue.clear()
    ex.status, ex.stopped_at = status, ctx.now
    if status is ExecutionStatus.SUCCEEDED:
        ex.output = output
        kind, data = H.EXECUTION_SUCCEEDED, {"Output": output}
    else:
        ex.error_code, ex.error_detail = code, detail
        kind = {
            ExecutionStatus.FAILED: H.EXECUTION_FAILED,
            ExecutionStatus.STOPPED: H.EXECUTION_STOPPED,
            ExecutionStatus.TIMED_OUT: H.EXECUTION_TIMED_OUT,
        }[status]
        data = {"Error": code, "Cause": detail}
    ctx.emit(kind, "", 1, data, terminal=True)
    ctx.command(CompleteExecution(status.value, ex.output, ex.error_code, ex.error_detail))
