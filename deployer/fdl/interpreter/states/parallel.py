"""Parallel: run every branch at once on the state's input; output ``{"Branch0": ...}``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deployer.fdl.interpreter.active import ActiveState, ScopeRun
from deployer.fdl.interpreter.runtime import Ctx
from deployer.fdl.interpreter.states.base import Done, Site
from deployer.fdl.interpreter.states.children import (
    ChildScopes,
    ChildScopesEvaluator,
    open_scope,
)
from deployer.fdl.syntax.ast import ParallelState

if TYPE_CHECKING:
    from deployer.fdl.interpreter.program import CompiledScope

__all__ = ["ParallelEvaluator"]


@dataclass(frozen=True, slots=True)
class ParallelEvaluator(ChildScopesEvaluator):
    """Branches start in branch order within the step; a Parallel without branches outputs
    ``{}`` at once."""

    branches: tuple[CompiledScope, ...]

    @classmethod
    def compile(cls, state: ParallelState, site: Site) -> ParallelEvaluator:
        return cls(**cls.lifecycle_of(state),
                   branches=tuple(site.nested(state.name, branch) for branch in state.branches))

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> Done | ChildScopes:
        count = len(self.branches)
        if count == 0:
            return Done({}, self.next)
        children = {
            index: open_scope(ctx, run, st, index, branch.start_at, st.input, iteration=False)
            for index, branch in enumerate(self.branches)
        }
        return ChildScopes(children, [None] * count, count)

    def collect(self, results: Sequence[Any]) -> Any:
        return {f"Branch{index}": result for index, result in enumerate(results)}

    def child_scope(self, index: int) -> CompiledScope:
        return self.branches[index]
