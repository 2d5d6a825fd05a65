"""Succeed: end the scope with the input as output."""

from __future__ import annotations

from dataclasses import dataclass

from deployer.fdl.ast import SucceedState
from deployer.fdl.interpreter.active import ActiveState, ScopeRun
from deployer.fdl.interpreter.runtime import Ctx
from deployer.fdl.interpreter.states.base import Done, Site, StateEvaluator

__all__ = ["SucceedEvaluator"]


@dataclass(frozen=True, slots=True)
class SucceedEvaluator(StateEvaluator):
    """Ends only its own scope (a Parallel branch, a Map iteration or the execution)."""

    @classmethod
    def compile(cls, state: SucceedState, site: Site) -> SucceedEvaluator:
        return cls(**cls.lifecycle_of(state))

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> Done:
        return Done(st.input, None)
