"""Pass: hand the (constructed) input on."""

from __future__ import annotations

from dataclasses import dataclass

from deployer.fdl.interpreter.active import ActiveState, ScopeRun
from deployer.fdl.interpreter.runtime import Ctx
from deployer.fdl.interpreter.states.base import Done, Site, StateEvaluator
from deployer.fdl.syntax.ast import PassState

__all__ = ["PassEvaluator"]


@dataclass(frozen=True, slots=True)
class PassEvaluator(StateEvaluator):
    """Its default output is its input."""

    @classmethod
    def compile(cls, state: PassState, site: Site) -> PassEvaluator:
        return cls(**cls.lifecycle_of(state))

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> Done:
        return Done(st.input, self.next)
