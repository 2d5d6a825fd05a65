"""The legacy ``parallel`` and ``foreach`` steps: the SpecVersion v1 Parallel and Map machinery
(:mod:`deployer.fdl.interpreter.states.children`) with steps lists that carry frames.

A parallel runs every branch on the step's input, each branch with its own local; a foreach
runs its steps once per element of ``collection`` (a path into the step's input, which must
give a list), each iteration's input being the step's input plus the element under ``item``
and, when named, its position under ``index``; at most 100 iterations run at once, the others
start in order as running ones end. Either step's ``$local`` is the list of its branches' or
iterations' locals, in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deployer.fdl.interpreter.active import ActiveState, Frame, ScopeRun
from deployer.fdl.interpreter.runtime import Ctx, StateFailure
from deployer.fdl.interpreter.states.base import Done
from deployer.fdl.interpreter.states.children import ChildScopes, open_scope
from deployer.fdl.interpreter.states.map import MapEvaluator
from deployer.fdl.interpreter.states.parallel import ParallelEvaluator
from deployer.fdl.interpreter.steps.data import kind_of
from deployer.fdl.legacy.errors import RUNTIME_CODE, PathSyntaxError
from deployer.fdl.legacy.paths import Path, evaluate_path
from deployer.fdl.limits import LEGACY_FOREACH_CONCURRENCY

if TYPE_CHECKING:
    from deployer.fdl.interpreter.program import CompiledScope

__all__ = ["LegacyForeachEvaluator", "LegacyParallelEvaluator"]


@dataclass(frozen=True, slots=True)
class LegacyParallelEvaluator(ParallelEvaluator):
    """Branches start in order within the step."""

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> Done | ChildScopes:
        count = len(self.branches)
        if count == 0:
            return Done([], self.next)
        children = {
            index: open_scope(ctx, run, st, index, branch.start_at, st.input, iteration=False,
                              frame=Frame(st.input, {}))
            for index, branch in enumerate(self.branches)
        }
        return ChildScopes(children, [None] * count, count)

    def collect(self, results: Sequence[Any]) -> Any:
        return list(results)


@dataclass(frozen=True, slots=True)
class LegacyForeachEvaluator(MapEvaluator):
    """``collection``: the compiled path (or its syntax error); ``item`` / ``index``: the keys
    of the iteration input. The v1 ``items_path`` stays None."""

    collection: Path | PathSyntaxError | None
    item: str
    index: str | None

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> Done | ChildScopes:
        if self.processor is None or self.collection is None:
            raise StateFailure(RUNTIME_CODE, "foreach needs iterationMapping and steps")
        if isinstance(self.collection, PathSyntaxError):
            raise StateFailure(RUNTIME_CODE, f"collection: {self.collection}")
        items = evaluate_path(self.collection, {"": st.input})
        if not isinstance(items, list):
            raise StateFailure(RUNTIME_CODE, f"collection `{self.collection.text}` gave "
                               f"{kind_of(items)}, not a list")
        count = len(items)
        if not count:
            return Done([], self.next)
        limit = min(count, LEGACY_FOREACH_CONCURRENCY)
        children = {slot: self._open(ctx, run, st, slot, items[slot]) for slot in range(limit)}
        return ChildScopes(children, [None] * count, count, tuple(items),
                           tuple(range(limit, count)))

    def _open(self, ctx: Ctx, run: ScopeRun, st: ActiveState, slot: int, item: Any) -> int:
        assert self.processor is not None
        given = {**st.input, self.item: item}
        if self.index:
            given[self.index] = slot
        return open_scope(ctx, run, st, slot, self.processor.start_at, given, iteration=True,
                          frame=Frame(given, {}))

    def start_queued(self, ctx: Ctx, run: ScopeRun, st: ActiveState,
                     record: ChildScopes) -> int | None:
        if not record.queue:
            return None
        slot = record.queue[0]
        return self._open(ctx, run, st, slot, record.items[slot])

    def collect(self, results: Sequence[Any]) -> Any:
        return list(results)

    def child_scope(self, index: int) -> CompiledScope:
        if self.processor is None:
            raise KeyError(self.name)
        return self.processor
