"""Validator checks on the limits and field combinations of one state: mutually exclusive keys
(``Seconds``/``Seconds.$``...), Task ``Timeout``, Wait ``Seconds``, Parallel branch counts and Map
``MaxConcurrency``. The documented limits are the constants below and those of
:mod:`deployer.fdl.limits` (reference §2, docs/fdl-semantics.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from deployer.fdl.limits import MAX_TIMEOUT_SECONDS, WAIT_LIMITS
from deployer.fdl.syntax.ast import MapState, ParallelState, RawField, TaskState, WaitState
from deployer.fdl.syntax.diagnostics import Code, Reporter
from deployer.fdl.syntax.schema import check_list

__all__ = [
    "MAX_MAP_CONCURRENCY",
    "MAX_PARALLEL_BRANCHES",
    "check_branch_count",
    "check_exclusive",
    "check_map_concurrency",
    "check_task_timeout",
    "check_wait",
]

MAX_PARALLEL_BRANCHES = 50
MAX_MAP_CONCURRENCY = 100


def check_exclusive(
    raw: Mapping[str, RawField], first: str, second: str, path: str, report: Reporter
) -> None:
    """At most one of the keys ``first`` and ``second`` (reported at the second)."""
    if first in raw and second in raw:
        report(
            Code.CONFLICTING_FIELDS,
            f"'{first}' and '{second}' cannot both be set",
            raw[second].key_position,
            f"{path}.{second}",
            hint="keep only one of them",
        )


def check_task_timeout(state: TaskState, path: str, report: Reporter) -> None:
    """``Timeout`` xor ``Timeout.$``; a literal timeout is 0 to 7 days
    (:data:`~deployer.fdl.limits.MAX_TIMEOUT_SECONDS`)."""
    raw = state.raw
    check_exclusive(raw, "Timeout", "Timeout.$", path, report)
    timeout, seconds = raw.get("Timeout"), state.timeout
    if timeout is None or not isinstance(seconds, int) or "Timeout.$" in raw:
        return  # no literal timeout: nothing more to check
    if not 0 <= seconds <= MAX_TIMEOUT_SECONDS:
        report(
            Code.TIMEOUT_RANGE,
            f"'Timeout' must be between 0 and {MAX_TIMEOUT_SECONDS} seconds, found {state.timeout}",
            timeout.value_position,
            f"{path}.Timeout",
        )


def check_wait(state: WaitState, path: str, report: Reporter, execution_mode: str) -> None:
    """``Seconds`` xor ``Seconds.$``; literal seconds within the mode's :data:`WAIT_LIMITS`."""
    raw = state.raw
    if "Seconds" not in raw and "Seconds.$" not in raw:
        report(
            Code.MISSING_FIELD, "a Wait state needs 'Seconds' or 'Seconds.$'", state.position, path
        )
    check_exclusive(raw, "Seconds", "Seconds.$", path, report)
    low, high = WAIT_LIMITS[execution_mode]
    if state.seconds is not None and not low <= state.seconds <= high:
        report(
            Code.WAIT_RANGE,
            f"'Seconds' must be between {low} and {high} in "
            f"{execution_mode} mode, found {state.seconds}",
            raw["Seconds"].value_position,
            f"{path}.Seconds",
        )


def check_branch_count(state: ParallelState, path: str, report: Reporter) -> None:
    """A Parallel state has 1 to :data:`MAX_PARALLEL_BRANCHES` branches."""
    empty = "a Parallel state needs at least one branch"
    branches = check_list(state.raw, "Branches", path, report, empty=empty)
    if branches is not None and len(branches) > MAX_PARALLEL_BRANCHES:
        report(
            Code.TOO_MANY_BRANCHES,
            f"a Parallel state may have at most "
            f"{MAX_PARALLEL_BRANCHES} branches, found {len(branches)}",
            state.raw["Branches"].value_position,
            f"{path}.Branches",
        )


def check_map_concurrency(state: MapState, path: str, report: Reporter) -> None:
    """One spelling of ``MaxConcurrency`` (the reference's ``MaxConcuccency`` too), 1 to
    :data:`MAX_MAP_CONCURRENCY`."""
    raw = state.raw
    check_exclusive(raw, "MaxConcuccency", "MaxConcurrency", path, report)
    key = "MaxConcuccency" if "MaxConcuccency" in raw else "MaxConcurrency"
    value = state.max_concurrency
    if value is not None and not 1 <= value <= MAX_MAP_CONCURRENCY:
        report(
            Code.CONCURRENCY_RANGE,
            f"'{key}' must be between 1 and {MAX_MAP_CONCURRENCY}, found {value}",
            raw[key].value_position,
            f"{path}.{key}",
        )
