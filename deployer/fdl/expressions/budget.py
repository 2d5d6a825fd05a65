"""Bounds on evaluation: work counted in steps, built strings capped, both deterministic.

Each evaluation (an expression field, or one whole constructor or ``Parameters`` template) may
take :data:`~deployer.fdl.limits.EVALUATION_STEPS` steps, and the evaluations of one interpreter
step (what one event wakes up) :data:`~deployer.fdl.limits.STEP_EVALUATION_STEPS` together.
A :class:`Meter` counts them; it travels in the scope (``ExpressionScope.meter``), one per
evaluation or, in the interpreter, one per step reset before each evaluation. What a step costs
(docs/fdl-semantics.md, "Bounds"):

* each node of the expression, once per evaluation (a static count: nothing loops);
* each array element or map entry of a value an operation walks (equality, ``in``,
  ``arrayUnique``, ``jsonToString``, ``format``...);
* the size of every value put into a new array or map: the items of an array or map literal,
  the arguments of ``toArray``, the values a template's ``.$`` keys give (not a root ``$``);
* each 16 characters of text built, copied, compared or scanned (comparing strings shorter
  than 256 characters costs only the node);
* a regular expression match: the subject's length times the compiled program's size, / 16.

Sizes are logical: a value that holds the same array twice counts it twice, as its JSON text
would. Only those embeddings can make a value larger than what it was built from, so every
value an evaluation returns is at most 16 characters per step charged, plus the variables'
own sizes (themselves bounded: 64 KiB state data, 256 KiB ``$Global`` values). A string an
expression builds is at most :data:`~deployer.fdl.limits.MAX_STRING_CHARS` characters.
Running out of steps fails the evaluation with ``FnF.RuntimeError`` (reason ``EXPR_BUDGET``);
a string over the cap with ``FnF.DataLimitExceeded`` (reason ``EXPR_SIZE``).
Both are state failures that ``Retry``/``Catch`` match. Nothing here reads a clock.
"""

from __future__ import annotations

from typing import Any

from deployer.fdl.expressions.errors import EvaluationError, EvaluationReason
from deployer.fdl.limits import EVALUATION_STEPS, MAX_STRING_CHARS

__all__ = [
    "DATA_LIMIT_CODE",
    "NO_METER",
    "Meter",
    "charge_embedded",
    "charge_size",
    "check_length",
]

#: The state error code of a value over a size limit (the same as the 64 KiB state limit's).
DATA_LIMIT_CODE = "FnF.DataLimitExceeded"

_CHAR_SHIFT = 4  # 16 characters per step


class Meter:
    """Counts the steps of evaluations. ``Meter()`` gives each evaluation
    :data:`EVALUATION_STEPS`; ``Meter(step=N)`` also stops all of them together at ``N`` (the
    interpreter's per-step budget). :meth:`begin` starts the next evaluation; :meth:`charge`
    spends steps and raises :class:`EvaluationError` when they run out. Not thread-safe: one
    meter serves one evaluation at a time.

    One counter does both: ``left`` is what the step has left, ``floor`` where the current
    evaluation must stop (``left`` at its start minus its budget, or 0)."""

    __slots__ = ("_per_evaluation", "_start", "floor", "left")

    def __init__(self, per_evaluation: int = EVALUATION_STEPS, *, step: int | None = None) -> None:
        self._per_evaluation = per_evaluation
        self.left = _UNLIMITED if step is None else step
        self._start = self.left
        self.floor = 0

    def begin(self, steps: int) -> Meter:
        """Start the next evaluation (what is left of the step's budget carries over) and
        charge its first ``steps`` (the static cost of its expressions)."""
        left = self._start = self.left
        self.floor = left - self._per_evaluation if left > self._per_evaluation else 0
        self.left = left - steps
        if self.left < self.floor:
            raise self._exhausted()
        return self

    def charge(self, steps: int) -> None:
        """Spend ``steps``; raise once the evaluation (or the step) has none left."""
        self.left -= steps
        if self.left < self.floor:
            raise self._exhausted()

    def charge_text(self, chars: int) -> None:
        """Spend the steps of ``chars`` characters of text (16 per step)."""
        self.left -= chars >> _CHAR_SHIFT
        if self.left < self.floor:
            raise self._exhausted()

    def _exhausted(self) -> EvaluationError:
        if self._start - self.floor < self._per_evaluation:
            budget = (f"the {max(self._start, 0)} steps left of the budget of this step of the "
                      "execution (all its evaluations together)")
        else:
            budget = f"its budget of {self._per_evaluation} steps"
        return EvaluationError(
            f"the evaluation exceeded {budget}: it does too much work for one evaluation",
            EvaluationReason.BUDGET,
        )


_UNLIMITED = 1 << 62  # the "step" budget of a meter without one


class _NoMeter(Meter):
    """The meter of a scope no entry point has metered yet (``ExpressionScope()``'s default):
    :func:`~deployer.fdl.expressions.evaluator.evaluate` and ``TemplateBuilder.build`` replace it
    with a fresh :class:`Meter`; a compiled closure run without one is a bug, not an unbounded
    run."""

    __slots__ = ()

    def begin(self, steps: int) -> Meter:
        raise AssertionError("an expression was evaluated without a meter")

    def charge(self, steps: int) -> None:
        raise AssertionError("an expression was evaluated without a meter")

    def charge_text(self, chars: int) -> None:
        raise AssertionError("an expression was evaluated without a meter")


NO_METER: Meter = _NoMeter()


def check_length(function: str, length: int) -> None:
    """Fail when a string of ``length`` characters built by ``function`` is over the cap."""
    if length > MAX_STRING_CHARS:
        raise EvaluationError(
            f"{function}: the string would be {length} characters, over the "
            f"{MAX_STRING_CHARS}-character limit of a value built by an expression",
            EvaluationReason.SIZE,
            code=DATA_LIMIT_CODE,
        )


def charge_embedded(meter: Meter, value: Any) -> None:
    """Charge ``value`` being put into a new array or map: its size, when it is a string of
    256 characters or more, an array or a map (scalars cost nothing)."""
    kind = type(value)
    if kind is dict or kind is list:
        charge_size(meter, value)
    elif kind is str and len(value) > 255:
        meter.charge_text(len(value))


def charge_size(meter: Meter, value: Any) -> None:
    """Charge the logical size of ``value``: one step per array element or map entry, one per
    16 characters of its strings and keys. Walks with an explicit stack (any depth) and stops
    as soon as the steps run out, so its own cost stays within the budget."""
    kind = type(value)
    if kind is str:
        meter.charge_text(len(value))
        return
    if kind is not dict and kind is not list:
        return
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        meter.charge(1 + len(item))
        chars = 0
        if type(item) is dict:
            for key, child in item.items():
                chars += len(key)
                child_kind = type(child)
                if child_kind is str:
                    chars += len(child)
                elif child_kind is dict or child_kind is list:
                    push(child)
        else:
            for child in item:
                child_kind = type(child)
                if child_kind is str:
                    chars += len(child)
                elif child_kind is dict or child_kind is list:
                    push(child)
        if chars:
            meter.charge_text(chars)
