"""In-memory FunctionRuntime for tests of code that calls functions without running them."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from deployer.emulator.services.ports import InstanceSpec, InvocationResult

__all__ = ["EchoRuntime"]


@dataclass
class EchoRuntime:
    """Answers ``b"echo:" + event``; an event starting with ``b"fail"`` is a function error.

    Records every invocation (``invoked``) and retirement (``retired``); thread-safe enough for
    tests (list appends). ``done`` is set after each invocation.
    """

    invoked: list[tuple[InstanceSpec, bytes, str]] = field(default_factory=list)
    retired: list[tuple[str, str, str]] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)
    closed: bool = False

    def invoke(self, spec: InstanceSpec, event: bytes, *, request_id: str,
               tail_logs: bool) -> InvocationResult:
        self.invoked.append((spec, event, request_id))
        log = f"FC Invoke Start RequestId: {request_id}\nFC Invoke End RequestId: {request_id}\n"
        self.done.set()
        if event.startswith(b"fail"):
            payload = b'{"errorMessage": "boom", "errorType": "Exception"}'
            return InvocationResult(request_id, payload, "UnhandledInvocationError",
                                    log.encode() if tail_logs else b"", log, "i-1", 1.5,
                                    spec.code_checksum, False)
        return InvocationResult(request_id, b"echo:" + event, None,
                                log.encode() if tail_logs else b"", log, "i-1", 1.5,
                                spec.code_checksum, False)

    def retire(self, account_id: str, region: str, function_name: str,
               qualifier: str | None = None) -> None:
        self.retired.append((account_id, region, function_name))

    def close(self) -> None:
        self.closed = True
