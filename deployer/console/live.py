"""What the live channel sends: execution updates (a delta of the graph plus the re-rendered
fragments of the page) and the engine facts of the page header.

Plain data, computed on the server from the same view-models as the pages (the script only
applies it; there is no copy of the fold in JavaScript). The transport, one server-sent-event
stream per page, is ``deployer/emulator/api/console_live.py``.
"""

from __future__ import annotations

from typing import Any

from deployer.console import execution as ex
from deployer.console.render import render_fragment
from deployer.console.sources import Sources
from deployer.console.views import console_path, engine_facts

__all__ = ["Shown", "engine_facts", "execution_update", "live_delta", "shown"]

Shown = dict[str, tuple[Any, ...]]
"""What a page shows of the graph: node key -> (status, visits, aria), edge key -> (count,)."""


def execution_update(src: Sources, region: str, flow: str, name: str, *,
                     state: str | None = None, visit: int | None = None,
                     page: int | None = None) -> dict[str, Any]:
    """The execution's model (NotFound when it does not exist) with the page's fragments
    rendered as HTML (summary, panel, table, events page, timeline, output)."""
    model = ex.execution_model(src, region, flow, name, state=state, visit=visit, page=page)
    base = console_path(region, "flows", flow, "executions", name)
    model["html"] = {
        "summary": render_fragment("parts.html", "summary", model["summary"], {}),
        "panel": render_fragment("parts.html", "panel", model["panel"], {"region": region}),
        "table": render_fragment("parts.html", "table", model["table"]),
        "events": render_fragment("parts.html", "events", model["events"], base),
        "timeline": render_fragment("parts.html", "timeline", model["timeline"]),
        "output": model["output"] if model["output"] is not None else "(none yet)"}
    return model


def shown(update: dict[str, Any]) -> Shown:
    """What a page shows of the graph after applying ``update``."""
    graph = update["graph"] or {"nodes": [], "edges": []}
    seen: Shown = {"n:" + n["key"]: (n["status"], n["visits"], n["aria"], n["sub"])
                   for n in graph["nodes"]}
    seen.update({"e:" + e["key"]: (e["count"],) for e in graph["edges"]})
    return seen


def live_delta(update: dict[str, Any], before: Shown | None) -> dict[str, Any]:
    """The part of ``update`` a page showing ``before`` needs: the nodes and edges that
    changed (all of them when ``before`` is None), the summary, the selection and the
    fragments."""
    graph = update["graph"] or {"nodes": [], "edges": []}
    nodes, edges = graph["nodes"], graph["edges"]
    if before is not None:
        nodes = [n for n in nodes if before.get("n:" + n["key"])
                 != (n["status"], n["visits"], n["aria"], n["sub"])]
        edges = [e for e in edges if before.get("e:" + e["key"]) != (e["count"],)]
    return {"summary": update["summary"], "nodes": nodes, "edges": edges,
            "selected": update["selected"], "html": update["html"]}
