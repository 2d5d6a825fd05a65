"""Validator checks on the expressions a flow holds: expression fields (``Condition``,
``ItemsPath``, ``Seconds.$``...) and templates (constructors, Task ``Parameters``) at any depth:
syntax, the variables read, where ``$Output`` may be read, and the keys of a template (a root
``$`` alone, one output key per template, ``.$`` values that are strings)."""

from __future__ import annotations

from deployer.fdl.expressions.parser import ExpressionSyntaxError, parse_expression, variables_used
from deployer.fdl.syntax.ast import (
    ROOT_EXPRESSION_KEY,
    Expr,
    Template,
    TemplateList,
    TemplateValue,
)
from deployer.fdl.syntax.diagnostics import Code, Reporter
from deployer.fdl.syntax.schema import describe

__all__ = ["check_expression", "check_template", "describe_template_value"]


def check_expression(expr: Expr, path: str, report: Reporter, *, output_allowed: bool,
                     item_allowed: bool = False) -> None:
    """Parse ``expr``; report syntax errors (offset in the message), unknown variables,
    ``$Output`` outside output/global constructors and ``$Item`` outside a distributed Map's
    ItemConstructor (``item_allowed``)."""
    try:
        parsed = parse_expression(expr.text)
    except ExpressionSyntaxError as error:
        code = Code.UNKNOWN_VARIABLE if error.code == "EXPR_UNKNOWN_VARIABLE" else None
        message = f"invalid expression `{expr.text}`: {error.message} (at offset {error.offset})"
        report(code or Code.EXPRESSION_SYNTAX, message, expr.position, path)
        return
    used = variables_used(parsed)
    if "$Output" in used and not output_allowed:
        report(
            Code.OUTPUT_OUT_OF_PLACE,
            f"`{expr.text}` reads $Output, which exists only once the state has produced it",
            expr.position,
            path,
            hint="read $Output only in OutputConstructor, GlobalConstructor or a Catch "
            "OutputConstructor",
        )
    if "$Item" in used and not item_allowed:
        report(
            Code.UNKNOWN_VARIABLE,
            f"`{expr.text}` reads $Item, which exists only in a distributed Map ItemConstructor",
            expr.position,
            path,
            hint="an inline Map iteration reads $Input",
        )


def check_template(
    template: Template, path: str, report: Reporter, *, output_allowed: bool,
    item_allowed: bool = False,
) -> None:
    """Check the keys of a constructor / Parameters mapping and every expression in it, at any
    depth."""
    _check_keys(template, path, report)
    for item in template.fields:
        item_path = f"{path}.{item.key}"
        if item.is_expression and not isinstance(item.value, Expr):
            report(
                Code.EXPRESSION_NOT_STRING,
                f"'{item.key}' ends in '.$' so its value must be an expression string, "
                f"found {describe_template_value(item.value)}",
                item.value_position,
                item_path,
                hint="drop the '.$' from the key to use the value literally"
                if item.key != ROOT_EXPRESSION_KEY
                else None,
            )
        _check_value(item.value, item_path, report, output_allowed, item_allowed)


def _check_keys(template: Template, path: str, report: Reporter) -> None:
    """A root ``$`` key stands alone; no two keys produce the same output key."""
    keys = [item.key for item in template.fields]
    if ROOT_EXPRESSION_KEY in keys and len(keys) > 1:
        item = template.fields[keys.index(ROOT_EXPRESSION_KEY)]
        report(
            Code.ROOT_KEY_WITH_OTHERS,
            "the root key '$' replaces the whole value and cannot sit beside other keys",
            item.position,
            f"{path}.$",
            hint="merge the other keys into the expression, e.g. jsonMerge(...)",
        )
    produced: dict[str, str] = {}
    for item in template.fields:
        earlier = produced.setdefault(item.output_key, item.key)
        if earlier != item.key:
            report(
                Code.CONFLICTING_FIELDS,
                f"'{earlier}' and '{item.key}' both produce the key '{item.output_key}'",
                item.position,
                f"{path}.{item.key}",
                hint="keep only one of them",
            )


def _check_value(value: TemplateValue, path: str, report: Reporter, output_allowed: bool,
                 item_allowed: bool = False) -> None:
    if isinstance(value, Expr):
        check_expression(value, path, report, output_allowed=output_allowed,
                         item_allowed=item_allowed)
    elif isinstance(value, Template):
        check_template(value, path, report, output_allowed=output_allowed,
                       item_allowed=item_allowed)
    elif isinstance(value, TemplateList):
        for index, item in enumerate(value.items):
            _check_value(item, f"{path}[{index}]", report, output_allowed, item_allowed)


def describe_template_value(value: TemplateValue) -> str:
    """What a template value is, for messages: ``a mapping``, ``a list``, ``the string 'x'``..."""
    if isinstance(value, Template):
        return "a mapping"
    if isinstance(value, TemplateList):
        return "a list"
    return describe(value)  # type: ignore[arg-type]
