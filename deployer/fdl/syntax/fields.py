"""Reading YAML mappings for the flow builders: keys, field coercion and document diagnostics.

:class:`MappingReader` hands a builder the keys of a mapping (first occurrence wins) and reports
what YAML itself forbids: duplicate keys (FDL002), non-scalar keys (FDL005) and list elements
that must be mappings but are not (FDL004). The coercion functions implement the field rules of
docs/fdl-semantics.md: string fields take any non-null scalar as written, integer fields take
YAML integers only, booleans take booleans only; a value of the wrong type gives ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from deployer.fdl.syntax.diagnostics import Code, Collector, join_path, state_path
from deployer.fdl.syntax.positions import Expr, Position, RawField, RawValue
from deployer.fdl.syntax.yaml_tree import YNode

__all__ = [
    "Fields",
    "Getter",
    "MappingReader",
    "as_bool",
    "as_expr",
    "as_int",
    "as_strings",
    "as_text",
    "describe_node",
    "getter",
    "raw_value",
]

Fields = dict[str, tuple[Position, YNode]]
Getter = Callable[[str], "YNode | None"]


def getter(fields: Fields) -> Getter:
    """``get(key)``: the value node of ``key``, or None when the mapping lacks it."""

    def get(key: str) -> YNode | None:
        entry = fields.get(key)
        return entry[1] if entry is not None else None

    return get


def describe_node(node: YNode) -> str:
    """``mapping``, ``list``, ``null`` or ``scalar ('text')`` for messages."""
    if node.is_map:
        return "mapping"
    if node.is_seq:
        return "list"
    return "null" if node.value is None else f"scalar ({node.text!r})"


def raw_value(node: YNode) -> RawValue:
    """The plain frozen value of a node (mappings keep the first of duplicate keys)."""
    if node.is_map:
        values: dict[str, RawValue] = {}
        for key, _, child in node.entries:
            values.setdefault(key, raw_value(child))
        return MappingProxyType(values)
    if node.is_seq:
        return tuple(raw_value(child) for child in node.items)
    return node.value


def as_text(node: YNode | None) -> str | None:
    """String field coercion: any non-null scalar, as written."""
    if node is None or not node.is_scalar or node.value is None:
        return None
    return node.text


def as_int(node: YNode | None) -> int | None:
    """Integer field coercion: YAML integers only (not booleans)."""
    if node is None or not node.is_scalar:
        return None
    value = node.value
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_expr(node: YNode | None) -> Expr | None:
    """Expression field coercion: a string scalar, kept as text with its position."""
    if node is None or not node.is_scalar or not isinstance(node.value, str):
        return None
    return Expr(node.value, node.position)


def as_bool(node: YNode | None) -> bool:
    """``End``-style flags: true only for the YAML boolean ``true``."""
    return node is not None and node.is_scalar and node.value is True


def as_strings(node: YNode | None) -> tuple[str, ...]:
    """The string elements of a list (``Errors``); other elements are left out."""
    if node is None or not node.is_seq:
        return ()
    return tuple(child.value for child in node.items if isinstance(child.value, str))


def _name_of(node: YNode) -> str:
    """The ``Name`` of a state mapping as written, or ``""``."""
    return as_text(next((v for k, _, v in node.entries if k == "Name"), None)) or ""


class MappingReader:
    """Keys of YAML mappings for the builders, with the parser's document-level diagnostics."""

    def __init__(self, diagnostics: Collector) -> None:
        self.diagnostics = diagnostics
        self._checked: set[int] = set()

    def fields(self, node: YNode, path: str) -> Fields:
        """Keys of a mapping (first occurrence wins). The first visit of a mapping reports its
        duplicate and non-scalar keys and those of everything below it."""
        first_visit = id(node) not in self._checked
        self._checked.add(id(node))
        result: Fields = {}
        for key, position, child in node.entries:
            if key in result:
                if first_visit:
                    first = result[key][0]
                    self.diagnostics.report(
                        Code.DUPLICATE_KEY,
                        f"duplicate key '{key}' (first written at line {first.line})",
                        position,
                        join_path(path, key),
                    )
                continue
            result[key] = (position, child)
            if first_visit:
                self._check_nested(child, join_path(path, key))
        if first_visit:
            for position in node.bad_keys:
                self.diagnostics.report(
                    Code.BAD_KEY, "mapping keys must be scalars", position, path
                )
        return result

    def _check_nested(self, node: YNode, path: str) -> None:
        if node.is_map:
            self.fields(node, path)
        elif node.is_seq:
            is_states = path == "States" or path.endswith(".States")
            for index, child in enumerate(node.items):
                if is_states and child.is_map:
                    prefix = path[: -len("States")].rstrip(".")
                    self._check_nested(child, state_path(prefix, index, _name_of(child)))
                else:
                    self._check_nested(child, f"{path}[{index}]")

    @staticmethod
    def raw(fields: Fields) -> Mapping[str, RawField]:
        """The ``raw`` of a node: every key as written, with its plain value and positions."""
        return MappingProxyType(
            {
                key: RawField(key, raw_value(child), position, child.position)
                for key, (position, child) in fields.items()
            }
        )

    def mapping_items(self, node: YNode | None, path: str, what: str) -> list[tuple[int, YNode]]:
        """Elements of a list that must be mappings; other elements are reported and skipped."""
        if node is None or not node.is_seq:
            return []
        result: list[tuple[int, YNode]] = []
        for index, child in enumerate(node.items):
            if child.is_map:
                result.append((index, child))
            else:
                self.diagnostics.report(
                    Code.EXPECTED_MAPPING,
                    f"each {what} must be a mapping, found {describe_node(child)}",
                    child.position,
                    f"{path}[{index}]",
                )
        return result

    def states(self, node: YNode | None, prefix: str) -> list[tuple[str, YNode]]:
        """The state mappings of a ``States`` list under ``prefix``, each with its path."""
        return [
            (state_path(prefix, index, _name_of(child)), child)
            for index, child in self.mapping_items(node, join_path(prefix, "States"), "state")
        ]
