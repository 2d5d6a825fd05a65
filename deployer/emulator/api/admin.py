"""Admin surface under ``/_emulator/`` (outside the cloud APIs): unsigned, loopback only, and
guarded by :class:`~deployer.emulator.api.local_guard.LocalGuard` (own Host and Origin; JSON
and the daemon's token for every POST).

``GET health`` (with CloudFlow engine stats), ``GET clock``, ``POST clock/advance`` (virtual
clock, JSON ``{"seconds": n}``; due timers then fire),
``POST reset`` (``{"clock": "now"}``: a virtual clock back to the present too; ``"keep"``, the
default, leaves it), ``GET code/<checksum>.zip`` (the download URL of GetFunctionCode),
``GET logs?function=NAME[&region=R][&limit=N]`` (recent invocations of a function, newest
first: the local stand-in for the function's SLS logstore; like its stream ``logs/stream``, it
needs the admin token in ``X-Emulator-Token``), and ``faults[/...]`` (fault
injection, :mod:`deployer.emulator.api.fault_admin`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable
from typing import Any

from deployer.digits import is_decimal
from deployer.emulator.api import errors as e
from deployer.emulator.api.http import Answer, HttpRequest, HttpResponse, json_response, wire_time
from deployer.emulator.api.local_guard import LocalGuard
from deployer.emulator.api.strict import loads
from deployer.emulator.clock import Clock

__all__ = ["AdminApi", "json_object"]

_CODE_RE = re.compile(r"^/_emulator/code/(\d{1,20})\.zip$")
LogsFn = Callable[[str, str, int], list[dict[str, Any]]]  # (region, function, limit) -> records


class AdminApi:
    prefix = "/_emulator/"

    def __init__(self, *, clock: Clock, health: Callable[[], dict[str, Any]],
                 reset: Callable[..., None], code_path: Callable[[str], os.PathLike[str]],
                 guard: LocalGuard, advanced: Callable[[], None] | None = None,
                 logs: LogsFn | None = None,
                 faults: Callable[[HttpRequest], HttpResponse] | None = None,
                 log_stream: Callable[[HttpRequest], Answer] | None = None) -> None:
        self.guard = guard
        self._faults = faults
        self._logs = logs
        self._log_stream = log_stream
        self._clock = clock
        self._advanced = advanced
        self._health = health
        self._reset = reset
        self._code_path = code_path

    def handle(self, request: HttpRequest) -> Answer:
        self.guard.check(request)
        path, method = request.raw_path, request.method
        if self._faults is not None and (path == "/_emulator/faults"
                                         or path.startswith("/_emulator/faults/")):
            return self._faults(request)
        if path == "/_emulator/health" and method == "GET":
            return json_response(200, {"status": "ok", **self._health()}, {})
        if path == "/_emulator/clock" and method == "GET":
            return json_response(200, self._clock_state(), {})
        if path == "/_emulator/clock/advance" and method == "POST":
            return self._advance(request)
        if path == "/_emulator/reset" and method == "POST":
            clock = json_object(request).get("clock", "keep")
            if clock not in ("keep", "now"):
                raise e.InvalidArgument('"clock" must be "keep" (the default) or "now"')
            self._reset(rewind_clock=clock == "now")
            return json_response(200, {"reset": True}, {})
        if path == "/_emulator/logs" and method == "GET" and self._logs is not None:
            self.guard.require_token(request)
            return self._recent_logs(request)
        if path == "/_emulator/logs/stream" and method == "GET" and self._log_stream is not None:
            self.guard.require_token(request)
            return self._log_stream(request)
        m = _CODE_RE.match(path)
        if m and method == "GET":
            file = self._code_path(m.group(1))
            if not os.path.exists(file):
                raise e.NotFound(f"no code package {m.group(1)}")
            with open(file, "rb") as fh:
                return HttpResponse(200, fh.read(), {"Content-Type": "application/zip"})
        raise e.PathNotSupported(f"'{method}' against '{path}' is not supported")

    def _recent_logs(self, request: HttpRequest) -> HttpResponse:
        assert self._logs is not None
        params = request.query_params()
        function = params.get("function") or ""
        if not function:
            raise e.InvalidArgument("query parameter 'function' is required")
        limit = params.get("limit") or "20"
        if not is_decimal(limit) or not 1 <= int(limit) <= 1000:
            raise e.InvalidArgument("limit must be a whole number in 1-1000")
        records = self._logs(params.get("region") or "", function, int(limit))
        return json_response(200, {"function": function, "invocations": records}, {})

    def _clock_state(self) -> dict[str, Any]:
        now = self._clock.now()
        return {"now": now, "virtual": self._clock.is_virtual,
                "iso": wire_time(now)}

    def _advance(self, request: HttpRequest) -> HttpResponse:
        advance = getattr(self._clock, "advance", None)
        if not self._clock.is_virtual or advance is None:
            raise e.InvalidArgument("the emulator runs on the real clock; it cannot be advanced")
        seconds = json_object(request).get("seconds")
        if (not isinstance(seconds, (int, float)) or isinstance(seconds, bool)
                or not math.isfinite(seconds) or seconds < 0):
            raise e.InvalidArgument('body must be {"seconds": <finite non-negative number>}')
        try:
            advance(float(seconds))
        except ValueError as exc:  # ClockHorizonError
            raise e.InvalidArgument(str(exc)) from None
        if self._advanced is not None:
            self._advanced()
        return json_response(200, self._clock_state(), {})


def json_object(request: HttpRequest) -> dict[str, Any]:
    """The body as a JSON object ({} when empty); 400 otherwise (NaN and Infinity included)."""
    if not request.body.strip():
        return {}
    try:
        value = loads(request.body)
    except ValueError as exc:
        raise e.InvalidArgument(f"the body is not a valid JSON object: {exc}") from None
    if not isinstance(value, dict):
        raise e.InvalidArgument("the body must be a JSON object")
    return value
