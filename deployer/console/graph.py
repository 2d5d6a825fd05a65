"""The flow graph as a page draws it: the layout's nodes and edges, Parallel branches and Map
processors nested inside their state's node, each with the fold's status.

Every node has a ``key``: a top-level state's is its name; a state inside a Parallel branch is
``<parallel key>/<branch index>/<name>``, inside a Map's processor ``<map key>/*/<name>`` (in
names, ``%`` and ``/`` are written ``%25`` and ``%2F``). A nested node shows the state as it
stands in the latest visit of the state that contains it: in one branch of a Parallel, or over
every iteration of a Map (the most telling status wins: active, failed, caught, timed out,
stopped, succeeded, not reached; the visits are counted over the iterations).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

from deployer.console.layout import Inner, Layout
from deployer.console.present import STATUS
from deployer.fdl.progress import ExecutionProgress, ScopeProgress, Status, Visit

__all__ = ["NodeState", "graph_model", "node_key", "node_states"]

_PRIORITY = (Status.RUNNING, Status.RETRYING, Status.WAITING, Status.FAILED, Status.CAUGHT,
             Status.TIMED_OUT, Status.STOPPED, Status.SUCCEEDED, Status.NOT_REACHED)


def node_key(prefix: str, name: str) -> str:
    """The key of state ``name`` in the scope whose key prefix is ``prefix`` ("" at the top)."""
    segment = name.replace("%", "%25").replace("/", "%2F")
    return f"{prefix}/{segment}" if prefix else segment


def node_id(key: str) -> str:
    """An HTML id for a node key (stable across runs)."""
    safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in key)
    return "n-" + safe if safe == key else f"n-{safe}-{zlib.crc32(key.encode()) % 10_000:04d}"


@dataclass(slots=True)
class NodeState:
    """A node's state: its visits (over every scope it stands for) and their status."""

    name: str
    type: str
    visits: list[Visit] = field(default_factory=list)
    where: list[str] = field(default_factory=list)  # per visit: "" or "iteration 2", ...
    status: Status = Status.NOT_REACHED
    scopes: int = 1  # how many scopes (Map iterations) the node stands for
    owner: str = ""  # the containing Parallel/Map state ("" at the top)
    branch: int | None = None  # the Parallel branch (None at the top and in a Map)


def node_states(layout: Layout, progress: ExecutionProgress) -> dict[str, NodeState]:
    """Every node's state by key, top level first (see the module docstring)."""
    found: dict[str, NodeState] = {}
    _resolve(layout, [progress.root], "", "", None, found)
    return found


def _resolve(layout: Layout, scopes: list[ScopeProgress], prefix: str, owner: str,
             branch: int | None, found: dict[str, NodeState]) -> None:
    many = branch is None and bool(owner)
    for n in layout.nodes:
        states = [s.states[n.name] for s in scopes if n.name in s.states]
        node = NodeState(n.name, n.type, scopes=len(scopes), owner=owner, branch=branch)
        for s in scopes:
            state = s.states.get(n.name)
            for v in state.visits if state is not None else ():
                node.visits.append(v)
                node.where.append(f"iteration {s.index + 1}" if many else "")
        statuses = {s.status for s in states}
        node.status = next((p for p in _PRIORITY if p in statuses), Status.NOT_REACHED)
        found[node_key(prefix, n.name)] = node
    for inner in layout.inner:
        key = node_key(prefix, inner.owner)
        _resolve(inner.layout, _children(scopes, inner), _inner_prefix(key, inner),
                 inner.owner, inner.index if inner.kind == "branch" else None, found)


def _inner_prefix(owner_key: str, inner: Inner) -> str:
    return f"{owner_key}/{inner.index}" if inner.kind == "branch" else f"{owner_key}/*"


def _children(scopes: list[ScopeProgress], inner: Inner) -> list[ScopeProgress]:
    """The scopes of ``inner`` in the latest visit of its owner, in each of ``scopes``."""
    found: list[ScopeProgress] = []
    for scope in scopes:
        state = scope.states.get(inner.owner)
        if state is None or not state.visits:
            continue
        found += [c for c in state.visits[-1].scopes if c.kind == inner.kind
                  and (inner.kind == "iteration" or c.index == inner.index)]
    return found


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _aria(n: NodeState, word: str) -> str:
    """"GetJobStatus, Task, running, visit 2 of 2" (plus where a nested node stands)."""
    name, count = f"{n.name}, {n.type}, {word}", len(n.visits)
    if n.owner and n.branch is None:  # inside a Map: over its iterations
        if not n.scopes:
            return f"{name}, in {n.owner}"
        return f"{name}, {_plural(count, 'visit')} over {_plural(n.scopes, 'iteration')} " \
               f"of {n.owner}"
    text = f"{name}, visit {count} of {count}" if count else name
    if n.branch is not None:
        text += f", branch {n.branch + 1} of {n.owner}"
    return text


def graph_model(layout: Layout, progress: ExecutionProgress | None,
                selected: str | None = None) -> dict[str, Any]:
    """Nodes, edges and inner frames of ``layout`` with the fold's statuses (neutral without
    one). Items carry a ``depth`` (0 at the top): a page draws depth by depth, so a nested
    scope lies above its container."""
    states = node_states(layout, progress) if progress is not None else None
    out: dict[str, Any] = {"width": layout.width, "height": layout.height, "nodes": [],
                           "edges": [], "frames": [], "depth": 0}
    _scope(layout, states, selected, "", 0.0, 0.0, 0, [progress.root] if progress else None,
           out)
    return out


def _scope(layout: Layout, states: dict[str, NodeState] | None, selected: str | None,
           prefix: str, ox: float, oy: float, depth: int,
           scopes: list[ScopeProgress] | None, out: dict[str, Any]) -> None:
    out["depth"] = max(out["depth"], depth)
    for n in layout.nodes:
        key = node_key(prefix, n.name)
        state = states.get(key) if states is not None else None
        status = state.status.value if state is not None else "neutral"
        visits = len(state.visits) if state is not None else 0
        icon, word = STATUS.get(status, ("", ""))
        sub = [n.type, n.detail, word]
        if state is not None and state.owner and state.branch is None and state.scopes:
            sub.append(_plural(state.scopes, "iteration"))
        out["nodes"].append({
            "key": key, "name": n.name, "id": node_id(key), "type": n.type,
            "detail": n.detail, "x": ox + n.x, "y": oy + n.y, "w": n.w, "h": n.h,
            "status": status, "icon": icon, "word": word, "visits": visits,
            "aria": _aria(state, word) if state is not None else f"{n.name}, {n.type}",
            "sub": " · ".join(p for p in sub if p), "selected": key == selected,
            "container": any(i.owner == n.name for i in layout.inner), "depth": depth})
    for e in layout.edges:
        count = sum(s.edges.get((e.source, e.target), 0) for s in scopes) if scopes else 0
        out["edges"].append({
            "key": e.key if not prefix else f"{prefix}/{e.key}", "source": e.source,
            "target": e.target, "kind": e.kind, "label": e.label, "back": e.back,
            "path": e.path, "lx": e.label_x, "ly": e.label_y, "count": count,
            "taken": count > 0, "ox": ox, "oy": oy, "depth": depth})
    for inner in layout.inner:
        key = _inner_prefix(node_key(prefix, inner.owner), inner)
        out["frames"].append({"key": key, "label": inner.label, "x": ox + inner.x,
                              "y": oy + inner.y, "w": inner.layout.width,
                              "h": inner.layout.height, "depth": depth + 1})
        _scope(inner.layout, states, selected, key, ox + inner.x, oy + inner.y, depth + 1,
               _children(scopes, inner) if scopes is not None else None, out)
