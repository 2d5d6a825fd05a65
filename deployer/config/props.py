"""Typed reading of one resource's resolved ``props`` map, reporting into a ProblemLog."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from difflib import get_close_matches
from typing import Any

from deployer.config.problems import ProblemLog
from deployer.config.variables import BROKEN, Path_

__all__ = ["PropReader"]

_MISSING = object()


def type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "a map"
    if isinstance(value, list):
        return "a list"
    return "null" if value is None else type(value).__name__


class PropReader:
    """Reads typed props; each failed check records an error at the prop's field path.

    Every getter returns the default (or ``None``) when the prop is absent or invalid, so one
    pass over a resource reports all of its problems.
    """

    def __init__(self, props: Mapping[str, Any], path: Path_, log: ProblemLog) -> None:
        self.props = props
        self.path = path
        self.log = log

    def error(self, key: str | Path_, message: str) -> None:
        """Record an error at ``key`` (a prop name, or a path below the props)."""
        self.log.error((*self.path, *(key if isinstance(key, tuple) else (key,))), message)

    def warning(self, key: str | Path_, message: str) -> None:
        self.log.warning((*self.path, *(key if isinstance(key, tuple) else (key,))), message)

    def check_keys(
        self, allowed: Collection[str], unsupported: Mapping[str, str], kind: str
    ) -> None:
        """Unknown keys -> error with a did-you-mean; known but unsupported -> error saying why."""
        for key in self.props:
            if key in allowed:
                continue
            if key in unsupported:
                self.error(key, f"not supported by this deployer: {unsupported[key]}")
                continue
            close = get_close_matches(str(key), [*allowed], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            self.error(key, f"unknown {kind} prop{hint}")

    def _get(self, key: str, required: bool) -> Any:
        value = self.props.get(key, _MISSING)
        if value is BROKEN:  # its magic variable failed; that problem is already reported
            return _MISSING
        if value is _MISSING or value is None:
            if required:
                self.log.error((*self.path, key), f"required prop {key!r} is missing")
            return _MISSING
        return value

    def string(
        self, key: str, *, required: bool = False, default: str | None = None,
        pattern: str | None = None, what: str = "",
    ) -> str | None:
        value = self._get(key, required)
        if value is _MISSING:
            return default
        if not isinstance(value, str):
            self.error(key, f"must be a string (got {type_name(value)})")
            return default
        if pattern and not re.fullmatch(pattern, value):
            self.error(key, f"{what or 'invalid value'} (got {value!r})")
            return default
        return value

    def integer(
        self, key: str, *, default: int | None = None, low: int, high: int, unit: str = "",
    ) -> int | None:
        value = self._get(key, False)
        if value is _MISSING:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(key, f"must be an integer (got {type_name(value)} {value!r})")
            return default
        if not low <= value <= high:
            self.error(key, f"must be between {low} and {high}{unit} (got {value})")
            return default
        return int(value)

    def number(self, key: str) -> float | None:
        value = self._get(key, False)
        if value is _MISSING:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.error(key, f"must be a number (got {type_name(value)} {value!r})")
            return None
        return float(value)

    def boolean(self, key: str, *, default: bool) -> bool:
        value = self._get(key, False)
        if value is _MISSING:
            return default
        if not isinstance(value, bool):
            self.error(key, f"must be true or false (got {value!r})")
            return default
        return value

    def mapping(self, key: str) -> Mapping[str, Any] | None:
        value = self._get(key, False)
        if value is _MISSING:
            return None
        if not isinstance(value, Mapping):
            self.error(key, f"must be a map (got {type_name(value)})")
            return None
        return value

    def sequence(self, key: str) -> list[Any] | None:
        value = self._get(key, False)
        if value is _MISSING:
            return None
        if not isinstance(value, list):
            self.error(key, f"must be a list (got {type_name(value)})")
            return None
        return value

    def one_of(self, key: str, choices: Collection[str], *, default: str) -> str:
        value = self.string(key, default=default)
        if value is None or value == default:
            return default
        if value not in choices:
            close = get_close_matches(value, [*choices], n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            self.error(key, f"must be one of {', '.join(choices)} (got {value!r}){hint}")
            return default
        return value
