"""The admin surface under ``/_emulator/`` (outside the cloud APIs): unsigned, loopback only, and
guarded by :class:`~deployer.emulator.api.local_guard.LocalGuard` (own Host and Origin; JSON
and the daemon's token for every POST).

The entries (:data:`ADMIN_ROUTES`; docs/emulator.md lists them): health, the clock (a virtual
clock advanced: due timers then fire), reset, GetFunctionCode's download URL, the recent
invocations of a function (the local stand-in for its SLS logstore, live too:
:mod:`.log_stream`), fault injection (:mod:`.fault_admin`) and mocked task results. Reading logs
or mocks needs the admin token in ``X-Emulator-Token``. Answers are JSON with the FC-style
error body.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from typing import Any

from deployer.emulator.api import errors as e
from deployer.emulator.api.contract import Routes, json_object
from deployer.emulator.api.faults import FaultInjector
from deployer.emulator.api.http import Answer, HttpRequest, HttpResponse, json_response
from deployer.emulator.api.local_guard import LocalGuard
from deployer.emulator.api.log_stream import LogStreamApi
from deployer.emulator.api.router import UNMAPPED
from deployer.emulator.clock import Clock
from deployer.emulator.services.task_mocks import TaskMocks
from deployer.timestamps import iso_seconds

__all__ = ["ADMIN_ROUTES", "AdminApi"]

_CODE_FILE = re.compile(r"^(\d{1,20})\.zip$")
ADMIN_ROUTES: Routes[Callable[..., Answer | dict[str, Any]]] = Routes()
"""The admin surface's entries; a handler answers a body (``200`` JSON) or a response."""


class AdminApi:
    """The admin surface of one emulator: :data:`ADMIN_ROUTES` over the callables it is given."""

    prefix = "/_emulator/"
    errors = UNMAPPED  # not found, invalid, else an internal error

    def __init__(self, *, clock: Clock, health: Callable[[], dict[str, Any]],
                 reset: Callable[..., None], code_path: Callable[[str], os.PathLike[str]],
                 guard: LocalGuard, advanced: Callable[[], None], logs: LogStreamApi,
                 faults: FaultInjector, mocks: TaskMocks | None = None) -> None:
        self.guard = guard
        self._mocks = mocks
        self.faults = faults
        self._logs = logs
        self._clock = clock
        self._advanced = advanced
        self._health = health
        self._reset = reset
        self._code_path = code_path

    def handle(self, request: HttpRequest) -> Answer:
        self.guard.check(request)
        handler, args = ADMIN_ROUTES.find(request.method, request.raw_path)
        out = handler(self, request, **args)
        return json_response(200, out, {}) if isinstance(out, dict) else out

    @ADMIN_ROUTES.route("GET", "/_emulator/health")
    def health(self, request: HttpRequest) -> dict[str, Any]:
        return {"status": "ok", **self._health()}

    @ADMIN_ROUTES.route("GET", "/_emulator/clock")
    def clock(self, request: HttpRequest) -> dict[str, Any]:
        return self._clock_state()

    @ADMIN_ROUTES.route("POST", "/_emulator/clock/advance")
    def advance(self, request: HttpRequest) -> dict[str, Any]:
        advance = getattr(self._clock, "advance", None)
        if not self._clock.is_virtual or advance is None:
            raise e.InvalidArgument("the emulator runs on the real clock; it cannot be advanced")
        seconds = json_object(request.body).get("seconds")
        if (not isinstance(seconds, (int, float)) or isinstance(seconds, bool)
                or not math.isfinite(seconds) or seconds < 0):
            raise e.InvalidArgument('body must be {"seconds": <finite non-negative number>}')
        try:
            advance(float(seconds))
        except ValueError as exc:  # ClockHorizonError
            raise e.InvalidArgument(str(exc)) from None
        self._advanced()
        return self._clock_state()

    @ADMIN_ROUTES.route("POST", "/_emulator/reset")
    def reset(self, request: HttpRequest) -> dict[str, Any]:
        clock = json_object(request.body).get("clock", "keep")
        if clock not in ("keep", "now"):
            raise e.InvalidArgument('"clock" must be "keep" (the default) or "now"')
        self._reset(rewind_clock=clock == "now")
        return {"reset": True}

    @ADMIN_ROUTES.route("GET", "/_emulator/logs")
    def recent_logs(self, request: HttpRequest) -> dict[str, Any]:
        self.guard.require_token(request)
        return self._logs.recent(request)

    @ADMIN_ROUTES.route("GET", "/_emulator/logs/stream")
    def log_stream(self, request: HttpRequest) -> Answer:
        self.guard.require_token(request)
        return self._logs.handle(request)

    @ADMIN_ROUTES.route("GET", "/_emulator/code/{file}")
    def code(self, request: HttpRequest, file: str) -> HttpResponse:
        m = _CODE_FILE.match(file)
        path = self._code_path(m.group(1)) if m else None
        if path is None or not os.path.exists(path):
            raise e.NotFound(f"no code package {file}")
        with open(path, "rb") as fh:
            return HttpResponse(200, fh.read(), {"Content-Type": "application/zip"})

    @ADMIN_ROUTES.route("GET", "/_emulator/mocks")
    def list_mocks(self, request: HttpRequest) -> dict[str, Any]:
        self.guard.require_token(request)
        return self._task_mocks().listing().to_json()

    @ADMIN_ROUTES.route("POST", "/_emulator/mocks")
    def load_mocks(self, request: HttpRequest) -> dict[str, Any]:
        body = json_object(request.body)
        source = body.get("source", "admin")
        if not isinstance(source, str) or not source:
            raise e.InvalidArgument('"source" must be a non-empty string (the file\'s name)')
        if "document" not in body:
            raise e.InvalidArgument('body must be {"document": <mock document>, "source": ...}')
        return self._task_mocks().load(body["document"], source).to_json()

    @ADMIN_ROUTES.route("DELETE", "/_emulator/mocks")
    def clear_mocks(self, request: HttpRequest) -> dict[str, Any]:
        self.guard.require_token(request)
        self._task_mocks().clear()
        return self._task_mocks().listing().to_json()

    def _task_mocks(self) -> TaskMocks:
        if self._mocks is None:
            raise e.PathNotSupported("this emulator serves no mocked task results")
        return self._mocks

    def _clock_state(self) -> dict[str, Any]:
        now = self._clock.now()
        return {"now": now, "virtual": self._clock.is_virtual, "iso": iso_seconds(now)}


# The fault-injection entries join ADMIN_ROUTES when their module loads.
from deployer.emulator.api import fault_admin  # noqa: E402,F401
