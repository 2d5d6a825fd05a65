"""Ports the function service depends on: the runtime that runs handlers.

``FunctionSpec``/``InvocationResult`` mirror the contract of ``deployer.emulator.runtime``
(the process runtime); any object with these attributes works, so API tests can use a tiny
in-memory runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

__all__ = ["FunctionRuntime", "FunctionSpec", "InvocationResult"]


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    """Snapshot of one function version the runtime needs."""

    account_id: str
    region: str
    function_name: str
    handler: str
    runtime: str
    timeout: int
    memory_size: int
    environment: Mapping[str, str]
    code_checksum: str
    code_zip: Path
    initializer_handler: str | None = None
    initializer_timeout: int | None = None


@dataclass(frozen=True, slots=True)
class InvocationResult:
    request_id: str
    payload: bytes
    error_type: str | None  # None | "UnhandledInvocationError" | "InitializationError"
    log_tail: bytes
    instance_id: str
    duration_ms: float
    code_checksum: str


class FunctionRuntime(Protocol):
    """Runs handlers; must be thread-safe."""

    def invoke(self, spec: FunctionSpec, event: bytes, *, request_id: str,
               tail_logs: bool) -> InvocationResult:
        """Run one invocation to completion (blocks) and return its result."""
        ...

    def retire(self, account_id: str, region: str, function_name: str) -> None:
        """Stop routing to the function's current instances (after update/delete)."""
        ...

    def close(self) -> None:
        ...
