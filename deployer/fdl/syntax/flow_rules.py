"""Validator checks on the header of the flow and on the limits and field combinations of one
state: ``Type``/``SpecVersion``/``Name``/``Timeout`` of the flow, the legacy dialect, Task
``Timeout``,
Wait ``Seconds``, Parallel branch counts, Map ``MaxConcurrency`` and mutually exclusive keys.
The documented limits are the constants below (reference §2, docs/fdl-semantics.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from deployer.fdl.limits import MAX_DURATION_SECONDS, MAX_TIMEOUT_SECONDS, WAIT_LIMITS
from deployer.fdl.syntax.ast import Flow, MapState, ParallelState, RawField, TaskState, WaitState
from deployer.fdl.syntax.diagnostics import Code, Reporter
from deployer.fdl.syntax.schema import check_list

__all__ = [
    "MAX_MAP_CONCURRENCY",
    "MAX_PARALLEL_BRANCHES",
    "MAX_TIMEOUT",
    "WAIT_LIMITS",
    "check_branch_count",
    "check_exclusive",
    "check_flow_header",
    "check_flow_timeout",
    "check_map_concurrency",
    "check_task_timeout",
    "check_wait",
    "is_legacy_dialect",
    "report_legacy_dialect",
]

MAX_TIMEOUT = MAX_TIMEOUT_SECONDS
MAX_PARALLEL_BRANCHES = 50
MAX_MAP_CONCURRENCY = 100
_FLOW_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,127}")


#: Keys of the legacy dialect's document (``version: v1beta1``, ``type: flow``, ``steps:``) and
#: of the current one: a flow with the first and none of the second is the legacy dialect.
_LEGACY_KEYS = frozenset({"version", "type", "steps"})
_CURRENT_KEYS = frozenset({"Type", "SpecVersion", "StartAt", "States"})


def is_legacy_dialect(flow: Flow) -> bool:
    """Whether the document is written in the legacy dialect (``version``/``type``/``steps``
    and none of ``Type``/``SpecVersion``/``StartAt``/``States``)."""
    keys = set(flow.raw)
    return bool(keys & _LEGACY_KEYS) and not keys & _CURRENT_KEYS


def report_legacy_dialect(flow: Flow, report: Reporter) -> None:
    """The one error a legacy-dialect document gets: what it is and what is needed instead."""
    written = ", ".join(
        f"{key}: {entry.value}" if key != "steps" and isinstance(entry.value, (str, int, float))
        else key
        for key in ("version", "type", "steps") if (entry := flow.raw.get(key)) is not None
    )
    report(
        Code.UNSUPPORTED,
        f"this flow is written in the legacy CloudFlow dialect ({written}); the "
        "SpecVersion: v1 language (Type: StateMachine) is required",
        flow.position,
        "",
        hint="rewrite it as Type: StateMachine, SpecVersion: v1, StartAt and States; legacy "
        "steps do not carry over one to one",
    )


def check_flow_timeout(flow: Flow, report: Reporter, execution_mode: str) -> None:
    """The flow's ``Timeout`` (seconds): 0 (the mode's own limit) up to the longest execution
    the mode allows (:data:`MAX_DURATION_SECONDS`: 300 Express, 31,536,000 Standard)."""
    entry = flow.raw.get("Timeout")
    highest = MAX_DURATION_SECONDS[execution_mode]
    if entry is not None and flow.timeout is not None and not 0 <= flow.timeout <= highest:
        report(
            Code.FLOW_TIMEOUT_RANGE,
            f"the flow's 'Timeout' must be between 0 and {highest} seconds in "
            f"{execution_mode} mode, found {flow.timeout}",
            entry.value_position,
            "Timeout",
            hint="an execution cannot run longer than its mode allows; 0 means that limit",
        )


def check_flow_header(flow: Flow, report: Reporter) -> None:
    """``Type: StateMachine``, ``SpecVersion: v1``, a well-formed ``Name``."""
    _expect(flow.raw, "Type", "StateMachine", "the new dialect needs Type: StateMachine", report)
    _expect(flow.raw, "SpecVersion", "v1", "the new dialect needs SpecVersion: v1", report)
    name = flow.raw.get("Name")
    if name is not None and flow.name and not _FLOW_NAME.fullmatch(flow.name):
        report(
            Code.INVALID_VALUE,
            f"invalid flow name '{flow.name}'",
            name.value_position,
            "Name",
            hint="1-128 letters, digits, '_' or '-', starting with a letter or '_'",
        )


def _expect(
    raw: Mapping[str, RawField], key: str, wanted: str, hint: str, report: Reporter
) -> None:
    entry = raw.get(key)
    if entry is not None and isinstance(entry.value, str) and entry.value != wanted:
        report(
            Code.INVALID_VALUE,
            f"'{key}' must be '{wanted}', found '{entry.value}'",
            entry.value_position,
            key,
            hint=hint,
        )


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
    """``Timeout`` xor ``Timeout.$``; a literal timeout is 0 to :data:`MAX_TIMEOUT` seconds."""
    raw = state.raw
    check_exclusive(raw, "Timeout", "Timeout.$", path, report)
    timeout = raw.get("Timeout")
    literal = isinstance(state.timeout, int) and "Timeout.$" not in raw
    if timeout is not None and literal and not 0 <= state.timeout <= MAX_TIMEOUT:  # type: ignore[operator]
        report(
            Code.TIMEOUT_RANGE,
            f"'Timeout' must be between 0 and {MAX_TIMEOUT} seconds, found {state.timeout}",
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
