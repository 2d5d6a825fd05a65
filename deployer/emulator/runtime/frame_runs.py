"""Requests of the built-in runtimes (Python, Node.js): frames over the worker's pipes.

One invocation is the initializer (once per instance, before its first call) and the call; a
preStop hook is one frame of its own. The first request of a new instance carries the latency
model's cold start (docs/runtime.md, "Latency model"), outside the function's timeout.
"""

from __future__ import annotations

from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.runtime.invocation_results import (
    LogBuffer,
    append_failure,
    failure_body,
    invocation_result,
)
from deployer.emulator.runtime.launch import credentials_frame
from deployer.emulator.runtime.model import InstanceSpec, InvocationResult
from deployer.emulator.runtime.pool import Instance
from deployer.emulator.runtime.request_clock import RequestClock
from deployer.emulator.runtime.worker import Exchange, RunOutcome

__all__ = ["initialize_frames", "invoke_frames", "pre_stop_frames", "renew_credentials"]

_PLATFORM_ENDS = (RunOutcome.TIMEOUT, RunOutcome.CRASHED, RunOutcome.OUT_OF_MEMORY)


def invoke_frames(slot: Instance, spec: InstanceSpec, event: bytes, request_id: str,
                  clock: Clock, cold_start: float, cold: bool) -> tuple[InvocationResult, bool]:
    """Initialize if needed, then invoke. Returns the result and whether to discard the
    instance."""
    assert slot.worker is not None
    log = LogBuffer()
    at = (slot.instance_id, spec, request_id)  # what every result of this call names
    request_clock = RequestClock(clock)
    if spec.initializer_handler and not slot.initialized:
        timeout = spec.initializer_timeout or spec.timeout
        header = request_clock.request("initializer", request_id, cold_start)
        init = slot.worker.exchange(header, b"", timeout + cold_start)
        request_clock.spent(init)
        cold_start = 0.0
        log.data += init.log
        if init.outcome is not RunOutcome.OK:
            append_failure(log, init, "Initialize", request_id, timeout, "initialization ")
            body = failure_body(init, timeout, "initialization ")
            return invocation_result(*at, body, log, init, cold, True), True
        slot.initialized = True
        log.tail_from = len(log.data)
    header = request_clock.request("invoke", request_id, cold_start)
    renew_credentials(slot, spec, header)
    answer = slot.worker.exchange(header, event, spec.timeout + cold_start)
    request_clock.spent(answer)
    log.data += answer.log
    discard = bool((answer.extra or {}).get("discard"))  # the runtime cannot go on
    if answer.outcome in _PLATFORM_ENDS:
        append_failure(log, answer, "Invoke", request_id, spec.timeout, "")
        body = failure_body(answer, spec.timeout, "")
        return invocation_result(*at, body, log, answer, cold, False), True
    return invocation_result(*at, answer.body, log, answer, cold, False), discard


def initialize_frames(slot: Instance, spec: InstanceSpec, request_id: str,
                      clock: Clock) -> tuple[Exchange, bytes]:
    """Run the initializer of a new instance ahead of any request (a provisioned instance);
    returns the exchange and its log, the platform's end marker added when it failed."""
    assert slot.worker is not None and spec.initializer_handler
    timeout = spec.initializer_timeout or spec.timeout
    header = RequestClock(clock).request("initializer", request_id, 0.0)
    renew_credentials(slot, spec, header)
    answer = slot.worker.exchange(header, b"", timeout)
    log = LogBuffer(bytearray(answer.log))
    if answer.outcome is not RunOutcome.OK:
        append_failure(log, answer, "Initialize", request_id, timeout, "initialization ")
    else:
        slot.initialized = True
    return answer, bytes(log.data)


def pre_stop_frames(slot: Instance, spec: InstanceSpec, request_id: str,
                    clock: Clock) -> tuple[Exchange, bytes]:
    """Run the preStop hook (``spec.pre_stop_timeout``, default the function's timeout);
    returns the exchange and its log, the platform's end marker added when it timed out or
    crashed."""
    assert slot.worker is not None and spec.pre_stop_handler
    timeout = spec.pre_stop_timeout or spec.timeout
    header = RequestClock(clock).request("pre_stop", request_id, 0.0)
    renew_credentials(slot, spec, header)
    answer = slot.worker.exchange(header, b"", timeout)
    log = LogBuffer(bytearray(answer.log))
    append_failure(log, answer, "PreStop", request_id, timeout, "preStop ")
    return answer, bytes(log.data)


def renew_credentials(slot: Instance, spec: InstanceSpec, header: dict[str, Any]) -> None:
    """Hand the worker the role's current keys when they changed (renewed before expiry)."""
    if spec.credentials is None:
        return
    current = spec.credentials()
    if current is not None and current != slot.credentials:
        header["credentials"] = credentials_frame(current)
        slot.credentials = current
