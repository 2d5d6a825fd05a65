"""A flow's outline: what a drawing or a progress view needs of a definition, in any dialect.

An :class:`Outline` is one scope (the flow, a Parallel branch, a Map processor; in the legacy
dialect also a choice's inline steps and a foreach body): its nodes in definition order, each
with a type label, a short detail (the function a Task calls, a Wait's seconds), its outgoing
edges (``next``, ``choice``, ``default``, ``catch``; labelled) and the scopes nested in it
(``branch`` by index, ``iteration``). :func:`outline_scope` makes one of a SpecVersion v1
scope; :func:`deployer.fdl.legacy.outline.flow_outline` of a flow in either dialect. Pure data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from deployer.fdl.syntax.ast import (
    ChoiceState,
    MapState,
    ParallelState,
    Scope,
    State,
    TaskState,
    WaitState,
)

__all__ = ["Nested", "Outline", "OutlineEdge", "OutlineNode", "outline_scope", "short"]


def short(text: str, limit: int = 28) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class OutlineEdge:
    """A transition to ``target`` of the same scope: ``kind`` is next, choice, default or
    catch."""

    target: str
    kind: str
    label: str = ""


@dataclass(frozen=True, slots=True)
class Nested:
    """A scope inside a node: a ``branch`` (its ``index``) or an ``iteration`` body."""

    kind: str
    index: int
    label: str
    scope: Outline


@dataclass(frozen=True, slots=True)
class OutlineNode:
    """One state or step. ``wait_seconds``: a Wait's literal relative seconds (None
    otherwise)."""

    name: str
    type: str
    detail: str = ""
    edges: tuple[OutlineEdge, ...] = ()
    nested: tuple[Nested, ...] = ()
    wait_seconds: int | None = None
    waits: bool = False  # a Wait state / wait step: its visits wait on a timer

    def child(self, kind: str, index: int) -> Outline | None:
        """The nested scope of ``kind`` (an ``iteration`` body whatever the index; a
        ``branch`` by its index), or None."""
        for nested in self.nested:
            if nested.kind == kind and (kind == "iteration" or nested.index == index):
                return nested.scope
        return None


@dataclass(frozen=True, slots=True)
class Outline:
    """A scope: where it starts and its nodes in definition order."""

    start_at: str
    nodes: tuple[OutlineNode, ...]
    by_name: Mapping[str, OutlineNode] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        index: dict[str, OutlineNode] = {}
        for node in self.nodes:
            index.setdefault(node.name, node)
        object.__setattr__(self, "by_name", MappingProxyType(index))


def outline_scope(scope: Scope) -> Outline:
    """The outline of a SpecVersion v1 scope and of the scopes nested in it."""
    return Outline(scope.start_at, tuple(_node(state) for state in scope.states))


def _node(state: State) -> OutlineNode:
    nested: tuple[Nested, ...] = ()
    if isinstance(state, ParallelState):
        nested = tuple(Nested("branch", i, f"Branch {i + 1}", outline_scope(b))
                       for i, b in enumerate(state.branches))
    elif isinstance(state, MapState) and state.processor is not None:
        nested = (Nested("iteration", 0, "For each item", outline_scope(state.processor)),)
    seconds = state.seconds if isinstance(state, WaitState) else None
    return OutlineNode(state.name, state.type.value, _detail(state), tuple(_edges(state)),
                       nested, seconds, isinstance(state, WaitState))


def _edges(state: State) -> list[OutlineEdge]:
    found: list[OutlineEdge] = []
    if isinstance(state, ChoiceState):
        for branch in state.branches:
            if branch.next:
                found.append(OutlineEdge(branch.next, "choice",
                                         short(branch.condition.text) if branch.condition
                                         else ""))
        if state.default:
            found.append(OutlineEdge(state.default, "default", "Default"))
    elif state.next and not state.end:
        found.append(OutlineEdge(state.next, "next"))
    for rule in getattr(state, "catch", ()):
        if rule.next:
            found.append(OutlineEdge(rule.next, "catch", "Catch " + short(",".join(rule.errors),
                                                                           18)))
    return found


def _detail(state: State) -> str:
    if isinstance(state, TaskState):
        params = state.parameters.to_plain() if state.parameters is not None else {}
        arn = str(params.get("resourceArn") or "")
        function = arn.split("functions/", 1)[1].split("/")[0] if "functions/" in arn else ""
        return function or state.action
    if isinstance(state, WaitState):
        return f"{state.seconds} s" if state.seconds is not None else "Seconds.$"
    if isinstance(state, ParallelState):
        return f"{len(state.branches)} branches"
    if isinstance(state, MapState):
        return "for each item"
    return ""
