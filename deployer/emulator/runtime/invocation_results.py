"""What one invocation's exchanges with its worker become: its log, with the end marker and
error body the platform writes when the worker could not (a timeout, a crash, memory
exhausted), and its :class:`InvocationResult` (docs/runtime.md, reference fc3-api.md §8).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from deployer.emulator.runtime.model import FunctionErrorType, InstanceSpec, InvocationResult
from deployer.emulator.runtime.worker import Exchange, RunOutcome

__all__ = ["LOG_TAIL_BYTES", "LogBuffer", "append_failure", "failure_body",
           "invocation_result"]

LOG_TAIL_BYTES = 4096
_ERROR_SUFFIX = ", Error: Unhandled function error"
_PLATFORM_ENDS = (RunOutcome.TIMEOUT, RunOutcome.CRASHED, RunOutcome.OUT_OF_MEMORY)


@dataclass(slots=True)
class LogBuffer:
    """The log of one invocation; ``tail_from`` marks where the invocation proper starts."""

    data: bytearray = field(default_factory=bytearray)
    tail_from: int = 0


def failure_body(exchange: Exchange, timeout: int, phase: str) -> bytes:
    """Platform-made error body of a timeout or a dead worker (docs/runtime.md); the worker's
    own body otherwise. ``phase`` is "" or "initialization "."""
    if exchange.outcome is RunOutcome.TIMEOUT:
        message = f"Function {phase}timed out after {timeout} seconds"
    elif exchange.outcome in (RunOutcome.CRASHED, RunOutcome.OUT_OF_MEMORY):
        memory = exchange.max_memory_mb or 0.0
        message = (
            "Process exited unexpectedly before completing request "
            f"(duration: {round(exchange.duration_ms)}ms, maxMemoryUsage: {memory:.2f}MB)"
        )
    else:
        return exchange.body
    return json.dumps({"errorMessage": message}).encode("utf-8")


def append_failure(
    log: LogBuffer, exchange: Exchange, phase: str, request_id: str, timeout: int,
    what: str
) -> None:
    """The worker could not log its own end marker: the platform does it (nothing to add
    when the worker answered)."""
    if exchange.outcome not in _PLATFORM_ENDS:
        return
    if log.data and not log.data.endswith(b"\n"):
        log.data += b"\n"
    if exchange.outcome is RunOutcome.OUT_OF_MEMORY:
        log.data += (f"Function ran out of memory: the instance used more than its memorySize "
                     f"({exchange.max_memory_mb or 0:.0f} MB) and was stopped\n").encode()
    log.data += failure_body(exchange, timeout, what) + b"\n"
    log.data += f"FC {phase} End RequestId: {request_id}{_ERROR_SUFFIX}\n".encode()


def invocation_result(
    instance_id: str,
    spec: InstanceSpec,
    request_id: str,
    body: bytes,
    log: LogBuffer,
    exchange: Exchange,
    cold: bool,
    initialization: bool,
) -> InvocationResult:
    """The result of an invocation that ended with ``exchange`` (its initializer's when
    ``initialization``): error type, body, full log and its tail, duration, memory."""
    if initialization:
        error_type: str | None = FunctionErrorType.INITIALIZATION.value
    elif exchange.outcome is RunOutcome.OK:
        error_type = None
    else:
        error_type = FunctionErrorType.UNHANDLED.value
    data = bytes(log.data)
    tail_source = data if initialization else data[log.tail_from :]
    return InvocationResult(
        request_id=request_id,
        payload=body,
        error_type=error_type,
        log_tail=tail_source[-LOG_TAIL_BYTES:],
        log_text=data.decode("utf-8", "replace"),
        instance_id=instance_id,
        duration_ms=round(exchange.duration_ms, 3),
        code_checksum=spec.code_checksum,
        cold_start=cold,
        max_memory_mb=exchange.max_memory_mb,
    )
