"""The legacy steps that call nothing: ``pass``, ``wait``, ``succeed`` and ``fail``.

Their ``$local`` is empty (a pass's output comes from its output mappings). A wait pauses for
``duration`` seconds or until ``timestamp`` (RFC 3339), each a literal or a path into the step's
input; 0 seconds, or a time already past, ends it at once; more than two days fails it. A
succeed ends its steps list; a fail fails it with ``error`` and ``cause``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from deployer.fdl.interpreter.active import ActiveState, ScopeRun, Waiting
from deployer.fdl.interpreter.commands import StartTimer, TimerPurpose
from deployer.fdl.interpreter.events import TimerFired
from deployer.fdl.interpreter.runtime import Ctx, StateFailure
from deployer.fdl.interpreter.states.base import Done, StateEvaluator, WakeEvent
from deployer.fdl.interpreter.states.wait import WaitEvaluator, WaitTimer, whole_number
from deployer.fdl.interpreter.steps.data import kind_of
from deployer.fdl.legacy.checks import rfc3339_seconds
from deployer.fdl.legacy.errors import RUNTIME_CODE, PathSyntaxError
from deployer.fdl.legacy.paths import Path, evaluate_path, parse_path
from deployer.fdl.limits import LEGACY_WAIT_SECONDS
from deployer.fdl.syntax.positions import Expr

__all__ = ["LegacyFailEvaluator", "LegacyPassEvaluator", "LegacySucceedEvaluator",
           "LegacyWaitEvaluator", "compile_when"]


@dataclass(frozen=True, slots=True)
class LegacyPassEvaluator(StateEvaluator):
    """Its ``$local`` is empty."""

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> Done:
        return Done({}, self.next)


@dataclass(frozen=True, slots=True)
class LegacySucceedEvaluator(StateEvaluator):
    """Ends its steps list."""

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> Done:
        return Done({}, None)


@dataclass(frozen=True, slots=True)
class LegacyFailEvaluator(StateEvaluator):
    """Fails its steps list, and so its parent step, up to a catch or the flow."""

    error: str
    cause: str

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> Done:
        raise StateFailure(self.error, self.cause)


#: A wait's compiled ``duration`` or ``timestamp``: a literal, a path, or a path's syntax error.
When = int | str | Path | PathSyntaxError | None


def compile_when(value: int | str | Expr | None) -> When:
    """A literal as is; a path parsed (its syntax error kept, to fail the step when it runs)."""
    if not isinstance(value, Expr):
        return value
    try:
        return parse_path(value.text)
    except PathSyntaxError as exc:
        return exc


@dataclass(frozen=True, slots=True)
class LegacyWaitEvaluator(WaitEvaluator):
    """``duration`` or ``timestamp`` (the SpecVersion v1 ``seconds`` fields stay None)."""

    duration: When
    timestamp: When

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> Any:
        ex = ctx.ex
        fire_at = self._fire_at(ctx, st.input)
        if fire_at <= ctx.now:
            return Done({}, self.next)
        if fire_at - ctx.now > LEGACY_WAIT_SECONDS:
            raise StateFailure(RUNTIME_CODE, f"wait {self.name!r} would last "
                               f"{fire_at - ctx.now:.0f} seconds; at most "
                               f"{LEGACY_WAIT_SECONDS} (two days)")
        timer_id = f"{ex.name}:wait:{st.entered_event}"
        ex.timers[timer_id] = run.run_id
        ctx.commands.append(StartTimer(timer_id, fire_at, TimerPurpose.WAIT))
        return WaitTimer(timer_id)

    def _fire_at(self, ctx: Ctx, step_input: Any) -> float:
        if self.timestamp is not None:
            text = self._value(self.timestamp, step_input)
            moment = rfc3339_seconds(text) if isinstance(text, str) else None
            if moment is None:
                raise StateFailure(RUNTIME_CODE, f"timestamp of wait {self.name!r} is "
                                   f"{text!r}, not an RFC 3339 time")
            return moment
        value = self._value(self.duration, step_input)
        seconds = whole_number(value)
        if seconds is None or seconds < 0:
            raise StateFailure(RUNTIME_CODE, f"duration of wait {self.name!r} is "
                               f"{kind_of(value)} {value!r}, not a whole number of seconds")
        return ctx.now + seconds

    def _value(self, when: When, step_input: Any) -> Any:
        if isinstance(when, PathSyntaxError):
            raise StateFailure(RUNTIME_CODE, str(when))
        if isinstance(when, Path):
            return evaluate_path(when, {"": step_input})
        return when

    def resume(self, ctx: Ctx, run: ScopeRun, st: ActiveState, record: Waiting,
               wake: WakeEvent) -> Done | None:
        if isinstance(wake, TimerFired) and isinstance(record, WaitTimer) \
                and wake.timer_id == record.timer_id:
            return Done({}, self.next)
        return None
