"""Which keys each mapping of a legacy flow may hold and what type each value must have, with the
hints given for misspelled keys, keys of another step type and keys of SpecVersion v1."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from deployer.fdl.syntax.diagnostics import Code, Reporter
from deployer.fdl.syntax.positions import Position, RawField
from deployer.fdl.syntax.schema import FieldSpec, Kind, describe, did_you_mean, is_kind

__all__ = [
    "CATCH_KEYS",
    "CHOICE_KEYS",
    "DEFAULT_KEYS",
    "FLOW_KEYS",
    "ITERATION_KEYS",
    "LIST_KEYS",
    "MAPPING_KEYS",
    "RETRY_KEYS",
    "STEP_KEYS",
    "check_keys",
]


def _spec(required: Iterable[str] = (), **kinds: Kind) -> dict[str, FieldSpec]:
    wanted = set(required)
    return {key: FieldSpec(kind, key in wanted) for key, kind in kinds.items()}


S, B, N, M, L, A = Kind.STRING, Kind.BOOL, Kind.INT, Kind.MAPPING, Kind.LIST, Kind.ANY

FLOW_KEYS = _spec(("version", "type", "steps"), version=S, type=S, steps=L,
                  inputMappings=L, outputMappings=L)
_COMMON = _spec(("type", "name"), type=S, name=S, end=B, inputMappings=L, outputMappings=L)
STEP_KEYS: dict[str, dict[str, FieldSpec]] = {
    "task": {**_COMMON, **_spec(resourceArn=S, action=S, pattern=S, timeoutSeconds=N,
                                serviceParams=A, retry=L, catch=L, errorMappings=L)},
    "pass": dict(_COMMON),
    "wait": {**_COMMON, **_spec(duration=A, timestamp=S)},
    "choice": {**_COMMON, **_spec(("choices",), choices=L, default=M)},
    "parallel": {**_COMMON, **_spec(("branches",), branches=L)},
    "foreach": {**_COMMON, **_spec(("iterationMapping", "steps"), iterationMapping=M,
                                   steps=L)},
    "succeed": dict(_COMMON),
    "fail": {**_COMMON, **_spec(error=S, cause=S)},
}
MAPPING_KEYS = _spec(("target", "source"), target=S, source=A)
RETRY_KEYS = _spec(("errors",), errors=L, intervalSeconds=N, maxAttempts=N,
                   multiplier=Kind.NUMBER, maxIntervalSeconds=N)
CATCH_KEYS = _spec(("errors", "goto"), errors=L, goto=S)
CHOICE_KEYS = _spec(("condition",), condition=S, steps=L, goto=S)
DEFAULT_KEYS = _spec(steps=L, goto=S)
LIST_KEYS = _spec(("steps",), steps=L)
ITERATION_KEYS = _spec(("collection", "item"), collection=S, item=S, index=S)

_ANY_STEP_KEY = frozenset(key for keys in STEP_KEYS.values() for key in keys)
#: SpecVersion v1 keys (and a few others) met in legacy flows: what to write instead.
_FOREIGN: Mapping[str, str] = {
    "Type": "legacy steps use lower-case 'type'",
    "Name": "legacy steps use lower-case 'name'",
    "Next": "legacy steps run in the order written; jump with a choice's goto",
    "next": "legacy steps run in the order written; jump with a choice's goto",
    "End": "legacy steps use 'end: true'",
    "States": "a legacy flow lists 'steps'; do not mix it with SpecVersion v1",
    "StartAt": "a legacy flow starts with its first step",
    "Retry": "legacy tasks use 'retry'",
    "Catch": "legacy tasks use 'catch'",
    "Seconds": "legacy waits use 'duration'",
    "timeout": "legacy tasks use 'timeoutSeconds'",
    "InputConstructor": "legacy steps use 'inputMappings'",
    "OutputConstructor": "legacy steps use 'outputMappings'",
    "Parameters": "legacy tasks pass their input, or 'serviceParams' with 'action'",
    "maxConcurrency": "foreach runs at most 100 iterations at once; the dialect has no setting",
}
_GOTO_HINT = "steps run in the order written; jump with a choice's goto or a catch's goto"


def check_keys(
    raw: Mapping[str, RawField],
    spec: Mapping[str, FieldSpec],
    position: Position,
    path: str,
    report: Reporter,
    *,
    where: str,
) -> None:
    """Report missing required keys (FDL101), values of the wrong type (FDL102), keys of
    another step type (FDL104) and unknown keys (FDL103, with a "did you mean")."""
    for key, field_spec in spec.items():
        if field_spec.required and key not in raw:
            report(Code.MISSING_FIELD, f"{where} needs '{key}'", position, path)
    for key, entry in raw.items():
        key_path = f"{path}.{key}" if path else key
        if key in spec:
            kind = spec[key].kind
            if not is_kind(entry.value, kind):
                message = f"'{key}' must be {kind.value}, found {describe(entry.value)}"
                report(Code.WRONG_TYPE, message, entry.key_position, key_path)
        elif key == "goto" and where.endswith(" step"):
            report(Code.FIELD_NOT_ALLOWED, f"'goto' is not allowed on a {where}",
                   entry.key_position, key_path, hint=_GOTO_HINT)
        elif key in _ANY_STEP_KEY and where.endswith(" step"):
            report(Code.FIELD_NOT_ALLOWED, f"'{key}' is not allowed on a {where}",
                   entry.key_position, key_path, hint=_allowed_on(key))
        else:
            hint = did_you_mean(key, spec) or _FOREIGN.get(key)
            report(Code.UNKNOWN_FIELD, f"unknown field '{key}' in {where}",
                   entry.key_position, key_path, hint=hint)


def _allowed_on(key: str) -> str:
    kinds = [kind for kind, keys in STEP_KEYS.items() if key in keys]
    return f"'{key}' belongs to {', '.join(kinds)} steps"
