"""The lifecycle every state shares, written once (reference §3.4):

``StepEntered`` (raw input) -> InputConstructor -> ``StepStarted`` (input) -> the evaluator's
``begin`` (and, while the state waits, ``resume``) -> GlobalConstructor and OutputConstructor
against the same snapshot -> ``StepSucceeded`` (output) -> ``StepExited`` -> the next state; or,
on failure, Retry (a back-off timer, then the attempt again) and, when no retry is left,
``StepFailed`` -> ``StepExited`` -> Catch (its OutputConstructor, else the failed state's input,
goes to the Catch's ``Next``) or failure of the enclosing scope. A scope that ends wakes up the
Parallel/Map owning it; a top-level scope that ends ends the execution.

A legacy step (:mod:`.steps`) has a ``data`` object that selects its input and output in place of
constructors, and merges its output into its steps list's frame before the next step (or the
end of the list, whose result is then the list's local).

States entered in one step go through a FIFO queue, so a loop of Pass/Choice states never
recurses; the per-execution event limit bounds it.
"""

from __future__ import annotations

from typing import Any

from deployer.fdl.interpreter.active import BACKOFF, ActiveState, ExecutionStatus, ScopeRun
from deployer.fdl.interpreter.commands import (
    CancelTask,
    CancelTimer,
    CompleteExecution,
    StartTimer,
    TimerPurpose,
)
from deployer.fdl.interpreter.compiled import draws, expression_scope
from deployer.fdl.interpreter.events import TimerFired
from deployer.fdl.interpreter.history import HistoryEventType as H
from deployer.fdl.interpreter.retry import retry_delay, select_catch, select_retry
from deployer.fdl.interpreter.runtime import (
    EMPTY_DETAIL,
    RUNTIME_ERROR_CODE,
    Ctx,
    Raw,
    StateFailure,
    check_globals,
    dump,
)
from deployer.fdl.interpreter.states.base import (
    ChildEnded,
    ChildFailed,
    Done,
    StateEvaluator,
    WakeEvent,
)

__all__ = ["drain", "terminate", "wake"]

_ENTERED, _STARTED = H.STEP_ENTERED, H.STEP_STARTED
_TERMINAL_EVENTS = {
    ExecutionStatus.SUCCEEDED: H.EXECUTION_SUCCEEDED,
    ExecutionStatus.FAILED: H.EXECUTION_FAILED,
    ExecutionStatus.STOPPED: H.EXECUTION_STOPPED,
    ExecutionStatus.TIMED_OUT: H.EXECUTION_TIMED_OUT,
}


def drain(ctx: Ctx) -> None:
    """Enter queued states until every scope waits or the execution ended."""
    ex, queue, running = ctx.ex, ctx.queue, ExecutionStatus.RUNNING
    while queue and ex.status is running:
        run_id, name, raw_input, text = queue.popleft()
        run = ex.runs.get(run_id)
        if run is not None and run_id not in ex.active:
            _enter(ctx, run, name, raw_input, text)


def wake(ctx: Ctx, run_id: int, event: WakeEvent) -> None:
    """Give ``event`` to the state active in ``run_id``: a due retry timer starts the next
    attempt; anything else goes to the state's evaluator."""
    ex, program = ctx.ex, ctx.program
    run, st, record = ex.runs[run_id], ex.active[run_id], ex.waiting[run_id]
    evaluator = (program.root if not run.path else program.scope_at(run.path)).states[st.name]
    if record is BACKOFF:
        if isinstance(event, TimerFired) and event.timer_id == st.retry_timer:
            _attempt(ctx, run, evaluator, st)
        return
    try:
        outcome = evaluator.resume(ctx, run, st, record, event)
    except StateFailure as failure:
        _failed(ctx, run, evaluator, st, failure)
        return
    if isinstance(outcome, Done):
        _finish(ctx, run, evaluator, st, outcome)
    elif outcome is not None:
        ex.waiting[run_id] = outcome


def _enter(ctx: Ctx, run: ScopeRun, name: str, raw_input: Any, text: Raw | None) -> None:
    """``StepEntered``, input selection, ``StepStarted``, then the first attempt."""
    program = ctx.program
    evaluator = (program.root if not run.path else program.scope_at(run.path)).states[name]
    detail = ctx.text(raw_input) if text is None else text
    entered = ctx.emit(_ENTERED, name, run.open_event, '{"Input":' + detail + "}")
    try:
        value, input_text = _select_input(ctx, run, evaluator, name, raw_input, 0, detail,
                                          entered)
    except StateFailure as failure:
        st = ActiveState(name, raw_input, entered, None, False, evaluator.no_retries, 0, "")
        _failed(ctx, run, evaluator, st, failure)
        return
    ctx.emit(_STARTED, name, entered, '{"Input":' + input_text + "}")
    st = ActiveState(name, raw_input, entered, value, True, evaluator.no_retries, 0, "")
    _begin(ctx, run, evaluator, st)


def _attempt(ctx: Ctx, run: ScopeRun, evaluator: StateEvaluator, st: ActiveState) -> None:
    """The next attempt after a retry back-off (input selection again if it had failed)."""
    if not st.input_ready:
        try:
            value, input_text = _select_input(ctx, run, evaluator, st.name, st.raw_input,
                                              st.retry_count, None, st.entered_event)
        except StateFailure as failure:
            _failed(ctx, run, evaluator, st, failure)
            return
        ctx.emit(_STARTED, st.name, st.entered_event, '{"Input":' + input_text + "}")
        st = st.with_input(value)
    _begin(ctx, run, evaluator, st)


def _select_input(ctx: Ctx, run: ScopeRun, evaluator: StateEvaluator, name: str,
                  raw_input: Any, retry_count: int, raw_text: Raw | None,
                  entered: int) -> tuple[Any, Raw]:
    """The state's input (its InputConstructor's value, else the raw input; a legacy step's
    data selects it) and its JSON text, checked against the size limit (``raw_text``, already
    known, is not checked again)."""
    if evaluator.data is not None:
        return evaluator.data.select_input(ctx, run, name, raw_input, entered)
    constructor = evaluator.input_constructor
    if constructor is None:
        return raw_input, ctx.sized(raw_input, "input", name) if raw_text is None else raw_text
    scope = expression_scope(ctx, name, raw_input, retry_count, "", draws=constructor.draws)
    value = constructor.build(scope, "InputConstructor")
    return value, ctx.sized(value, "input", name)


def _begin(ctx: Ctx, run: ScopeRun, evaluator: StateEvaluator, st: ActiveState) -> None:
    try:
        outcome = evaluator.begin(ctx, run, st)
    except StateFailure as failure:
        _failed(ctx, run, evaluator, st, failure)
        return
    if isinstance(outcome, Done):
        _finish(ctx, run, evaluator, st, outcome)
    else:
        ex = ctx.ex
        ex.active[run.run_id], ex.waiting[run.run_id] = st, outcome


def _finish(ctx: Ctx, run: ScopeRun, evaluator: StateEvaluator, st: ActiveState,
            done: Done) -> None:
    """Output selection, ``StepSucceeded``/``StepExited``, then the next state."""
    output, updates, ex = done.output, None, ctx.ex
    global_constructor = evaluator.global_constructor
    output_constructor = evaluator.output_constructor
    data = evaluator.data
    try:
        if data is not None:
            output = data.select_output(ctx, run, st, output)
        elif global_constructor is not None or output_constructor is not None:
            token = evaluator.task_token(ex.waiting.get(run.run_id))
            scope = expression_scope(ctx, st.name, st.input, st.retry_count, token,
                                     draws=draws(global_constructor, output_constructor),
                                     output=output)
            if global_constructor is not None:
                updates = global_constructor.build(scope, "GlobalConstructor")
                if not isinstance(updates, dict):
                    raise StateFailure(RUNTIME_ERROR_CODE,
                                       "GlobalConstructor must build an object")
                check_globals(ctx, updates, st.name)
            if output_constructor is not None:
                output = output_constructor.build(scope, "OutputConstructor")
        text = ctx.sized(output, "output", st.name)
    except StateFailure as failure:
        _failed(ctx, run, evaluator, st, failure)
        return
    if updates:
        ex.global_vars = {**ex.global_vars, **updates}
    ctx.emit_exit(st.name, st.entered_event, text)
    ex.active.pop(run.run_id, None)
    ex.waiting.pop(run.run_id, None)
    if data is not None:
        try:
            handed = data.hand_on(ctx, run, output, done.next is None)
        except StateFailure as failure:
            _scope_failed(ctx, run, failure.code, failure.detail)
            return
        if done.next is None:
            _scope_ended(ctx, run, handed)
        else:
            ctx.queue.append((run.run_id, done.next, handed, None))
    elif done.next is None:
        _scope_ended(ctx, run, output)
    else:
        ctx.queue.append((run.run_id, done.next, output, text))


def _failed(ctx: Ctx, run: ScopeRun, evaluator: StateEvaluator, st: ActiveState,
            failure: StateFailure) -> None:
    """Retry (first matching rule, per-rule attempt count), else Catch, else fail the scope."""
    ex, code, detail = ctx.ex, failure.code, failure.detail
    rules = evaluator.retry
    index = select_retry(rules, code)
    if index is not None and st.retry_counts[index] < rules[index].max_attempts:
        timer_id = f"{ex.name}:retry:{st.entered_event}:{st.retry_count + 1}"
        ex.active[run.run_id] = st.backing_off(index, timer_id)
        ex.waiting[run.run_id] = BACKOFF
        ex.timers[timer_id] = run.run_id
        delay = retry_delay(rules[index], st.retry_counts[index] + 1)
        ctx.commands.append(StartTimer(timer_id, ctx.now + delay, TimerPurpose.RETRY))
        return
    ctx.emit(H.STEP_FAILED, st.name, st.entered_event, dump({"Error": code, "Cause": detail}))
    ctx.emit(H.STEP_EXITED, st.name, st.entered_event, EMPTY_DETAIL)
    ex.active.pop(run.run_id, None)
    record = ex.waiting.pop(run.run_id, None)
    if failure.left is not None:
        record = failure.left
    rule = select_catch(evaluator.catch, code)
    if rule is None or rule.next is None:
        _scope_failed(ctx, run, code, detail)
        return
    value = st.current_input
    if evaluator.data is not None:
        try:
            value = evaluator.data.caught(ctx, run, st, code, detail)
        except StateFailure as caught:
            _scope_failed(ctx, run, caught.code, caught.detail)
            return
    elif rule.output_constructor is not None:
        scope = expression_scope(ctx, st.name, value, st.retry_count,
                                 evaluator.task_token(record),
                                 draws=rule.output_constructor.draws, error=(code, detail))
        try:
            value = rule.output_constructor.build(scope, "Catch.OutputConstructor")
        except StateFailure as caught:
            _scope_failed(ctx, run, caught.code, caught.detail)
            return
    ctx.queue.append((run.run_id, rule.next, value, None))


def _scope_ended(ctx: Ctx, run: ScopeRun, output: Any) -> None:
    """A scope ended normally (End or Succeed). A legacy flow's own output mappings make the
    execution's output from its top list's input and local."""
    current = ctx.ex.runs.pop(run.run_id)
    if run.parent >= 0:
        wake(ctx, run.parent, ChildEnded(run, output))
        return
    closing = ctx.program.closing
    if closing is not None:
        try:
            output = closing(ctx, current, output)
        except StateFailure as failure:
            terminate(ctx, ExecutionStatus.FAILED, code=failure.code, detail=failure.detail)
            return
    terminate(ctx, ExecutionStatus.SUCCEEDED, output=output)


def _scope_failed(ctx: Ctx, run: ScopeRun, code: str, detail: str) -> None:
    """A scope ended with an uncaught error: its owner fails (or the execution)."""
    ctx.ex.runs.pop(run.run_id, None)
    if run.parent < 0:
        terminate(ctx, ExecutionStatus.FAILED, code=code, detail=detail)
    else:
        wake(ctx, run.parent, ChildFailed(run, code, detail))


def terminate(ctx: Ctx, status: ExecutionStatus, *, output: Any = None, code: str = "",
              detail: str = "") -> None:
    """End the execution: cancel what is pending, emit the one terminal event, complete."""
    ex = ctx.ex
    for run_id in sorted(ex.runs):
        ctx.cancel_run(run_id)
    ctx.commands.extend(CancelTimer(timer_id) for timer_id in ex.timers)
    ctx.commands.extend(CancelTask(task_id) for task_id in ex.tasks)
    ex.timers, ex.tasks, ex.runs, ex.active, ex.waiting = {}, {}, {}, {}, {}
    ctx.queue.clear()
    ex.status, ex.stopped_at = status, ctx.now
    if status is ExecutionStatus.SUCCEEDED:
        ex.output = output
        ctx.emit(H.EXECUTION_SUCCEEDED, "", 1, dump({"Output": output}), terminal=True)
    else:
        ex.error_code, ex.error_detail = code, detail
        ctx.emit(_TERMINAL_EVENTS[status], "", 1, dump({"Error": code, "Cause": detail}),
                 terminal=True)
    ctx.commands.append(CompleteExecution(status.value, ex.output, ex.error_code,
                                          ex.error_detail))
