"""Operators of the expression language, compiled into closures over compiled operands.

:func:`compile_unary` and :func:`compile_binary` take the operands already compiled (see
:mod:`deployer.fdl.expressions.evaluator`) and return one closure per operator node, so the
evaluator never dispatches on the operator at run time. Semantics (reference §4.3,
docs/fdl-semantics.md):

* ``==``/``!=`` deep equality, ints and floats compare numerically, other kinds never equal;
* ordering only number/number or string/string; ``&&``, ``||``, ``!`` take booleans only and
  short-circuit; ``in`` tests array membership or map keys (not substrings);
* ``+ - *`` on two ints give an int (64-bit range enforced), otherwise a float; ``/`` always
  gives a float; ``%`` takes integers and truncates like Go; ``+`` also joins two strings;
* :class:`~deployer.fdl.expressions.scope.NullMode` decides what ``null`` does in ``!``, ``&&``,
  ``||``, ordering and ``in``.

Operators whose work grows with their operands charge the scope's meter first: joining strings
(the result's length, capped), comparing strings, deep equality and ``in`` over arrays and maps
(docs/fdl-semantics.md, "Bounds").
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from deployer.fdl.expressions.budget import Meter, charge_size, check_length
from deployer.fdl.expressions.errors import EvaluationReason
from deployer.fdl.expressions.scope import (
    Compiled,
    ExpressionScope,
    NullMode,
    error_at,
    operand_error,
)
from deployer.fdl.expressions.values import INT64_MAX, INT64_MIN, is_number, json_equal, kind_name

__all__ = ["checked", "compile_binary", "compile_unary"]

_TYPE = EvaluationReason.TYPE


def compile_binary(op: str, left: Compiled, right: Compiled, offset: int) -> Compiled:
    """The closure of infix operator ``op`` (canonical spelling) over compiled operands."""
    return _BINARY_BUILDERS[op](left, right, offset, op)


def compile_unary(op: str, operand: Compiled, offset: int) -> Compiled:
    """The closure of prefix operator ``op`` (``!``, ``-`` or ``+``) over a compiled operand."""
    if op == "!":

        def negate(scope: ExpressionScope) -> Any:
            value = operand(scope)
            if type(value) is bool:
                return not value
            if value is None and scope.null_mode is NullMode.LENIENT:
                return True
            raise operand_error(offset, "!", value, "a bool")

        return negate

    def sign(scope: ExpressionScope) -> Any:
        value = operand(scope)
        if not is_number(value):
            raise operand_error(offset, op, value, "a number")
        return checked(-value if op == "-" else value, offset)

    return sign


def checked(value: Any, offset: int) -> Any:
    """Enforce the 64-bit integer range and finite floats on arithmetic results."""
    if type(value) is int:
        if INT64_MIN <= value <= INT64_MAX:
            return value
        raise error_at(offset, "integer overflow", EvaluationReason.ARITHMETIC)
    if math.isfinite(value):
        return value
    raise error_at(offset, "numeric overflow", EvaluationReason.ARITHMETIC)


def _logical(left: Compiled, right: Compiled, offset: int, op: str) -> Compiled:
    stop = op == "||"  # || stops on true, && stops on false

    def truth(value: Any, scope: ExpressionScope) -> bool:
        if type(value) is bool:
            return value
        if value is None and scope.null_mode is NullMode.LENIENT:
            return False
        raise operand_error(offset, op, value, "bools")

    def run(scope: ExpressionScope) -> Any:
        if truth(left(scope), scope) is stop:
            return stop
        return truth(right(scope), scope)

    return run


def _equality(left: Compiled, right: Compiled, offset: int, op: str) -> Compiled:
    negate = op == "!="

    def run(scope: ExpressionScope) -> Any:
        a, b = left(scope), right(scope)
        ka, kb = type(a), type(b)
        if ka is str and kb is str:
            if len(a) > 255:
                scope.meter.charge_text(len(a))
        elif ka is dict or ka is list or kb is dict or kb is list:
            _charge_both(scope.meter, a, b)
        return json_equal(a, b) is not negate

    return run


def _charge_both(meter: Meter, a: Any, b: Any) -> None:
    """Deep equality walks at most both values."""
    charge_size(meter, a)
    charge_size(meter, b)


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _ordering(left: Compiled, right: Compiled, offset: int, op: str) -> Compiled:
    compare = _ORDER[op]

    def run(scope: ExpressionScope) -> Any:
        a, b = left(scope), right(scope)
        ka, kb = type(a), type(b)
        if (ka is int or ka is float) and (kb is int or kb is float):
            return compare(a, b)
        if ka is str and kb is str:
            if len(a) > 255:
                scope.meter.charge_text(len(a))
            return compare(a, b)
        if (a is None or b is None) and scope.null_mode is NullMode.LENIENT:
            return False
        reason = EvaluationReason.NULL if a is None or b is None else _TYPE
        raise error_at(
            offset,
            f"cannot compare {kind_name(a)} {op} {kind_name(b)} "
            "(only number with number or string with string)",
            reason,
        )

    return run


def _membership(left: Compiled, right: Compiled, offset: int, op: str) -> Compiled:
    negate = op == "not in"

    def run(scope: ExpressionScope) -> Any:
        needle, haystack = left(scope), right(scope)
        kind = type(haystack)
        if kind is list:
            _charge_both(scope.meter, needle, haystack)
            found = any(json_equal(needle, item) for item in haystack)
        elif kind is dict:
            if type(needle) is not str:
                raise error_at(offset, f"map keys are strings, got {kind_name(needle)}", _TYPE)
            if len(needle) > 255:
                scope.meter.charge_text(len(needle))
            found = needle in haystack
        elif haystack is None and scope.null_mode is NullMode.LENIENT:
            found = False
        else:
            hint = " (use regexMatchString for substrings)" if kind is str else ""
            raise operand_error(offset, op, haystack, "an array or a map" + hint)
        return found is not negate

    return run


def _arithmetic(left: Compiled, right: Compiled, offset: int, op: str) -> Compiled:
    apply = _ARITHMETIC[op]

    def run(scope: ExpressionScope) -> Any:
        a, b = left(scope), right(scope)
        ka, kb = type(a), type(b)
        if ka is int and kb is int and op != "/":
            result = apply(a, b, offset)
            if INT64_MIN <= result <= INT64_MAX:
                return result
            return checked(result, offset)
        if (ka is int or ka is float) and (kb is int or kb is float):
            return checked(apply(a, b, offset), offset)
        if op == "+" and ka is str and kb is str:
            length = len(a) + len(b)
            check_length("operator '+'", length)
            scope.meter.charge_text(length)
            return a + b
        raise error_at(
            offset,
            f"operator '{op}' cannot combine {kind_name(a)} and {kind_name(b)}",
            EvaluationReason.NULL if a is None or b is None else _TYPE,
        )

    return run


def _divide(a: Any, b: Any, offset: int) -> Any:
    if b == 0:
        raise error_at(offset, "division by zero", EvaluationReason.ARITHMETIC)
    try:
        return a / b
    except OverflowError:
        raise error_at(offset, "numeric overflow", EvaluationReason.ARITHMETIC) from None


def _modulo(a: Any, b: Any, offset: int) -> Any:
    ints = []
    for value in (a, b):
        if type(value) is float and value.is_integer():
            value = int(value)
        if type(value) is not int:
            raise error_at(offset, f"operator '%' needs integers, got {value!r:.100}", _TYPE)
        ints.append(value)
    dividend, divisor = ints
    if divisor == 0:
        raise error_at(offset, "modulo by zero", EvaluationReason.ARITHMETIC)
    remainder = abs(dividend) % abs(divisor)  # Go truncates: the sign follows the dividend
    return -remainder if dividend < 0 else remainder


def _plain(function: Callable[[Any, Any], Any]) -> Callable[[Any, Any, int], Any]:
    def apply(a: Any, b: Any, offset: int) -> Any:
        try:
            return function(a, b)
        except OverflowError:  # an integer too large for a float
            raise error_at(offset, "numeric overflow", EvaluationReason.ARITHMETIC) from None

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
