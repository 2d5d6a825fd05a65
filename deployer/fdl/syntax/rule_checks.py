"""Validator checks on the Retry and Catch rules of Task, Parallel and Map states: their
fields, their ``Errors`` lists, the ranges of the Retry numbers (reference §5) and a Catch's
``OutputConstructor``; a Catch's ``Next`` is checked by the caller, which knows the scope."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeGuard

from deployer.fdl.syntax.ast import CatchRule, Position, RawField, RetryRule
from deployer.fdl.syntax.diagnostics import Code, Reporter
from deployer.fdl.syntax.expression_checks import check_template
from deployer.fdl.syntax.schema import (
    CATCH_FIELDS,
    RETRY_FIELDS,
    check_fields,
    check_list,
    describe,
)

__all__ = ["MAX_RETRY_SECONDS", "check_catch", "check_retry"]

#: The longest Retry ``IntervalSeconds`` and ``MaxBackoffSeconds``: one day.
MAX_RETRY_SECONDS = 86_400


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
    _check_retry_numbers(rule.raw, path, report)


def _check_retry_numbers(raw: Mapping[str, RawField], path: str, report: Reporter) -> None:
    """``IntervalSeconds`` and ``MaxBackoffSeconds`` 0 to a day, ``MaxAttempts`` 0 or more,
    ``BackoffRate`` 1 or more (wrong types are the schema's to report)."""
    for key in ("IntervalSeconds", "MaxBackoffSeconds"):
        entry = raw.get(key)
        value = entry.value if entry else None
        if entry and _is_int(value) and not 0 <= value <= MAX_RETRY_SECONDS:
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


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def check_catch(rule: CatchRule, path: str, report: Reporter) -> None:
    """Fields, types and the OutputConstructor of one Catch rule (targets are checked by the
    caller, which knows the scope)."""
    check_fields(rule.raw, CATCH_FIELDS, rule.position, path, report, where="Catch rule")
    _check_errors(rule.raw, rule.position, path, report)
    if rule.output_constructor is not None:
        check_template(
            rule.output_constructor, f"{path}.OutputConstructor", report, output_allowed=True
        )
