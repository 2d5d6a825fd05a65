"""Fail: fail the scope with ``{Code, Detail}`` (a Fail state has no Retry or Catch)."""

from __future__ import annotations

from dataclasses import dataclass

from deployer.fdl.interpreter.active import ActiveState, ScopeRun
from deployer.fdl.interpreter.runtime import Ctx, StateFailure
from deployer.fdl.interpreter.states.base import Done, Site, StateEvaluator
from deployer.fdl.syntax.ast import FailState

__all__ = ["FailEvaluator"]


@dataclass(frozen=True, slots=True)
class FailEvaluator(StateEvaluator):
    """The enclosing Parallel/Map fails with the same error, so its Retry/Catch apply."""

    code: str
    detail: str

    @classmethod
    def compile(cls, state: FailState, site: Site) -> FailEvaluator:
        return cls(**cls.lifecycle_of(state), code=state.code, detail=state.detail)

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> Done:
        raise StateFailure(self.code, self.detail)
