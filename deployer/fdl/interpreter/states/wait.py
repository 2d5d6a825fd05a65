"""Wait: pause for ``Seconds`` (or the value of ``Seconds.$``) on a timer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from deployer.fdl.interpreter.active import ActiveState, ScopeRun, Waiting
from deployer.fdl.interpreter.commands import CancelTimer, StartTimer, TimerPurpose
from deployer.fdl.interpreter.compiled import CompiledExpression, expression_scope
from deployer.fdl.interpreter.events import TimerFired
from deployer.fdl.interpreter.runtime import RUNTIME_ERROR_CODE, Ctx, StateFailure
from deployer.fdl.interpreter.states.base import Done, Site, StateEvaluator, WakeEvent
from deployer.fdl.limits import WAIT_LIMITS
from deployer.fdl.syntax.ast import WaitState

__all__ = ["WAIT_PHASE", "WaitEvaluator", "WaitTimer", "whole_number"]


#: The stored phase of a waiting Wait.
WAIT_PHASE = "wait"


class WaitTimer(NamedTuple):
    """A Wait waits for its timer."""

    timer_id: str

    def stored_fields(self) -> dict[str, Any]:
        return {"phase": WAIT_PHASE, "timer_id": self.timer_id}

    @classmethod
    def from_stored(cls, data: dict[str, Any]) -> WaitTimer:
        return cls(str(data["timer_id"]))


@dataclass(frozen=True, slots=True)
class WaitEvaluator(StateEvaluator):
    """``Seconds`` must be a whole number within the execution mode's limits (1-300 s
    Standard, 1-20 s Express); otherwise the state fails."""

    seconds: int | None
    seconds_expr: CompiledExpression | None

    @classmethod
    def compile(cls, state: WaitState, site: Site) -> WaitEvaluator:
        expr = None if state.seconds_expr is None else CompiledExpression.of(state.seconds_expr)
        return cls(**cls.lifecycle_of(state), seconds=state.seconds, seconds_expr=expr)

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> WaitTimer:
        ex = ctx.ex
        value: object = self.seconds
        if self.seconds_expr is not None:
            scope = expression_scope(ctx, self.name, st.input, st.retry_count, "",
                                     draws=self.seconds_expr.draws)
            value = self.seconds_expr.evaluate(scope, "Seconds.$")
        low, high = WAIT_LIMITS.get(ex.execution_mode, WAIT_LIMITS["Standard"])
        seconds = whole_number(value)
        if seconds is None or not low <= seconds <= high:
            raise StateFailure(
                RUNTIME_ERROR_CODE,
                f"Seconds must be a whole number from {low} to {high} in "
                f"{ex.execution_mode} mode, got {value!r}",
            )
        timer_id = f"{ex.name}:wait:{st.entered_event}"
        ex.timers[timer_id] = run.run_id
        ctx.commands.append(StartTimer(timer_id, ctx.now + seconds, TimerPurpose.WAIT))
        return WaitTimer(timer_id)

    def resume(self, ctx: Ctx, run: ScopeRun, st: ActiveState, record: Waiting,
               wake: WakeEvent) -> Done | None:
        if isinstance(wake, TimerFired) and isinstance(record, WaitTimer) \
                and wake.timer_id == record.timer_id:
            return Done(st.input, self.next)
        return None

    def cancel(self, ctx: Ctx, record: Waiting) -> None:
        assert isinstance(record, WaitTimer)
        if ctx.ex.timers.pop(record.timer_id, None) is not None:
            ctx.commands.append(CancelTimer(record.timer_id))


def whole_number(value: object) -> int | None:
    """``value`` as an int when it is a whole JSON number (not a bool), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None
