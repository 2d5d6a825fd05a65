"""View-models of the list and detail pages (P1–P3, P5, P6) and the header every page has.

Every function returns plain, JSON-ready data; templates render it and ``/_console/api/…``
serves it as is.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from deployer.console.execution import execution_model, graph_model, load_execution
from deployer.console.layout import layout_flow
from deployer.console.present import EXECUTION_STATUS, STATUS, duration, utc_time
from deployer.console.sources import Sources
from deployer.emulator.services.executions import EXECUTION_STATUSES, ExecutionFilter, ExecutionView
from deployer.fdl import check_flow

__all__ = ["EXECUTIONS_PAGE", "console_path", "engine_facts", "execution_page",
           "executions_model", "flow_model", "flows_model", "function_model", "functions_model",
           "header_model"]

EXECUTIONS_PAGE = 50
LIST_STATUSES = ("Running", "Succeeded", "Failed", "TimedOut", "Stopped")


def console_path(region: str, *parts: str) -> str:
    """``/_console/r/<region>/<parts…>`` with every segment percent-encoded."""
    return "/_console/r/" + "/".join(quote(p, safe="") for p in (region, *parts))


def engine_facts(src: Sources) -> dict[str, Any]:
    """The header's engine facts: running executions, pending timers, jobs in flight, clock
    (the instant only for a virtual clock)."""
    stats = src.stats()
    virtual = src.clock.is_virtual
    return {"running": stats.get("runningExecutions", 0),
            "timers": stats.get("pendingTimers", 0), "in_flight": stats.get("inFlight", 0),
            "clock": "virtual" if virtual else "real",
            "now": utc_time(src.clock.now()) if virtual else ""}


def header_model(src: Sources, region: str, crumbs: list[tuple[str, str]]) -> dict[str, Any]:
    return {"endpoint": src.endpoint(), "account_id": src.account_id, "region": region,
            "regions": sorted({src.default_region, region}), **engine_facts(src),
            "crumbs": [{"label": label, "href": href} for label, href in crumbs]}


def _status(status: str) -> dict[str, str]:
    icon, word, css = EXECUTION_STATUS.get(status, ("?", status, "neutral"))
    return {"status": status, "icon": icon, "word": word, "css": css}


def _execution_row(src: Sources, region: str, v: ExecutionView) -> dict[str, Any]:
    end = v.stopped_at if v.stopped_at is not None else src.clock.now()
    row = {"name": v.name, "href": console_path(region, "flows", v.flow_name, "executions",
                                                 v.name), **_status(v.status),
           "started": utc_time(v.started_at), "stopped": utc_time(v.stopped_at),
           "duration": duration(max(0.0, end - v.started_at)), "mode": v.mode,
           "current": ""}
    if v.status == "Running":
        progress = load_execution(src, region, v.flow_name, v.name)[3]
        current = progress.current()
        row["current"] = (f"{current[-1].state} (visit {current[-1].number})"
                          if current else "")
        row["transitions"] = progress.transitions
    return row


def flows_model(src: Sources, region: str) -> dict[str, Any]:
    flows, token = src.flows.list(src.account_id, region, limit=100)
    rows = []
    for f in flows:
        counts = src.executions.counts_by_status(src.account_id, region, f.name)
        latest, _ = src.executions.list(src.account_id, region, f.name, limit=1,
                                        newest_first=True)
        rows.append({"name": f.name, "href": console_path(region, "flows", f.name),
                     "mode": f.execution_mode, "description": f.description,
                     "modified": utc_time(f.modified_at),
                     "counts": [{"status": s, **_status(s), "count": counts.get(s, 0)}
                                for s in LIST_STATUSES],
                     "latest": {"name": latest[0].name, **_status(latest[0].status),
                                "started": utc_time(latest[0].started_at),
                                "href": console_path(region, "flows", f.name, "executions",
                                                     latest[0].name)} if latest else None})
    return {"header": header_model(src, region, [("Flows", console_path(region, "flows"))]),
            "flows": rows, "more": bool(token)}


def flow_model(src: Sources, region: str, name: str) -> dict[str, Any]:
    rec = src.flows.get(src.account_id, region, name)
    check = check_flow(rec.definition, source=name, execution_mode=rec.execution_mode)
    graph = (graph_model(layout_flow(check.flow), None)
             if check.flow is not None else None)
    recent, _ = src.executions.list(src.account_id, region, name, limit=10, newest_first=True)
    base = console_path(region, "flows", name)
    return {"header": header_model(src, region, [("Flows", console_path(region, "flows")),
                                                 (name, base)]),
            "name": name, "mode": rec.execution_mode, "description": rec.description,
            "role_arn": rec.role_arn, "created": utc_time(rec.created_at),
            "modified": utc_time(rec.modified_at), "graph": graph,
            "definition_lines": rec.definition.splitlines(),
            "diagnostics": [{"code": str(d.code),
                             "severity": d.severity.value, "message": d.message,
                             "line": d.line, "column": d.column, "path": d.path}
                            for d in check.diagnostics],
            "executions": [_execution_row(src, region, v) for v in recent],
            "executions_href": base + "/executions", "start_action": _api(base + "/executions"),
            "default_input": json.dumps({"delay": 20}) if "GetJobStatus" in rec.definition
            else "{}"}


def _api(path: str) -> str:
    return path.replace("/_console/", "/_console/api/", 1)


def executions_model(src: Sources, region: str, flow: str, *, statuses: list[str],
                     prefix: str = "", after: str = "") -> dict[str, Any]:
    """Newest first, 50 a page; several statuses are one query each, merged."""
    src.flows.get(src.account_id, region, flow)
    wanted = [s for s in statuses if s in EXECUTION_STATUSES]
    views: list[ExecutionView] = []
    token = ""
    for status in wanted or [""]:
        page, next_token = src.executions.list(
            src.account_id, region, flow, limit=EXECUTIONS_PAGE,
            next_token=after if len(wanted) <= 1 else "",
            filt=ExecutionFilter(status=status, name_prefix=prefix),
            newest_first=True)
        views += page
        token = token or next_token
    views.sort(key=lambda v: (v.started_at, v.name), reverse=True)
    views = views[:EXECUTIONS_PAGE]
    counts = src.executions.counts_by_status(src.account_id, region, flow)
    base = console_path(region, "flows", flow)
    return {"header": header_model(src, region, [("Flows", console_path(region, "flows")),
                                                 (flow, base), ("Executions",
                                                                base + "/executions")]),
            "flow": flow, "statuses": wanted, "prefix": prefix,
            "counts": [{"status": s, **_status(s), "count": counts.get(s, 0),
                        "selected": s in wanted} for s in LIST_STATUSES],
            "total": sum(counts.values()),
            "rows": [_execution_row(src, region, v) for v in views],
            "older": token if len(wanted) <= 1 else "", "start_action": _api(base + "/executions")}


def functions_model(src: Sources, region: str) -> dict[str, Any]:
    functions, _ = src.functions.list(src.account_id, region, limit=100)
    rows = []
    for f in functions:
        recent = src.functions.recent_invocations(src.account_id, region, f.name, 20)
        rows.append({"name": f.name, "href": console_path(region, "functions", f.name),
                     "runtime": f.config.runtime, "handler": f.config.handler,
                     "memory": f.config.memory_size, "timeout": f.config.timeout,
                     "code_size": f.code_size, "modified": utc_time(f.modified_at),
                     "last": {"at": utc_time(recent[0].invoked_at), "status": recent[0].status}
                     if recent else None,
                     "errors": sum(1 for r in recent if r.status != "Succeeded")})
    return {"header": header_model(src, region, [("Functions",
                                                  console_path(region, "functions"))]),
            "functions": rows}


def function_model(src: Sources, region: str, name: str, *,
                   request: str = "") -> dict[str, Any]:
    fn = src.functions.get(src.account_id, region, name)
    recent = src.functions.recent_invocations(src.account_id, region, name, 20)
    base = console_path(region, "functions", name)
    rows = [{"request_id": r.request_id, "at": utc_time(r.invoked_at),
             "type": r.invocation_type, "status": r.status, "error_type": r.error_type or "",
             "duration_ms": r.duration_ms, "log": r.log, "instance_id": r.instance_id,
             "cold_start": r.cold_start, "open": r.request_id == request,
             "icon": STATUS["succeeded" if r.status == "Succeeded" else "failed"][0]}
            for r in recent]
    if request and not any(r["open"] for r in rows):
        rec = src.functions.invocation(src.account_id, region, request)
        if rec is not None and rec.function_name == name:
            rows.insert(0, {"request_id": rec.request_id, "at": utc_time(rec.invoked_at),
                            "type": rec.invocation_type, "status": rec.status,
                            "error_type": rec.error_type or "", "duration_ms": rec.duration_ms,
                            "log": rec.log, "instance_id": rec.instance_id,
                            "cold_start": rec.cold_start, "open": True, "icon": ""})
    env = {k: "••••••" for k in fn.config.environment}
    return {"header": header_model(src, region, [("Functions", console_path(region, "functions")),
                                                 (name, base)]),
            "name": name, "arn": fn.arn, "runtime": fn.config.runtime,
            "handler": fn.config.handler, "memory": fn.config.memory_size,
            "timeout": fn.config.timeout, "code_size": fn.code_size,
            "environment": env, "modified": utc_time(fn.modified_at),
            "invocations": rows, "invoke_action": _api(base + "/invoke")}


VIEWS = ("graph", "table", "events", "timeline", "definition", "io")


def execution_page(src: Sources, region: str, flow: str, name: str, selection: dict[str, Any],
                   view: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The execution page (P4): its view-model with the header, and what only the HTML page
    needs (its links, the script's boot data, the ``view`` tab shown first)."""
    model = execution_model(src, region, flow, name, **selection)
    base = console_path(region, "flows", flow, "executions", name)
    model["header"] = header_model(src, region, [
        ("Flows", console_path(region, "flows")), (flow, console_path(region, "flows", flow)),
        ("Executions", console_path(region, "flows", flow, "executions")), (name, base)])
    api = _api(base)
    links = {"self": base, "api": api, "region": region, "stop": api + "/stop",
             "start": _api(console_path(region, "flows", flow, "executions"))}
    boot = {"stream": api + "/stream", "engine": "/_console/api/engine/stream",
            "panel": api + "/panel", "version": model["summary"]["version"],
            "finished": model["summary"]["finished"], **selection, "name": name,
            "selected": model["selected"]}
    return model, {"links": links, "boot": boot, "view": view if view in VIEWS else "graph"}
