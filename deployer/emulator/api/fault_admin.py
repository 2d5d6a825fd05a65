"""The fault-injection admin surface, ``/_emulator/faults`` (guarded like the rest of
``/_emulator/``: loopback, own Host and Origin; JSON and the daemon's token to change anything).

| request | answer |
|---|---|
| ``GET /_emulator/faults`` | ``{"faults": [...], "throttle": "off"}`` |
| ``POST /_emulator/faults`` + a fault (below) | ``{"fault": {...}}`` |
| ``GET`` / ``DELETE /_emulator/faults/<id>`` | ``{"fault": {...}}`` (404 ``NotFound``) |
| ``DELETE /_emulator/faults`` | ``{"cleared": n}`` |
| ``GET`` / ``PUT /_emulator/faults/throttle`` ``{"mode": "cloud"}`` | ``{"throttle": "cloud"}`` |

A fault is a JSON object: ``service`` (``fc``, ``cloudflow`` or ``fnf``, ``ram``, ``sts``),
optional ``action``, ``function`` (fc), ``flow`` (cloudflow); exactly one effect: ``error``
(a code, with optional ``status``, ``message``, ``retry_after_ms``), ``function_error`` (true
or the message, with optional ``error_type``), ``timeout`` (true) or ``latency`` (seconds);
optional ``times``, ``probability``, ``seed``. Anything else, or a wrong type, is a
``400 InvalidArgument`` naming the field.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from deployer.emulator.api import errors as e
from deployer.emulator.api.contract import Routes, json_object
from deployer.emulator.api.faults import FaultInjector, fault_fields, resolve_error
from deployer.emulator.api.http import HttpRequest, HttpResponse, json_response
from deployer.emulator.services.errors import InvalidValue
from deployer.emulator.services.faults import SERVICES, FaultKind, FaultSpec

__all__ = ["FaultAdmin", "parse_fault"]

PREFIX = "/_emulator/faults"
_EFFECTS = ("error", "function_error", "timeout", "latency")
_KEYS = frozenset({"service", "action", "function", "flow", "status", "message",
                   "retry_after_ms", "error_type", "times", "probability", "seed", *_EFFECTS})
_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,63}$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")
_SERVICE_ALIASES = {"fnf": "cloudflow", "flow": "cloudflow", "functioncompute": "fc"}
FAULT_ROUTES: Routes[Callable[..., dict[str, Any]]] = Routes()
"""The entries of :data:`PREFIX`; each answers a body (``200`` JSON)."""


def _bad(message: str) -> e.ApiError:
    return e.InvalidArgument(f"invalid fault: {message}")


def _text(body: dict[str, Any], key: str, pattern: re.Pattern[str] | None = _NAME,
          limit: int = 1024) -> str:
    value = body.get(key)
    if value is None:
        return ""
    if not isinstance(value, str) or not value or len(value) > limit:
        raise _bad(f"{key} must be a non-empty string of at most {limit} characters")
    if pattern is not None and not pattern.match(value):
        raise _bad(f"{key} {value[:80]!r} is not a valid name")
    return value


def _int(body: dict[str, Any], key: str, low: int, high: int) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _bad(f"{key} must be a whole number in {low}-{high}, got {value!r}")
    return value


def _number(body: dict[str, Any], key: str, default: float) -> float:
    value = body.get(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _bad(f"{key} must be a finite number, got {value!r}")
    return float(value)


def parse_fault(body: dict[str, Any]) -> FaultSpec:
    """The :class:`FaultSpec` a JSON fault describes (400 with the reason otherwise)."""
    unknown = sorted(set(body) - _KEYS)
    if unknown:
        raise _bad(f"unknown field(s) {', '.join(unknown)}; fields are "
                   f"{', '.join(sorted(_KEYS))}")
    effects = [key for key in _EFFECTS if body.get(key) not in (None, False)]
    if len(effects) != 1:
        raise _bad("give exactly one of error, function_error, timeout, latency"
                   + (f" (got {', '.join(effects)})" if effects else ""))
    service = _service(body)
    fields: dict[str, Any] = {
        "service": service, "action": _text(body, "action"),
        "function": _text(body, "function"), "flow": _text(body, "flow"),
        "times": _int(body, "times", 1, 1_000_000),
        "probability": _number(body, "probability", 1.0),
        "seed": _int(body, "seed", -(2**63), 2**63 - 1)}
    effect = effects[0]
    fields.update(_effect(body, service, effect))
    extra = {"error": ("status", "retry_after_ms"), "function_error": ("error_type",)}
    misplaced = [key for other, keys in extra.items() if other != effect for key in keys
                 if key in body]
    if misplaced:
        owners = [o for o, keys in extra.items() if set(keys) & set(misplaced)]
        raise _bad(f"{', '.join(misplaced)} can only be given with {' or '.join(owners)}")
    spec = FaultSpec(**fields)
    try:
        spec.validate()
    except InvalidValue as exc:
        raise _bad(exc.message) from None
    return spec


def _service(body: dict[str, Any]) -> str:
    service = _text(body, "service", None, 32).lower()
    if not service:
        raise _bad("service is required (fc, cloudflow, ram or sts)")
    service = _SERVICE_ALIASES.get(service, service)
    if service not in SERVICES:
        raise _bad(f"service must be one of {', '.join(SERVICES)} (or fnf); got {service!r}")
    return service


def _effect(body: dict[str, Any], service: str, effect: str) -> dict[str, Any]:
    """The FaultSpec fields of the one effect asked for (error, function_error, timeout or
    latency)."""
    message = _text(body, "message", None)
    if effect == "error":
        code = _text(body, "error", _CODE, 64)
        code, status, default = resolve_error(service, code, _int(body, "status", 400, 599))
        return {"kind": FaultKind.ERROR, "code": code, "status": status,
                "message": message or default,
                "retry_after_ms": _int(body, "retry_after_ms", 1, 3_600_000)}
    if effect == "function_error":
        raw = body["function_error"]
        if raw is not True and not isinstance(raw, str):
            raise _bad("function_error must be true or the error message")
        return {"kind": FaultKind.FUNCTION_ERROR,
                "message": message or (raw if isinstance(raw, str) else "")
                or "injected function error",
                "error_type": _text(body, "error_type", _CODE, 64) or "Exception"}
    if effect == "timeout":
        if body["timeout"] is not True:
            raise _bad("timeout must be true")
        return {"kind": FaultKind.TIMEOUT}
    return {"kind": FaultKind.LATENCY, "seconds": _number(body, "latency", 0.0)}


class FaultAdmin:
    """Serves :data:`PREFIX` for one emulator (the admin API delegates after its guard):
    :data:`FAULT_ROUTES` over the injector's faults and quotas."""

    prefix = PREFIX

    def __init__(self, injector: FaultInjector) -> None:
        self._faults = injector.faults
        self._quotas = injector.quotas

    def handle(self, request: HttpRequest) -> HttpResponse:
        handler, args = FAULT_ROUTES.find(request.method, request.raw_path)
        return json_response(200, handler(self, request, **args), {})

    @FAULT_ROUTES.route("GET", PREFIX)
    def list_faults(self, request: HttpRequest) -> dict[str, Any]:
        return {"faults": [fault_fields(f) for f in self._faults.list()],
                    "throttle": self._quotas.mode}

    @FAULT_ROUTES.route("POST", PREFIX)
    def add_fault(self, request: HttpRequest) -> dict[str, Any]:
        fault = self._faults.add(parse_fault(json_object(request.body)))
        return {"fault": fault_fields(fault)}

    @FAULT_ROUTES.route("DELETE", PREFIX)
    def clear_faults(self, request: HttpRequest) -> dict[str, Any]:
        return {"cleared": self._faults.clear()}

    @FAULT_ROUTES.route("GET", PREFIX + "/throttle")
    def throttle(self, request: HttpRequest) -> dict[str, Any]:
        return {"throttle": self._quotas.mode}

    @FAULT_ROUTES.route("PUT POST", PREFIX + "/throttle")
    def set_throttle(self, request: HttpRequest) -> dict[str, Any]:
        mode = json_object(request.body).get("mode")
        self._quotas.set_mode(mode if isinstance(mode, str) else repr(mode))
        return {"throttle": self._quotas.mode}

    @FAULT_ROUTES.route("GET", PREFIX + "/{fault_id}")
    def get_fault(self, request: HttpRequest, fault_id: str) -> dict[str, Any]:
        return {"fault": fault_fields(self._faults.get(fault_id))}

    @FAULT_ROUTES.route("DELETE", PREFIX + "/{fault_id}")
    def remove_fault(self, request: HttpRequest, fault_id: str) -> dict[str, Any]:
        return {"fault": fault_fields(self._faults.remove(fault_id))}
