"""Retry and Catch rule selection (reference §7)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from deployer.fdl.syntax.ast import RetryRule

__all__ = ["ALL_ERRORS", "matches", "retry_delay", "select_catch", "select_retry"]

ALL_ERRORS = "FnF.ALL"


class _Rule(Protocol):
    @property
    def errors(self) -> tuple[str, ...]: ...


Rule = TypeVar("Rule", bound=_Rule)


def matches(errors: Sequence[str], code: str) -> bool:
    """True when a rule's ``Errors`` list names ``code`` or ``FnF.ALL``."""
    return ALL_ERRORS in errors or code in errors


def select_retry(rules: Sequence[RetryRule], code: str) -> int | None:
    """Index of the first Retry rule matching ``code`` (only the first match counts)."""
    return next((i for i, rule in enumerate(rules) if matches(rule.errors, code)), None)


def select_catch(rules: Sequence[Rule], code: str) -> Rule | None:
    """The first Catch rule matching ``code``."""
    return next((rule for rule in rules if matches(rule.errors, code)), None)


def retry_delay(rule: RetryRule, attempt: int) -> float:
    """Seconds before retry ``attempt`` (1-based) under ``rule``:
    ``min(IntervalSeconds * BackoffRate ** (attempt - 1), MaxBackoffSeconds)``."""
    rate = rule.backoff_rate if rule.backoff_rate and rule.backoff_rate > 0 else 1.0
    try:
        delay = float(rule.interval_seconds) * rate ** (attempt - 1)
    except OverflowError:
        delay = float("inf")
    cap = float(rule.max_backoff_seconds) if rule.max_backoff_seconds is not None else 86_400.0
    return max(0.0, min(delay, cap))
