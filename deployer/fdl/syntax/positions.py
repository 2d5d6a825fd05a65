"""What a flow definition says, and where: positions, expression text and raw YAML fields.

These are the leaves of the flow AST (:mod:`deployer.fdl.syntax.ast`). Every node carries the
1-based :class:`Position` of its first token; an :class:`Expr` is an expression *as written* (text
plus position, never parsed while the AST is built: the validator parses it to check it); a
:class:`RawField` keeps one key of a YAML mapping exactly as written, which is what the validator
inspects for unknown keys and wrong types.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Union

__all__ = ["UNKNOWN_POSITION", "Expr", "Position", "RawField", "RawValue", "no_raw"]


@dataclass(frozen=True, slots=True, order=True)
class Position:
    """1-based line and column of a YAML token."""

    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.line}:{self.column}"


UNKNOWN_POSITION = Position(0, 0)


@dataclass(frozen=True, slots=True)
class Expr:
    """An expression as written in the flow (not parsed), with the position of its first
    character in the YAML document (for a quoted scalar: the opening quote)."""

    text: str
    position: Position

    @property
    def line(self) -> int:
        return self.position.line

    @property
    def column(self) -> int:
        return self.position.column


# Plain, frozen YAML value: scalars, tuples for sequences, read-only mappings for mappings.
RawValue = Union[  # noqa: UP007 (recursive alias needs string forward references)
    None, bool, int, float, str, tuple["RawValue", ...], Mapping[str, "RawValue"]
]


@dataclass(frozen=True, slots=True)
class RawField:
    """One key of a YAML mapping exactly as written: key, plain value and both positions."""

    key: str
    value: RawValue
    key_position: Position
    value_position: Position


_EMPTY_RAW: Mapping[str, RawField] = MappingProxyType({})


def no_raw() -> Mapping[str, RawField]:
    """The shared empty ``raw`` mapping: the default of every node's ``raw`` field."""
    return _EMPTY_RAW
