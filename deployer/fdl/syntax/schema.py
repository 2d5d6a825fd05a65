"""Which keys each FDL mapping may hold, what type each value must have, and the hints given for
keys that are misspelled, belong to another state type, or come from another dialect."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from deployer.fdl.syntax.ast import Position, RawField, RawValue
from deployer.fdl.syntax.diagnostics import Code, Reporter, join_path

__all__ = [
    "CATCH_FIELDS",
    "CHOICE_BRANCH_FIELDS",
    "FLOW_FIELDS",
    "RETRY_FIELDS",
    "SCOPE_FIELDS",
    "STATE_FIELDS",
    "Kind",
    "Reporter",
    "check_fields",
    "check_list",
    "describe",
    "did_you_mean",
    "indexed",
    "is_kind",
    "mapping_indexes",
]

_Item = TypeVar("_Item")

class Kind(Enum):
    """Expected YAML value types."""

    STRING = "a string"
    BOOL = "a boolean (true or false)"
    INT = "an integer"
    NUMBER = "a number"
    MAPPING = "a mapping"
    LIST = "a list"
    EXPRESSION = "an expression string"
    TIMEOUT = "a whole number of seconds (integer or digit string)"
    ANY = "any value"


@dataclass(frozen=True, slots=True)
class FieldSpec:
    kind: Kind
    required: bool = False


def _spec(required: Iterable[str] = (), **kinds: Kind) -> dict[str, FieldSpec]:
    wanted = set(required)
    return {key: FieldSpec(kind, key in wanted) for key, kind in kinds.items()}


S, B, N, M, L, E = Kind.STRING, Kind.BOOL, Kind.INT, Kind.MAPPING, Kind.LIST, Kind.EXPRESSION

_NAMED = _spec(("Type", "Name"), Type=S, Name=S)  # the flow and every state
SCOPE_FIELDS = _spec(("StartAt", "States"), StartAt=S, States=L)
FLOW_FIELDS = {
    **_NAMED,
    **_spec(("SpecVersion",), SpecVersion=S),
    **SCOPE_FIELDS,
    **_spec(Description=S, Comment=Kind.ANY, Timeout=Kind.TIMEOUT),
}
_COMMON = {
    **_NAMED,
    **_spec(
        Description=S,
        InputConstructor=M,
        OutputConstructor=M,
        GlobalConstructor=M,
        Next=S,
        End=B,
    ),
}
_ERRORS = _spec(Retry=L, Catch=L)


def _common_without(*keys: str) -> dict[str, FieldSpec]:
    return {key: spec for key, spec in _COMMON.items() if key not in keys}


STATE_FIELDS: dict[str, dict[str, FieldSpec]] = {
    "Task": {
        **_COMMON,
        **_ERRORS,
        **_spec(
            ("Action",),
            Action=S,
            TaskMode=S,
            Parameters=M,
            Timeout=Kind.TIMEOUT,
            **{"Timeout.$": E},
        ),
    },
    "Pass": dict(_COMMON),
    "Wait": {**_COMMON, **_spec((), Seconds=N, **{"Seconds.$": E})},
    "Choice": _common_without("OutputConstructor", "GlobalConstructor", "Next", "End")
    | _spec(("Branches", "Default"), Branches=L, Default=S),
    "Succeed": _common_without("Next"),
    "Fail": _common_without("Next") | _spec(Code=S, Detail=S),
    "Parallel": {**_COMMON, **_ERRORS, **_spec(("Branches",), Branches=L)},
    "Map": {
        **_COMMON,
        **_ERRORS,
        **_spec(
            ("ItemsPath", "Processor"), ItemsPath=E, Processor=M, MaxConcuccency=N, MaxConcurrency=N
        ),
        # distributed mode (docs/fdl-semantics.md, "Distributed Map")
        **_spec(ProcessorConfig=M, ItemReader=M, ItemConstructor=M, ItemBatcher=M,
                ResultWriter=M, MaxItems=N, ToleratedFailurePercentage=Kind.NUMBER,
                ToleratedFailureCount=N),
    },
}
CHOICE_BRANCH_FIELDS = _spec(("Condition", "Next"), Condition=E, Next=S)
RETRY_FIELDS = _spec(
    ("Errors", "MaxAttempts", "IntervalSeconds"),
    Errors=L,
    Description=S,
    MaxAttempts=N,
    IntervalSeconds=N,
    BackoffRate=Kind.NUMBER,
    MaxBackoffSeconds=N,
)
CATCH_FIELDS = _spec(("Errors", "Next"), Errors=L, Description=S, OutputConstructor=M, Next=S)

ANY_STATE_FIELD = frozenset(key for fields in STATE_FIELDS.values() for key in fields)

# Keys of other dialects or of features this emulator does not support: (code, message, hint).
UNSUPPORTED: Mapping[str, tuple[str, str | None]] = {
    "Timestamp": ("absolute waits do not exist in SpecVersion v1", "use Seconds or Seconds.$"),
    "TimestampPath": ("absolute waits do not exist in SpecVersion v1", "use Seconds.$"),
    "SecondsPath": ("SecondsPath is AWS Step Functions syntax", "use Seconds.$"),
    "OnErrors": ("OnErrors is the retired error-handling field", "use Retry and Catch"),
    "ItemProcessor": ("ItemProcessor is the former name of Processor", "use Processor"),
}
FOREIGN_HINTS: Mapping[str, str] = {
    "Comment": "CloudFlow states use Description",
    "ErrorEquals": "CloudFlow calls it Errors",
    "Choices": "CloudFlow calls it Branches",
    "Iterator": "CloudFlow calls it Processor",
    "ItemsPath.$": "ItemsPath is already an expression; drop the .$",
    "Condition.$": "Condition is already an expression; drop the .$",
    "Result": "use OutputConstructor",
    "ResultPath": "use OutputConstructor",
    "ResultSelector": "use OutputConstructor",
    "OutputPath": "use OutputConstructor",
    "InputPath": "use InputConstructor",
    "TimeoutSeconds": "CloudFlow calls it Timeout",
    "Resource": "CloudFlow names the service call in Action",
}


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """``did you mean 'X'?`` for the closest candidate (difflib, cutoff 0.6), else None."""
    pool = list(candidates)
    matches = difflib.get_close_matches(word, pool, n=1, cutoff=0.6)
    if not matches:
        lowered = {c.lower(): c for c in pool}
        matches = [lowered[word.lower()]] if word.lower() in lowered else []
    return f"did you mean '{matches[0]}'?" if matches else None


def is_kind(value: RawValue, kind: Kind) -> bool:
    """Whether a raw value has the expected kind."""
    scalar = isinstance(value, (bool, int, float, str))
    if kind is Kind.STRING:
        return scalar
    if kind is Kind.BOOL:
        return isinstance(value, bool)
    if kind is Kind.INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is Kind.NUMBER:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is Kind.MAPPING:
        return isinstance(value, Mapping)
    if kind is Kind.LIST:
        return isinstance(value, tuple)
    if kind is Kind.EXPRESSION:
        return isinstance(value, str)
    if kind is Kind.TIMEOUT:
        return is_kind(value, Kind.INT) or (isinstance(value, str) and value.isascii()
                                                and value.strip().isdigit())
    return True


def describe(value: RawValue) -> str:
    """A short description of a raw value for messages."""
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, tuple):
        return "a list"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    text = repr(value) if isinstance(value, str) else str(value)
    return f"{type(value).__name__} {text[:40]}"


def check_list(
    raw: Mapping[str, RawField],
    key: str,
    path: str,
    report: Reporter,
    *,
    empty: str,
    hint: str | None = None,
) -> tuple[RawValue, ...] | None:
    """The items of the list written under ``key`` (None when absent or not a list); an empty
    list is reported with the message ``empty`` (FDL108)."""
    entry = raw.get(key)
    if entry is None or not isinstance(entry.value, tuple):
        return None
    if not entry.value:
        report(Code.EMPTY_LIST, empty, entry.value_position, join_path(path, key), hint=hint)
    return entry.value


def check_fields(
    raw: Mapping[str, RawField],
    spec: Mapping[str, FieldSpec],
    position: Position,
    path: str,
    report: Reporter,
    *,
    where: str,
) -> None:
    """Report missing required keys, unknown / misplaced / unsupported keys and wrong types."""
    for key, field_spec in spec.items():
        if key == "ItemsPath" and "ItemReader" in raw:
            continue  # a distributed Map reads its items instead
        if field_spec.required and key not in raw:
            report(Code.MISSING_FIELD, f"{where} needs '{key}'", position, path)
    for key, entry in raw.items():
        key_path = f"{path}.{key}" if path else key
        if key in spec:
            kind = spec[key].kind
            if not is_kind(entry.value, kind):
                message = f"'{key}' must be {kind.value}, found {describe(entry.value)}"
                report(Code.WRONG_TYPE, message, entry.value_position, key_path)
            continue
        _unknown_key(key, entry, spec, key_path, report, where)


def _unknown_key(
    key: str,
    entry: RawField,
    spec: Mapping[str, FieldSpec],
    key_path: str,
    report: Reporter,
    where: str,
) -> None:
    if key in UNSUPPORTED:
        message, hint = UNSUPPORTED[key]
        report(
            Code.UNSUPPORTED,
            f"'{key}' is not supported: {message}",
            entry.key_position,
            key_path,
            hint=hint,
        )
    elif key in ANY_STATE_FIELD and where.endswith("state"):
        hint = "use Default" if key in ("Next", "End") and where.startswith("Choice") else None
        report(
            Code.FIELD_NOT_ALLOWED,
            f"'{key}' is not allowed on a {where}",
            entry.key_position,
            key_path,
            hint=hint,
        )
    else:
        hint = FOREIGN_HINTS.get(key) or did_you_mean(key, spec)
        report(
            Code.UNKNOWN_FIELD,
            f"unknown field '{key}' in {where}",
            entry.key_position,
            key_path,
            hint=hint,
        )


def mapping_indexes(raw: Mapping[str, RawField], key: str) -> list[int]:
    """YAML indexes of the mapping elements of list ``key`` (the parser skipped the others)."""
    entry = raw.get(key)
    if entry is None or not isinstance(entry.value, tuple):
        return []
    return [index for index, item in enumerate(entry.value) if isinstance(item, Mapping)]


def indexed(
    raw: Mapping[str, RawField], key: str, items: tuple[_Item, ...]
) -> Iterator[tuple[int, _Item]]:
    """Pair each node built from list ``key`` with its YAML index."""
    indexes = mapping_indexes(raw, key)
    for number, item in enumerate(items):
        yield (indexes[number] if number < len(indexes) else number), item
