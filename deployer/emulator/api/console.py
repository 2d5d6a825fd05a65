"""The web console under ``/_console/`` (HTTP in and out only; pages from ``deployer.console``).

Every request passes the daemon's :class:`~deployer.emulator.api.local_guard.LocalGuard`
first, as the admin API's do: loopback clients only, a ``Host`` naming this daemon (GETs too:
DNS rebinding), a present ``Origin`` the same origin, and for state-changing requests (start,
stop, invoke: ``POST`` JSON to ``/_console/api/…``) a token in ``X-Emulator-Token``, and for
every read of ``/_console/api/…`` (data and streams) a token in that header or the console's
cookie; otherwise ``403 AccessDenied``. Pages carry the console token (in a ``<meta>`` and a
``HttpOnly`` ``SameSite=Strict`` cookie), which opens the console and nothing else (not the
admin API, not the log endpoints); only pages served to a request that passed the guard
exist, so another origin can neither read nor use it.

``GET`` pages are server-rendered HTML; the same view-models are JSON under ``/_console/api/…``
(same paths). The live channel is one server-sent-event stream per page
(:mod:`deployer.emulator.api.console_live`).
"""

from __future__ import annotations

import json
import uuid
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote, unquote

from deployer.console import execution as ex
from deployer.console import views
from deployer.console.render import render_fragment, render_page
from deployer.console.sources import Sources
from deployer.digits import is_decimal
from deployer.emulator.api.cloudflow import history_event
from deployer.emulator.api.console_live import LiveStreams
from deployer.emulator.api.http import Answer, HttpRequest, HttpResponse
from deployer.emulator.api.local_guard import LocalGuard
from deployer.emulator.services.errors import NotFound, ServiceError

__all__ = ["ConsoleApi"]

_STATIC = {"console.css": "text/css; charset=utf-8",
           "console.js": "text/javascript; charset=utf-8"}
_SECURITY = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' "
    "'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def _html(status: int, text: str, extra: dict[str, str] | None = None) -> HttpResponse:
    return HttpResponse(status, text.encode("utf-8"),
                        {"Content-Type": "text/html; charset=utf-8", **_SECURITY, **(extra or {})})


def _json(status: int, payload: Any) -> HttpResponse:
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return HttpResponse(status, body, {"Content-Type": "application/json", **_SECURITY})


class _Refused(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class ConsoleApi:
    """Routes ``/_console/…``; register on the router like the admin API."""

    prefix = "/_console/"

    def __init__(self, sources: Sources, guard: LocalGuard) -> None:
        self._src = sources
        self.guard = guard
        self.live = LiveStreams(sources)

    @property
    def token(self) -> str:
        """The console token, which the pages carry for their own requests."""
        return self.guard.console_token

    def handle(self, request: HttpRequest) -> Answer:
        as_json = request.raw_path.startswith("/_console/api/")
        self.guard.check(request, console=True)  # AccessDenied (403) is answered by the router
        if as_json:
            self.guard.require_token(request, console=True)
        try:
            return self._route(request, as_json)
        except _Refused as exc:
            return self._error(as_json, exc.status, exc.code, exc.message)
        except NotFound as exc:
            return self._error(as_json, 404, "NotFound", exc.message)
        except ServiceError as exc:
            return self._error(as_json, 400, type(exc).__name__, exc.message)

    def _error(self, as_json: bool, status: int, code: str, message: str) -> HttpResponse:
        if as_json:
            return _json(status, {"Code": code, "Message": message})
        region = self._src.default_region
        page = render_page("error.html", title=code, token=self.token, status=status,
                           heading=code, message=message, hint="",
                           model={"header": views.header_model(self._src, region, [])})
        return _html(status, page)

    # --- routing ------------------------------------------------------------------------------

    def _route(self, request: HttpRequest, as_json: bool) -> Answer:
        rest = request.raw_path[len("/_console/"):]
        if as_json:
            rest = rest[len("api/"):]
        parts = [unquote(p) for p in rest.split("/")] if rest else []
        if parts and parts[-1] == "":
            parts.pop()
        query = {k: v for k, v in parse_qs(request.raw_query, keep_blank_values=True).items()}
        if request.method == "POST":
            return self._post(request, parts)
        if request.method not in ("GET", "HEAD"):
            raise _Refused(405, "MethodNotAllowed", f"{request.method} is not allowed here")
        if not parts:
            target = views.console_path(self._src.default_region, "flows")
            return HttpResponse(302, b"", {"Location": target, **_SECURITY})
        if parts[0] == "static" and len(parts) == 2 and not as_json:
            return self._static(parts[1])
        if as_json and parts and parts[-1] == "stream" and request.method != "GET":
            raise _Refused(405, "MethodNotAllowed", "a stream is read with GET")
        if parts == ["engine", "stream"] and as_json:
            return self.live.engine()
        if len(parts) < 3 or parts[0] != "r":
            raise _Refused(404, "NotFound", f"no console page at {request.raw_path}")
        region, kind, args = parts[1], parts[2], parts[3:]
        if kind == "flows":
            return self._flows(region, args, query, as_json, request)
        if kind == "functions":
            return self._functions(region, args, query, as_json)
        raise _Refused(404, "NotFound", f"no console page at {request.raw_path}")

    def _page(self, as_json: bool, template: str, title: str, model: dict[str, Any],
              **extra: Any) -> HttpResponse:
        if as_json:
            return _json(200, model)
        return _html(200, render_page(template, title=title, token=self.token, model=model,
                                      **extra), {"Set-Cookie": self.guard.console_cookie()})

    def _flows(self, region: str, args: list[str], query: dict[str, list[str]],
               as_json: bool, request: HttpRequest) -> Answer:
        src = self._src
        if not args:
            return self._page(as_json, "flows.html", "Flows", views.flows_model(src, region))
        flow = args[0]
        if len(args) == 1:
            return self._page(as_json, "flow.html", flow, views.flow_model(src, region, flow))
        if args[1] != "executions":
            raise _Refused(404, "NotFound", "no such page")
        if len(args) == 2:
            model = views.executions_model(src, region, flow, statuses=query.get("status", []),
                                           prefix=_one(query, "prefix"),
                                           after=_one(query, "after"))
            return self._page(as_json, "executions.html", f"Executions of {flow}", model)
        name = args[2]
        if len(args) == 3:
            return self._execution(region, flow, name, query, as_json)
        if len(args) == 4 and args[3] == "history.json":
            events = [history_event(e) for e in src.history(region, flow, name)]
            response = _json(200, {"FlowName": flow, "ExecutionName": name, "Events": events})
            response.headers["Content-Disposition"] = (
                f'attachment; filename="{quote(name, safe="")}-history.json"')
            return response
        if len(args) == 4 and args[3] == "stream" and as_json:
            since = request.headers.get("last-event-id") or _one(query, "since")
            return self.live.execution(region, flow, name, self._selection(query),
                                       int(since) if is_decimal(since)
                                       and len(since) < 10 else None)
        if len(args) == 4 and args[3] == "panel" and as_json:
            return self._panel(region, flow, name, query)
        raise _Refused(404, "NotFound", "no such page")

    def _selection(self, query: dict[str, list[str]]) -> dict[str, Any]:
        return {"state": _one(query, "state") or None, "visit": _int(query, "visit"),
                "page": _int(query, "page")}

    def _execution(self, region: str, flow: str, name: str, query: dict[str, list[str]],
                   as_json: bool) -> HttpResponse:
        sel = self._selection(query)
        model = ex.execution_model(self._src, region, flow, name, **sel)
        model["header"] = views.header_model(self._src, region, [
            ("Flows", views.console_path(region, "flows")),
            (flow, views.console_path(region, "flows", flow)),
            ("Executions", views.console_path(region, "flows", flow, "executions")),
            (name, views.console_path(region, "flows", flow, "executions", name))])
        if as_json:
            return _json(200, model)
        base = views.console_path(region, "flows", flow, "executions", name)
        api = base.replace("/_console/", "/_console/api/", 1)
        links = {"self": base, "api": api, "region": region,
                 "stop": api + "/stop", "start": views.console_path(
                     region, "flows", flow, "executions").replace("/_console/",
                                                                  "/_console/api/", 1)}
        view = _one(query, "view") or "graph"
        boot = {"stream": api + "/stream", "engine": "/_console/api/engine/stream",
                "panel": api + "/panel", "version": model["summary"]["version"],
                "finished": model["summary"]["finished"], "state": sel["state"],
                "visit": sel["visit"], "page": sel["page"], "name": name,
                "selected": model["selected"]}
        return self._page(False, "execution.html", name, model, links=links, boot=boot,
                          view=view if view in ("graph", "table", "events", "timeline",
                                                "definition", "io") else "graph")

    def _panel(self, region: str, flow: str, name: str,
               query: dict[str, list[str]]) -> HttpResponse:
        sel = self._selection(query)
        model = ex.execution_model(self._src, region, flow, name, **sel)
        return _json(200, {"selected": model["selected"],
                           "html": render_fragment("parts.html", "panel", model["panel"],
                                                   {"region": region})})

    def _functions(self, region: str, args: list[str], query: dict[str, list[str]],
                   as_json: bool) -> HttpResponse:
        if not args:
            return self._page(as_json, "functions.html", "Functions",
                              views.functions_model(self._src, region))
        if len(args) == 1:
            model = views.function_model(self._src, region, args[0],
                                         request=_one(query, "request"))
            return self._page(as_json, "function.html", args[0], model)
        raise _Refused(404, "NotFound", "no such page")

    def _static(self, name: str) -> HttpResponse:
        ctype = _STATIC.get(name)
        if ctype is None:
            raise _Refused(404, "NotFound", f"no asset {name}")
        data = resources.files("deployer.console").joinpath("static", name).read_bytes()
        return HttpResponse(200, data, {"Content-Type": ctype, "Cache-Control": "no-cache",
                                        "X-Content-Type-Options": "nosniff"})

    # --- state changes ------------------------------------------------------------------------

    def _post(self, request: HttpRequest, parts: list[str]) -> HttpResponse:
        if not request.raw_path.startswith("/_console/api/"):
            raise _Refused(405, "MethodNotAllowed", "POST goes to /_console/api/")
        try:
            body = json.loads(request.body or b"{}")
        except (ValueError, UnicodeDecodeError):
            raise _Refused(400, "InvalidArgument", "the body is not JSON") from None
        if not isinstance(body, dict):
            raise _Refused(400, "InvalidArgument", "the body must be a JSON object")
        if len(parts) >= 5 and parts[0] == "r" and parts[2] == "flows" and parts[4] == "executions":
            region, flow = parts[1], parts[3]
            if len(parts) == 5:
                return self._start(region, flow, body)
            if len(parts) == 7 and parts[6] == "stop":
                return self._stop(region, flow, parts[5], body)
        if len(parts) == 5 and parts[0] == "r" and parts[2] == "functions" and parts[4] == "invoke":
            return self._invoke(parts[1], parts[3], body)
        raise _Refused(404, "NotFound", "no such action")

    def _start(self, region: str, flow: str, body: dict[str, Any]) -> HttpResponse:
        name, text = body.get("name") or "", body.get("input")
        if not isinstance(name, str) or not isinstance(text, (str, type(None))):
            raise _Refused(400, "InvalidArgument", "name and input must be strings")
        view = self._src.executions.start(self._src.account_id, region, flow, name=name,
                                          input_text=text or "{}")
        url = views.console_path(region, "flows", flow, "executions", view.name)
        return _json(200, {"name": view.name, "status": view.status, "url": url})

    def _stop(self, region: str, flow: str, name: str, body: dict[str, Any]) -> HttpResponse:
        error, cause = body.get("error") or "", body.get("cause") or ""
        if not isinstance(error, str) or not isinstance(cause, str):
            raise _Refused(400, "InvalidArgument", "error and cause must be strings")
        view = self._src.executions.stop(self._src.account_id, region, flow, name,
                                         error=error, cause=cause)
        return _json(200, {"name": view.name, "status": view.status})

    def _invoke(self, region: str, function: str, body: dict[str, Any]) -> HttpResponse:
        event = body.get("event", "{}")
        if not isinstance(event, str):
            event = json.dumps(event)
        inv = self._src.functions.invoke(self._src.account_id, region, function,
                                         event.encode("utf-8"), request_id=str(uuid.uuid4()),
                                         tail_logs=True)
        result = inv.result
        if result is None:
            return _json(200, {"request_id": inv.request_id, "status": "Accepted"})
        return _json(200, {"request_id": inv.request_id,
                           "status": "Failed" if result.error_type else "Succeeded",
                           "error_type": result.error_type,
                           "payload": result.payload.decode("utf-8", "replace"),
                           "log": result.log_text, "duration_ms": result.duration_ms})


def _one(query: dict[str, list[str]], key: str) -> str:
    values = query.get(key)
    return values[0] if values else ""


def _int(query: dict[str, list[str]], key: str) -> int | None:
    text = _one(query, key)
    return int(text) if is_decimal(text) and len(text) < 10 else None
