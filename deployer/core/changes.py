"""What a plan says changes: settings with their old and new value, documents as unified diffs.

Setting names are the s.yaml prop names (``memorySize``, ``environmentVariables.KEY``), so a
plan line points at the key the user edits. Environment variable values may be secrets: they
are never shown, only a short SHA-256 fingerprint of each value, enough to see that it changed.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deployer.cloud.fc import FunctionConfig

__all__ = ["SettingChange", "document_diff", "function_changes", "json_document_diff"]


@dataclass(frozen=True, slots=True)
class SettingChange:
    """One setting going from ``old`` to ``new`` (``old`` is None when it is being set for the
    first time, ``new`` None when it is being removed)."""

    name: str
    old: Any
    new: Any

    def text(self, width: int = 80) -> str:
        """``name: old -> new`` with long values shortened (the JSON output keeps them whole)."""
        if self.old is None:
            return f"{self.name}: {_short(self.new, width)}"
        return f"{self.name}: {_short(self.old, width)} -> {_short(self.new, width)}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "old": self.old, "new": self.new}


_TOKEN = re.compile(r"^[\w.:/@+-]+$")


def _short(value: Any, width: int) -> str:
    """A value on one line: plain tokens (numbers, names, ARNs, checksums) as they are,
    anything else as JSON (so spaces and empty strings stay visible)."""
    if value is None:
        return "(none)"
    plain = isinstance(value, (int, float)) or (isinstance(value, str) and _TOKEN.match(value))
    text = str(value) if plain else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 3] + "..."


def _prop_name(field: str) -> str:
    head, *rest = field.split("_")
    return head + "".join(part.capitalize() for part in rest)


def fingerprint(value: str) -> str:
    """A short, stable stand-in for a value that must not be printed."""
    return "sha256:" + hashlib.sha256(value.encode("utf-8")).hexdigest()[:12]


def _environment_changes(old: Mapping[str, str], new: Mapping[str, str]) -> list[SettingChange]:
    changes: list[SettingChange] = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key), new.get(key)
        if before != after:
            changes.append(SettingChange(
                f"environmentVariables.{key}",
                None if before is None else fingerprint(before),
                None if after is None else fingerprint(after)))
    return changes


def function_changes(remote: FunctionConfig, desired: FunctionConfig) -> list[SettingChange]:
    """Every managed setting that differs between the deployed and the desired configuration
    (code aside), by s.yaml prop name, in configuration order."""
    changes: list[SettingChange] = []
    for name, (old, new) in desired.differences(remote).items():
        if name == "environment_variables":
            changes += _environment_changes(old or {}, new or {})
        else:
            changes.append(SettingChange(_prop_name(name), old, new))
    return changes


def document_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    """A unified diff (3 lines of context) from ``old`` to ``new``; '' when they are equal."""
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), fromfile=old_name,
                                 tofile=new_name, lineterm="")
    return "\n".join(lines)


def json_document_diff(old: str, new: str, name: str, what: str) -> str:
    """A unified diff of two JSON documents, each pretty-printed with sorted keys first."""

    def pretty(text: str) -> str:
        if not text:
            return ""
        try:
            return json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False)
        except ValueError:
            return text

    old_name = f"{name} {what} (deployed)" if old else "/dev/null"
    return document_diff(pretty(old), pretty(new), old_name, f"{name} {what}")
