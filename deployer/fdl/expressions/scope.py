"""What a compiled expression runs against, and how its failures are built.

:class:`ExpressionScope` holds the variables an expression can read plus the evaluation options
(:class:`NullMode`, the :class:`~deployer.fdl.expressions.builtins.Entropy` for
``uuid()``/``randomInt()``, the :class:`~deployer.fdl.expressions.budget.Meter` that bounds the
work). The evaluator compiles every expression into :data:`Compiled` closures over a scope; the
helpers at the end build the :class:`EvaluationError` a closure raises, located at a node
``offset``.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any, NamedTuple

from deployer.fdl.expressions.budget import NO_METER, Meter
from deployer.fdl.expressions.builtins import Entropy, SystemEntropy
from deployer.fdl.expressions.errors import EvaluationError, EvaluationReason
from deployer.fdl.expressions.values import kind_name

__all__ = [
    "UNAVAILABLE",
    "Compiled",
    "ExpressionScope",
    "NullMode",
    "Unavailable",
    "error_at",
    "null_error",
    "operand_error",
]


class Unavailable(Enum):
    """Marks a variable that does not exist where the expression runs."""

    UNAVAILABLE = "unavailable"


UNAVAILABLE = Unavailable.UNAVAILABLE


class NullMode(Enum):
    """How ``null`` behaves where a map, array or boolean is needed.

    ``STRICT`` (default, expr-lang): member access/indexing on null, ``!null``, ``null`` in
    ``&&``/``||``, ordering against null and ``x in null`` are errors. ``LENIENT``: member access
    and indexing on null give null, null counts as false in ``!``/``&&``/``||``, ordering
    against null is false and ``x in null`` is false. Arithmetic on null is an error in both.
    """

    STRICT = "strict"
    LENIENT = "lenient"


_SYSTEM_ENTROPY: Entropy = SystemEntropy()


class ExpressionScope(NamedTuple):
    """The variables an expression can read, plus evaluation options.

    A variable left :data:`UNAVAILABLE` makes reading it an error (e.g. ``$Output`` in an
    ``InputConstructor``). ``entropy`` feeds ``uuid()``/``randomInt()``: pass a
    :class:`~deployer.fdl.expressions.builtins.SeededEntropy` for deterministic, replayable runs.
    ``meter`` counts the evaluation's steps: ``evaluate`` and ``TemplateBuilder.build`` give a scope
    left at :data:`~deployer.fdl.expressions.budget.NO_METER` a fresh
    :class:`~deployer.fdl.expressions.budget.Meter` (the interpreter passes one per step).
    Immutable (a named tuple: the interpreter builds one per evaluation, and a frozen
    dataclass costs three times as much to build).
    """

    input: Any = UNAVAILABLE
    output: Any = UNAVAILABLE
    context: Any = UNAVAILABLE
    global_vars: Any = UNAVAILABLE
    item: Any = UNAVAILABLE
    null_mode: NullMode = NullMode.STRICT
    entropy: Entropy = _SYSTEM_ENTROPY
    meter: Meter = NO_METER


#: An expression compiled to a closure: run it with a scope to get its value.
Compiled = Callable[[ExpressionScope], Any]


def error_at(offset: int, detail: str, reason: EvaluationReason) -> EvaluationError:
    """The error of the node starting at ``offset``."""
    return EvaluationError(detail, reason, offset=offset)


def null_error(offset: int, what: str) -> EvaluationError:
    """``<what> null``: a null where a map, an array or a boolean is needed."""
    return error_at(offset, f"{what} null", EvaluationReason.NULL)


def operand_error(offset: int, op: str, value: Any, expected: str) -> EvaluationError:
    """Operator ``op`` got ``value`` where it needs ``expected`` (e.g. ``"a bool"``)."""
    reason = EvaluationReason.NULL if value is None else EvaluationReason.TYPE
    return error_at(offset, f"operator '{op}' needs {expected}, got {kind_name(value)}", reason)
