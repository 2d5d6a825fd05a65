"""What Parallel and Map share: they run child scopes (branches, iterations) and collect the
outputs in order.

A child scope is a :class:`~deployer.fdl.interpreter.active.ScopeRun` opened with
``BranchEntered`` / ``IterationEntered``; when it ends, the lifecycle wakes the owning state up
with ``ChildEnded`` or ``ChildFailed``. The first child that fails cancels its siblings
(recursively: their pending tasks and timers too) and fails the owner, whose Retry/Catch then
apply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

from deployer.fdl.interpreter.active import ActiveState, Frame, ScopeRun, Waiting
from deployer.fdl.interpreter.history import HistoryEventType
from deployer.fdl.interpreter.runtime import Ctx, StateFailure, dump
from deployer.fdl.interpreter.states.base import (
    ChildEnded,
    ChildFailed,
    Done,
    StateEvaluator,
    StateOutcome,
    WakeEvent,
)

__all__ = ["CHILDREN_PHASE", "ChildScopes", "ChildScopesEvaluator", "open_scope"]


#: The stored phase of a Parallel/Map waiting for its children.
CHILDREN_PHASE = "children"


class ChildScopes(NamedTuple):
    """A Parallel/Map waits for its child scopes: ``children`` maps the slot of each running
    one to its run id, in the order they started; ``results`` holds the outputs by slot and
    ``remaining`` counts the children that have not ended; a Map also keeps its ``items`` and
    the slots still ``queue``\\ d (always the items after the last one started). The mapping and
    the list are never changed once the record is built (a child that ends makes a new record
    with copies)."""

    children: Mapping[int, int]
    results: Sequence[Any]
    remaining: int
    items: tuple[Any, ...] = ()
    queue: tuple[int, ...] = ()

    def stored_fields(self) -> dict[str, Any]:
        return {
            "phase": CHILDREN_PHASE,
            "children": [[slot, run] for slot, run in self.children.items()],
            "results": list(self.results), "items": list(self.items),
            "queue": list(self.queue), "remaining": self.remaining,
        }

    @classmethod
    def from_stored(cls, data: dict[str, Any]) -> ChildScopes:
        return cls(
            {int(slot): int(run) for slot, run in data["children"]},
            list(data["results"]), int(data["remaining"]), tuple(data["items"]),
            tuple(int(slot) for slot in data["queue"]),
        )

    def ended(self, slot: int, output: Any, started: int | None) -> ChildScopes:
        """The child in ``slot`` ended with ``output``; ``started`` is the run id of the first
        queued slot when it started in its place."""
        children = dict(self.children)
        del children[slot]
        queue = self.queue
        if started is not None:
            children[queue[0]] = started
            queue = queue[1:]
        results = list(self.results)
        results[slot] = output
        return ChildScopes(children, results, self.remaining - 1, self.items, queue)


def open_scope(ctx: Ctx, run: ScopeRun, st: ActiveState, slot: int, start_at: str,
               value: Any, *, iteration: bool, frame: Frame | None = None) -> int:
    """Open branch/iteration ``slot`` of the state ``st`` active in ``run``, queue its first
    state with ``value``; return the new run's id. A legacy steps list gets its ``frame``."""
    ex = ctx.ex
    kind = HistoryEventType.ITERATION_ENTERED if iteration else HistoryEventType.BRANCH_ENTERED
    opened = ctx.emit(kind, st.name, st.entered_event, dump({"Index": slot, "Input": value}))
    run_id = ex.next_run_id
    ex.next_run_id = run_id + 1
    path = (*run.path, (st.name, -1 if iteration else slot))
    ctx.add_run(ScopeRun(run_id, path, run.run_id, slot, opened, frame))
    ctx.queue.append((run_id, start_at, value, None))
    return run_id


@dataclass(frozen=True, slots=True)
class ChildScopesEvaluator(StateEvaluator):
    """Resuming and cancelling, shared by Parallel and Map."""

    exited: ClassVar[HistoryEventType] = HistoryEventType.BRANCH_EXITED

    def resume(self, ctx: Ctx, run: ScopeRun, st: ActiveState, record: Waiting,
               wake: WakeEvent) -> StateOutcome | None:
        if not isinstance(record, ChildScopes):
            return None
        if isinstance(wake, ChildEnded):
            child = wake.run
            ctx.emit(self.exited, self.name, child.open_event,
                     dump({"Index": child.slot, "Output": wake.output}))
            record = record.ended(child.slot, wake.output, self.start_queued(ctx, run, st, record))
            if record.remaining == 0:
                return Done(self.collect(record.results), self.next)
            return record
        if isinstance(wake, ChildFailed):
            child = wake.run
            ctx.emit(self.exited, self.name, child.open_event,
                     dump({"Index": child.slot, "Error": wake.code,
                                   "Cause": wake.detail}))
            for slot, run_id in record.children.items():
                if slot != child.slot:
                    ctx.cancel_run(run_id)
            raise StateFailure(wake.code, wake.detail)
        return None

    def start_queued(self, ctx: Ctx, run: ScopeRun, st: ActiveState,
                     record: ChildScopes) -> int | None:
        """Now that a child ended, start the first queued slot if any (a Map's); return the
        new run's id."""
        return None

    def collect(self, results: Sequence[Any]) -> Any:
        """The default output once every child ended."""
        raise NotImplementedError

    def cancel(self, ctx: Ctx, record: Waiting) -> None:
        assert isinstance(record, ChildScopes)
        for run_id in record.children.values():
            ctx.cancel_run(run_id)
