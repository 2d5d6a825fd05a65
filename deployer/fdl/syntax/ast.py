"""Frozen AST of a CloudFlow flow definition (``Type: StateMachine``, ``SpecVersion: v1``).

Every node is an immutable ``@dataclass(frozen=True, slots=True)`` carrying the 1-based YAML
:class:`Position` of its first token. Collections are tuples and read-only mappings.

The parser is *permissive*: it builds a node for every state mapping it finds, puts a typed value
in each field when the YAML value has the expected type, and otherwise leaves the field at its
empty default (``None``, ``""``, ``()``). What was really written stays available in ``raw``
(key, value and positions of every key of that YAML mapping, in document order), which is what
the validator inspects for unknown keys and wrong types. A flow that passed
``validate_flow`` without errors therefore has every required field set; the interpreter may
rely on that and should only run validated flows.

The leaves live in their own modules and are re-exported here, so ``from deployer.fdl.syntax.ast
import X`` works for every node type: :mod:`deployer.fdl.syntax.positions` (:class:`Position`,
:class:`Expr` -- expressions are stored as text plus position, never parsed --, :class:`RawField`)
and :mod:`deployer.fdl.syntax.template_nodes` (:class:`Template` and its fields and lists:
constructors and Task ``Parameters``). This module holds the states, their Retry/Catch rules, scopes
and the flow.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

from deployer.fdl.syntax.positions import UNKNOWN_POSITION as UNKNOWN_POSITION
from deployer.fdl.syntax.positions import Expr, Position, RawField, RawValue
from deployer.fdl.syntax.positions import no_raw as _no_raw
from deployer.fdl.syntax.template_nodes import (
    EXPRESSION_SUFFIX,
    ROOT_EXPRESSION_KEY,
    Template,
    TemplateField,
    TemplateList,
    TemplateValue,
)

__all__ = [
    "EXPRESSION_SUFFIX",
    "ROOT_EXPRESSION_KEY",
    "CatchRule",
    "ChoiceBranch",
    "ChoiceState",
    "DistributedMap",
    "Expr",
    "FailState",
    "Flow",
    "MapState",
    "ParallelState",
    "PassState",
    "Position",
    "RawField",
    "RawValue",
    "RetryRule",
    "Scope",
    "State",
    "StateType",
    "SucceedState",
    "TaskMode",
    "TaskState",
    "Template",
    "TemplateField",
    "TemplateList",
    "TemplateValue",
    "WaitState",
    "child_scopes",
    "walk_states",
]

# --------------------------------------------------------------------------------------------
# Error handling


@dataclass(frozen=True, slots=True)
class RetryRule:
    """One ``Retry`` entry. Delay before retry n (1-based) is
    ``min(interval_seconds * backoff_rate ** (n - 1), max_backoff_seconds or inf)``."""

    errors: tuple[str, ...]
    position: Position
    description: str = ""
    max_attempts: int = 0
    interval_seconds: int = 0
    backoff_rate: float = 1.0
    max_backoff_seconds: int | None = None
    raw: Mapping[str, RawField] = field(default_factory=_no_raw, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class CatchRule:
    """One ``Catch`` entry: on a matching error go to ``next`` with the constructed output."""

    errors: tuple[str, ...]
    position: Position
    next: str | None = None
    description: str = ""
    output_constructor: Template | None = None
    raw: Mapping[str, RawField] = field(default_factory=_no_raw, compare=False, repr=False)


# --------------------------------------------------------------------------------------------
# States


class StateType(str, Enum):
    """The eight state types; the value is the ``Type`` string."""

    TASK = "Task"
    PASS = "Pass"
    WAIT = "Wait"
    CHOICE = "Choice"
    SUCCEED = "Succeed"
    FAIL = "Fail"
    PARALLEL = "Parallel"
    MAP = "Map"


class TaskMode(str, Enum):
    """Service integration mode of a Task; the value is the ``TaskMode`` string."""

    REQUEST_COMPLETE = "RequestComplete"
    WAIT_FOR_SYSTEM_CALLBACK = "WaitForSystemCallback"
    WAIT_FOR_CUSTOM_CALLBACK = "WaitForCustomCallback"


@dataclass(frozen=True, slots=True, kw_only=True)
class _StateBase:
    """Fields every state has. ``next``/``end`` are always None/False on a valid Choice, and
    ``end`` on Succeed/Fail is accepted but has no effect (they always end their scope)."""

    name: str
    position: Position
    description: str = ""
    input_constructor: Template | None = None
    output_constructor: Template | None = None
    global_constructor: Template | None = None
    next: str | None = None
    end: bool = False
    raw: Mapping[str, RawField] = field(default_factory=_no_raw, compare=False, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskState(_StateBase):
    """Call a service action. ``timeout`` is literal seconds (0 = none), an :class:`Expr` for
    ``Timeout.$``, or None when absent. ``parameters`` keeps expression keys as written."""

    action: str = ""
    task_mode: TaskMode = TaskMode.REQUEST_COMPLETE
    parameters: Template | None = None
    timeout: int | Expr | None = None
    retry: tuple[RetryRule, ...] = ()
    catch: tuple[CatchRule, ...] = ()

    @property
    def type(self) -> StateType:
        return StateType.TASK


@dataclass(frozen=True, slots=True, kw_only=True)
class PassState(_StateBase):
    """Pass its (constructed) input on."""

    @property
    def type(self) -> StateType:
        return StateType.PASS


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitState(_StateBase):
    """Pause for ``seconds`` (literal) or ``seconds_expr`` (``Seconds.$``); exactly one is set
    on a valid flow."""

    seconds: int | None = None
    seconds_expr: Expr | None = None

    @property
    def type(self) -> StateType:
        return StateType.WAIT


@dataclass(frozen=True, slots=True)
class ChoiceBranch:
    """One ``Choice.Branches`` entry; ``condition`` must evaluate to a boolean."""

    condition: Expr | None
    next: str | None
    position: Position
    raw: Mapping[str, RawField] = field(default_factory=_no_raw, compare=False, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChoiceState(_StateBase):
    """Go to the ``next`` of the first branch whose condition holds, else to ``default``."""

    branches: tuple[ChoiceBranch, ...] = ()
    default: str | None = None

    @property
    def type(self) -> StateType:
        return StateType.CHOICE


@dataclass(frozen=True, slots=True, kw_only=True)
class SucceedState(_StateBase):
    """End the current scope successfully."""

    @property
    def type(self) -> StateType:
        return StateType.SUCCEED


@dataclass(frozen=True, slots=True, kw_only=True)
class FailState(_StateBase):
    """Raise ``{Code: code, Detail: detail}`` in the current scope (both default to "")."""

    code: str = ""
    detail: str = ""

    @property
    def type(self) -> StateType:
        return StateType.FAIL


@dataclass(frozen=True, slots=True)
class Scope:
    """One ``States`` list with its ``StartAt``: the flow, a Parallel branch or a Map
    processor. States are in document order; ``by_name`` maps each name to its first state."""

    start_at: str
    states: tuple[State, ...]
    position: Position
    raw: Mapping[str, RawField] = field(default_factory=_no_raw, compare=False, repr=False)
    by_name: Mapping[str, State] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        index: dict[str, State] = {}
        for state in self.states:
            index.setdefault(state.name, state)
        object.__setattr__(self, "by_name", MappingProxyType(index))

    def state(self, name: str) -> State:
        """The state called ``name``; KeyError if this scope has none."""
        return self.by_name[name]

    @property
    def start_state(self) -> State | None:
        """The state named by ``start_at``, or None when it does not exist."""
        return self.by_name.get(self.start_at)


@dataclass(frozen=True, slots=True, kw_only=True)
class ParallelState(_StateBase):
    """Run every branch on the same input; output ``{"Branch0": ..., "Branch1": ...}``."""

    branches: tuple[Scope, ...] = ()
    retry: tuple[RetryRule, ...] = ()
    catch: tuple[CatchRule, ...] = ()

    @property
    def type(self) -> StateType:
        return StateType.PARALLEL


@dataclass(frozen=True, slots=True)
class DistributedMap:
    """A Map's distributed mode (``ProcessorConfig.ExecutionMode`` Express or Standard): each
    item (or batch) runs as a child execution of that mode. ``item_reader``,
    ``item_batcher`` and ``result_writer`` are their templates as written (``.$`` keys
    evaluated at run time); ``item_constructor`` builds each item from ``$Item``."""

    execution_mode: str
    item_reader: Template | None = None
    item_constructor: Template | None = None
    item_batcher: Template | None = None
    result_writer: Template | None = None
    max_items: int | None = None
    tolerated_percentage: float | None = None
    tolerated_count: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MapState(_StateBase):
    """Run ``processor`` once per element of ``items_path`` (inline mode); output
    ``{"Items": [...]}``. ``max_concurrency`` None means the platform default (40).
    ``distributed`` is set in distributed mode."""

    items_path: Expr | None = None
    processor: Scope | None = None
    max_concurrency: int | None = None
    retry: tuple[RetryRule, ...] = ()
    catch: tuple[CatchRule, ...] = ()
    distributed: DistributedMap | None = None

    @property
    def type(self) -> StateType:
        return StateType.MAP


State = (
    TaskState
    | PassState
    | WaitState
    | ChoiceState
    | SucceedState
    | FailState
    | ParallelState
    | MapState
)


# --------------------------------------------------------------------------------------------
# The flow


@dataclass(frozen=True, slots=True)
class Flow:
    """The whole definition. ``type`` is the ``Type`` string (``StateMachine`` when valid);
    ``timeout`` the flow-level ``Timeout`` in seconds (None when absent or not a whole number;
    0 means the execution mode's own limit)."""

    name: str
    spec_version: str
    start_at: str
    states: tuple[State, ...]
    position: Position
    description: str = ""
    type: str = ""
    timeout: int | None = None
    raw: Mapping[str, RawField] = field(default_factory=_no_raw, compare=False, repr=False)
    scope: Scope = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scope", Scope(self.start_at, self.states, self.position))

    @property
    def by_name(self) -> Mapping[str, State]:
        """Top-level states by name."""
        return self.scope.by_name


def child_scopes(state: State) -> tuple[Scope, ...]:
    """The scopes nested directly in ``state`` (Parallel branches, Map processor)."""
    if isinstance(state, ParallelState):
        return state.branches
    if isinstance(state, MapState) and state.processor is not None:
        return (state.processor,)
    return ()


def walk_states(
    scope: Scope, outer: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], State]]:
    """Every state in ``scope`` and its nested scopes, depth-first in document order (a
    Parallel/Map state comes right before its inner states), with the names of the enclosing
    states (outermost first)."""
    for state in scope.states:
        yield outer, state
        for child in child_scopes(state):
            yield from walk_states(child, (*outer, state.name))
