"""The execution page's view-model (P4) and its live deltas, from the history fold.

``execution_model`` returns plain data: summary, the graph (layout + the fold's status of each
node, visit badges, edges taken with counts), the selected state's panel, the table view, a page
of events and the timeline. ``live_delta`` is what the page's long poll receives: the nodes and
edges that changed since the events the page has, the summary, and the re-rendered panels.
"""

from __future__ import annotations

from typing import Any

from deployer.console.layout import Layout, layout_scope
from deployer.console.present import (
    EXECUTION_STATUS,
    STATUS,
    Event,
    duration,
    event_from_record,
    pretty,
    rows_of,
    since,
    summarize,
    wire_time,
)
from deployer.console.sources import Sources
from deployer.emulator.services.executions import ExecutionView
from deployer.fdl.ast import Flow
from deployer.fdl.progress import (
    ExecutionProgress,
    ScopeProgress,
    Status,
    Visit,
    fold,
    task_id,
    task_request_id,
)

__all__ = ["EVENTS_PAGE", "execution_model", "execution_update", "live_delta"]

EVENTS_PAGE = 200


def _node_id(name: str) -> str:
    safe = "".join(c if c.isalnum() or c in "_-" else "_" for c in name)
    return "n-" + safe if safe == name else f"n-{safe}-{abs(hash(name)) % 10_000:04d}"


def graph_model(layout: Layout, progress: ExecutionProgress | None,
                selected: str | None = None) -> dict[str, Any]:
    """Nodes and edges of ``layout`` with the fold's statuses (neutral without one)."""
    scope = progress.root if progress is not None else None
    nodes = []
    for n in layout.nodes:
        state = scope.states.get(n.name) if scope is not None else None
        status = state.status.value if state is not None else "neutral"
        visits = len(state.visits) if state is not None else 0
        icon, word = STATUS.get(status, ("", ""))
        if scope is None:
            aria = f"{n.name}, {n.type}"
        elif visits:
            aria = f"{n.name}, {n.type}, {word}, visit {visits} of {visits}"
        else:
            aria = f"{n.name}, {n.type}, {word}"
        nodes.append({"name": n.name, "id": _node_id(n.name), "type": n.type, "detail": n.detail,
                      "x": n.x, "y": n.y, "w": n.w, "h": n.h, "status": status, "icon": icon,
                      "word": word, "visits": visits, "aria": aria,
                      "selected": n.name == selected})
    edges = []
    for e in layout.edges:
        count = scope.edges.get((e.source, e.target), 0) if scope is not None else 0
        edges.append({"key": e.key, "source": e.source, "target": e.target, "kind": e.kind,
                      "label": e.label, "back": e.back, "path": e.path, "lx": e.label_x,
                      "ly": e.label_y, "count": count, "taken": count > 0})
    return {"width": layout.width, "height": layout.height, "nodes": nodes, "edges": edges}


def _current(progress: ExecutionProgress, now: float) -> str:
    visits = progress.current()
    if not visits:
        return ""
    visit = visits[-1]
    if visit.status is Status.WAITING and visit.fires_at is not None:
        left = max(0.0, visit.fires_at - now)
        return f"{visit.state}, fires at {wire_time(visit.fires_at)} (in {duration(left)})"
    return f"{visit.state} (visit {visit.number})"


def summary_model(view: ExecutionView, progress: ExecutionProgress,
                  now: float) -> dict[str, Any]:
    icon, word, css = EXECUTION_STATUS.get(view.status, ("?", view.status, "neutral"))
    end = view.stopped_at if view.stopped_at is not None else now
    return {"name": view.name, "flow": view.flow_name, "status": view.status, "icon": icon,
            "word": word, "css": css, "finished": view.status not in ("Running", "Starting"),
            "started": wire_time(view.started_at), "stopped": wire_time(view.stopped_at),
            "duration": duration(max(0.0, end - view.started_at)),
            "transitions": progress.transitions, "current": _current(progress, now),
            "version": view.version, "last_event_id": progress.last_event_id,
            "error": view.error_code or progress.error or "",
            "cause": view.error_detail or progress.cause or "", "mode": view.mode}


def _pick(progress: ExecutionProgress, state: str | None,
          visit: int | None) -> tuple[str | None, int | None]:
    scope = progress.root
    if state in scope.states:
        visits = scope.states[state].visits
        if visits:
            number = visit if visit is not None and 1 <= visit <= len(visits) else len(visits)
            return state, number
        return state, None
    current = progress.current()
    if current:
        top = next((v for v in current if v in scope.path), current[0])
        return top.state, top.number
    if scope.path:
        return scope.path[-1].state, scope.path[-1].number
    return None, None


def _scopes_model(scopes: list[ScopeProgress]) -> list[dict[str, Any]]:
    return [{"kind": s.kind, "index": s.index, "error": s.error,
             "states": [{"name": st.name, "status": st.status.value,
                         "icon": STATUS[st.status.value][0], "word": STATUS[st.status.value][1],
                         "visits": len(st.visits)} for st in s.states.values()]}
            for s in scopes]


def panel_model(src: Sources, region: str, view: ExecutionView, progress: ExecutionProgress,
                events: list[Event], state: str | None, number: int | None,
                flow: Flow | None) -> dict[str, Any] | None:
    """The selected visit: input, task attempts (Body), output, error, log, its events."""
    if state is None:
        return None
    sp = progress.root.states.get(state)
    definition = flow.by_name.get(state) if flow is not None else None
    kind = definition.type.value if definition else (sp.type if sp else "")
    base = {"state": state, "type": kind,
            "visits": len(sp.visits) if sp else 0, "visit": number}
    if sp is None or number is None:
        icon, word = STATUS["not-reached"]
        return {**base, "status": "not-reached", "icon": icon, "word": word, "reached": False}
    v: Visit = sp.visits[number - 1]
    icon, word = STATUS[v.status.value]
    first, last = v.event_range
    attempts = []
    for a in v.attempts:
        log = _invocation(src, region, view.name, a.scheduled_event_id, a.parameters)
        attempts.append({"number": a.number, "resource": a.resource, "task_mode": a.task_mode,
                         "parameters": pretty(a.parameters), "outcome": a.outcome,
                         "scheduled": a.scheduled_at, "ended": a.ended_at or "",
                         "error": a.error, "cause": a.cause,
                         "output": pretty(a.output) if a.output is not None else None,
                         "body_rows": rows_of(a.body), "body": pretty(a.body)
                         if a.body is not None else None, "invocation": log})
    return {**base, "reached": True, "status": v.status.value, "icon": icon, "word": word,
            "entered": v.entered_at, "exited": v.exited_at or "",
            "duration": duration(since(v.entered_at, v.exited_at)) if v.exited_at else "",
            "fires_at": wire_time(v.fires_at) if v.fires_at else "",
            "raw_input": pretty(v.raw_input), "input": pretty(v.input),
            "input_rows": rows_of(v.input),
            "output": pretty(v.output) if v.output is not None else None,
            "output_rows": rows_of(v.output), "error": v.error, "cause": v.cause,
            "attempts": attempts, "scopes": _scopes_model(v.scopes),
            "events": [_event_row(e, events[0].time if events else e.time)
                       for e in events[first - 1:last]]}


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
            "invoked_at": wire_time(rec.invoked_at)}


def _event_row(e: Event, start: str) -> dict[str, Any]:
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


def events_model(events: list[Event], page: int | None) -> dict[str, Any]:
    pages = max(1, -(-len(events) // EVENTS_PAGE))
    number = pages if page is None else min(max(page, 1), pages)
    chunk = events[(number - 1) * EVENTS_PAGE: number * EVENTS_PAGE]
    start = events[0].time if events else ""
    return {"page": number, "pages": pages, "total": len(events),
            "rows": [_event_row(e, start) for e in chunk]}


def load(src: Sources, region: str, flow_name: str,
         name: str) -> tuple[ExecutionView, list[Event], Flow | None, ExecutionProgress]:
    view = src.executions.describe(src.account_id, region, flow_name, name)
    events = [event_from_record(e) for e in src.history(region, flow_name, name)]
    flow = src.parse(view.definition)
    return view, events, flow, fold(events, flow)


def execution_model(src: Sources, region: str, flow_name: str, name: str, *,
                    state: str | None = None, visit: int | None = None,
                    page: int | None = None) -> dict[str, Any]:
    """The whole execution page (NotFound from the services when it does not exist)."""
    return _model(src, region, load(src, region, flow_name, name), state, visit, page)


def execution_update(src: Sources, region: str, flow_name: str, name: str, *,
                     since_version: int, since_event: int, wait: float,
                     state: str | None = None, visit: int | None = None,
                     page: int | None = None) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The long poll: None when nothing was committed after ``since_version`` within
    ``wait`` real seconds (woken by the engine, never polling), else (model, delta)."""
    view = src.executions.wait_changed(src.account_id, region, flow_name, name,
                                       after_version=since_version, wait_seconds=wait)
    if view.version <= since_version and view.status == "Running":
        return None
    loaded = load(src, region, flow_name, name)
    model = _model(src, region, loaded, state, visit, page)
    events, flow = loaded[1], loaded[2]
    before = fold(events[:since_event], flow) if since_event > 0 else None
    return model, live_delta(model, since_event, before)


def _model(src: Sources, region: str,
           loaded: tuple[ExecutionView, list[Event], Flow | None, ExecutionProgress],
           state: str | None, visit: int | None, page: int | None) -> dict[str, Any]:
    view, events, flow, progress = loaded
    now = src.clock.now()
    selected, number = _pick(progress, state, visit)
    layout = layout_scope(flow.scope) if flow is not None else None
    return {
        "summary": summary_model(view, progress, now),
        "graph": graph_model(layout, progress, selected) if layout is not None else None,
        "selected": {"state": selected, "visit": number},
        "panel": panel_model(src, region, view, progress, events, selected, number, flow),
        "table": table_model(progress, now),
        "events": events_model(events, page),
        "timeline": timeline_model(progress, now),
        "input": pretty(view.input), "output": pretty(view.output)
        if view.output is not None else None,
        "definition": view.definition,
        "definition_changed": _changed(src, region, view.flow_name, view.definition),
    }


def _changed(src: Sources, region: str, flow_name: str, definition: str) -> bool:
    try:
        return src.flows.get(src.account_id, region, flow_name).definition != definition
    except Exception:  # the flow was deleted: the execution's own definition still shows
        return True


def live_delta(model: dict[str, Any], since_event: int,
               before: ExecutionProgress | None) -> dict[str, Any]:
    """The part of ``model`` a page that has folded events up to ``since_event`` needs:
    changed nodes and edges (all of them without ``before``), the summary, and the rest."""
    graph = model["graph"]
    nodes = graph["nodes"] if graph else []
    edges = graph["edges"] if graph else []
    if before is not None:
        old = {n: (s.status.value, len(s.visits)) for n, s in before.root.states.items()}
        nodes = [n for n in nodes if old.get(n["name"]) != (n["status"], n["visits"])]
        edges = [e for e in edges if before.root.edges.get((e["source"], e["target"]), 0)
                 != e["count"]]
    return {"summary": model["summary"], "nodes": nodes, "edges": edges,
            "since_event": since_event, "selected": model["selected"]}
