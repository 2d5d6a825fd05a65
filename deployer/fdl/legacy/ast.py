"""Frozen AST of a flow in CloudFlow's legacy dialect (``version`` / ``type: flow`` / ``steps``).

The dialect of Serverless Workflow (FnF), which CloudFlow still runs: a flow is a list of
steps run in order (a step falls through to the next one unless it ends the list), steps pass
data through ``inputMappings`` / ``outputMappings`` and the ``$local`` of their parent, choices
hold their own steps inline, and ``goto`` jumps to a sibling step (docs/fdl-semantics.md,
"The legacy dialect").

Like the SpecVersion v1 AST (:mod:`deployer.fdl.syntax.ast`), the parser is permissive: every
node is built, a field holds a typed value when the YAML value has the expected type and its
empty default otherwise, and ``raw`` keeps what was written for the validator. Paths and
conditions are kept as text with their position (:class:`~deployer.fdl.syntax.positions.Expr`);
:mod:`deployer.fdl.legacy.paths` and :mod:`deployer.fdl.legacy.conditions` read them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

from deployer.fdl.syntax.ast import Flow
from deployer.fdl.syntax.positions import Expr, Position, RawField, RawValue, no_raw

__all__ = [
    "LEGACY_VERSIONS",
    "AnyFlow",
    "ChoiceDefault",
    "ChoiceOption",
    "ChoiceStep",
    "DataMapping",
    "FailStep",
    "ForeachStep",
    "IterationMapping",
    "LegacyCatch",
    "LegacyFlow",
    "LegacyRetry",
    "MappingSource",
    "ParallelStep",
    "PassStep",
    "Step",
    "StepList",
    "StepType",
    "SucceedStep",
    "TaskStep",
    "WaitStep",
    "nested_lists",
    "walk_steps",
]

#: The values ``version`` takes (both name the same language).
LEGACY_VERSIONS = ("v1beta1", "v1")


class StepType(str, Enum):
    """The eight step types; the value is the ``type`` string."""

    TASK = "task"
    PASS = "pass"
    WAIT = "wait"
    CHOICE = "choice"
    PARALLEL = "parallel"
    FOREACH = "foreach"
    SUCCEED = "succeed"
    FAIL = "fail"


@dataclass(frozen=True, slots=True)
class MappingSource:
    """Where a mapped value comes from: a ``path`` (text starting with ``$input``, ``$local`` or
    ``$context``) or, for anything else, the ``constant`` written."""

    path: Expr | None
    constant: RawValue
    position: Position


@dataclass(frozen=True, slots=True)
class DataMapping:
    """One ``inputMappings`` / ``outputMappings`` / ``errorMappings`` entry: the key ``target``
    of the built object takes the value of ``source``."""

    target: str
    source: MappingSource | None
    position: Position
    raw: Mapping[str, RawField] = field(default_factory=no_raw, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class LegacyRetry:
    """One ``retry`` entry. The delay before retry n (1-based) is
    ``min(interval_seconds * multiplier ** (n - 1), max_interval_seconds)``; the defaults are
    the documented ones (1 s, 3 attempts, x2, 86,400 s)."""

    errors: tuple[str, ...]
    position: Position
    interval_seconds: int = 1
    max_attempts: int = 3
    multiplier: float = 2.0
    max_interval_seconds: int = 86_400
    raw: Mapping[str, RawField] = field(default_factory=no_raw, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class LegacyCatch:
    """One ``catch`` entry: on a matching error go to the sibling step ``goto``."""

    errors: tuple[str, ...]
    goto: str | None
    position: Position
    raw: Mapping[str, RawField] = field(default_factory=no_raw, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class StepList:
    """A ``steps`` list: the flow's, a parallel branch's, a foreach body, a choice's inline
    steps. Steps run in order; ``by_name`` maps each name to its first step."""

    steps: tuple[Step, ...]
    position: Position
    raw: Mapping[str, RawField] = field(default_factory=no_raw, compare=False, repr=False)
    by_name: Mapping[str, Step] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        index: dict[str, Step] = {}
        for step in self.steps:
            index.setdefault(step.name, step)
        object.__setattr__(self, "by_name", MappingProxyType(index))

    @property
    def first(self) -> str:
        """The name of the step the list starts with ("" when empty)."""
        return self.steps[0].name if self.steps else ""

    def after(self, name: str) -> str | None:
        """The step written right after the first step called ``name`` (None at the end)."""
        for number, step in enumerate(self.steps):
            if step.name == name:
                return self.steps[number + 1].name if number + 1 < len(self.steps) else None
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class _StepBase:
    """What every step has. ``input_mappings`` / ``output_mappings`` are None when absent (the
    default mappings apply), a tuple (maybe empty) when written."""

    name: str
    position: Position
    end: bool = False
    input_mappings: tuple[DataMapping, ...] | None = None
    output_mappings: tuple[DataMapping, ...] | None = None
    raw: Mapping[str, RawField] = field(default_factory=no_raw, compare=False, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskStep(_StepBase):
    """Call a resource (``resource_arn``: a function, a flow, an MNS topic or queue; ``ref``
    when written as ``!Ref service/function``) or a service ``action`` with ``service_params``.
    ``pattern``: ``requestResponse`` (default), ``sync`` or ``waitForCallback``."""

    resource_arn: str = ""
    ref: bool = False
    action: str = ""
    pattern: str = "requestResponse"
    timeout_seconds: int | None = None
    service_params: RawValue = None
    retry: tuple[LegacyRetry, ...] = ()
    catch: tuple[LegacyCatch, ...] = ()
    error_mappings: tuple[DataMapping, ...] | None = None

    @property
    def type(self) -> StepType:
        return StepType.TASK


@dataclass(frozen=True, slots=True, kw_only=True)
class PassStep(_StepBase):
    """Produce its output mappings (its ``$local`` is empty)."""

    @property
    def type(self) -> StepType:
        return StepType.PASS


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitStep(_StepBase):
    """Pause for ``duration`` seconds or until ``timestamp`` (RFC 3339); each is a literal or a
    path (``$.key``) into the step's input. Exactly one is set on a valid flow."""

    duration: int | Expr | None = None
    timestamp: str | Expr | None = None

    @property
    def type(self) -> StepType:
        return StepType.WAIT


@dataclass(frozen=True, slots=True)
class ChoiceOption:
    """One ``choices`` entry: when ``condition`` holds, run ``steps`` (if any), then ``goto``
    (if any, else the step after the choice)."""

    condition: Expr | None
    steps: StepList | None
    goto: str | None
    position: Position
    raw: Mapping[str, RawField] = field(default_factory=no_raw, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class ChoiceDefault:
    """The ``default`` of a choice: ``steps`` then ``goto``, like an option without condition."""

    steps: StepList | None
    goto: str | None
    position: Position
    raw: Mapping[str, RawField] = field(default_factory=no_raw, compare=False, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ChoiceStep(_StepBase):
    """Run the first option whose condition holds, else the default; without a default and
    with no option holding, the choice ends and the next step runs."""

    choices: tuple[ChoiceOption, ...] = ()
    default: ChoiceDefault | None = None

    @property
    def type(self) -> StepType:
        return StepType.CHOICE

    @property
    def arms(self) -> tuple[ChoiceOption | ChoiceDefault, ...]:
        """The options, then the default when there is one (its index is ``len(choices)``)."""
        return (*self.choices, self.default) if self.default is not None else self.choices


@dataclass(frozen=True, slots=True, kw_only=True)
class ParallelStep(_StepBase):
    """Run every branch at once; ``$local`` is the list of the branches' locals."""

    branches: tuple[StepList, ...] = ()

    @property
    def type(self) -> StepType:
        return StepType.PARALLEL


@dataclass(frozen=True, slots=True)
class IterationMapping:
    """``iterationMapping``: the ``collection`` path, and the keys under which each element
    (``item``) and its position (``index``, optional) join the iteration's input."""

    collection: Expr | None
    item: str
    index: str | None
    position: Position
    raw: Mapping[str, RawField] = field(default_factory=no_raw, compare=False, repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ForeachStep(_StepBase):
    """Run ``steps`` once per element of the collection, in parallel; ``$local`` is the list of
    the iterations' locals."""

    iteration: IterationMapping | None = None
    steps: StepList | None = None

    @property
    def type(self) -> StepType:
        return StepType.FOREACH


@dataclass(frozen=True, slots=True, kw_only=True)
class SucceedStep(_StepBase):
    """End the enclosing steps list successfully."""

    @property
    def type(self) -> StepType:
        return StepType.SUCCEED


@dataclass(frozen=True, slots=True, kw_only=True)
class FailStep(_StepBase):
    """Fail the enclosing steps list with ``error`` and ``cause`` (both default to "")."""

    error: str = ""
    cause: str = ""

    @property
    def type(self) -> StepType:
        return StepType.FAIL


Step = (
    TaskStep
    | PassStep
    | WaitStep
    | ChoiceStep
    | ParallelStep
    | ForeachStep
    | SucceedStep
    | FailStep
)


@dataclass(frozen=True, slots=True)
class LegacyFlow:
    """The whole definition: ``version``, ``type`` and the top ``steps``, with the flow's own
    mappings (``inputMappings`` from the execution input, ``outputMappings`` to its output).
    ``name`` is "" (the dialect names flows only through the API) and ``timeout`` None (it has
    no flow-level timeout): the same attributes the v1 :class:`~deployer.fdl.syntax.ast.Flow`
    has, so code that only needs them takes either."""

    version: str
    type: str
    steps: StepList
    position: Position
    input_mappings: tuple[DataMapping, ...] | None = None
    output_mappings: tuple[DataMapping, ...] | None = None
    raw: Mapping[str, RawField] = field(default_factory=no_raw, compare=False, repr=False)
    name: str = ""
    timeout: int | None = None


#: A flow in either dialect.
AnyFlow = Flow | LegacyFlow


def nested_lists(step: Step) -> tuple[tuple[int, StepList], ...]:
    """The step lists nested directly in ``step`` with their index: a parallel's branches, a
    foreach body (index -1), a choice's inline steps (the option's index; the default's is
    ``len(choices)``)."""
    if isinstance(step, ParallelStep):
        return tuple(enumerate(step.branches))
    if isinstance(step, ForeachStep):
        return ((-1, step.steps),) if step.steps is not None else ()
    if isinstance(step, ChoiceStep):
        return tuple((index, arm.steps) for index, arm in enumerate(step.arms)
                     if arm.steps is not None)
    return ()


def walk_steps(steps: StepList, outer: tuple[str, ...] = ()
               ) -> Iterator[tuple[tuple[str, ...], Step]]:
    """Every step of ``steps`` and of the lists nested in them, depth-first in document order,
    with the names of the enclosing steps (outermost first)."""
    for step in steps.steps:
        yield outer, step
        for _, child in nested_lists(step):
            yield from walk_steps(child, (*outer, step.name))
