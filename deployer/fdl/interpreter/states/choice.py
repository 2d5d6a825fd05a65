"""Choice: go to the first branch whose condition holds, else to ``Default``."""

from __future__ import annotations

from dataclasses import dataclass

from deployer.fdl.expressions.values import kind_name
from deployer.fdl.interpreter.active import ActiveState, ScopeRun
from deployer.fdl.interpreter.compiled import CompiledExpression, draws, expression_scope
from deployer.fdl.interpreter.runtime import RUNTIME_ERROR_CODE, Ctx, StateFailure
from deployer.fdl.interpreter.states.base import Done, Site, StateEvaluator
from deployer.fdl.syntax.ast import ChoiceState

__all__ = ["ChoiceEvaluator"]


@dataclass(frozen=True, slots=True)
class Branch:
    """A branch with a condition: where it is written (for messages), the condition, ``Next``."""

    where: str
    condition: CompiledExpression
    next: str | None


@dataclass(frozen=True, slots=True)
class ChoiceEvaluator(StateEvaluator):
    """A condition that is not a boolean fails the state, and so does no match without a
    Default. A Choice may carry Global/OutputConstructors; they apply as on any state."""

    branches: tuple[Branch, ...]
    default: str | None
    draws: bool

    @classmethod
    def compile(cls, state: ChoiceState, site: Site) -> ChoiceEvaluator:
        branches = tuple(
            Branch(f"Branches[{index}].Condition", CompiledExpression.of(branch.condition),
                   branch.next)
            for index, branch in enumerate(state.branches) if branch.condition is not None
        )
        return cls(**cls.lifecycle_of(state), branches=branches, default=state.default,
                   draws=draws(*(branch.condition for branch in branches)))

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> Done:
        scope = expression_scope(ctx, self.name, st.input, st.retry_count, "", draws=self.draws)
        for branch in self.branches:
            value = branch.condition.evaluate(scope, branch.where)
            if value is True:
                return Done(st.input, branch.next)
            if value is not False:
                raise StateFailure(
                    RUNTIME_ERROR_CODE,
                    f"{branch.where} `{branch.condition.text}` gave {kind_name(value)}, "
                    "not a boolean",
                )
        if self.default is None:
            raise StateFailure(RUNTIME_ERROR_CODE, "no branch matched and there is no Default")
        return Done(st.input, self.default)
