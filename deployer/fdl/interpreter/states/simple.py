"""Pass, Wait, Choice, Succeed and Fail."""

from __future__ import annotations

from deployer.fdl.ast import ChoiceState, FailState, PassState, SucceedState, WaitState
from deployer.fdl.interpreter.commands import TimerPurpose
from deployer.fdl.interpreter.model import ActiveState, Phase, ScopeRun
from deployer.fdl.interpreter.runtime import (
    RUNTIME_ERROR_CODE,
    Ctx,
    Done,
    StateFailure,
    evaluate_expr,
    expression_scope,
    start_timer,
)
from deployer.fdl.limits import WAIT_LIMITS
from deployer.fdl.values import kind_name

__all__ = ["begin_choice", "begin_fail", "begin_pass", "begin_succeed", "begin_wait"]



def begin_pass(ctx: Ctx, run: ScopeRun, state: PassState, st: ActiveState) -> Done:
    """Output = the (constructed) input."""
    return Done(st.input, None if state.end else state.next)


def begin_succeed(ctx: Ctx, run: ScopeRun, state: SucceedState, st: ActiveState) -> Done:
    """End the scope with the input as output."""
    return Done(st.input, None)


def begin_fail(ctx: Ctx, run: ScopeRun, state: FailState, st: ActiveState) -> Done:
    """Raise ``{Code, Detail}`` in the scope (no Retry/Catch on Fail itself)."""
    raise StateFailure(state.code, state.detail)


def begin_choice(ctx: Ctx, run: ScopeRun, state: ChoiceState, st: ActiveState) -> Done:
    """First branch whose condition is true, else Default; a non-boolean condition fails."""
    scope = expression_scope(ctx, st, input_value=st.input)
    for index, branch in enumerate(state.branches):
        if branch.condition is None:
            continue
        where = f"Branches[{index}].Condition"
        value = evaluate_expr(branch.condition, scope, where)
        if not isinstance(value, bool):
            raise StateFailure(
                RUNTIME_ERROR_CODE,
                f"{where} `{branch.condition.text}` gave {kind_name(value)}, not a boolean",
            )
        if value:
            return Done(st.input, branch.next)
    if state.default is None:
        raise StateFailure(RUNTIME_ERROR_CODE, "no branch matched and there is no Default")
    return Done(st.input, state.default)


def begin_wait(ctx: Ctx, run: ScopeRun, state: WaitState, st: ActiveState) -> None:
    """Start a wait timer for ``Seconds`` (or the value of ``Seconds.$``)."""
    if state.seconds_expr is not None:
        scope = expression_scope(ctx, st, input_value=st.input)
        value = evaluate_expr(state.seconds_expr, scope, "Seconds.$")
    else:
        value = state.seconds
    low, high = WAIT_LIMITS.get(ctx.ex.execution_mode, WAIT_LIMITS["Standard"])
    seconds = whole_number(value)
    if seconds is None or not low <= seconds <= high:
        raise StateFailure(
            RUNTIME_ERROR_CODE,
            f"Seconds must be a whole number from {low} to {high} in "
            f"{ctx.ex.execution_mode} mode, got {value!r}",
        )
    timer_id = f"{ctx.ex.name}:wait:{st.entered_event}"
    st.phase = Phase.WAIT
    st.timer_id = timer_id
    ctx.ex.timers[timer_id] = run.run_id
    ctx.commands.append(start_timer(timer_id, ctx.now + seconds, TimerPurpose.WAIT))
    return None


def whole_number(value: object) -> int | None:
    """``value`` as an int when it is a whole JSON number (not a bool), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None
