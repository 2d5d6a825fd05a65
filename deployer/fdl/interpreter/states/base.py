"""What every state evaluator has and answers to.

``compile_flow`` builds one :class:`StateEvaluator` per state of the flow. The evaluator keeps
the state's compiled lifecycle fields (constructors, ``Next``, Retry and Catch), used by
:mod:`deployer.fdl.interpreter.lifecycle`, and implements the state's own work:

* :meth:`~StateEvaluator.begin` runs one attempt once the input is ready. It returns
  :class:`Done` (the state's default output and where to go) or the record of what the state
  now waits for, or raises ``StateFailure``.
* :meth:`~StateEvaluator.resume` gets what woke a waiting state up (a timer, a task result, a
  child scope that ended) with the state's record; it answers like ``begin``, or None when
  the wake-up is not for it.
* :meth:`~StateEvaluator.cancel` drops what a record waits for (a sibling failed, the
  execution ends).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, Union

from deployer.fdl.interpreter.active import ActiveState, ScopeRun, Waiting
from deployer.fdl.interpreter.compiled import CompiledTemplate, compiled
from deployer.fdl.interpreter.events import TaskFailed, TaskSucceeded, TimerFired
from deployer.fdl.interpreter.runtime import Ctx, Raw
from deployer.fdl.syntax.ast import Scope, State

if TYPE_CHECKING:
    from deployer.fdl.interpreter.program import CompiledScope
    from deployer.fdl.syntax.ast import RetryRule

__all__ = [
    "Catch",
    "ChildEnded",
    "ChildFailed",
    "Done",
    "Site",
    "StateEvaluator",
    "StateOutcome",
    "StepData",
    "WakeEvent",
]


class Done(NamedTuple):
    """A state finished its own work: ``output`` is its default output (``$Output``) and
    ``next`` the state to go to, or None to end the scope (a named tuple: one per state)."""

    output: Any
    next: str | None


class ChildEnded(NamedTuple):
    """A child scope (Parallel branch, Map iteration) of the waiting state ended with
    ``output``."""

    run: ScopeRun
    output: Any


class ChildFailed(NamedTuple):
    """A child scope of the waiting state failed with ``code``/``detail``."""

    run: ScopeRun
    code: str
    detail: str


#: What wakes a waiting state up.
WakeEvent = Union[TimerFired, TaskSucceeded, TaskFailed, ChildEnded, ChildFailed]  # noqa: UP007
#: What ``begin`` and ``resume`` answer: finished, or the record of what the state waits for.
StateOutcome = Union[Done, Waiting]  # noqa: UP007


@dataclass(frozen=True, slots=True)
class Site:
    """Where a state is compiled: the names of the states enclosing it (outermost first), and
    the compiler of the ``States`` lists nested in it (Parallel branches, a Map processor)."""

    outer: tuple[str, ...]
    compile_scope: Callable[[Scope, tuple[str, ...]], CompiledScope]

    def path(self, name: str) -> tuple[str, ...]:
        """The names of the enclosing states, then ``name``."""
        return (*self.outer, name)

    def nested(self, name: str, scope: Scope) -> CompiledScope:
        """Compile ``scope``, nested in the state ``name`` compiled here."""
        return self.compile_scope(scope, self.path(name))


@dataclass(frozen=True, slots=True)
class Catch:
    """A ``Catch`` rule with its OutputConstructor compiled."""

    errors: tuple[str, ...]
    next: str | None
    output_constructor: CompiledTemplate | None


class StepData(Protocol):
    """How a step of the legacy dialect selects its input and output and hands its output on
    (:mod:`deployer.fdl.interpreter.steps`), in place of constructors: the lifecycle asks the
    evaluator's ``data`` when it has one. Each method raises ``StateFailure`` when it cannot."""

    def select_input(self, ctx: Ctx, run: ScopeRun, name: str, raw_input: Any,
                     entered: int) -> tuple[Any, Raw]:
        """The step's input and its JSON text (``raw_input``: its default input)."""
        ...

    def select_output(self, ctx: Ctx, run: ScopeRun, st: ActiveState, local: Any) -> Any:
        """The step's output from its input and its ``local`` (``Done.output``)."""
        ...

    def hand_on(self, ctx: Ctx, run: ScopeRun, output: Any, ends: bool) -> Any:
        """Merge ``output`` into the list's local; what the next step gets, or (``ends``) what
        the list ends with."""
        ...

    def caught(self, ctx: Ctx, run: ScopeRun, st: ActiveState, code: str, detail: str) -> Any:
        """After a catch: merge the step's error mappings and give what its goto gets."""
        ...


@dataclass(frozen=True, slots=True)
class StateEvaluator:
    """Base of the evaluators; the fields are the state's lifecycle, compiled (``data``: how a
    legacy step selects its input and output, None for SpecVersion v1 states)."""

    name: str
    next: str | None  # None: the state ends its scope
    input_constructor: CompiledTemplate | None
    output_constructor: CompiledTemplate | None
    global_constructor: CompiledTemplate | None
    retry: tuple[RetryRule, ...]
    catch: tuple[Catch, ...]
    no_retries: tuple[int, ...]  # the retry counts of a state just entered
    data: StepData | None = field(default=None, kw_only=True)

    @staticmethod
    def lifecycle_of(state: State) -> dict[str, Any]:
        """The base fields compiled from ``state`` (keyword arguments for a subclass)."""
        rules: tuple[RetryRule, ...] = getattr(state, "retry", ())
        catches = tuple(
            Catch(rule.errors, rule.next, compiled(rule.output_constructor))
            for rule in getattr(state, "catch", ())
        )
        return {
            "name": state.name, "next": None if state.end else state.next,
            "input_constructor": compiled(state.input_constructor),
            "output_constructor": compiled(state.output_constructor),
            "global_constructor": compiled(state.global_constructor),
            "retry": rules, "catch": catches, "no_retries": (0,) * len(rules),
        }

    def begin(self, ctx: Ctx, run: ScopeRun, st: ActiveState) -> StateOutcome:
        """Run one attempt of the state's work (``st.input`` is ready)."""
        raise NotImplementedError

    def resume(self, ctx: Ctx, run: ScopeRun, st: ActiveState, record: Waiting,
               wake: WakeEvent) -> StateOutcome | None:
        """Continue the state waiting for ``record`` after ``wake``; None when the wake-up is
        not for it (nothing changes)."""
        return None

    def cancel(self, ctx: Ctx, record: Waiting) -> None:
        """Drop what ``record`` waits for (a pending task, a timer, child scopes)."""

    def task_token(self, record: Waiting | None) -> str:
        """``$Context.Current.TaskToken`` while the state holds ``record`` ("" but for a
        Task)."""
        return ""

    def child_scope(self, index: int) -> CompiledScope:
        """The nested scope ``index`` of a run path (KeyError: the state has none)."""
        raise KeyError(self.name)
