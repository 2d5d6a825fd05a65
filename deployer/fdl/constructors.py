"""Constructors and parameters: templates whose ``.$`` keys are expressions (reference §4.2).

A template is the YAML value of an ``InputConstructor``, ``OutputConstructor``,
``GlobalConstructor``, ``Catch[].OutputConstructor`` or ``Parameters`` field:

* a key ending in ``.$`` holds an expression (a string); the output key drops the suffix and
  takes the expression's value;
* the key ``$`` alone makes its expression's value the whole result (``{$: $Input}``); it cannot
  sit next to other keys;
* other keys are literal: strings such as ``"$Input.x"`` stay strings, nested maps are walked
  (so inner ``.$`` keys are evaluated), arrays are literal but map elements are walked;
* ``a.$`` and a literal ``a`` in the same map is an error (which one wins would be a guess).

Errors are :class:`EvaluationError` whose detail starts with the key path, e.g.
``body.delay.$: cannot read member 'x' of null (in expression `...`)``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from deployer.fdl.evaluator import Scope, evaluate
from deployer.fdl.expression_errors import (
    EvaluationError,
    EvaluationReason,
    ExpressionSyntaxError,
)
from deployer.fdl.expressions import parse_expression

__all__ = ["ROOT_KEY", "SUFFIX", "build_value", "iter_expressions"]

SUFFIX = ".$"
ROOT_KEY = "$"


def build_value(template: Any, scope: Scope) -> Any:
    """Build the value a constructor template describes, evaluating its ``.$`` keys.

    Pure (no clock, no I/O; ``uuid()``/``randomInt()`` draw from ``scope.entropy``). Literal
    parts of the template are copied, never shared with the result. Raises
    :class:`EvaluationError` naming the key path for a non-string or unparsable expression, a
    ``$`` key next to other keys, a key given both literally and with ``.$``, or any
    evaluation failure.
    """
    return _build(template, scope, "")


def iter_expressions(template: Any) -> Iterator[tuple[str, Any]]:
    """Yield ``(key_path, value)`` for every expression key in ``template`` (without
    evaluating or parsing): the validator parses each value and reports by path."""
    stack: list[tuple[str, Any]] = [("", template)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                child = _join(path, str(key))
                if _is_expression_key(key):
                    yield child, item
                else:
                    stack.append((child, item))
        elif isinstance(value, list):
            for position in reversed(range(len(value))):
                stack.append((f"{path}[{position}]", value[position]))


def _is_expression_key(key: Any) -> bool:
    return isinstance(key, str) and (key == ROOT_KEY or key.endswith(SUFFIX))


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _build(template: Any, scope: Scope, path: str) -> Any:
    if isinstance(template, dict):
        return _build_map(template, scope, path)
    if isinstance(template, list):
        return [
            _build(item, scope, f"{path}[{position}]") if isinstance(item, dict | list) else item
            for position, item in enumerate(template)
        ]
    return template


def _build_map(template: dict[Any, Any], scope: Scope, path: str) -> Any:
    if ROOT_KEY in template:
        where = _join(path, ROOT_KEY)
        if len(template) > 1:
            others = ", ".join(sorted(str(key) for key in template if key != ROOT_KEY))
            raise EvaluationError(
                f"{where}: the '$' key must be the only key of its map (also found: {others})",
                EvaluationReason.CONSTRUCTOR,
            )
        return _evaluate_key(template[ROOT_KEY], scope, where)
    result: dict[str, Any] = {}
    for key, value in template.items():
        name = str(key)
        where = _join(path, name)
        if name.endswith(SUFFIX):
            target = name[: -len(SUFFIX)]
            if target in template:
                raise EvaluationError(
                    f"{where}: key '{target}' is given both literally and as an expression",
                    EvaluationReason.CONSTRUCTOR,
                )
            result[target] = _evaluate_key(value, scope, where)
        else:
            result[name] = _build(value, scope, where)
    return result


def _evaluate_key(text: Any, scope: Scope, where: str) -> Any:
    if not isinstance(text, str):
        raise EvaluationError(
            f"{where}: an expression key needs a string value, got {type(text).__name__}",
            EvaluationReason.CONSTRUCTOR,
        )
    try:
        return evaluate(parse_expression(text), scope)
    except ExpressionSyntaxError as exc:
        raise EvaluationError(
            f"{where}: invalid expression `{text}`: {exc.message} (at offset {exc.offset})",
            EvaluationReason.SYNTAX,
            expression=text,
            offset=exc.offset,
        ) from None
    except EvaluationError as exc:
        raise exc.at_path(where) from None
