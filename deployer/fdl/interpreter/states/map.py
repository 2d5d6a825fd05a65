"""Map (inline): run the processor once per element of ``ItemsPath``; output
``{"Items": [...]}`` in input order.

At most ``MaxConcurrency`` iterations run at once (40 when absent, 0 for no limit); the
others are queued and start in input order as running ones end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from deployer.fdl.expressions.values import kind_name
from deployer.fdl.interpreter.active import ActiveState, ScopeRun
from deployer.fdl.interpreter.compiled import CompiledExpression, expression_scope
from deployer.fdl.interpreter.history import HistoryEventType
from deployer.fdl.interpreter.runtime import RUNTIME_ERROR_CODE, Ctx, StateFailure
from deployer.fdl.interpreter.states.base import Done, Site, StateEvaluator
from deployer.fdl.interpreter.states.children import (
    ChildScopes,
    ChildScopesEvaluator,
    open_scope,
)
from deployer.fdl.interpreter.states.distributed_map import DistributedMapEvaluator
from deployer.fdl.syntax.ast import MapState

if TYPE_CHECKING:
    from deployer.fdl.interpreter.program import CompiledScope

__all__ = ["DEFAULT_MAP_CONCURRENCY", "MapEvaluator"]

DEFAULT_MAP_CONCURRENCY = 40


@dataclass(frozen=True, slots=True)
class MapEvaluator(ChildScopesEvaluator):
    """``ItemsPath`` must give an array; an empty one outputs ``{"Items": []}`` at once."""

    items_path: CompiledExpression | None
    processor: CompiledScope | None
    max_concurrency: int | None
    exited = HistoryEventType.ITERATION_EXITED

    @classmethod
    def compile(cls, state: MapState, site: Site) -> StateEvaluator:
        """The inline Map's evaluator, or the distributed one's (``ProcessorConfig``)."""
        if state.distributed is not None:
            return DistributedMapEvaluator.compile(state, site)
        return cls(
            **cls.lifecycle_of(state),
            items_path=None if state.items_path is None
            else CompiledExpression.of(state.items_path),
            processor=None if state.processor is None else site.nested(state.name, state.processor),
            max_concurrency=state.max_concurrency,
        )

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> Done | ChildScopes:
        if self.items_path is None or self.processor is None:
            raise StateFailure(RUNTIME_ERROR_CODE, "Map needs ItemsPath and Processor")
        scope = expression_scope(ctx, self.name, st.input, st.retry_count, "",
                                 draws=self.items_path.draws)
        items = self.items_path.evaluate(scope, "ItemsPath")
        if not isinstance(items, list):
            raise StateFailure(
                RUNTIME_ERROR_CODE,
                f"ItemsPath `{self.items_path.text}` gave {kind_name(items)}, not an array",
            )
        count = len(items)
        if not count:
            return Done({"Items": []}, self.next)
        limit = DEFAULT_MAP_CONCURRENCY if self.max_concurrency is None else self.max_concurrency
        if limit <= 0:
            limit = count
        start_at = self.processor.start_at
        children = {
            index: open_scope(ctx, run, st, index, start_at, items[index], iteration=True)
            for index in range(min(limit, count))
        }
        return ChildScopes(children, [None] * count, count, tuple(items),
                           tuple(range(limit, count)))

    def start_queued(self, ctx: Ctx, run: ScopeRun, st: ActiveState,
                     record: ChildScopes) -> int | None:
        if not record.queue or self.processor is None:
            return None
        slot = record.queue[0]
        return open_scope(ctx, run, st, slot, self.processor.start_at, record.items[slot],
                          iteration=True)

    def collect(self, results: Sequence[Any]) -> Any:
        return {"Items": list(results)}

    def child_scope(self, index: int) -> CompiledScope:
        if self.processor is None:
            raise KeyError(self.name)
        return self.processor
