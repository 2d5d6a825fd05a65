"""The fault-injection entries of the admin surface, ``/_emulator/faults`` (in
:data:`~.admin.ADMIN_ROUTES`, behind its guard; docs/emulator.md "Fault injection").

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
from typing import TYPE_CHECKING, Any

from deployer.emulator.api import errors as e
from deployer.emulator.api.admin import ADMIN_ROUTES
from deployer.emulator.api.contract import json_object
from deployer.emulator.api.faults import resolve_error
from deployer.emulator.api.http import HttpRequest
from deployer.emulator.services.errors import InvalidValue
from deployer.emulator.services.faults import SERVICES, Fault, FaultKind, FaultSpec

if TYPE_CHECKING:
    from deployer.emulator.api.admin import AdminApi

__all__ = ["fault_fields", "parse_fault"]

PREFIX = "/_emulator/faults"
_EFFECTS = ("error", "function_error", "timeout", "latency")
_KEYS = frozenset({"service", "action", "function", "flow", "status", "message",
                   "retry_after_ms", "error_type", "times", "probability", "seed", *_EFFECTS})
_CODE = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,63}$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")
_SERVICE_ALIASES = {"fnf": "cloudflow", "flow": "cloudflow", "functioncompute": "fc"}


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


def fault_fields(fault: Fault) -> dict[str, Any]:
    """A fault as the admin API shows it (snake_case JSON)."""
    spec = fault.spec
    data: dict[str, Any] = {"id": fault.fault_id, "service": spec.service,
                            "kind": spec.kind.value, "action": spec.action or None,
                            "function": spec.function or None, "flow": spec.flow or None,
                            "times": spec.times, "probability": spec.probability,
                            "seed": spec.seed, "remaining": fault.remaining,
                            "fired": fault.fired, "matched": fault.matched}
    if spec.kind is FaultKind.ERROR:
        data.update(error=spec.code, status=spec.status, message=spec.message,
                    retry_after_ms=spec.retry_after_ms)
    elif spec.kind is FaultKind.FUNCTION_ERROR:
        data.update(message=spec.message, error_type=spec.error_type)
    elif spec.kind is FaultKind.LATENCY:
        data["seconds"] = spec.seconds
    return data


@ADMIN_ROUTES.route("GET", PREFIX)
def get_faults(api: AdminApi, request: HttpRequest) -> dict[str, Any]:
    return {"faults": [fault_fields(f) for f in api.faults.faults.list()],
            "throttle": api.faults.quotas.mode}


@ADMIN_ROUTES.route("POST", PREFIX)
def post_fault(api: AdminApi, request: HttpRequest) -> dict[str, Any]:
    fault = api.faults.faults.add(parse_fault(json_object(request.body)))
    return {"fault": fault_fields(fault)}


@ADMIN_ROUTES.route("DELETE", PREFIX)
def delete_faults(api: AdminApi, request: HttpRequest) -> dict[str, Any]:
    return {"cleared": api.faults.faults.clear()}


@ADMIN_ROUTES.route("GET", PREFIX + "/throttle")
def get_throttle(api: AdminApi, request: HttpRequest) -> dict[str, Any]:
    return {"throttle": api.faults.quotas.mode}


@ADMIN_ROUTES.route("PUT POST", PREFIX + "/throttle")
def put_throttle(api: AdminApi, request: HttpRequest) -> dict[str, Any]:
    mode = json_object(request.body).get("mode")
    api.faults.quotas.set_mode(mode if isinstance(mode, str) else repr(mode))
    return {"throttle": api.faults.quotas.mode}


@ADMIN_ROUTES.route("GET", PREFIX + "/{fault_id}")
def get_fault(api: AdminApi, request: HttpRequest, fault_id: str) -> dict[str, Any]:
    return {"fault": fault_fields(api.faults.faults.get(fault_id))}


@ADMIN_ROUTES.route("DELETE", PREFIX + "/{fault_id}")
def delete_fault(api: AdminApi, request: HttpRequest, fault_id: str) -> dict[str, Any]:
    return {"fault": fault_fields(api.faults.faults.remove(fault_id))}
