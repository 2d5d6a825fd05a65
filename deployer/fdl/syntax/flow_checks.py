"""Validator checks on the flow as a whole: the legacy dialect given to the v1 validator (one
error that says so: ``check_flow`` reads that dialect with :mod:`deployer.fdl.legacy`), the
header (``Type``, ``SpecVersion``, ``Name``) and the flow's ``Timeout`` within its execution
mode's longest run (reference §2 and §9, docs/fdl-semantics.md)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from deployer.fdl.limits import MAX_DURATION_SECONDS
from deployer.fdl.syntax.ast import Flow, RawField
from deployer.fdl.syntax.diagnostics import Code, Reporter

__all__ = [
    "check_flow_header",
    "check_flow_timeout",
    "is_legacy_dialect",
    "report_legacy_dialect",
]

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
        f"this flow is written in the legacy CloudFlow dialect ({written}), which the "
        "SpecVersion v1 checks do not read",
        flow.position,
        "",
        hint="check it with deployer.fdl.check_flow (either dialect); `deploy flow migrate` "
        "rewrites it as SpecVersion v1",
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

