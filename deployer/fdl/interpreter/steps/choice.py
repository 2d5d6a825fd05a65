"""The legacy choice step: the first option whose condition holds over the step's input (else the
default) runs its inline steps, if any, then its ``goto``, if any, else the step after the
choice. With no option holding and no default, the choice ends and the next step runs.

Inline steps are a steps list of their own, opened like a Parallel branch (``BranchEntered`` /
``BranchExited``, index: the option's, the default's is ``len(choices)``); the choice's ``$local``
is that list's local (empty when the arm has no steps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deployer.fdl.interpreter.active import ActiveState, Frame, ScopeRun, Waiting
from deployer.fdl.interpreter.history import HistoryEventType
from deployer.fdl.interpreter.runtime import Ctx, StateFailure, dump
from deployer.fdl.interpreter.states.base import (
    ChildEnded,
    ChildFailed,
    Done,
    StateOutcome,
    WakeEvent,
)
from deployer.fdl.interpreter.states.children import (
    ChildScopes,
    ChildScopesEvaluator,
    open_scope,
)
from deployer.fdl.legacy.conditions import Condition, condition_holds, parse_condition
from deployer.fdl.legacy.errors import RUNTIME_CODE, LegacyEvaluationError, PathSyntaxError
from deployer.fdl.syntax.positions import Expr

if TYPE_CHECKING:
    from deployer.fdl.interpreter.program import CompiledScope

__all__ = ["Arm", "LegacyChoiceEvaluator"]


@dataclass(frozen=True, slots=True)
class Arm:
    """An option (``condition`` set; ``error`` when its text does not parse) or the default
    (no condition), with its inline steps (``scope``) and ``goto``."""

    where: str
    condition: Condition | None
    error: str
    scope: CompiledScope | None
    goto: str | None

    @classmethod
    def of(cls, where: str, condition: Expr | None, scope: CompiledScope | None,
           goto: str | None, *, default: bool) -> Arm:
        if default or condition is None:
            return cls(where, None, "" if default else "no condition", scope, goto)
        try:
            return cls(where, parse_condition(condition.text), "", scope, goto)
        except PathSyntaxError as exc:
            return cls(where, None, str(exc), scope, goto)

    def holds(self, value: Any) -> bool:
        if self.error:
            raise StateFailure(RUNTIME_CODE, f"{self.where}: {self.error}")
        if self.condition is None:
            return True
        try:
            return condition_holds(self.condition, value)
        except LegacyEvaluationError as exc:
            raise StateFailure(exc.code, f"{self.where}: {exc.message}") from None


@dataclass(frozen=True, slots=True)
class LegacyChoiceEvaluator(ChildScopesEvaluator):
    """``arms``: the options, then the default when there is one."""

    arms: tuple[Arm, ...]

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> StateOutcome:
        for index, arm in enumerate(self.arms):
            if arm.holds(st.input):
                target = arm.goto if arm.goto is not None else self.next
                if arm.scope is None:
                    return Done({}, target)
                child = open_scope(ctx, run, st, index, arm.scope.start_at, st.input,
                                   iteration=False, frame=Frame(st.input, {}))
                return ChildScopes({index: child}, [], 1)
        return Done({}, self.next)

    def resume(self, ctx: Ctx, run: ScopeRun, st: ActiveState, record: Waiting,
               wake: WakeEvent) -> StateOutcome | None:
        if not isinstance(record, ChildScopes):
            return None
        if isinstance(wake, ChildEnded):
            child = wake.run
            ctx.emit(HistoryEventType.BRANCH_EXITED, self.name, child.open_event,
                     dump({"Index": child.slot, "Output": wake.output}))
            arm = self.arms[child.slot]
            return Done(wake.output, arm.goto if arm.goto is not None else self.next)
        if isinstance(wake, ChildFailed):
            child = wake.run
            ctx.emit(HistoryEventType.BRANCH_EXITED, self.name, child.open_event,
                     dump({"Index": child.slot, "Error": wake.code, "Cause": wake.detail}))
            raise StateFailure(wake.code, wake.detail)
        return None

    def child_scope(self, index: int) -> CompiledScope:
        scope = self.arms[index].scope if 0 <= index < len(self.arms) else None
        if scope is None:
            raise KeyError(self.name)
        return scope
