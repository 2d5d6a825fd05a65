"""Evaluator of parsed expressions over JSON data.

:func:`evaluate` compiles an :class:`~deployer.fdl.expressions.Expression` once into a tree of
Python closures (cached per expression object) and runs it against a :class:`Scope`. There is no
re-lexing, no operand stack and no global mutable state; the only per-call allocations are the
values an expression builds (arrays, maps, call arguments).

Semantics (reference §4.3, decisions in docs/fdl-semantics.md "Expressions"):

* missing map key → ``null``; member access or indexing on ``null`` → error (strict mode);
* ``==``/``!=`` deep equality, ints and floats compare numerically, other kinds never equal;
* ordering only number/number or string/string; ``&&``, ``||``, ``!`` take booleans only and
  short-circuit; ``in`` tests array membership or map keys (not substrings);
* ``+ - *`` on two ints give an int (64-bit range enforced), otherwise a float; ``/`` always
  gives a float; ``%`` takes integers and truncates like Go; ``+`` also joins two strings.

Every failure is an :class:`EvaluationError` (code ``FnF.RuntimeError``) whose detail names the
expression; no other exception escapes :func:`evaluate`. Returned values may share structure with
the scope's values: callers must treat all values as immutable.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from deployer.fdl.builtins import BUILTINS, Entropy, SystemEntropy
from deployer.fdl.expression_errors import EvaluationError, EvaluationReason
from deployer.fdl.expressions import (
    ArrayLiteral,
    Binary,
    Call,
    Expression,
    Index,
    Literal,
    MapLiteral,
    Member,
    Node,
    Unary,
    Variable,
)
from deployer.fdl.values import INT64_MAX, INT64_MIN, is_number, json_equal, kind_name

__all__ = [
    "UNAVAILABLE",
    "EvaluationError",
    "NullMode",
    "Scope",
    "Unavailable",
    "evaluate",
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


@dataclass(frozen=True, slots=True)
class Scope:
    """The variables an expression can read, plus evaluation options.

    A variable left :data:`UNAVAILABLE` makes reading it an error (e.g. ``$Output`` in an
    ``InputConstructor``). ``entropy`` feeds ``uuid()``/``randomInt()``: pass a
    :class:`~deployer.fdl.builtins.SeededEntropy` for deterministic, replayable runs.
    """

    input: Any = UNAVAILABLE
    output: Any = UNAVAILABLE
    context: Any = UNAVAILABLE
    global_vars: Any = UNAVAILABLE
    item: Any = UNAVAILABLE
    null_mode: NullMode = NullMode.STRICT
    entropy: Entropy = _SYSTEM_ENTROPY


def evaluate(expr: Expression, scope: Scope) -> Any:
    """Evaluate ``expr`` against ``scope`` and return a JSON value.

    Pure apart from ``scope.entropy`` (only ``uuid()``/``randomInt()`` draw from it); never
    reads the clock. Raises :class:`EvaluationError` for every failure, with ``detail`` naming
    the expression text and the offset of the failing node.
    """
    run = _compile(expr)
    try:
        return run(scope)
    except EvaluationError as exc:
        raise exc.in_expression(expr.text) from None
    except RecursionError:
        error = EvaluationError("value nested too deeply to evaluate", EvaluationReason.LIMIT)
        raise error.in_expression(expr.text) from None


Compiled = Callable[[Scope], Any]


@functools.lru_cache(maxsize=4096)
def _compile(expr: Expression) -> Compiled:
    return _node(expr.node)


def _node(node: Node) -> Compiled:
    return _COMPILERS[type(node)](node)


def _error(offset: int, detail: str, reason: EvaluationReason) -> EvaluationError:
    return EvaluationError(detail, reason, offset=offset)


def _null_error(offset: int, what: str) -> EvaluationError:
    return _error(offset, f"{what} null", EvaluationReason.NULL)


# -- leaves ------------------------------------------------------------------------------


def _literal(node: Literal) -> Compiled:
    value = node.value
    return lambda scope: value


_VARIABLE_FIELDS = {
    "$Input": "input",
    "$Output": "output",
    "$Context": "context",
    "$Global": "global_vars",
    "$Item": "item",
}


def _variable(node: Variable) -> Compiled:
    get = operator.attrgetter(_VARIABLE_FIELDS[node.name])
    name, offset = node.name, node.offset

    def run(scope: Scope) -> Any:
        value = get(scope)
        if value is UNAVAILABLE:
            raise _error(offset, f"{name} is not available here", EvaluationReason.UNAVAILABLE)
        return value

    return run


# -- member access and indexing ----------------------------------------------------------


def _member(node: Member) -> Compiled:
    target, name, offset = _node(node.target), node.name, node.offset

    def run(scope: Scope) -> Any:
        value = target(scope)
        if type(value) is dict:
            return value.get(name)
        if value is None and scope.null_mode is NullMode.LENIENT:
            return None
        if value is None:
            raise _null_error(offset, f"cannot read member '{name}' of")
        raise _error(
            offset,
            f"cannot read member '{name}' of {kind_name(value)}",
            EvaluationReason.TYPE,
        )

    return run


def _index(node: Index) -> Compiled:
    target, key_of, offset = _node(node.target), _node(node.index), node.offset

    def run(scope: Scope) -> Any:
        container, key = target(scope), key_of(scope)
        kind = type(container)
        if kind is dict:
            if type(key) is not str:
                raise _error(offset, f"map key must be a string, got {kind_name(key)}", _TYPE)
            return container.get(key)
        if kind is list or kind is str:
            return _position(container, key, offset)
        if container is None and scope.null_mode is NullMode.LENIENT:
            return None
        if container is None:
            raise _null_error(offset, "cannot index")
        raise _error(offset, f"cannot index {kind_name(container)}", _TYPE)

    return run


_TYPE = EvaluationReason.TYPE


def _position(sequence: list[Any] | str, key: Any, offset: int) -> Any:
    if type(key) is float and key.is_integer():
        key = int(key)
    if type(key) is not int:
        raise _error(offset, f"array index must be an integer, got {kind_name(key)}", _TYPE)
    size = len(sequence)
    position = key + size if key < 0 else key
    if not 0 <= position < size:
        raise _error(
            offset,
            f"index {key} out of range for {kind_name(sequence)} of length {size}",
            EvaluationReason.INDEX,
        )
    return sequence[position]


# -- operators ---------------------------------------------------------------------------


def _unary(node: Unary) -> Compiled:
    operand, offset, op = _node(node.operand), node.offset, node.op
    if op == "!":

        def negate(scope: Scope) -> Any:
            value = operand(scope)
            if type(value) is bool:
                return not value
            if value is None and scope.null_mode is NullMode.LENIENT:
                return True
            raise _operand_error(offset, "!", value, "a bool")

        return negate

    def sign(scope: Scope) -> Any:
        value = operand(scope)
        if not is_number(value):
            raise _operand_error(offset, op, value, "a number")
        return _checked(-value if op == "-" else value, offset)

    return sign


def _operand_error(offset: int, op: str, value: Any, expected: str) -> EvaluationError:
    reason = EvaluationReason.NULL if value is None else _TYPE
    return _error(offset, f"operator '{op}' needs {expected}, got {kind_name(value)}", reason)


def _checked(value: Any, offset: int) -> Any:
    """Enforce the 64-bit integer range and finite floats on arithmetic results."""
    if type(value) is int:
        if INT64_MIN <= value <= INT64_MAX:
            return value
        raise _error(offset, "integer overflow", EvaluationReason.ARITHMETIC)
    if math.isfinite(value):
        return value
    raise _error(offset, "numeric overflow", EvaluationReason.ARITHMETIC)


def _binary(node: Binary) -> Compiled:
    left, right = _node(node.left), _node(node.right)
    return _BINARY_BUILDERS[node.op](left, right, node.offset, node.op)


def _logical(left: Compiled, right: Compiled, offset: int, op: str) -> Compiled:
    stop = op == "||"  # || stops on true, && stops on false

    def truth(value: Any, scope: Scope) -> bool:
        if type(value) is bool:
            return value
        if value is None and scope.null_mode is NullMode.LENIENT:
            return False
        raise _operand_error(offset, op, value, "bools")

    def run(scope: Scope) -> Any:
        if truth(left(scope), scope) is stop:
            return stop
        return truth(right(scope), scope)

    return run


def _equality(left: Compiled, right: Compiled, offset: int, op: str) -> Compiled:
    if op == "==":
        return lambda scope: json_equal(left(scope), right(scope))
    return lambda scope: not json_equal(left(scope), right(scope))


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _ordering(left: Compiled, right: Compiled, offset: int, op: str) -> Compiled:
    compare = _ORDER[op]

    def run(scope: Scope) -> Any:
        a, b = left(scope), right(scope)
        ka, kb = type(a), type(b)
        if (ka is int or ka is float) and (kb is int or kb is float):
            return compare(a, b)
        if ka is str and kb is str:
            return compare(a, b)
        if (a is None or b is None) and scope.null_mode is NullMode.LENIENT:
            return False
        reason = EvaluationReason.NULL if a is None or b is None else _TYPE
        raise _error(
            offset,
            f"cannot compare {kind_name(a)} {op} {kind_name(b)} "
            "(only number with number or string with string)",
            reason,
        )

    return run


def _membership(left: Compiled, right: Compiled, offset: int, op: str) -> Compiled:
    negate = op == "not in"

    def run(scope: Scope) -> Any:
        needle, haystack = left(scope), right(scope)
        kind = type(haystack)
        if kind is list:
            found = any(json_equal(needle, item) for item in haystack)
        elif kind is dict:
            if type(needle) is not str:
                raise _error(offset, f"map keys are strings, got {kind_name(needle)}", _TYPE)
            found = needle in haystack
        elif haystack is None and scope.null_mode is NullMode.LENIENT:
            found = False
        else:
            hint = " (use regexMatchString for substrings)" if kind is str else ""
            raise _operand_error(offset, op, haystack, "an array or a map" + hint)
        return found is not negate

    return run


def _arithmetic(left: Compiled, right: Compiled, offset: int, op: str) -> Compiled:
    apply = _ARITHMETIC[op]

    def run(scope: Scope) -> Any:
        a, b = left(scope), right(scope)
        ka, kb = type(a), type(b)
        if ka is int and kb is int and op != "/":
            result = apply(a, b, offset)
            if INT64_MIN <= result <= INT64_MAX:
                return result
            return _checked(result, offset)
        if (ka is int or ka is float) and (kb is int or kb is float):
            return _checked(apply(a, b, offset), offset)
        if op == "+" and ka is str and kb is str:
            return a + b
        raise _error(
            offset,
            f"operator '{op}' cannot combine {kind_name(a)} and {kind_name(b)}",
            EvaluationReason.NULL if a is None or b is None else _TYPE,
        )

    return run


def _divide(a: Any, b: Any, offset: int) -> Any:
    if b == 0:
        raise _error(offset, "division by zero", EvaluationReason.ARITHMETIC)
    try:
        return a / b
    except OverflowError:
        raise _error(offset, "numeric overflow", EvaluationReason.ARITHMETIC) from None


def _modulo(a: Any, b: Any, offset: int) -> Any:
    ints = []
    for value in (a, b):
        if type(value) is float and value.is_integer():
            value = int(value)
        if type(value) is not int:
            raise _error(offset, f"operator '%' needs integers, got {value!r}", _TYPE)
        ints.append(value)
    dividend, divisor = ints
    if divisor == 0:
        raise _error(offset, "modulo by zero", EvaluationReason.ARITHMETIC)
    remainder = abs(dividend) % abs(divisor)  # Go truncates: the sign follows the dividend
    return -remainder if dividend < 0 else remainder


def _plain(function: Callable[[Any, Any], Any]) -> Callable[[Any, Any, int], Any]:
    def apply(a: Any, b: Any, offset: int) -> Any:
        try:
            return function(a, b)
        except OverflowError:  # an integer too large for a float
            raise _error(offset, "numeric overflow", EvaluationReason.ARITHMETIC) from None

    return apply


_ARITHMETIC: dict[str, Callable[[Any, Any, int], Any]] = {
    "+": _plain(operator.add),
    "-": _plain(operator.sub),
    "*": _plain(operator.mul),
    "/": _divide,
    "%": _modulo,
}

_BINARY_BUILDERS: dict[str, Callable[[Compiled, Compiled, int, str], Compiled]] = {
    "||": _logical,
    "&&": _logical,
    "==": _equality,
    "!=": _equality,
    "in": _membership,
    "not in": _membership,
    **dict.fromkeys(_ORDER, _ordering),
    **dict.fromkeys(_ARITHMETIC, _arithmetic),
}


# -- calls and literals ------------------------------------------------------------------


def _call(node: Call) -> Compiled:
    builtin = BUILTINS[node.name]
    impl, offset = builtin.impl, node.offset
    args = tuple(_node(arg) for arg in node.args)
    with_entropy = builtin.uses_entropy

    def run(scope: Scope) -> Any:
        values = [arg(scope) for arg in args]
        try:
            if with_entropy:
                return impl(scope.entropy, *values)
            return impl(*values)
        except EvaluationError as exc:
            exc.offset = offset if exc.offset is None else exc.offset
            raise

    return run


def _array(node: ArrayLiteral) -> Compiled:
    items = tuple(_node(item) for item in node.items)
    return lambda scope: [item(scope) for item in items]


def _map(node: MapLiteral) -> Compiled:
    entries = tuple((key, _node(value)) for key, value in node.entries)
    return lambda scope: {key: value(scope) for key, value in entries}


_COMPILERS: dict[type, Callable[[Any], Compiled]] = {
    Literal: _literal,
    Variable: _variable,
    Member: _member,
    Index: _index,
    Unary: _unary,
    Binary: _binary,
    Call: _call,
    ArrayLiteral: _array,
    MapLiteral: _map,
}
