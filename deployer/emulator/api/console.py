"""The web console under ``/_console/`` (HTTP in and out only; pages from ``deployer.console``).

Every request passes the daemon's :class:`~deployer.emulator.api.local_guard.LocalGuard`
first, as the admin API's do, with the console token good too (the pages carry it); every
read of ``/_console/api/…`` (data and streams) needs a token, in ``X-Emulator-Token`` or the
console's cookie. Only pages served to a request that passed the guard carry the token, so
another origin can neither read nor use it.

``GET`` pages are server-rendered HTML; the same view-models are JSON under ``/_console/api/…``
(same paths). The live channel is one server-sent-event stream per page
(:mod:`deployer.emulator.api.console_live`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote

from deployer.console import execution as ex
from deployer.console import views
from deployer.console.render import render_fragment, render_page
from deployer.console.sources import Sources
from deployer.digits import is_decimal
from deployer.emulator.api import errors as e
from deployer.emulator.api.cloudflow import history_event_to_wire
from deployer.emulator.api.console_live import LiveStreams
from deployer.emulator.api.contract import ErrorTable, Routes, json_object
from deployer.emulator.api.http import Answer, HttpRequest, HttpResponse, json_response
from deployer.emulator.api.local_guard import LocalGuard
from deployer.emulator.services import errors as svc
from deployer.emulator.services.errors import ServiceError

__all__ = ["CONSOLE_ERRORS", "CONSOLE_ROUTES", "ConsoleApi"]

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
    return json_response(status, payload, _SECURITY)


CONSOLE_ROUTES: Routes[Callable[..., Answer]] = Routes()
"""The console's pages and actions, by path after ``/_console/`` (pages) or ``/_console/api/``
(their JSON, the streams and the actions)."""
_EXECUTION = "/r/{region}/flows/{flow}/executions/{name}"


CONSOLE_ERRORS = ErrorTable({svc.ResourceNotFound: e.NotFound},
                            lambda exc: e.ApiError(exc.message, code=type(exc).__name__,
                                                   status=400))
"""The console's answer to a domain error: ``404 NotFound``, else ``400`` named after it."""


class ConsoleApi:
    """Routes ``/_console/…`` through :data:`CONSOLE_ROUTES`; register on the router like the admin
    API."""

    prefix = "/_console/"
    errors = CONSOLE_ERRORS

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
        except (e.ApiError, ServiceError) as exc:
            err = exc if isinstance(exc, e.ApiError) else CONSOLE_ERRORS.wire(exc)
            return self._error(as_json, err)

    def _error(self, as_json: bool, err: e.ApiError) -> HttpResponse:
        if as_json:
            return _json(err.http_status, {"Code": err.code, "Message": err.message})
        region = self._src.default_region
        page = render_page("error.html", title=err.code, token=self.token,
                           status=err.http_status, heading=err.code, message=err.message,
                           hint="", model={"header": views.header_model(self._src, region, [])})
        return _html(err.http_status, page)

    def _route(self, request: HttpRequest, as_json: bool) -> Answer:
        if request.method not in ("GET", "HEAD", "POST"):
            raise e.MethodNotAllowed(f"{request.method} is not allowed here")
        if request.method == "POST" and not as_json:
            raise e.MethodNotAllowed("POST goes to /_console/api/")
        rest = request.raw_path[len("/_console/api/" if as_json else "/_console/"):]
        found = CONSOLE_ROUTES.match(request.method, "/" + rest)
        if found is None:
            raise e.NotFound(f"no console page at {request.raw_path}")
        handler, args = found
        return handler(self, request, as_json, **args)

    def _page(self, as_json: bool, template: str, title: str, model: dict[str, Any],
              **extra: Any) -> HttpResponse:
        if as_json:
            return _json(200, model)
        return _html(200, render_page(template, title=title, token=self.token, model=model,
                                      **extra), {"Set-Cookie": self.guard.console_cookie()})

    # --- pages --------------------------------------------------------------------------------

    @CONSOLE_ROUTES.route("GET", "/")
    def home(self, request: HttpRequest, as_json: bool) -> HttpResponse:
        target = views.console_path(self._src.default_region, "flows")
        return HttpResponse(302, b"", {"Location": target, **_SECURITY})

    @CONSOLE_ROUTES.route("GET", "/static/{name}")
    def static(self, request: HttpRequest, as_json: bool, name: str) -> HttpResponse:
        _only(request, not as_json)
        ctype = _STATIC.get(name)
        if ctype is None:
            raise e.NotFound(f"no asset {name}")
        data = resources.files("deployer.console").joinpath("static", name).read_bytes()
        return HttpResponse(200, data, {"Content-Type": ctype, "Cache-Control": "no-cache",
                                        "X-Content-Type-Options": "nosniff"})

    @CONSOLE_ROUTES.route("GET", "/engine/stream")
    def engine_stream(self, request: HttpRequest, as_json: bool) -> Answer:
        _stream(request, as_json)
        return self.live.engine()

    @CONSOLE_ROUTES.route("GET", "/r/{region}/flows")
    def flows(self, request: HttpRequest, as_json: bool, region: str) -> HttpResponse:
        return self._page(as_json, "flows.html", "Flows", views.flows_model(self._src, region))

    @CONSOLE_ROUTES.route("GET", "/r/{region}/flows/{flow}")
    def flow(self, request: HttpRequest, as_json: bool, region: str, flow: str) -> HttpResponse:
        return self._page(as_json, "flow.html", flow, views.flow_model(self._src, region, flow))

    @CONSOLE_ROUTES.route("GET", "/r/{region}/flows/{flow}/executions")
    def executions(self, request: HttpRequest, as_json: bool, region: str,
                   flow: str) -> HttpResponse:
        query = _query(request)
        model = views.executions_model(self._src, region, flow,
                                       statuses=query.get("status", []),
                                       prefix=_one(query, "prefix"), after=_one(query, "after"))
        return self._page(as_json, "executions.html", f"Executions of {flow}", model)

    @CONSOLE_ROUTES.route("GET", _EXECUTION + "/history.json")
    def history(self, request: HttpRequest, as_json: bool, region: str, flow: str,
                name: str) -> HttpResponse:
        events = [history_event_to_wire(ev) for ev in self._src.history(region, flow, name)]
        response = _json(200, {"FlowName": flow, "ExecutionName": name, "Events": events})
        response.headers["Content-Disposition"] = (
            f'attachment; filename="{quote(name, safe="")}-history.json"')
        return response

    @CONSOLE_ROUTES.route("GET", _EXECUTION + "/stream")
    def execution_stream(self, request: HttpRequest, as_json: bool, region: str, flow: str,
                         name: str) -> Answer:
        _stream(request, as_json)
        query = _query(request)
        since = request.headers.get("last-event-id") or _one(query, "since")
        return self.live.execution(region, flow, name, _selection(query),
                                   int(since) if is_decimal(since) and len(since) < 10
                                   else None)

    @CONSOLE_ROUTES.route("GET", "/r/{region}/functions")
    def functions(self, request: HttpRequest, as_json: bool, region: str) -> HttpResponse:
        return self._page(as_json, "functions.html", "Functions",
                          views.functions_model(self._src, region))

    @CONSOLE_ROUTES.route("GET", "/r/{region}/functions/{function}")
    def function(self, request: HttpRequest, as_json: bool, region: str,
                 function: str) -> HttpResponse:
        model = views.function_model(self._src, region, function,
                                     request=_one(_query(request), "request"))
        return self._page(as_json, "function.html", function, model)

    @CONSOLE_ROUTES.route("GET", _EXECUTION)
    def execution(self, request: HttpRequest, as_json: bool, region: str, flow: str,
                  name: str) -> HttpResponse:
        query = _query(request)
        model, page = views.execution_page(self._src, region, flow, name, _selection(query),
                                           _one(query, "view"))
        return self._page(as_json, "execution.html", name, model, **page)

    @CONSOLE_ROUTES.route("GET", _EXECUTION + "/panel")
    def panel(self, request: HttpRequest, as_json: bool, region: str, flow: str,
              name: str) -> HttpResponse:
        _only(request, as_json)
        query = _query(request)
        sel = _selection(query)
        model = ex.execution_model(self._src, region, flow, name, **sel)
        return _json(200, {"selected": model["selected"],
                           "html": render_fragment("parts.html", "panel", model["panel"],
                                                   {"region": region})})

    # --- state changes ------------------------------------------------------------------------

    @CONSOLE_ROUTES.route("POST", "/r/{region}/flows/{flow}/executions")
    def start(self, request: HttpRequest, as_json: bool, region: str,
              flow: str) -> HttpResponse:
        body = json_object(request.body)
        name, text = body.get("name") or "", body.get("input")
        if not isinstance(name, str) or not isinstance(text, (str, type(None))):
            raise e.InvalidArgument("name and input must be strings")
        view = self._src.executions.start(self._src.account_id, region, flow, name=name,
                                          input_text=text or "{}")
        url = views.console_path(region, "flows", flow, "executions", view.name)
        return _json(200, {"name": view.name, "status": view.status, "url": url})

    @CONSOLE_ROUTES.route("POST", _EXECUTION + "/stop")
    def stop(self, request: HttpRequest, as_json: bool, region: str, flow: str,
             name: str) -> HttpResponse:
        body = json_object(request.body)
        error, cause = body.get("error") or "", body.get("cause") or ""
        if not isinstance(error, str) or not isinstance(cause, str):
            raise e.InvalidArgument("error and cause must be strings")
        view = self._src.executions.stop(self._src.account_id, region, flow, name,
                                         error=error, cause=cause)
        return _json(200, {"name": view.name, "status": view.status})

    @CONSOLE_ROUTES.route("POST", "/r/{region}/functions/{function}/invoke")
    def invoke(self, request: HttpRequest, as_json: bool, region: str,
               function: str) -> HttpResponse:
        event = json_object(request.body).get("event", "{}")
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


def _query(request: HttpRequest) -> dict[str, list[str]]:
    return parse_qs(request.raw_query, keep_blank_values=True)


def _selection(query: dict[str, list[str]]) -> dict[str, Any]:
    return {"state": _one(query, "state") or None, "visit": _int(query, "visit"),
            "page": _int(query, "page")}


def _only(request: HttpRequest, served: bool) -> None:
    """404 for a path served only as a page or only under ``/_console/api/``."""
    if not served:
        raise e.NotFound(f"no console page at {request.raw_path}")


def _stream(request: HttpRequest, as_json: bool) -> None:
    _only(request, as_json)
    if request.method != "GET":
        raise e.MethodNotAllowed("a stream is read with GET")


def _int(query: dict[str, list[str]], key: str) -> int | None:
    text = _one(query, key)
    return int(text) if is_decimal(text) and len(text) < 10 else None
