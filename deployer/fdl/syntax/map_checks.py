"""Validator checks of a Map's distributed mode (docs/fdl-semantics.md, "Distributed Map"):
``ProcessorConfig.ExecutionMode`` (Express or Standard) selects it and the other distributed
fields need it; ``ItemReader`` (``SourceType`` one of the OSS sources, ``SourceParameters``,
``ReaderConfig``) replaces ``ItemsPath``; ``ItemBatcher``, ``ResultWriter`` and the numbers
take only their documented keys and ranges."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deployer.fdl.syntax.ast import MapState, RawField
from deployer.fdl.syntax.diagnostics import Code, Reporter

__all__ = ["DISTRIBUTED_FIELDS", "SOURCE_TYPES", "check_distributed"]

_CHILD_MODES = ("Express", "Standard")  # a map run's children run in one of these
SOURCE_TYPES = ("OSS_OBJECTS", "OSS_CSV", "OSS_JSON_LIST", "OSS_INVENTORY_FILES")
DISTRIBUTED_FIELDS = ("ItemReader", "ItemConstructor", "ItemBatcher", "ResultWriter",
                      "MaxItems", "ToleratedFailurePercentage", "ToleratedFailureCount")
_KEYS: Mapping[str, tuple[str, ...]] = {
    "ProcessorConfig": ("ExecutionMode",),
    "ItemReader": ("SourceType", "SourceParameters", "ReaderConfig"),
    "ItemBatcher": ("MaxItemsPerBatch", "MaxInputBytesPerBatch", "BatchInput"),
    "ResultWriter": ("Parameters",),
}


def check_distributed(state: MapState, path: str, report: Reporter) -> None:
    """The distributed fields of ``state`` (nothing to say about an inline Map)."""
    raw = state.raw
    config = raw.get("ProcessorConfig")
    used = [key for key in DISTRIBUTED_FIELDS if key in raw]
    if config is None:
        if used:
            report(Code.MISSING_FIELD, f"'{used[0]}' is a distributed Map field: it needs "
                   "ProcessorConfig.ExecutionMode (Express or Standard)", raw[used[0]].key_position,
                   f"{path}.{used[0]}")
        return
    _keys(raw, path, report)
    mode = _get(config.value, "ExecutionMode")
    if mode not in _CHILD_MODES:
        report(Code.INVALID_VALUE, f"ProcessorConfig.ExecutionMode must be Express or Standard, "
               f"found {mode!r}", config.value_position, f"{path}.ProcessorConfig.ExecutionMode")
    reader = raw.get("ItemReader")
    if reader is not None:
        if "ItemsPath" in raw:
            report(Code.CONFLICTING_FIELDS, "give ItemsPath or ItemReader, not both",
                   raw["ItemsPath"].key_position, f"{path}.ItemsPath")
        source = _get(reader.value, "SourceType")
        if source not in SOURCE_TYPES:
            report(Code.INVALID_VALUE, f"ItemReader.SourceType must be one of "
                   f"{', '.join(SOURCE_TYPES)}, found {source!r}", reader.value_position,
                   f"{path}.ItemReader.SourceType")
    _range(raw, "MaxItems", 0, None, path, report)
    _range(raw, "ToleratedFailureCount", 0, None, path, report)
    _range(raw, "ToleratedFailurePercentage", 0, 100, path, report)


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, Mapping) else None


def _keys(raw: Mapping[str, RawField], path: str, report: Reporter) -> None:
    for field, allowed in _KEYS.items():
        entry = raw.get(field)
        if entry is None or not isinstance(entry.value, Mapping):
            continue
        for key in entry.value:
            name = str(key).removesuffix(".$")
            if name not in allowed:
                report(Code.UNKNOWN_FIELD, f"{field} has no field '{key}' (it takes "
                       f"{', '.join(allowed)})", entry.value_position, f"{path}.{field}.{key}")


def _range(raw: Mapping[str, RawField], key: str, low: float, high: float | None, path: str,
           report: Reporter) -> None:
    entry = raw.get(key)
    value = entry.value if entry is not None else None
    if entry is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if value < low or (high is not None and value > high):
        bounds = f"from {low:g} to {high:g}" if high is not None else f"at least {low:g}"
        report(Code.INVALID_VALUE, f"'{key}' must be {bounds}, found {value}",
               entry.value_position, f"{path}.{key}")
