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

Building a template is one evaluation for the scope's meter: its expressions share one budget
(their nodes are charged up front), and each value a ``.$`` key (or a nested ``$``) puts into
the result is charged by its size (docs/fdl-semantics.md, "Bounds").
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from deployer.fdl.expressions.budget import NO_METER, Meter, charge_embedded
from deployer.fdl.expressions.errors import (
    EvaluationError,
    EvaluationReason,
    ExpressionSyntaxError,
)
from deployer.fdl.expressions.evaluator import (
    ExpressionScope,
    compile_expression,
    expression_cost,
    too_deep,
)
from deployer.fdl.expressions.parser import parse_expression

__all__ = [
    "EXPRESSION_SUFFIX",
    "ROOT_EXPRESSION_KEY",
    "TemplateBuilder",
    "build_value",
    "compile_template",
    "is_expression_key",
    "iter_expressions",
]

#: The suffix of an expression key (``job_id.$``) and the root key (``{$: $Input}``); the flow
#: AST (:mod:`deployer.fdl.syntax.template_nodes`) spells its templates' keys with them.
EXPRESSION_SUFFIX = ".$"
ROOT_EXPRESSION_KEY = "$"


def is_expression_key(key: object) -> bool:
    """True for ``name.$`` keys and for the root key ``$``."""
    return isinstance(key, str) and (key == ROOT_EXPRESSION_KEY or key.endswith(EXPRESSION_SUFFIX))


def build_value(template: Any, scope: ExpressionScope) -> Any:
    """Build the value a constructor template describes, evaluating its ``.$`` keys.

    Pure (no clock, no I/O; ``uuid()``/``randomInt()`` draw from ``scope.entropy``); one
    evaluation for ``scope.meter`` (a fresh meter when it is the default). Literal
    parts of the template are copied, never shared with the result. Raises
    :class:`EvaluationError` naming the key path for a non-string or unparsable expression, a
    ``$`` key next to other keys, a key given both literally and with ``.$``, or any
    evaluation failure. Equivalent to ``compile_template(template).build(scope)``.
    """
    return compile_template(template).build(scope)


@dataclass(frozen=True, slots=True)
class TemplateBuilder:
    """A constructor template checked and compiled once; :meth:`build` runs it."""

    source: Any
    _build: Callable[[ExpressionScope], Any]
    cost: int = 0  # the nodes of all its expressions, charged when a build begins

    def build(self, scope: ExpressionScope) -> Any:
        """Same result and errors as :func:`build_value` on ``source``."""
        if scope.meter is NO_METER:
            scope = scope._replace(meter=Meter())
        scope.meter.begin(self.cost)
        return self._build(scope)


def compile_template(template: Any) -> TemplateBuilder:
    """Compile ``template`` for repeated :meth:`TemplateBuilder.build` calls (the interpreter keeps
    one per constructor). Structural problems (a ``$`` key beside others, a key given both
    literally and as ``.$``, a non-string or unparsable expression) are reported by ``build``,
    as :func:`build_value` would, so compiling never fails."""
    return TemplateBuilder(template, _compile(template, ""), _static_cost(template))


def _static_cost(template: Any) -> int:
    cost = 0
    for _, text in iter_expressions(template):
        if isinstance(text, str):
            with contextlib.suppress(ExpressionSyntaxError):  # fails when built, before work
                cost += expression_cost(parse_expression(text))
    return cost


def iter_expressions(template: Any) -> Iterator[tuple[str, Any]]:
    """Yield ``(key_path, value)`` for every expression key in ``template`` (without
    evaluating or parsing): the validator parses each value and reports by path."""
    stack: list[tuple[str, Any]] = [("", template)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, dict):
            for key, item in reversed(list(value.items())):
                child = _key_path(path, str(key))
                if is_expression_key(key):
                    yield child, item
                else:
                    stack.append((child, item))
        elif isinstance(value, list):
            for position in reversed(range(len(value))):
                stack.append((f"{path}[{position}]", value[position]))


def _key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _compile(template: Any, path: str) -> Callable[[ExpressionScope], Any]:
    if isinstance(template, dict):
        return _compile_map(template, path)
    if isinstance(template, list):
        items = [_compile(item, f"{path}[{i}]") for i, item in enumerate(template)]
        return lambda scope: [item(scope) for item in items]
    return lambda scope: template


def _compile_map(template: dict[Any, Any], path: str) -> Callable[[ExpressionScope], Any]:
    if ROOT_EXPRESSION_KEY in template:
        where = _key_path(path, ROOT_EXPRESSION_KEY)
        if len(template) > 1:
            others = ", ".join(sorted(str(key) for key in template if key != ROOT_EXPRESSION_KEY))
            return _failing(
                f"{where}: the '$' key must be the only key of its map (also found: {others})"
            )
        return _compile_expression(template[ROOT_EXPRESSION_KEY], where, embedded=bool(path))
    entries: list[tuple[str, Callable[[ExpressionScope], Any]]] = []
    for key, value in template.items():
        name = str(key)
        where = _key_path(path, name)
        if not name.endswith(EXPRESSION_SUFFIX):
            entries.append((name, _compile(value, where)))
            continue
        target = name[: -len(EXPRESSION_SUFFIX)]
        if target in template:
            return _failing(f"{where}: key '{target}' is given both literally and as an expression")
        entries.append((target, _compile_expression(value, where, embedded=True)))
    return lambda scope: {name: build(scope) for name, build in entries}


def _failing(detail: str) -> Callable[[ExpressionScope], Any]:
    def fail(scope: ExpressionScope) -> Any:
        raise EvaluationError(detail, EvaluationReason.CONSTRUCTOR)

    return fail


def _compile_expression(
    text: Any, where: str, *, embedded: bool
) -> Callable[[ExpressionScope], Any]:
    """The closure of one expression key; ``embedded`` when its value goes into a map the
    template builds (every ``.$`` key, a nested ``$``), whose size is then charged."""
    if not isinstance(text, str):
        return _failing(
            f"{where}: an expression key needs a string value, got {type(text).__name__}"
        )
    try:
        expr = parse_expression(text)
    except ExpressionSyntaxError as exc:
        detail = f"{where}: invalid expression `{text}`: {exc.message} (at offset {exc.offset})"
        offset = exc.offset

        def invalid(scope: ExpressionScope) -> Any:
            raise EvaluationError(detail, EvaluationReason.SYNTAX, expression=text, offset=offset)

        return invalid

    compiled = compile_expression(expr)
    text = expr.text

    def run(scope: ExpressionScope) -> Any:  # evaluate(expr, scope), without its per-call lookups
        try:
            value = compiled(scope)
            if embedded:
                charge_embedded(scope.meter, value)
            return value
        except EvaluationError as exc:
            raise exc.in_expression(text).at_path(where) from None
        except RecursionError:
            raise too_deep().in_expression(text).at_path(where) from None

    return run
