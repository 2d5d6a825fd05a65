"""The execution page's view-model (P4) and its live deltas, from the history fold.

``execution_model`` returns plain data: summary, the graph (layout + the fold's status of each
node, visit badges, edges taken with counts), the selected state's panel, the table view, a page
of events and the timeline. What the live channel sends is built from it
(:mod:`deployer.console.live`).
"""

from __future__ import annotations

from typing import Any

from deployer.console.graph import NodeState, graph_model, node_key, node_states
from deployer.console.layout import layout_flow
from deployer.console.present import (
    EXECUTION_STATUS,
    STATUS,
    HistoryEntry,
    duration,
    event_from_record,
    pretty,
    rows_of,
    since,
    summarize,
    utc_time,
)
from deployer.console.sources import Sources
from deployer.emulator.services.executions import ExecutionView
from deployer.fdl import AnyFlow
from deployer.fdl.progress import (
    ExecutionProgress,
    ScopeProgress,
    Status,
    Visit,
    fold,
    task_id,
    task_request_id,
)

__all__ = ["EVENTS_PAGE", "execution_model", "graph_model", "load_execution"]

EVENTS_PAGE = 200


def _current(progress: ExecutionProgress, now: float) -> str:
    visits = progress.current()
    if not visits:
        return ""
    visit = visits[-1]
    if visit.status is Status.WAITING and visit.fires_at is not None:
        left = max(0.0, visit.fires_at - now)
        return f"{visit.state}, fires at {utc_time(visit.fires_at)} (in {duration(left)})"
    return f"{visit.state} (visit {visit.number})"


def summary_model(view: ExecutionView, progress: ExecutionProgress,
                  now: float) -> dict[str, Any]:
    icon, word, css = EXECUTION_STATUS.get(view.status, ("?", view.status, "neutral"))
    end = view.stopped_at if view.stopped_at is not None else now
    return {"name": view.name, "flow": view.flow_name, "status": view.status, "icon": icon,
            "word": word, "css": css, "finished": view.status not in ("Running", "Starting"),
            "started": utc_time(view.started_at), "stopped": utc_time(view.stopped_at),
            "duration": duration(max(0.0, end - view.started_at)),
            "transitions": progress.transitions, "current": _current(progress, now),
            "version": view.version, "last_event_id": progress.last_event_id,
            "error": view.error_code or progress.error or "",
            "cause": view.error_detail or progress.cause or "", "mode": view.mode}


def _pick(progress: ExecutionProgress, nodes: dict[str, NodeState], state: str | None,
          visit: int | None) -> tuple[str | None, int | None]:
    """The node key and visit number to show: the one asked for (its latest visit by
    default), else the current top-level visit, else the last one."""
    node = nodes.get(state) if state is not None else None
    if state is not None and node is None and state in progress.root.states:
        state = node_key("", state)  # a top-level state named in the URL as written
        node = nodes.get(state)
    if node is not None:
        count = len(node.visits)
        if count:
            return state, visit if visit is not None and 1 <= visit <= count else count
        return state, None
    scope = progress.root
    current = progress.current()
    if current:
        top = next((v for v in current if v in scope.path), current[0])
        return node_key("", top.state), top.number
    if scope.path:
        return node_key("", scope.path[-1].state), scope.path[-1].number
    return None, None


def _scopes_model(scopes: list[ScopeProgress]) -> list[dict[str, Any]]:
    return [{"kind": s.kind, "index": s.index, "error": s.error,
             "states": [{"name": st.name, "status": st.status.value,
                         "icon": STATUS[st.status.value][0], "word": STATUS[st.status.value][1],
                         "visits": len(st.visits)} for st in s.states.values()]}
            for s in scopes]


def panel_model(src: Sources, region: str, view: ExecutionView, nodes: dict[str, NodeState],
                events: list[HistoryEntry], state: str | None,
                number: int | None) -> dict[str, Any] | None:
    """The selected visit: input, task attempts (Body), output, error, log, its events."""
    if state is None:
        return None
    node = nodes.get(state)
    base = {"state": state, "name": node.name if node else state,
            "type": node.type if node else "", "visits": len(node.visits) if node else 0,
            "visit": number, "where": "", "owner": node.owner if node else ""}
    if node is None or number is None:
        icon, word = STATUS["not-reached"]
        return {**base, "status": "not-reached", "icon": icon, "word": word, "reached": False}
    v: Visit = node.visits[number - 1]
    base["where"] = node.where[number - 1]
    icon, word = STATUS[v.status.value]
    first, last = v.event_range
    attempts = []
    for a in v.attempts:
        log = _invocation(src, region, view.name, a.scheduled_event_id, a.parameters)
        children = _children(src, region, view, a.resource, a.scheduled_event_id)
        map_run = _map_run(src, a.resource, a.parameters)
        attempts.append({"number": a.number, "resource": a.resource, "task_mode": a.task_mode,
                         "parameters": pretty(a.parameters), "outcome": a.outcome,
                         "scheduled": a.scheduled_at, "ended": a.ended_at or "",
                         "error": a.error, "cause": a.cause,
                         "output": pretty(a.output) if a.output is not None else None,
                         "body_rows": rows_of(a.body), "body": pretty(a.body)
                         if a.body is not None else None, "invocation": log,
                         "children": children, "map_run": map_run})
    return {**base, "reached": True, "status": v.status.value, "icon": icon, "word": word,
            "entered": v.entered_at, "exited": v.exited_at or "",
            "duration": duration(since(v.entered_at, v.exited_at)) if v.exited_at else "",
            "fires_at": utc_time(v.fires_at) if v.fires_at else "",
            "raw_input": pretty(v.raw_input), "input": pretty(v.input),
            "input_rows": rows_of(v.input),
            "output": pretty(v.output) if v.output is not None else None,
            "output_rows": rows_of(v.output), "error": v.error, "cause": v.cause,
            "attempts": attempts, "scopes": _scopes_model(v.scopes),
            "events": [_event_row(e, events[0].time if events else e.time)
                       for e in events[first - 1:last]]}


def _children(src: Sources, region: str, view: ExecutionView, resource: str,
              scheduled: int) -> list[dict[str, Any]]:
    """The sub-flow executions a ``FNF:StartExecution`` attempt started, with their status."""
    if resource != "FNF:StartExecution":
        return []
    return [_link(region, child) for child in src.executions.children(
        src.account_id, region, view.flow_name, view.name, task_id(view.name, scheduled))]


def _map_run(src: Sources, resource: str, parameters: Any) -> dict[str, Any] | None:
    """A distributed Map's map run: its name, size and its children's counts by status."""
    if resource != "FNF:StartMapRun" or not isinstance(parameters, dict):
        return None
    name = str(parameters.get("MapRunName", ""))
    counts = src.executions.map_run_counts(name)
    total = int(parameters.get("ItemCount") or 0)
    started = sum(counts.values())
    return {"name": name, "total": total, "running": counts.get("Running", 0),
            "succeeded": counts.get("Succeeded", 0),
            "failed": started - counts.get("Running", 0) - counts.get("Succeeded", 0),
            "pending": max(0, total - started)}


def _link(region: str, other: ExecutionView) -> dict[str, Any]:
    from deployer.console.views import console_path  # views imports this module

    icon, word, css = EXECUTION_STATUS.get(other.status, ("?", other.status, "neutral"))
    return {"flow": other.flow_name, "name": other.name, "status": other.status,
            "icon": icon, "word": word, "css": css,
            "url": console_path(region, "flows", other.flow_name, "executions", other.name)}


def _child_badges(src: Sources, region: str, view: ExecutionView,
                  nodes: dict[str, NodeState], graph: dict[str, Any]) -> None:
    """A sub-flow Task's node shows the status of the child its latest attempt started."""
    by_key = {n["key"]: n for n in graph["nodes"]}
    for key, node in nodes.items():
        if not node.visits or key not in by_key:
            continue
        attempts = node.visits[-1].attempts
        if not attempts or attempts[-1].resource != "FNF:StartExecution":
            continue
        children = _children(src, region, view, attempts[-1].resource,
                              attempts[-1].scheduled_event_id)
        if children:
            child = children[-1]
            shown = by_key[key]
            shown["child"] = child
            shown["sub"] = f"{shown['sub']} · child {child['word']}"


def parent_model(src: Sources, region: str, view: ExecutionView) -> dict[str, Any] | None:
    """The execution whose Task started this one (a sub-flow's parent), if any."""
    found = src.executions.parent(src.account_id, region, view.flow_name, view.name)
    if found is None:
        return None
    parent, _ = found
    return _link(region, parent)


def _invocation(src: Sources, region: str, execution: str, scheduled: int,
                parameters: Any) -> dict[str, Any] | None:
    arn = parameters.get("resourceArn") if isinstance(parameters, dict) else None
    if not isinstance(arn, str) or "functions/" not in arn:
        return None
    function = arn.split("functions/", 1)[1].split("/")[0]
    request_id = task_request_id(task_id(execution, scheduled))
    rec = src.functions.invocation(src.account_id, region, request_id)
    if rec is None:
        return {"function": function, "request_id": request_id, "found": False}
    started = src.functions.instance_started(rec.instance_id)
    age = rec.invoked_at - started if started is not None else None
    return {"function": function, "request_id": request_id, "found": True,
            "status": rec.status, "error_type": rec.error_type,
            "duration_ms": rec.duration_ms, "log": rec.log, "instance_id": rec.instance_id,
            "cold_start": rec.cold_start, "instance_age": duration(age) if age else "0 s",
            "invoked_at": utc_time(rec.invoked_at)}


def _event_row(e: HistoryEntry, start: str) -> dict[str, Any]:
    offset = since(start, e.time)
    raw = e.raw
    if e.type.startswith("Task"):
        group = e.event_id if e.type == "TaskScheduled" else e.schedule_event_id
    elif e.type.startswith("Step"):
        group = e.event_id if e.type == "StepEntered" else e.schedule_event_id
    else:
        group = e.event_id
    kind = ("Execution" if e.type.startswith("Execution") else "Task" if e.type.startswith(
        "Task") else "Step" if e.type.startswith("Step") else "Scope")
    return {"id": e.event_id, "schedule": e.schedule_event_id, "type": e.type,
            "step": e.step_name, "time": e.time, "offset": f"+{offset:.1f} s" if offset is not None
            else "", "short": raw if len(raw) <= 120 else raw[:119] + "…",
            "long": len(raw) > 120, "pretty": pretty(raw) if raw else "", "group": group,
            "kind": kind}


def table_model(progress: ExecutionProgress, now: float) -> list[dict[str, Any]]:
    rows = []
    for i, v in enumerate(_all_visits(progress.root), start=1):
        icon, word = STATUS[v.status.value]
        end = v.exited_at if v.exited_at else now
        task = v.task
        output = task.output if task is not None and task.output is not None else v.output
        rows.append({"index": i, "state": v.state, "visit": v.number,
                     "type": progress.root.states[v.state].type
                     if v.state in progress.root.states else "",
                     "status": v.status.value, "icon": icon, "word": word,
                     "entered": v.entered_at, "duration": duration(since(v.entered_at, end)),
                     "attempts": len(v.attempts), "summary":
                     summarize(output) if output is not None else ""})
    return rows


def _all_visits(scope: ScopeProgress) -> list[Visit]:
    return list(scope.path)


def timeline_model(progress: ExecutionProgress, now: float) -> dict[str, Any]:
    start = since(0, progress.started_at) if progress.started_at else None
    if start is None:
        return {"rows": [], "total": ""}
    end = since(0, progress.stopped_at) if progress.stopped_at else now
    total = max(end - start, 0.001)
    rows = []
    for st in progress.root.states.values():
        bars = []
        for v in st.visits:
            a = (since(0, v.entered_at) or start) - start
            b = (since(0, v.exited_at) if v.exited_at else end) - start
            bars.append({"left": round(100 * a / total, 3),
                         "width": round(100 * max(b - a, 0) / total, 3),
                         "status": v.status.value, "visit": v.number,
                         "title": f"{st.name} visit {v.number}: +{a:.1f} s, "
                                  f"{duration(max(b - a, 0))}, {STATUS[v.status.value][1]}"})
        rows.append({"state": st.name, "status": st.status.value, "bars": bars})
    return {"rows": rows, "total": duration(total)}


def events_model(events: list[HistoryEntry], page: int | None) -> dict[str, Any]:
    pages = max(1, -(-len(events) // EVENTS_PAGE))
    number = pages if page is None else min(max(page, 1), pages)
    chunk = events[(number - 1) * EVENTS_PAGE: number * EVENTS_PAGE]
    start = events[0].time if events else ""
    return {"page": number, "pages": pages, "total": len(events),
            "rows": [_event_row(e, start) for e in chunk]}


def load_execution(src: Sources, region: str, flow_name: str,
         name: str) -> tuple[ExecutionView, list[HistoryEntry], AnyFlow | None, ExecutionProgress]:
    view = src.executions.describe(src.account_id, region, flow_name, name)
    events = [event_from_record(e) for e in src.history(region, flow_name, name)]
    flow = src.parse(view.definition)
    return view, events, flow, fold(events, flow)


def execution_model(src: Sources, region: str, flow_name: str, name: str, *,
                    state: str | None = None, visit: int | None = None,
                    page: int | None = None) -> dict[str, Any]:
    """The whole execution page (NotFound from the services when it does not exist)."""
    return _model(src, region, load_execution(src, region, flow_name, name), state, visit, page)


def _model(src: Sources, region: str,
           loaded: tuple[ExecutionView, list[HistoryEntry], AnyFlow | None, ExecutionProgress],
           state: str | None, visit: int | None, page: int | None) -> dict[str, Any]:
    view, events, flow, progress = loaded
    now = src.clock.now()
    layout = layout_flow(flow) if flow is not None else None
    nodes = node_states(layout, progress) if layout is not None else _top_nodes(progress)
    selected, number = _pick(progress, nodes, state, visit)
    graph = graph_model(layout, progress, selected) if layout is not None else None
    if graph is not None:
        _child_badges(src, region, view, nodes, graph)
    return {
        "summary": {**summary_model(view, progress, now),
                    "parent": parent_model(src, region, view)},
        "graph": graph,
        "selected": {"state": selected, "visit": number},
        "panel": panel_model(src, region, view, nodes, events, selected, number),
        "table": table_model(progress, now),
        "events": events_model(events, page),
        "timeline": timeline_model(progress, now),
        "input": pretty(view.input), "output": pretty(view.output)
        if view.output is not None else None,
        "definition": view.definition,
        "definition_changed": _changed(src, region, view.flow_name, view.definition),
    }


def _top_nodes(progress: ExecutionProgress) -> dict[str, NodeState]:
    """Node states of the top-level states, when the definition cannot be laid out."""
    return {node_key("", name): NodeState(name, st.type, list(st.visits), [""] * len(st.visits),
                                          st.status) for name, st in progress.root.states.items()}


def _changed(src: Sources, region: str, flow_name: str, definition: str) -> bool:
    try:
        return src.flows.get(src.account_id, region, flow_name).definition != definition
    except Exception:  # the flow was deleted: the execution's own definition still shows
        return True
