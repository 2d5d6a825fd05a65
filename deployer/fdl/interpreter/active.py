"""What is running inside an execution: its scopes and the state active in each.

A :class:`ScopeRun` is one running ``States`` list (the top level, a Parallel branch, a Map
iteration). The state active in it has two records: the :class:`ActiveState` the shared
lifecycle keeps (input, retry counters, the latest retry timer) and, while the state waits, its
kind's own record of what it waits for (:class:`Waiting`: a task, a timer, child scopes; or the
lifecycle's :class:`Backoff` before a retry).

Every record is immutable: ``step`` replaces records and never changes one, so an execution
given to ``step`` is never modified. The records a step builds are named tuples (a frozen
dataclass costs three times as much to build, and a step builds several per state).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, NamedTuple, Protocol

__all__ = [
    "BACKOFF",
    "RETRY_PHASE",
    "ROOT_RUN",
    "ActiveState",
    "Backoff",
    "ExecutionStatus",
    "Frame",
    "ScopeRun",
    "Waiting",
]

ROOT_RUN = 0


class ExecutionStatus(str, Enum):
    """Closed set of execution statuses."""

    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"
    TIMED_OUT = "TimedOut"
    STOPPED = "Stopped"

    @property
    def is_terminal(self) -> bool:
        return self is not ExecutionStatus.RUNNING


class Waiting(Protocol):
    """A state kind's record of what it waits for: :meth:`stored_fields` gives its keys in the
    stored layout (:func:`deployer.fdl.interpreter.stored.state_layout`), ``phase`` among them
    (the kind's module decodes the record of its phase back)."""

    def stored_fields(self) -> dict[str, Any]:
        """The stored keys this record fills in."""
        ...


#: The stored phase of a state backing off before a retry.
RETRY_PHASE = "retry"


@dataclass(frozen=True, slots=True)
class Backoff:
    """The lifecycle's record (one instance, :data:`BACKOFF`): the state waits for its retry
    timer (:attr:`ActiveState.retry_timer`) before the next attempt."""

    def stored_fields(self) -> dict[str, Any]:
        return {"phase": RETRY_PHASE}


BACKOFF = Backoff()


class Frame(NamedTuple):
    """What a legacy steps list holds while it runs: the ``input`` of its parent step and the
    ``local`` its steps' outputs merge into (docs/fdl-semantics.md, "The legacy dialect")."""

    input: Any
    local: Any


class ScopeRun(NamedTuple):
    """One running scope. ``path`` locates its ``States`` list in the flow: ``(state name,
    branch index)`` pairs from the top level (index -1 for a Map processor or a foreach body).
    A legacy steps list also has its :class:`Frame` (None for SpecVersion v1 scopes)."""

    run_id: int
    path: tuple[tuple[str, int], ...]
    parent: int  # run id of the scope holding the Parallel/Map; -1 for the top level
    slot: int  # branch index or item index in the parent
    open_event: int  # ExecutionStarted / BranchEntered / IterationEntered event id
    frame: Frame | None = None


class ActiveState(NamedTuple):
    """The lifecycle's record of the state active in one scope. ``input`` is set once
    ``input_ready`` (after the InputConstructor); ``retry_counts`` counts the retries done under
    each Retry rule and ``retry_count`` all of them; ``retry_timer`` is the latest retry
    back-off timer ("" before any). The methods build changed copies."""

    name: str
    raw_input: Any
    entered_event: int
    input: Any
    input_ready: bool
    retry_counts: tuple[int, ...]
    retry_count: int
    retry_timer: str

    @property
    def current_input(self) -> Any:
        """The input after the InputConstructor, or the raw input while it has not run."""
        return self.input if self.input_ready else self.raw_input

    def with_input(self, value: Any) -> ActiveState:
        """This state once its InputConstructor gave ``value``."""
        return ActiveState(self.name, self.raw_input, self.entered_event, value, True,
                           self.retry_counts, self.retry_count, self.retry_timer)

    def backing_off(self, rule: int, timer_id: str) -> ActiveState:
        """This state after a failure matched Retry rule ``rule``: one more retry counted,
        the back-off timer ``timer_id`` started (the state then waits for :data:`BACKOFF`)."""
        counts = list(self.retry_counts)
        counts[rule] += 1
        return ActiveState(self.name, self.raw_input, self.entered_event, self.input,
                           self.input_ready, tuple(counts), self.retry_count + 1, timer_id)
