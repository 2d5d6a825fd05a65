"""A small layered (Sugiyama-style) layout of a flow's states, computed in Python.

It lays out the flow's outline (:mod:`deployer.fdl.syntax.outline`), so a SpecVersion v1 flow and
a legacy one (``steps``) are drawn alike. Steps, all deterministic (same flow → same
coordinates):

1. Edges from the definition: ``Next`` (a legacy step's fall-through to the step after it),
   Choice branches (labelled with the condition; a legacy option's ``goto``) and ``Default``,
   Catch rules (dashed).
2. Back edges: a depth-first search from ``StartAt`` (successors in definition order, then the
   states it did not reach) marks every edge to a state still on the stack; the rest is a DAG.
3. Layers: longest path from the roots over the DAG.
4. Order in a layer: discovery order, then four barycentre sweeps (down, up, down, up); ties
   keep the previous order.
5. Coordinates: layers top to bottom, each layer centred, a layer as tall as its tallest node.
   Forward edges run from the bottom of a node to the top of the next; an edge spanning
   several layers bends beside them; back edges leave on the right and climb in their own
   lane, so a loop such as the seed's ``CheckJobComplete → Wait`` never overlaps the forward
   column.

Parallel and Map states are containers: every branch (a Map: its processor) is laid out by
the same steps, recursively, and drawn inside the state's node, side by side under its header
(:class:`Inner`, with its offset in the parent's coordinates); so are a legacy foreach body and
a legacy choice's inline steps (one inner scope per option that has steps). Other nodes have a
fixed size.
"""

from __future__ import annotations

from dataclasses import dataclass

from deployer.fdl import AnyFlow
from deployer.fdl.legacy.outline import flow_outline
from deployer.fdl.syntax.ast import Scope
from deployer.fdl.syntax.outline import Outline, OutlineNode, outline_scope

__all__ = ["Edge", "GraphNode", "Inner", "Layout", "layout_flow", "layout_scope"]

NODE_W, NODE_H = 232, 58
GAP_X, GAP_Y = 48, 64
MARGIN, LANE = 24, 26
HEAD_H, LABEL_H, PAD, INNER_GAP = 58, 20, 8, 10  # a container's header, branch label, padding


@dataclass(frozen=True, slots=True)
class GraphNode:
    name: str
    type: str
    detail: str  # e.g. the function a Task invokes
    layer: int
    x: float
    y: float
    w: float = NODE_W
    h: float = NODE_H


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    kind: str  # next | choice | default | catch
    label: str
    back: bool
    path: str  # SVG path data
    label_x: float
    label_y: float

    @property
    def key(self) -> str:
        return f"{self.source}->{self.target}"


@dataclass(frozen=True, slots=True)
class Inner:
    """A scope drawn inside the node of Parallel/Map state ``owner``: branch ``index``, or a
    Map's processor (``kind`` iteration); ``x``, ``y``: its offset in the parent layout."""

    owner: str
    kind: str  # branch | iteration
    index: int
    label: str
    x: float
    y: float
    layout: Layout


@dataclass(frozen=True, slots=True)
class Layout:
    nodes: tuple[GraphNode, ...]
    edges: tuple[Edge, ...]
    width: float
    height: float
    inner: tuple[Inner, ...] = ()

    def node(self, name: str) -> GraphNode | None:
        return next((n for n in self.nodes if n.name == name), None)


def _back_edges(scope: Outline, succ: dict[str, list[str]]) -> set[tuple[str, str]]:
    back: set[tuple[str, str]] = set()
    seen: set[str] = set()
    order = [scope.start_at] + [n.name for n in scope.nodes]
    for root in order:
        if root in seen or root not in succ:
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        on_stack = {root}
        seen.add(root)
        while stack:
            node, i = stack[-1]
            if i >= len(succ[node]):
                stack.pop()
                on_stack.discard(node)
                continue
            stack[-1] = (node, i + 1)
            child = succ[node][i]
            if child in on_stack:
                back.add((node, child))
            elif child not in seen:
                seen.add(child)
                on_stack.add(child)
                stack.append((child, 0))
    return back


def _layers(names: list[str], forward: dict[str, list[str]]) -> dict[str, int]:
    indegree = {n: 0 for n in names}
    for targets in forward.values():
        for t in targets:
            indegree[t] += 1
    layer = {n: 0 for n in names}
    ready = [n for n in names if indegree[n] == 0]
    while ready:
        node = ready.pop(0)
        for t in forward[node]:
            layer[t] = max(layer[t], layer[node] + 1)
            indegree[t] -= 1
            if indegree[t] == 0:
                ready.append(t)
    return layer


def _order(rows: list[list[str]], forward: dict[str, list[str]]) -> list[list[str]]:
    preds: dict[str, list[str]] = {n: [] for row in rows for n in row}
    for source, targets in forward.items():
        for t in targets:
            preds[t].append(source)
    for sweep in range(4):
        down = sweep % 2 == 0
        indices = range(1, len(rows)) if down else range(len(rows) - 2, -1, -1)
        for i in indices:
            ref = {n: k for k, n in enumerate(rows[i - 1 if down else i + 1])}
            def centre(n: str, ref: dict[str, int] = ref, down: bool = down) -> float:
                linked = preds[n] if down else forward[n]
                pos = [ref[m] for m in linked if m in ref]
                return sum(pos) / len(pos) if pos else float("inf")
            current = {n: k for k, n in enumerate(rows[i])}
            rows[i] = sorted(rows[i], key=lambda n: (
                centre(n) if centre(n) != float("inf") else current[n], current[n]))
    return rows


def layout_flow(flow: AnyFlow) -> Layout:
    """Lay out the top scope of a flow in either dialect."""
    return layout_scope(flow_outline(flow))


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def layout_scope(scope: Outline | Scope) -> Layout:
    """Lay out the states of ``scope`` (an outline, or a SpecVersion v1 scope; see the module
    docstring)."""
    if isinstance(scope, Scope):
        scope = outline_scope(scope)
    states = {n.name: n for n in scope.nodes}
    names = list(states)
    raw_edges = [(n.name, e.target, e.kind, e.label) for n in scope.nodes for e in n.edges
                 if e.target in states]
    succ: dict[str, list[str]] = {n: [] for n in names}
    for source, target, _, _ in raw_edges:
        if target not in succ[source]:
            succ[source].append(target)
    back = _back_edges(scope, succ)
    forward = {n: [t for t in succ[n] if (n, t) not in back and t != n] for n in names}
    layer = _layers(names, forward)
    depth = max(layer.values(), default=0) + 1
    rows: list[list[str]] = [[] for _ in range(depth)]
    discovery = _discovery(scope, succ)
    for name in sorted(names, key=lambda n: discovery.get(n, len(names))):
        rows[layer[name]].append(name)
    rows = _order(rows, forward)
    inside = {n: _inside(states[n]) for n in names}
    size = {n: _size(inside[n]) for n in names}
    row_w = [sum(size[n][0] for n in row) + GAP_X * max(len(row) - 1, 0) for row in rows]
    row_h = [max((size[n][1] for n in row), default=NODE_H) for row in rows]
    inner_w: float = max(row_w, default=NODE_W)
    nodes: dict[str, GraphNode] = {}
    inner: list[Inner] = []
    y: float = MARGIN
    for i, row in enumerate(rows):
        x = MARGIN + (inner_w - row_w[i]) / 2
        for name in row:
            state, (w, h) = states[name], size[name]
            nodes[name] = GraphNode(name, state.type, state.detail, i, x, y, w, h)
            inner += _place(name, inside[name], x, y, w)
            x += w + GAP_X
        y += row_h[i] + GAP_Y
    edges, lanes = _route(raw_edges, nodes, back, rows, MARGIN + inner_w)
    width = MARGIN * 2 + inner_w + lanes * LANE + (12 if lanes else 0)
    height = y - GAP_Y + MARGIN
    return Layout(tuple(nodes[n] for row in rows for n in row), tuple(edges), width, height,
                  tuple(inner))


def _inside(state: OutlineNode) -> list[tuple[str, int, str, Layout]]:
    """(kind, index, label, layout) of the scopes drawn inside ``state``'s node."""
    return [(n.kind, n.index, n.label, layout_scope(n.scope)) for n in state.nested]


def _size(inside: list[tuple[str, int, str, Layout]]) -> tuple[float, float]:
    if not inside:
        return NODE_W, NODE_H
    w = sum(lay.width for *_, lay in inside) + INNER_GAP * (len(inside) - 1) + 2 * PAD
    h = HEAD_H + LABEL_H + max(lay.height for *_, lay in inside) + PAD
    return max(w, NODE_W), h


def _place(owner: str, inside: list[tuple[str, int, str, Layout]], x: float, y: float,
           w: float) -> list[Inner]:
    used = sum(lay.width for *_, lay in inside) + INNER_GAP * max(len(inside) - 1, 0)
    left = x + (w - used) / 2
    placed = []
    for kind, index, label, lay in inside:
        placed.append(Inner(owner, kind, index, label, left, y + HEAD_H + LABEL_H, lay))
        left += lay.width + INNER_GAP
    return placed


def _discovery(scope: Outline, succ: dict[str, list[str]]) -> dict[str, int]:
    order: dict[str, int] = {}
    queue = [scope.start_at] + [n.name for n in scope.nodes]
    while queue:
        name = queue.pop(0)
        if name in order or name not in succ:
            continue
        order[name] = len(order)
        queue[0:0] = [t for t in succ[name] if t not in order]
    return order


def _route(raw: list[tuple[str, str, str, str]], nodes: dict[str, GraphNode],
           back: set[tuple[str, str]], rows: list[list[str]],
           right: float) -> tuple[list[Edge], int]:
    edges: list[Edge] = []
    lane = 0
    seen: set[tuple[str, str]] = set()
    for source, target, kind, label in raw:
        if (source, target) in seen:
            continue
        seen.add((source, target))
        a, b = nodes[source], nodes[target]
        if (source, target) in back or source == target:
            lane += 1
            lx = right + lane * LANE
            sy, ty = a.y + a.h / 2, b.y + b.h / 2
            sx, tx = a.x + a.w, b.x + b.w
            path = (f"M{sx:.1f},{sy:.1f} H{lx - 8:.1f} Q{lx:.1f},{sy:.1f} {lx:.1f},{sy - 8:.1f} "
                    f"V{ty + 8:.1f} Q{lx:.1f},{ty:.1f} {lx - 8:.1f},{ty:.1f} H{tx + 2:.1f}")
            edges.append(Edge(source, target, kind, _short(label, 20), True, path,
                              sx + 8, sy - 6))
            continue
        sx, sy = a.x + a.w / 2, a.y + a.h
        tx, ty = b.x + b.w / 2, b.y
        if b.layer - a.layer > 1:
            side = a.x - GAP_X / 2 if tx < sx else a.x + a.w + GAP_X / 2
            side = min(side, right - 4)
            path = (f"M{sx:.1f},{sy:.1f} C{sx:.1f},{sy + 30:.1f} {side:.1f},{sy:.1f} "
                    f"{side:.1f},{sy + 40:.1f} V{ty - 40:.1f} C{side:.1f},{ty:.1f} "
                    f"{tx:.1f},{ty - 30:.1f} {tx:.1f},{ty - 2:.1f}")
            edges.append(Edge(source, target, kind, label, False, path, side + 4,
                              (sy + ty) / 2))
            continue
        my = (sy + ty) / 2
        path = f"M{sx:.1f},{sy:.1f} C{sx:.1f},{my:.1f} {tx:.1f},{my:.1f} {tx:.1f},{ty - 2:.1f}"
        # labels near the target end, so the branches of one Choice do not overlap
        edges.append(Edge(source, target, kind, _short(label, 24), False, path,
                          tx + 6, ty - 14))
    return edges, lane
