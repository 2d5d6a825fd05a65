"""Evaluator of parsed expressions over JSON data.

:func:`evaluate` compiles an :class:`~deployer.fdl.expressions.parser.Expression` once into a tree
of Python closures (cached per expression object) and runs it against a :class:`ExpressionScope`.
There is no re-lexing, no operand stack and no global mutable state; the only per-call allocations
are the values an expression builds (arrays, maps, call arguments).

Semantics (reference §4.3, decisions in docs/fdl-semantics.md "Expressions"): a missing map key
is ``null``; member access or indexing on ``null`` is an error (strict :class:`NullMode`);
negative array indexes count from the end. Operators are compiled by
:mod:`deployer.fdl.expressions.operators`; :class:`ExpressionScope` and :class:`NullMode` live in
:mod:`deployer.fdl.expressions.scope` and are re-exported here.

Every failure is an :class:`EvaluationError` (code ``FnF.RuntimeError``, or
``FnF.DataLimitExceeded`` for a string over the size cap) whose detail names the expression; no
other exception escapes :func:`evaluate`. Returned values may share structure with the scope's
values: callers must treat all values as immutable.

Work is bounded by the scope's :class:`~deployer.fdl.expressions.budget.Meter`: every node
counts once per evaluation (:func:`expression_cost`), operators and built-ins charge what grows
with their data, array and map literals the values they hold (docs/fdl-semantics.md,
"Bounds").
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

from deployer.fdl.expressions.budget import NO_METER, Meter, charge_embedded
from deployer.fdl.expressions.builtins import BUILTINS
from deployer.fdl.expressions.errors import EvaluationError, EvaluationReason
from deployer.fdl.expressions.nodes import (
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
    children,
)
from deployer.fdl.expressions.operators import compile_binary, compile_unary
from deployer.fdl.expressions.scope import (
    UNAVAILABLE,
    Compiled,
    ExpressionScope,
    NullMode,
    Unavailable,
    error_at,
    null_error,
)
from deployer.fdl.expressions.values import kind_name

_TYPE = EvaluationReason.TYPE

__all__ = [
    "UNAVAILABLE",
    "EvaluationError",
    "ExpressionScope",
    "NullMode",
    "Unavailable",
    "evaluate",
    "expression_cost",
]


def evaluate(expr: Expression, scope: ExpressionScope) -> Any:
    """Evaluate ``expr`` against ``scope`` and return a JSON value.

    Pure apart from ``scope.entropy`` (only ``uuid()``/``randomInt()`` draw from it); never
    reads the clock. Bounded: the evaluation takes at most the steps its meter allows
    (``scope.meter``, a fresh :class:`Meter` when it is the default ``NO_METER``; a given
    meter starts a new evaluation).
    Raises :class:`EvaluationError` for every failure, with ``detail`` naming the expression
    text and the offset of the failing node.
    """
    run = _compile(expr)
    if scope.meter is NO_METER:
        scope = scope._replace(meter=Meter())
    try:
        scope.meter.begin(expression_cost(expr))
        return run(scope)
    except EvaluationError as exc:
        raise exc.in_expression(expr.text) from None
    except RecursionError:
        raise too_deep().in_expression(expr.text) from None


def compile_expression(expr: Expression) -> Callable[[ExpressionScope], Any]:
    """The compiled form :func:`evaluate` runs, for callers that evaluate ``expr`` many times.

    ``compile_expression(expr)(scope)`` returns what ``evaluate(expr, scope)`` returns; on
    failure it raises the bare error: an :class:`EvaluationError` that ``evaluate`` would give
    as ``exc.in_expression(expr.text)``, or RecursionError where ``evaluate`` gives
    ``too_deep().in_expression(expr.text)``. The caller does the metering ``evaluate`` does:
    ``scope.meter`` must be a real meter, begun with :func:`expression_cost`.
    """
    return _compile(expr)


@functools.lru_cache(maxsize=4096)
def expression_cost(expr: Expression) -> int:
    """The steps an evaluation of ``expr`` is charged up front: its number of nodes (each runs
    at most once: the language has no loops)."""
    count, stack = 0, [expr.node]
    while stack:
        node = stack.pop()
        count += 1
        stack.extend(children(node))
    return count


def too_deep() -> EvaluationError:
    """The error of an evaluation that ran out of stack (a value nested too deeply)."""
    return EvaluationError("value nested too deeply to evaluate", EvaluationReason.LIMIT)


@functools.lru_cache(maxsize=4096)
def _compile(expr: Expression) -> Compiled:
    return _node(expr.node)


def _node(node: Node) -> Compiled:
    return _COMPILERS[type(node)](node)


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

    def run(scope: ExpressionScope) -> Any:
        value = get(scope)
        if value is UNAVAILABLE:
            raise error_at(offset, f"{name} is not available here", EvaluationReason.UNAVAILABLE)
        return value

    return run


# -- member access and indexing ----------------------------------------------------------


def _member(node: Member) -> Compiled:
    target, name, offset = _node(node.target), node.name, node.offset

    def run(scope: ExpressionScope) -> Any:
        value = target(scope)
        if type(value) is dict:
            return value.get(name)
        if value is None and scope.null_mode is NullMode.LENIENT:
            return None
        if value is None:
            raise null_error(offset, f"cannot read member '{name}' of")
        raise error_at(
            offset,
            f"cannot read member '{name}' of {kind_name(value)}",
            EvaluationReason.TYPE,
        )

    return run


def _index(node: Index) -> Compiled:
    target, key_of, offset = _node(node.target), _node(node.index), node.offset

    def run(scope: ExpressionScope) -> Any:
        container, key = target(scope), key_of(scope)
        kind = type(container)
        if kind is dict:
            if type(key) is not str:
                raise error_at(offset, f"map key must be a string, got {kind_name(key)}", _TYPE)
            return container.get(key)
        if kind is list or kind is str:
            return _position(container, key, offset)
        if container is None and scope.null_mode is NullMode.LENIENT:
            return None
        if container is None:
            raise null_error(offset, "cannot index")
        raise error_at(offset, f"cannot index {kind_name(container)}", _TYPE)

    return run


def _position(sequence: list[Any] | str, key: Any, offset: int) -> Any:
    if type(key) is float and key.is_integer():
        key = int(key)
    if type(key) is not int:
        raise error_at(offset, f"array index must be an integer, got {kind_name(key)}", _TYPE)
    size = len(sequence)
    position = key + size if key < 0 else key
    if not 0 <= position < size:
        raise error_at(
            offset,
            f"index {key} out of range for {kind_name(sequence)} of length {size}",
            EvaluationReason.INDEX,
        )
    return sequence[position]


# -- operators ---------------------------------------------------------------------------


def _unary(node: Unary) -> Compiled:
    return compile_unary(node.op, _node(node.operand), node.offset)


def _binary(node: Binary) -> Compiled:
    return compile_binary(node.op, _node(node.left), _node(node.right), node.offset)


# -- calls and literals ------------------------------------------------------------------


def _call(node: Call) -> Compiled:
    builtin = BUILTINS[node.name]
    impl, offset = builtin.impl, node.offset
    args = tuple(_node(arg) for arg in node.args)
    with_entropy = builtin.uses_entropy

    def run(scope: ExpressionScope) -> Any:
        values = [arg(scope) for arg in args]
        try:
            if with_entropy:
                return impl(scope.meter, scope.entropy, *values)
            return impl(scope.meter, *values)
        except EvaluationError as exc:
            exc.offset = offset if exc.offset is None else exc.offset
            raise

    return run


def _array(node: ArrayLiteral) -> Compiled:
    items = tuple(_node(item) for item in node.items)

    def run(scope: ExpressionScope) -> Any:
        values = [item(scope) for item in items]
        meter = scope.meter
        for value in values:
            charge_embedded(meter, value)
        return values

    return run


def _map(node: MapLiteral) -> Compiled:
    entries = tuple((key, _node(value)) for key, value in node.entries)

    def run(scope: ExpressionScope) -> Any:
        built = {key: value(scope) for key, value in entries}
        meter = scope.meter
        for value in built.values():
            charge_embedded(meter, value)
        return built

    return run


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
