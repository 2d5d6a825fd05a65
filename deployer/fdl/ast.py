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

Expressions are stored as source text plus position (:class:`Expr`), never parsed, so the AST does
not depend on the expression engine.

Templates (constructors and Task ``Parameters``) are :class:`Template` nodes: read-only mappings
keyed by the key *as written* (``job_id.$``), with these evaluation rules:

* a key ending in ``.$`` is an *expression key*: its value is an :class:`Expr` (when the YAML value
  is a string) and it produces the key without the suffix (:attr:`TemplateField.output_key`);
* a mapping whose only key is ``$`` evaluates to the value of that expression itself
  (:attr:`Template.root_expression`), at the top of a constructor or at any depth;
* other values are literals; nested mappings are walked recursively, lists are
  :class:`TemplateList` whose mapping elements are walked and whose strings stay literal.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Union

__all__ = [
    "EXPRESSION_SUFFIX",
    "ROOT_EXPRESSION_KEY",
    "CatchRule",
    "ChoiceBranch",
    "ChoiceState",
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
    "walk_states",
]

EXPRESSION_SUFFIX = ".$"
ROOT_EXPRESSION_KEY = "$"

_EMPTY_RAW: Mapping[str, RawField] = MappingProxyType({})


def _no_raw() -> Mapping[str, RawField]:
    return _EMPTY_RAW


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """1-based line and column of a YAML token."""

    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


UNKNOWN_POSITION = Position(0, 0)


@dataclass(frozen=True, slots=True)
class Expr:
    """An expression as written in the flow (not parsed), with the position of its first
    character in the YAML document (for a quoted scalar: the opening quote)."""

    text: str
    position: Position

    @property
    def line(self) -> int:
        return self.position.line

    @property
    def column(self) -> int:
        return self.position.column


# Plain, frozen YAML value: scalars, tuples for sequences, read-only mappings for mappings.
RawValue = Union[  # noqa: UP007 (recursive alias needs string forward references)
    None, bool, int, float, str, tuple["RawValue", ...], Mapping[str, "RawValue"]
]


@dataclass(frozen=True, slots=True)
class RawField:
    """One key of a YAML mapping exactly as written: key, plain value and both positions."""

    key: str
    value: RawValue
    key_position: Position
    value_position: Position


# --------------------------------------------------------------------------------------------
# Templates: constructors and Task parameters


TemplateValue = Union[None, bool, int, float, str, Expr, "Template", "TemplateList"]


@dataclass(frozen=True, slots=True)
class TemplateField:
    """One key of a template. ``value`` is an :class:`Expr` when the key is an expression key
    and the YAML value is a string; anything else under an expression key is kept as written
    (and reported by the validator)."""

    key: str
    value: TemplateValue
    position: Position
    value_position: Position

    @property
    def is_expression(self) -> bool:
        """True for ``name.$`` keys and for the root key ``$``."""
        return self.key == ROOT_EXPRESSION_KEY or self.key.endswith(EXPRESSION_SUFFIX)

    @property
    def output_key(self) -> str:
        """The key this field produces: ``job_id.$`` -> ``job_id``; ``$`` -> ``""`` (root)."""
        if self.key == ROOT_EXPRESSION_KEY:
            return ""
        if self.key.endswith(EXPRESSION_SUFFIX):
            return self.key[: -len(EXPRESSION_SUFFIX)]
        return self.key


@dataclass(frozen=True, slots=True)
class Template(Mapping[str, TemplateValue]):
    """A constructor or parameter mapping: a read-only mapping keyed by the keys as written."""

    fields: tuple[TemplateField, ...]
    position: Position

    def __getitem__(self, key: str) -> TemplateValue:
        for item in self.fields:
            if item.key == key:
                return item.value
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (item.key for item in self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def field(self, key: str) -> TemplateField | None:
        """The field written as ``key``, or None."""
        return next((item for item in self.fields if item.key == key), None)

    def to_plain(self) -> dict[str, object]:
        """The template as plain data (keys as written, expressions as their text): the shape
        ``deployer.fdl.constructors.build_value`` takes."""
        return {item.key: _plain(item.value) for item in self.fields}

    @property
    def root_expression(self) -> Expr | None:
        """The expression of a mapping whose only key is ``$`` (its value *is* the result)."""
        if len(self.fields) == 1 and self.fields[0].key == ROOT_EXPRESSION_KEY:
            value = self.fields[0].value
            return value if isinstance(value, Expr) else None
        return None


@dataclass(frozen=True, slots=True)
class TemplateList(Sequence[TemplateValue]):
    """A list inside a template; its strings are literals, its mappings are templates."""

    items: tuple[TemplateValue, ...]
    position: Position

    def __getitem__(self, index: int) -> TemplateValue:  # type: ignore[override]
        return self.items[index]

    def __len__(self) -> int:
        return len(self.items)


def _plain(value: TemplateValue) -> object:
    if isinstance(value, Expr):
        return value.text
    if isinstance(value, Template):
        return value.to_plain()
    if isinstance(value, TemplateList):
        return [_plain(item) for item in value.items]
    return value


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


@dataclass(frozen=True, slots=True, kw_only=True)
class MapState(_StateBase):
    """Run ``processor`` once per element of ``items_path`` (inline mode); output
    ``{"Items": [...]}``. ``max_concurrency`` None means the platform default (40)."""

    items_path: Expr | None = None
    processor: Scope | None = None
    max_concurrency: int | None = None
    retry: tuple[RetryRule, ...] = ()
    catch: tuple[CatchRule, ...] = ()

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
    """The whole definition. ``type`` is the ``Type`` string (``StateMachine`` when valid)."""

    name: str
    spec_version: str
    start_at: str
    states: tuple[State, ...]
    position: Position
    description: str = ""
    type: str = ""
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
