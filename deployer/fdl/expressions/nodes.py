"""Syntax tree of the expression language: frozen nodes, the parsed :class:`Expression`, and
walking the tree.

:func:`deployer.fdl.expressions.parser.parse_expression` builds these nodes; the evaluator compiles
them. Every node carries the 0-based character ``offset`` where it starts in the expression text.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeAlias

__all__ = [
    "VARIABLES",
    "ArrayLiteral",
    "Binary",
    "Call",
    "Expression",
    "Index",
    "Literal",
    "MapLiteral",
    "Member",
    "Node",
    "Unary",
    "Variable",
    "children",
    "variables_used",
]

#: The variables an expression may read (reference §3.2).
VARIABLES = frozenset({"$Input", "$Output", "$Context", "$Global", "$Item"})


@dataclass(frozen=True, slots=True)
class Literal:
    """A constant: string, int, float, bool or null."""

    offset: int
    value: Any


@dataclass(frozen=True, slots=True)
class Variable:
    """One of :data:`VARIABLES`, e.g. ``$Input``."""

    offset: int
    name: str


@dataclass(frozen=True, slots=True)
class Member:
    """``target.name`` or ``target["name"]`` (a constant string key)."""

    offset: int
    target: Node
    name: str


@dataclass(frozen=True, slots=True)
class Index:
    """``target[index]`` with a computed index (array position or map key)."""

    offset: int
    target: Node
    index: Node


@dataclass(frozen=True, slots=True)
class Unary:
    """A prefix operator: ``!`` (also spelled ``not``), ``-`` or ``+``."""

    offset: int
    op: str
    operand: Node


@dataclass(frozen=True, slots=True)
class Binary:
    """An infix operator; ``op`` is canonical (``&&``, ``||``, ``in``, ``not in``, ``==``...)."""

    offset: int
    op: str
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Call:
    """A built-in function call, e.g. ``format("{}", $Input.x)``."""

    offset: int
    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class ArrayLiteral:
    """``[a, b, ...]``."""

    offset: int
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class MapLiteral:
    """``{"key": value, name: value, ...}`` (later duplicate keys win, as in expr-lang)."""

    offset: int
    entries: tuple[tuple[str, Node], ...]


Node: TypeAlias = (
    Literal | Variable | Member | Index | Unary | Binary | Call | ArrayLiteral | MapLiteral
)


@dataclass(frozen=True, slots=True, eq=False)
class Expression:
    """A parsed expression: its source ``text`` and root ``node``.

    Compared and hashed by identity: :func:`parse_expression` returns the same object for the
    same text, and the evaluator caches its compiled form per object.
    """

    text: str
    node: Node


def children(node: Node) -> Iterator[Node]:
    """The direct sub-expressions of ``node``."""
    kind = type(node)
    if kind is Member:
        yield node.target  # type: ignore[union-attr]
    elif kind is Index:
        yield node.target  # type: ignore[union-attr]
        yield node.index  # type: ignore[union-attr]
    elif kind is Unary:
        yield node.operand  # type: ignore[union-attr]
    elif kind is Binary:
        yield node.left  # type: ignore[union-attr]
        yield node.right  # type: ignore[union-attr]
    elif kind is Call or kind is ArrayLiteral:
        yield from node.args if kind is Call else node.items  # type: ignore[union-attr]
    elif kind is MapLiteral:
        for _, value in node.entries:  # type: ignore[union-attr]
            yield value


def variables_used(expr: Expression) -> frozenset[str]:
    """The ``$`` variables the expression reads, e.g. ``frozenset({"$Input", "$Output"})``."""
    found: set[str] = set()
    stack: list[Node] = [expr.node]
    while stack:
        node = stack.pop()
        if type(node) is Variable:
            found.add(node.name)
        stack.extend(children(node))
    return frozenset(found)
