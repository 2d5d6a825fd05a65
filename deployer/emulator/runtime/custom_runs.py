"""Requests of the custom runtimes: the initializer, an event or HTTP invocation and the preStop
hook, as HTTP calls to the function's server (``custom_calls.py``).

Logs: FC adds no markers around a custom runtime's requests; the server writes them itself
(``FC Invoke Start RequestId: …`` / ``FC Invoke End RequestId: …``), and the invocation's Tail
log (``x-fc-log-result``) is what lies between the two (FC docs, "Custom runtime: context and log
format": to see a custom runtime's logs in the invocation result, record the start and end of
each request). The stored log of an invocation is everything the instance wrote while it ran.
A timeout or a crash still gets the platform's error line and end marker.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from urllib.parse import quote

from deployer.emulator.clock import Clock
from deployer.emulator.runtime.custom_calls import (
    HttpAnswer,
    call_server,
    common_headers,
    hook_ok,
    invoke_ok,
)
from deployer.emulator.runtime.invocation_results import (
    LogBuffer,
    append_failure,
    failure_body,
    invocation_result,
)
from deployer.emulator.runtime.model import HttpCall, InstanceSpec, InvocationResult
from deployer.emulator.runtime.pool import Instance
from deployer.emulator.runtime.worker import Exchange, RunOutcome

__all__ = ["CustomRequest", "initialize_custom", "invoke_custom", "pre_stop_custom"]

_PLATFORM_ENDS = (RunOutcome.TIMEOUT, RunOutcome.CRASHED, RunOutcome.OUT_OF_MEMORY)


class CustomRequest:
    """An event invocation (``POST /invoke``) or an HTTP function's request, as sent."""

    def __init__(self, event: bytes | None = None, http: HttpCall | None = None) -> None:
        self.http = http
        if http is not None:
            target = quote(http.path, safe="/%:@!$&'()*+,;=-._~") or "/"
            self.method, self.target = http.method, target + (
                f"?{http.query}" if http.query else "")
            self.headers = [(k, v) for k, v in http.headers if not k.lower().startswith("x-fc-")]
            self.body, self.control = http.body, "/http-invoke"
        else:
            self.method, self.target, self.body = "POST", "/invoke", event or b""
            self.headers = [("content-type", "application/octet-stream")]
            self.control = "/invoke"


def invoke_custom(slot: Instance, spec: InstanceSpec, request: CustomRequest, request_id: str,
                  clock: Clock, cold_start: float, cold: bool) -> tuple[InvocationResult, bool]:
    """Initialize once per instance (under its lock), then forward the request. Returns the
    result and whether to discard the instance (timeouts of a one-request instance, crashes,
    a 5xx from the server)."""
    assert slot.worker is not None
    at = (slot.instance_id, spec, request_id)
    _spend(clock, cold_start)
    log = LogBuffer()
    if spec.initializer_handler and not slot.initialized:
        with slot.lock:
            if not slot.initialized:
                failed = _initialize(slot, spec, request_id, log)
                if failed is not None:
                    return invocation_result(*at, failed[0], log, failed[1], cold, True), True
                slot.initialized = True
        log.tail_from = len(log.data)
    if cold and spec.custom is not None and spec.custom.health_check.http_get_url:
        unhealthy = _health_check(slot, spec)
        if unhealthy is not None:
            log.data += unhealthy.log
            body = json.dumps({"errorMessage": unhealthy.body.decode()}).encode()
            return invocation_result(*at, body, log, unhealthy, cold, False), True
    headers = common_headers(spec, request_id, spec.credentials() if spec.credentials else None,
                             request.control)
    answer = call_server(slot.worker, request.method, request.target,
                         [*request.headers, *headers], request.body, spec.timeout)
    log.data += answer.log
    exchange = _exchange(answer, invoke_ok(answer))
    if answer.outcome in _PLATFORM_ENDS:
        append_failure(log, exchange, "Invoke", request_id, spec.timeout, "")
        body = failure_body(exchange, spec.timeout, "")
        discard = answer.outcome is not RunOutcome.TIMEOUT or slot.capacity == 1
        return _with_tail(invocation_result(*at, body, log, exchange, cold, False), log,
                          request_id), discard
    body = answer.body if answer.outcome is RunOutcome.OK else json.dumps(
        {"errorMessage": "the custom runtime's server closed the connection without an "
                         "answer"}).encode()
    result = _with_tail(invocation_result(*at, body, log, exchange, cold, False), log,
                        request_id)
    if request.http is not None and answer.outcome is RunOutcome.OK:
        result = _http(result, answer)
    return result, answer.status >= 500


def initialize_custom(slot: Instance, spec: InstanceSpec,
                      request_id: str) -> tuple[Exchange, bytes]:
    """Initialize a new instance ahead of any request (a provisioned instance): its
    initializer, then its health check; returns the outcome and the log."""
    log = LogBuffer()
    with slot.lock:
        failed = _initialize(slot, spec, request_id, log) if spec.initializer_handler else None
        if failed is not None:
            return failed[1], bytes(log.data)
        slot.initialized = True
    if spec.custom is not None and spec.custom.health_check.http_get_url:
        unhealthy = _health_check(slot, spec)
        if unhealthy is not None:
            return unhealthy, bytes(log.data + unhealthy.log)
    return Exchange(RunOutcome.OK, b"", bytes(log.data), 0.0, None), bytes(log.data)


def _initialize(slot: Instance, spec: InstanceSpec, request_id: str,
                log: LogBuffer) -> tuple[bytes, Exchange] | None:
    """``POST /initialize``; None when it succeeded, else the error body and exchange."""
    assert slot.worker is not None
    timeout = spec.initializer_timeout or spec.timeout
    headers = common_headers(spec, request_id, spec.credentials() if spec.credentials else None,
                             "/initialize")
    answer = call_server(slot.worker, "POST", "/initialize", headers, b"", timeout)
    log.data += answer.log
    ok = answer.outcome is RunOutcome.OK and hook_ok(answer)
    exchange = _exchange(answer, ok)
    if ok:
        return None
    append_failure(log, exchange, "Initialize", request_id, timeout, "initialization ")
    body = failure_body(exchange, timeout, "initialization ")
    return (body or json.dumps({"errorMessage": f"the initializer answered HTTP "
                                                f"{answer.status}"}).encode()), exchange


def _health_check(slot: Instance, spec: InstanceSpec) -> Exchange | None:
    """The initial health check of a new instance (after its initializer): ``GET`` the
    configured path after ``initialDelaySeconds``; a 200-399 answer within ``timeoutSeconds``
    passes (FC docs, "Configure instance health checks"). None when it passed."""
    assert slot.worker is not None and spec.custom is not None
    check = spec.custom.health_check
    time.sleep(max(0.0, check.initial_delay_seconds))
    answer = call_server(slot.worker, "GET", check.http_get_url or "/", [], b"",
                         max(0.1, check.timeout_seconds))
    if answer.outcome is RunOutcome.OK and 200 <= answer.status < 400:
        return None
    what = f"HTTP {answer.status}" if answer.outcome is RunOutcome.OK else answer.outcome.value
    message = (f"Function instance health check failed on port {spec.custom.port}: "
               f"GET {check.http_get_url} answered {what}")
    return Exchange(RunOutcome.ERROR, message.encode(), answer.log, answer.duration_ms,
                    answer.max_memory_mb)


def pre_stop_custom(slot: Instance, spec: InstanceSpec,
                    request_id: str) -> tuple[Exchange, bytes]:
    """``GET /pre-stop`` with the preStop timeout; the exchange and the log it wrote."""
    assert slot.worker is not None
    timeout = spec.pre_stop_timeout or spec.timeout
    headers = common_headers(spec, request_id, spec.credentials() if spec.credentials else None,
                             "/pre-stop")
    answer = call_server(slot.worker, "GET", "/pre-stop", headers, b"", timeout)
    exchange = _exchange(answer, answer.outcome is RunOutcome.OK and hook_ok(answer))
    log = LogBuffer(bytearray(answer.log))
    append_failure(log, exchange, "PreStop", request_id, timeout, "preStop ")
    return exchange, bytes(log.data)


def _exchange(answer: HttpAnswer, ok: bool) -> Exchange:
    outcome = answer.outcome
    if outcome is RunOutcome.OK and not ok:
        outcome = RunOutcome.ERROR
    return Exchange(outcome, answer.body, answer.log, answer.duration_ms, answer.max_memory_mb)


def _with_tail(result: InvocationResult, log: LogBuffer,
               request_id: str) -> InvocationResult:
    """The Tail log of a custom runtime: between the server's own markers of this request
    (with the platform's end marker when it failed), else nothing."""
    text = bytes(log.data[log.tail_from:])
    start = re.search(rb"^FC Invoke Start RequestId: " + re.escape(request_id.encode()) + rb"\s*$",
                      text, re.MULTILINE)
    if start is None:
        return _replace_tail(result, b"")
    end = re.search(rb"^FC Invoke End RequestId: " + re.escape(request_id.encode()) + rb".*$",
                    text[start.start():], re.MULTILINE)
    section = text[start.start():start.start() + end.end() + 1] if end else text[start.start():]
    return _replace_tail(result, section[-4096:])


def _replace_tail(result: InvocationResult, tail: bytes) -> InvocationResult:
    return dataclasses.replace(result, log_tail=tail)


def _http(result: InvocationResult, answer: HttpAnswer) -> InvocationResult:
    return dataclasses.replace(result, http_status=answer.status,
                               http_headers=tuple(answer.headers))


def _spend(clock: Clock, seconds: float) -> None:
    """The latency model's cold start of a new custom runtime instance: slept on the real
    clock, added to a virtual one (the server itself always sees the machine's clock)."""
    if seconds <= 0:
        return
    advance = getattr(clock, "advance", None)
    if clock.is_virtual and advance is not None:
        advance(seconds)
    else:
        time.sleep(seconds)
