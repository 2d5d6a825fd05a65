"""The JSONPath subset of the legacy dialect: ``$.key``, ``$input.a.b``, ``$local[*].parts[*]``,
``$context.task.token``, ``$.list[0]``, ``$["a key"]``.

A path starts at a root: ``$`` (the step's input, in conditions, ``serviceParams``, ``duration``,
``timestamp`` and ``collection``), or ``$input`` / ``$local`` / ``$context`` (in mappings).
Then segments: ``.name`` (any characters but ``. [ ] ( ) = ! < > & | , "`` ``'`` and white space),
``["name"]`` / ``['name']``, ``[n]`` (negative counts from the end), ``[*]`` and ``.*`` (every
element or value). A path without ``*`` is *definite*: its value is the one it reaches, or
null when a key or index is missing. A path with ``*`` gives the list of every value it reaches,
flattened, in order (``$local[*].parts[*]`` concatenates the ``parts`` lists).
Semantics: docs/fdl-semantics.md, "The legacy dialect: paths".
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

from deployer.fdl.legacy.errors import PathSyntaxError

__all__ = [
    "MAPPING_ROOTS",
    "Path",
    "evaluate_path",
    "is_path_text",
    "parse_path",
    "read_path",
]

#: The roots a mapping source may start with (anything else is a constant).
MAPPING_ROOTS = ("input", "local", "context")
_STOP = set(".[]()=!<>&|,\"' \t\r\n")
_MAX_SEGMENTS = 64


@dataclass(frozen=True, slots=True)
class _Key:
    name: str


@dataclass(frozen=True, slots=True)
class _Index:
    number: int


@dataclass(frozen=True, slots=True)
class _All:
    pass


_Segment = Union[_Key, _Index, _All]  # noqa: UP007


@dataclass(frozen=True, slots=True)
class Path:
    """A parsed path: its ``root`` ("" for ``$``, else ``input``/``local``/``context``) and
    segments; ``definite`` when it has no wildcard."""

    text: str
    root: str
    segments: tuple[_Segment, ...]

    @property
    def definite(self) -> bool:
        return not any(isinstance(s, _All) for s in self.segments)

    def keys(self) -> tuple[str | int | None, ...]:
        """Each segment as a key (str), an index (int) or None for a wildcard."""
        return tuple(s.name if isinstance(s, _Key) else s.number if isinstance(s, _Index)
                     else None for s in self.segments)


def is_path_text(text: str, roots: tuple[str, ...] = MAPPING_ROOTS) -> bool:
    """Whether ``text`` starts like a path with one of ``roots`` ("" is ``$`` itself): the root
    followed by the end, ``.`` or ``[``."""
    for root in roots:
        head = "$" + root
        if text.startswith(head) and (len(text) == len(head) or text[len(head)] in ".["):
            return True
    return False


def parse_path(text: str, *, roots: tuple[str, ...] = ("",)) -> Path:
    """Parse the whole of ``text`` as a path whose root is one of ``roots``;
    :class:`PathSyntaxError` otherwise. Cached."""
    return _parse(text, roots)


@functools.lru_cache(maxsize=4096)
def _parse(text: str, roots: tuple[str, ...]) -> Path:
    path, end = read_path(text, 0, roots)
    if end != len(text):
        raise PathSyntaxError(f"unexpected {text[end]!r} after the path", text, end)
    return path


def read_path(text: str, start: int, roots: tuple[str, ...]) -> tuple[Path, int]:
    """Read a path at ``text[start:]``; return it and the offset where it ends (conditions
    read several paths in one text)."""
    if not text.startswith("$", start):
        raise PathSyntaxError("a path starts with '$'", text, start)
    at = start + 1
    root = ""
    for word in sorted((r for r in roots if r), key=len, reverse=True):
        if text.startswith(word, at) and (at + len(word) == len(text)
                                          or text[at + len(word)] in _STOP):
            root, at = word, at + len(word)
            break
    if root == "" and "" not in roots:
        wanted = " or ".join("$" + r for r in roots)
        raise PathSyntaxError(f"a path here starts with {wanted}", text, start)
    segments: list[_Segment] = []
    while at < len(text) and text[at] in ".[":
        if len(segments) >= _MAX_SEGMENTS:
            raise PathSyntaxError(f"more than {_MAX_SEGMENTS} segments", text, at)
        segment, at = _segment(text, at)
        segments.append(segment)
    return Path(text[start:at], root, tuple(segments)), at


def _segment(text: str, at: int) -> tuple[_Segment, int]:
    if text[at] == ".":
        at += 1
        if text.startswith("*", at):
            return _All(), at + 1
        end = at
        while end < len(text) and text[end] not in _STOP and text[end] != "*":
            end += 1
        if end == at:
            raise PathSyntaxError("a name must follow '.'", text, at)
        return _Key(text[at:end]), end
    close = text.find("]", at)
    if close < 0:
        raise PathSyntaxError("'[' is not closed", text, at)
    inner = text[at + 1:close].strip()
    if inner == "*":
        return _All(), close + 1
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "\"'":
        return _Key(inner[1:-1]), close + 1
    digits = inner[1:] if inner.startswith("-") else inner
    if digits.isascii() and digits.isdigit():
        return _Index(int(inner)), close + 1
    raise PathSyntaxError("'[...]' holds an index, '*' or a quoted name", text, at)


def evaluate_path(path: Path, roots: Mapping[str, Any]) -> Any:
    """The value of ``path`` over ``roots`` (``""``: the step's input; ``input``, ``local``,
    ``context``): the value a definite path reaches (null when missing), or the list of every
    value a wildcard path reaches."""
    values = [roots.get(path.root)]
    for segment in path.segments:
        found: list[Any] = []
        for value in values:
            if isinstance(segment, _All):
                if isinstance(value, list):
                    found.extend(value)
                elif isinstance(value, dict):
                    found.extend(value.values())
            elif isinstance(segment, _Key):
                if isinstance(value, dict) and segment.name in value:
                    found.append(value[segment.name])
            elif isinstance(value, list) and -len(value) <= segment.number < len(value):
                found.append(value[segment.number])
        values = found
    if path.definite:
        return values[0] if values else None
    return values
