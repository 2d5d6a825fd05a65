"""YAML text -> a small positioned node tree (internal to the parser).

ruamel.yaml composes the document (line/column on every node); this module turns the composed
nodes into :class:`YNode` values: mappings keep *every* key in document order (duplicates included,
so the parser can report them with a path), merge keys (``<<``) are expanded, scalars are
converted with the YAML 1.2 core schema, local tags (``!Ref`` of Funcraft and ROS templates) are
kept as written, and alias expansion is bounded so that recursive or
exponential aliases end in a diagnostic instead of a hang.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from deployer.fdl.syntax.ast import Position, RawValue

__all__ = ["LoadError", "YNode", "load"]

MAX_YAML_DEPTH = 64
MAX_YAML_NODES = 200_000
_TAG = "tag:yaml.org,2002:"
_TYPED_TAGS = {_TAG + "int", _TAG + "float", _TAG + "bool", _TAG + "null"}


@dataclass(slots=True)
class YNode:
    """A mapping (``entries``), a sequence (``items``) or a scalar (``value`` + ``text``)."""

    kind: str  # "map" | "seq" | "scalar"
    position: Position
    entries: list[tuple[str, Position, YNode]] = field(default_factory=list)
    items: list[YNode] = field(default_factory=list)
    value: RawValue = None
    text: str = ""
    bad_keys: list[Position] = field(default_factory=list)
    tag: str = ""  # a local tag as written (``!Ref``); "" for the core schema's own tags

    @property
    def is_map(self) -> bool:
        return self.kind == "map"

    @property
    def is_seq(self) -> bool:
        return self.kind == "seq"

    @property
    def is_scalar(self) -> bool:
        return self.kind == "scalar"


@dataclass(frozen=True, slots=True)
class LoadError:
    """Why the text is not one YAML document: message, position, and whether it is syntax."""

    message: str
    position: Position
    too_deep: bool = False


def _position(node: Node) -> Position:
    mark = node.start_mark
    return Position(mark.line + 1, mark.column + 1)


class _TooLarge(Exception):
    def __init__(self, position: Position, message: str) -> None:
        super().__init__(message)
        self.position = position
        self.message = message


class _Converter:
    def __init__(self) -> None:
        self._safe = YAML(typ="safe", pure=True)
        self._count = 0

    def node(self, node: Node, depth: int) -> YNode:
        self._count += 1
        if depth > MAX_YAML_DEPTH:
            raise _TooLarge(
                _position(node), f"nesting deeper than {MAX_YAML_DEPTH} levels (recursive alias?)"
            )
        if self._count > MAX_YAML_NODES:
            raise _TooLarge(
                _position(node), f"more than {MAX_YAML_NODES} nodes after alias expansion"
            )
        if isinstance(node, MappingNode):
            return self._mapping(node, depth)
        if isinstance(node, SequenceNode):
            items = [self.node(child, depth + 1) for child in node.value]
            return YNode("seq", _position(node), items=items, tag=_local_tag(node))
        return self._scalar(node)

    def _scalar(self, node: Node) -> YNode:
        text = str(node.value) if isinstance(node, ScalarNode) else ""
        value: Any = text
        if node.tag in _TYPED_TAGS:
            try:
                value = self._safe.constructor.construct_object(node, deep=True)
            except (YAMLError, ValueError, TypeError):
                value = text
        if not isinstance(value, (bool, int, float, str, type(None))):
            value = text
        return YNode("scalar", _position(node), value=value, text=text, tag=_local_tag(node))

    def _mapping(self, node: MappingNode, depth: int) -> YNode:
        result = YNode("map", _position(node), tag=_local_tag(node))
        merged: list[YNode] = []
        for key_node, value_node in node.value:
            if key_node.tag == _TAG + "merge":
                merged.extend(self._merge_sources(value_node, depth))
                continue
            if not isinstance(key_node, ScalarNode):
                result.bad_keys.append(_position(key_node))
                continue
            child = self.node(value_node, depth + 1)
            result.entries.append((str(key_node.value), _position(key_node), child))
        present = {key for key, _, _ in result.entries}
        for source in merged:
            for key, key_position, child in source.entries:
                if key not in present:
                    present.add(key)
                    result.entries.append((key, key_position, child))
        return result

    def _merge_sources(self, node: Node, depth: int) -> list[YNode]:
        converted = self.node(node, depth + 1)
        candidates = converted.items if converted.is_seq else [converted]
        return [candidate for candidate in candidates if candidate.is_map]


def _local_tag(node: Node) -> str:
    """``!Ref`` for a node tagged ``!Ref``; "" for untagged nodes and the core schema's tags."""
    tag = node.tag or ""
    return tag if tag.startswith("!") else ""


def load(text: str) -> YNode | LoadError | None:
    """Compose ``text`` into a :class:`YNode` tree; None for an empty document.

    Never raises for bad input: YAML errors, several documents, recursion and alias bombs come
    back as a :class:`LoadError` carrying the 1-based position ruamel.yaml reported.
    """
    yaml = YAML(typ="safe", pure=True)
    try:
        composed = yaml.compose(text)
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        position = Position(mark.line + 1, mark.column + 1) if mark else Position(1, 1)
        problem = error.problem or error.context or "invalid YAML"
        return LoadError(_first_line(str(problem)), position)
    except YAMLError as error:
        return LoadError(_first_line(str(error)) or "invalid YAML", Position(1, 1))
    except RecursionError:
        return LoadError("nesting too deep to read", Position(1, 1), too_deep=True)
    if composed is None:
        return None
    try:
        return _Converter().node(composed, 0)
    except _TooLarge as error:
        return LoadError(error.message, error.position, too_deep=True)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""
