"""Validator checks on expressions, templates, Retry/Catch rules and Task actions."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TypeVar

from deployer.fdl.expressions.parser import ExpressionSyntaxError, parse_expression, variables_used
from deployer.fdl.syntax.ast import (
    ROOT_EXPRESSION_KEY,
    CatchRule,
    Expr,
    Position,
    RawField,
    RetryRule,
    TaskState,
    Template,
    TemplateList,
    TemplateValue,
)
from deployer.fdl.syntax.diagnostics import Code, Severity
from deployer.fdl.syntax.schema import (
    CATCH_FIELDS,
    RETRY_FIELDS,
    Reporter,
    check_fields,
    check_list,
    describe,
    did_you_mean,
)

__all__ = [
    "check_action",
    "check_catch",
    "check_expression",
    "check_retry",
    "check_template",
    "indexed",
    "mapping_indexes",
]

MAX_RETRY_SECONDS = 86_400
FC_INVOKE = "FC:InvokeFunction"
T = TypeVar("T")
FC_PARAMETERS = ("resourceArn", "invocationType", "body")
INVOCATION_TYPES = ("Sync", "Async")


def indexed(raw: Mapping[str, RawField], key: str, items: tuple[T, ...]) -> Iterator[tuple[int, T]]:
    """Pair each node built from list ``key`` with its YAML index."""
    indexes = mapping_indexes(raw, key)
    for number, item in enumerate(items):
        yield (indexes[number] if number < len(indexes) else number), item


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def mapping_indexes(raw: Mapping[str, RawField], key: str) -> list[int]:
    """YAML indexes of the mapping elements of list ``key`` (the parser skipped the others)."""
    entry = raw.get(key)
    if entry is None or not isinstance(entry.value, tuple):
        return []
    return [index for index, item in enumerate(entry.value) if isinstance(item, Mapping)]


def check_expression(expr: Expr, path: str, report: Reporter, *, output_allowed: bool) -> None:
    """Parse ``expr``; report syntax errors (offset in the message), unknown variables,
    ``$Output`` outside output/global constructors and ``$Item`` anywhere."""
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
    if "$Item" in used:
        report(
            Code.UNKNOWN_VARIABLE,
            f"`{expr.text}` reads $Item, which exists only in a distributed Map ItemConstructor",
            expr.position,
            path,
            hint="distributed Map mode is not supported; an inline Map iteration reads $Input",
        )


def check_template(
    template: Template, path: str, report: Reporter, *, output_allowed: bool
) -> None:
    """Check every expression of a constructor / Parameters mapping at any depth."""
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
    for item in template.fields:
        item_path = f"{path}.{item.key}"
        if item.is_expression and not isinstance(item.value, Expr):
            report(
                Code.EXPRESSION_NOT_STRING,
                f"'{item.key}' ends in '.$' so its value must be an expression string, "
                f"found {_describe_template(item.value)}",
                item.value_position,
                item_path,
                hint="drop the '.$' from the key to use the value literally"
                if item.key != ROOT_EXPRESSION_KEY
                else None,
            )
        _check_value(item.value, item_path, report, output_allowed)


def _check_value(value: TemplateValue, path: str, report: Reporter, output_allowed: bool) -> None:
    if isinstance(value, Expr):
        check_expression(value, path, report, output_allowed=output_allowed)
    elif isinstance(value, Template):
        check_template(value, path, report, output_allowed=output_allowed)
    elif isinstance(value, TemplateList):
        for index, item in enumerate(value.items):
            _check_value(item, f"{path}[{index}]", report, output_allowed)


def _describe_template(value: TemplateValue) -> str:
    if isinstance(value, Template):
        return "a mapping"
    if isinstance(value, TemplateList):
        return "a list"
    return describe(value)  # type: ignore[arg-type]


def _check_errors(
    raw: Mapping[str, RawField], position: Position, path: str, report: Reporter
) -> None:
    empty, hint = "'Errors' must list at least one error code", "use FnF.ALL to match every error"
    codes = check_list(raw, "Errors", path, report, empty=empty, hint=hint)
    for index, code in enumerate(codes or ()):
        if not isinstance(code, str) or not code:
            report(
                Code.WRONG_TYPE,
                f"error codes must be non-empty strings, found {describe(code)}",
                raw["Errors"].value_position,
                f"{path}.Errors[{index}]",
            )


def check_retry(rule: RetryRule, path: str, report: Reporter) -> None:
    """Fields, types and limits of one Retry rule."""
    check_fields(rule.raw, RETRY_FIELDS, rule.position, path, report, where="Retry rule")
    _check_errors(rule.raw, rule.position, path, report)
    raw = rule.raw
    for key in ("IntervalSeconds", "MaxBackoffSeconds"):
        entry = raw.get(key)
        value = entry.value if entry else None
        if (
            entry
            and isinstance(value, int)
            and _is_int(value)
            and not 0 <= value <= MAX_RETRY_SECONDS
        ):
            report(
                Code.RETRY_INTERVAL_RANGE,
                f"'{key}' must be between 0 and {MAX_RETRY_SECONDS}, found {value}",
                entry.value_position,
                f"{path}.{key}",
            )
    attempts = raw.get("MaxAttempts")
    if attempts and isinstance(attempts.value, int) and attempts.value < 0:
        report(
            Code.MAX_ATTEMPTS_RANGE,
            f"'MaxAttempts' must be 0 or more, found {attempts.value}",
            attempts.value_position,
            f"{path}.MaxAttempts",
        )
    rate = raw.get("BackoffRate")
    if (
        rate
        and isinstance(rate.value, (int, float))
        and not isinstance(rate.value, bool)
        and rate.value < 1
    ):
        report(
            Code.BACKOFF_RATE_RANGE,
            f"'BackoffRate' must be 1 or more, found {rate.value}",
            rate.value_position,
            f"{path}.BackoffRate",
        )


def check_catch(rule: CatchRule, path: str, report: Reporter) -> None:
    """Fields, types and the OutputConstructor of one Catch rule (targets are checked by the
    caller, which knows the scope)."""
    check_fields(rule.raw, CATCH_FIELDS, rule.position, path, report, where="Catch rule")
    _check_errors(rule.raw, rule.position, path, report)
    if rule.output_constructor is not None:
        check_template(
            rule.output_constructor, f"{path}.OutputConstructor", report, output_allowed=True
        )


def check_action(state: TaskState, path: str, report: Reporter, execution_mode: str) -> None:
    """Action format, TaskMode, callback modes in Express, and FC:InvokeFunction parameters."""
    raw = state.raw
    mode = raw.get("TaskMode")
    if mode is not None and isinstance(mode.value, str) and mode.value != state.task_mode.value:
        modes = ("RequestComplete", "WaitForSystemCallback", "WaitForCustomCallback")
        report(
            Code.INVALID_VALUE,
            f"unknown TaskMode '{mode.value}'",
            mode.value_position,
            f"{path}.TaskMode",
            hint=did_you_mean(mode.value, modes) or "one of " + ", ".join(modes),
        )
    elif state.task_mode.value != "RequestComplete" and execution_mode == "Express":
        report(
            Code.CALLBACK_IN_EXPRESS,
            f"TaskMode {state.task_mode.value} needs a Standard flow; Express flows cannot wait "
            "for callbacks",
            mode.value_position if mode else state.position,
            f"{path}.TaskMode",
        )
    action = raw.get("Action")
    if action is None or not state.action:
        return
    service, _, operation = state.action.partition(":")
    if not service or not operation:
        report(
            Code.ACTION_FORMAT,
            f"Action '{state.action}' must look like Service:Operation",
            action.value_position,
            f"{path}.Action",
            hint="e.g. FC:InvokeFunction",
        )
    elif state.action != FC_INVOKE:
        report(
            Code.ACTION_NOT_EMULATED,
            f"the emulator cannot run Action '{state.action}'; only {FC_INVOKE} is emulated",
            action.value_position,
            f"{path}.Action",
            severity=Severity.WARNING,
            hint=did_you_mean(state.action, [FC_INVOKE]),
        )
    else:
        _check_fc_parameters(state, path, report)


def _check_fc_parameters(state: TaskState, path: str, report: Reporter) -> None:
    params = state.parameters
    where = params.position if params is not None else state.position
    keys = {item.key: item for item in params.fields} if params is not None else {}
    for name in ("resourceArn", "invocationType"):
        if name not in keys and f"{name}.$" not in keys:
            report(
                Code.FC_MISSING_PARAMETER,
                f"{FC_INVOKE} needs the parameter '{name}'",
                where,
                f"{path}.Parameters",
            )
    kind = keys.get("invocationType")
    if kind is not None and kind.value not in INVOCATION_TYPES:
        report(
            Code.FC_INVOCATION_TYPE,
            f"invocationType must be Sync or Async, found {_describe_template(kind.value)}",
            kind.value_position,
            f"{path}.Parameters.invocationType",
            hint=did_you_mean(str(kind.value), INVOCATION_TYPES),
        )
    arn = keys.get("resourceArn")
    if arn is not None and not (isinstance(arn.value, str) and arn.value):
        report(
            Code.WRONG_TYPE,
            f"resourceArn must be a non-empty string, found {_describe_template(arn.value)}",
            arn.value_position,
            f"{path}.Parameters.resourceArn",
        )
    body = keys.get("body")
    if body is not None and not isinstance(body.value, (Template, str)):
        report(
            Code.FC_BODY_TYPE,
            f"body must be a mapping or a string, found {_describe_template(body.value)}",
            body.value_position,
            f"{path}.Parameters.body",
        )
    for key, item in keys.items():
        base = key[:-2] if key.endswith(".$") else key
        if base not in FC_PARAMETERS:
            report(
                Code.FC_UNKNOWN_PARAMETER,
                f"{FC_INVOKE} does not take the parameter '{key}'",
                item.position,
                f"{path}.Parameters.{key}",
                severity=Severity.WARNING,
                hint=did_you_mean(base, FC_PARAMETERS),
            )
