"""Values exchanged between the FC API layer and the local function runtime."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Protocol

from deployer.errors import OperationError


class FunctionErrorType(str, Enum):
    """Values of the ``x-fc-error-type`` response header (reference fc3-api.md §7.6)."""

    UNHANDLED = "UnhandledInvocationError"
    INITIALIZATION = "InitializationError"


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    """Snapshot of one function version: everything an instance is started from.

    Two specs that compare equal may share instances; any difference (code checksum, handler,
    environment, timeout, ...) means new instances.
    """

    account_id: str
    region: str
    function_name: str
    handler: str
    runtime: str
    timeout: int
    memory_size: int
    environment: Mapping[str, str]
    code_checksum: str
    code_zip: Path  # stored zip, content-addressed by checksum
    initializer_handler: str | None = None
    initializer_timeout: int | None = None

    @property
    def function_key(self) -> tuple[str, str, str]:
        """(account, region, function name): the scope of instance caps and ``retire``."""
        return (self.account_id, self.region, self.function_name)


@dataclass(frozen=True, slots=True)
class InvocationResult:
    """Outcome of one synchronous invocation, ready for the InvokeFunction response (§7.6)."""

    request_id: str
    payload: bytes  # handler result (§8.3) or error JSON (§8.4)
    error_type: str | None  # None | "UnhandledInvocationError" | "InitializationError"
    log_tail: bytes  # last 4096 bytes of this invocation's log (markers included), b"" unless tail
    log_text: str  # the invocation's full log (kept by the emulator for `deploy logs`)
    instance_id: str
    duration_ms: float
    code_checksum: str
    cold_start: bool


class FunctionRuntime(Protocol):
    """Runs function code; the FC service layer depends on this port only."""

    def invoke(
        self, spec: FunctionSpec, event: bytes, *, request_id: str, tail_logs: bool
    ) -> InvocationResult: ...

    def retire(self, account_id: str, region: str, function_name: str) -> None: ...

    def close(self) -> None: ...


class RuntimeUnavailableError(OperationError):
    """The runtime cannot run this function at all (closed, unsupported runtime, bad code)."""
