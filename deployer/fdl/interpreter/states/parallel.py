"""Parallel and (inline) Map: run child scopes, collect their outputs in order.

A Parallel starts every branch at once; a Map starts at most ``MaxConcurrency`` iterations
(default 40, 0 = no limit) and queues the rest, starting the next queued item whenever one
finishes. Child scopes are :class:`~deployer.fdl.interpreter.model.ScopeRun` entries; their
completion is handled by :mod:`deployer.fdl.interpreter.lifecycle`.
"""

from __future__ import annotations

from typing import Any

from deployer.fdl.ast import MapState, ParallelState, State
from deployer.fdl.interpreter.history import HistoryEventType as H
from deployer.fdl.interpreter.model import ActiveState, Phase, ScopeRun
from deployer.fdl.interpreter.runtime import (
    RUNTIME_ERROR_CODE,
    Ctx,
    Done,
    StateFailure,
    evaluate_expr,
    expression_scope,
    next_of,
)
from deployer.fdl.values import kind_name

__all__ = ["DEFAULT_MAP_CONCURRENCY", "begin_map", "begin_parallel", "collect", "start_child"]

DEFAULT_MAP_CONCURRENCY = 40


def begin_parallel(ctx: Ctx, run: ScopeRun, state: ParallelState, st: ActiveState) -> Done | None:
    """Start every branch with the state's input."""
    count = len(state.branches)
    _reset(st, count)
    if count == 0:
        return Done({}, next_of(state))
    for index, branch in enumerate(state.branches):
        start_child(ctx, run, st, index, branch.start_at, st.input, iteration=False)
    return None


def begin_map(ctx: Ctx, run: ScopeRun, state: MapState, st: ActiveState) -> Done | None:
    """Evaluate ``ItemsPath`` and start the first ``MaxConcurrency`` iterations."""
    if state.items_path is None or state.processor is None:
        raise StateFailure(RUNTIME_ERROR_CODE, "Map needs ItemsPath and Processor")
    scope = expression_scope(ctx, st, input_value=st.input)
    items = evaluate_expr(state.items_path, scope, "ItemsPath")
    if not isinstance(items, list):
        raise StateFailure(
            RUNTIME_ERROR_CODE,
            f"ItemsPath `{state.items_path.text}` gave {kind_name(items)}, not an array",
        )
    _reset(st, len(items))
    st.items = items
    if not items:
        return Done({"Items": []}, next_of(state))
    limit = state.max_concurrency
    limit = DEFAULT_MAP_CONCURRENCY if limit is None else limit
    if limit <= 0:
        limit = len(items)
    st.queue = list(range(limit, len(items)))
    for index in range(min(limit, len(items))):
        start_child(ctx, run, st, index, state.processor.start_at, items[index], iteration=True)
    return None


def _reset(st: ActiveState, count: int) -> None:
    st.phase = Phase.CHILDREN
    st.children = {}
    st.results = [None] * count
    st.remaining = count
    st.queue = []
    st.items = []


def start_child(
    ctx: Ctx, run: ScopeRun, st: ActiveState, slot: int, start_at: str, value: Any,
    *, iteration: bool,
) -> None:
    """Open a branch/iteration scope and queue its first state."""
    ex = ctx.ex
    kind = H.ITERATION_ENTERED if iteration else H.BRANCH_ENTERED
    opened = ctx.emit(kind, st.name, st.entered_event, {"Index": slot, "Input": value})
    run_id = ex.next_run_id
    ex.next_run_id += 1
    path = [*run.path, [st.name, -1 if iteration else slot]]
    ctx.add_run(ScopeRun(run_id, path, run.run_id, slot, opened))
    st.children[slot] = run_id
    ctx.queue.append((run_id, start_at, value, None))


def start_queued(ctx: Ctx, run: ScopeRun, state: MapState, st: ActiveState) -> None:
    """Start the next queued Map item, if any."""
    if st.queue and state.processor is not None:
        slot = st.queue.pop(0)
        start_child(ctx, run, st, slot, state.processor.start_at, st.items[slot], iteration=True)


def collect(state: State, st: ActiveState) -> Any:
    """The default output once every child finished."""
    if isinstance(state, MapState):
        return {"Items": list(st.results)}
    return {f"Branch{index}": result for index, result in enumerate(st.results)}
