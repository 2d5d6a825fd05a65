"""Injected faults and the cloud's quotas on the wire: which request a fault meets, and the
exact answer the product would send (docs/emulator.md "Fault injection").

The router hands every authenticated cloud request to :meth:`FaultInjector.around`, described
by wire data only (product, action, FC function, CloudFlow flow). ``--throttle cloud`` refuses
a CloudFlow call beyond its token bucket and a synchronous FC invocation beyond the account's
instances (each product's error table words :class:`QuotaExceeded`); then a fault's latency is
a :class:`DeferredResponse` (no thread waits), an error fault the product's error (with
``x-acs-retry-after`` when it sets ``retry_after_ms``), and a function-error or timeout fault
FC's answer for a handler that raised or timed out. :data:`CATALOGUE`: each product's named
errors with their HTTP status and message.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from deployer.emulator.api import errors as e
from deployer.emulator.api.access import PRODUCTS
from deployer.emulator.api.errors import ApiError
from deployer.emulator.api.http import Answer, DeferredResponse, HttpResponse
from deployer.emulator.api.router import RequestContext
from deployer.emulator.services.faults import (
    INVOKE,
    Fault,
    FaultCall,
    FaultKind,
    FaultService,
    injected_failure_body,
)
from deployer.emulator.services.functions import FunctionService
from deployer.emulator.services.quotas import CloudQuotas

__all__ = ["CATALOGUE", "FaultInjector", "resolve_error"]

_FUNCTION_PATH = re.compile(r"^/2023-03-30/functions/([^/?]+)")

_POP = {
    "Throttling": (400, "Request was denied due to request throttling."),
    "Throttling.User": (400, "Request was denied due to user flow control."),
    "Throttling.Api": (400, "Request was denied due to api flow control."),
    "ServiceUnavailable": (503, "The request has failed due to a temporary failure of the "
                                "server."),
    "InternalError": (500, "The request processing has failed due to some unknown error, "
                           "exception or failure."),
}
CATALOGUE: dict[str, dict[str, tuple[int, str]]] = {
    "fc": {
        "ResourceThrottled": (503, "the function's resources are throttled: too many instances "
                                   "are running. Please retry later."),
        "ResourceExhausted": (429, "the function's concurrency limit was reached. Please "
                                   "retry later."),
        "Throttling": (429, "Request was denied due to request throttling."),
        "ServiceUnavailable": (503, "the service is temporarily unavailable. Please retry."),
        "ConcurrentUpdateError": (409, "Update conflict, please retry."),
        "InternalServerError": (500, "an internal error has occurred. Please retry."),
    },
    "cloudflow": {
        "Throttling": (429, "Request was denied due to request throttling."),
        "ServiceUnavailable": (503, "The service is temporarily unavailable. Please retry."),
        "ConcurrentUpdateError": (409, "Update conflict, please retry."),
        "InternalServerError": (500, "An internal error has occurred. Please retry."),
    },
    "ram": _POP,
    "sts": _POP,
}
"""Named errors per service: code → (HTTP status, message). Sources and what is inferred:
docs/emulator.md, "Fault injection"."""
_INTERNAL_ALIASES = ("InternalError", "InternalServerError", "Internal")


def resolve_error(service: str, code: str, status: int | None) -> tuple[str, int, str]:
    """``(code, status, default message)`` of an error fault; ``status`` is required for a
    code the catalogue does not name. InvalidArgument (wire) when it cannot be resolved."""
    known = CATALOGUE.get(service, {})
    if code in _INTERNAL_ALIASES:
        code = "InternalError" if service in ("ram", "sts") else "InternalServerError"
    if code in known:
        default_status, message = known[code]
        return code, status or default_status, message
    if status is None:
        raise e.InvalidArgument(
            f"invalid fault: error {code!r} is not one of {service}'s named errors "
            f"({', '.join(sorted(known))}): give its HTTP status too (status 400-599)")
    return code, status, f"{code} (injected)"


def _never(wake: Callable[[], None]) -> Callable[[], None]:
    return lambda: None


class FaultInjector:
    """Applies quotas and faults to the requests the router hands it."""

    def __init__(self, faults: FaultService, quotas: CloudQuotas,
                 functions: FunctionService) -> None:
        self.faults = faults
        self.quotas = quotas
        self._functions = functions

    def around(self, ctx: RequestContext, product: str, params: Mapping[str, str],
               proceed: Callable[[], Answer],
               later: Callable[[Callable[[], Answer]], Answer]) -> Answer:
        """The answer to the request of ``ctx``: ``proceed()`` or what faults make of it;
        ``later(fn)`` runs ``fn`` with the router's error handling (after a latency)."""
        service = PRODUCTS.get(product)
        if service is None or (self.faults.empty and not self.quotas.enabled):
            return proceed()
        call = self._call(ctx, service, params)
        self.quotas.admit(ctx.account_id, ctx.region, service, call.action)
        effect = self.faults.effect(call)
        sync_invoke = (service == "fc" and call.action == INVOKE
                       and (ctx.request.headers.get("x-fc-invocation-type") or "Sync")
                       == "Sync")
        failure = effect.failure

        def run() -> Answer:
            if failure is not None:
                return self._fail(failure, ctx, call)
            if sync_invoke and self.quotas.enabled:
                with self.quotas.instance(ctx.account_id, ctx.region):
                    return proceed()
            return proceed()

        if effect.latency:
            return DeferredResponse(_never, effect.latency, lambda: later(run))
        return run()

    @staticmethod
    def _call(ctx: RequestContext, service: str, params: Mapping[str, str]) -> FaultCall:
        request = ctx.request
        action = params.get("Action") or request.headers.get("x-acs-action") or ""
        function = flow = ""
        if service == "fc":
            m = _FUNCTION_PATH.match(request.raw_path)
            function = m.group(1) if m else ""
        elif service == "cloudflow":
            flow = params.get("FlowName") or params.get("Name") or ""
        return FaultCall(service, action, function, flow)

    def _fail(self, fault: Fault, ctx: RequestContext, call: FaultCall) -> HttpResponse:
        spec = fault.spec
        if spec.kind is FaultKind.ERROR:
            headers = ({} if spec.retry_after_ms is None
                       else {"x-acs-retry-after": str(spec.retry_after_ms)})
            raise ApiError(spec.message, headers=headers, code=spec.code, status=spec.status)
        request = ctx.request
        # FC answers FunctionNotFound before it would run anything
        fn = self._functions.get(ctx.account_id, ctx.region, call.function,
                                 request.query_params().get("qualifier"))
        reply = {"x-fc-request-id": ctx.request_id}
        if (request.headers.get("x-fc-invocation-type") or "Sync") != "Sync":
            task_id = request.headers.get("x-fc-async-task-id")
            if task_id:
                reply["x-fc-async-task-id"] = task_id
            return HttpResponse(202, b"", reply)
        body = injected_failure_body(spec, fn.config.timeout)
        reply.update({"x-fc-error-type": "UnhandledInvocationError",
                      "x-fc-invocation-service-version": "LATEST",
                      "Content-Type": "application/json"})
        return HttpResponse(200, body, reply)
