"""Recent invocation logs of a function.

On Alibaba Cloud, Function Compute writes logs to a Log Service (SLS) logstore configured on the
function; reading SLS is out of this project's scope. The local emulator keeps every
invocation's log and serves them on its admin API (``GET /_emulator/logs``). Both are a
:class:`LogSource`; the CLI's wiring picks one, nothing above it asks which.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol

from deployer.cloud.errors import CloudConnectionError
from deployer.errors import NotFoundError, OperationError

__all__ = ["EmulatorLogs", "InvocationLog", "LogSource", "LogsUnavailable"]


@dataclass(frozen=True, slots=True)
class InvocationLog:
    """One invocation of a function and what it logged."""

    request_id: str
    invoked_at: datetime
    invocation_type: str
    status: str
    error_type: str | None
    duration_ms: float | None
    log: str
    instance_id: str = ""  # the function instance that served it ("" when unknown)
    cold_start: bool = False


class LogSource(Protocol):
    def recent(self, function: str, limit: int) -> list[InvocationLog]:
        """The ``limit`` most recent invocations of ``function``, newest first."""
        ...


class EmulatorLogs:
    """Reads the local emulator's invocation records over its admin API (loopback only)."""

    def __init__(self, endpoint: str, region: str, timeout: float = 10.0) -> None:
        self._endpoint, self._region, self._timeout = endpoint, region, timeout

    def recent(self, function: str, limit: int) -> list[InvocationLog]:
        query = urllib.parse.urlencode({"function": function, "region": self._region,
                                        "limit": limit})
        url = f"http://{self._endpoint}/_emulator/logs?{query}"
        try:
            with urllib.request.urlopen(url, timeout=self._timeout) as response:
                data = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise OperationError(f"the emulator refused the log query: HTTP {exc.code}") from None
        except (OSError, ValueError) as exc:
            raise CloudConnectionError(f"cannot read logs from the emulator at {self._endpoint}:"
                                       f" {exc}", service="emulator", operation="logs") from None
        return [InvocationLog(
            request_id=r["requestId"],
            invoked_at=datetime.fromtimestamp(float(r["invokedAt"]), tz=timezone.utc),
            invocation_type=r["invocationType"], status=r["status"], error_type=r["errorType"],
            duration_ms=r["durationMs"], log=r["log"] or "",
            instance_id=r.get("instanceId") or "", cold_start=bool(r.get("coldStart")))
            for r in data["invocations"]]


class LogsUnavailable:
    """A target whose logs this tool cannot read (Alibaba Cloud: they live in SLS)."""

    def __init__(self, region: str) -> None:
        self._region = region

    def recent(self, function: str, limit: int) -> list[InvocationLog]:
        raise NotFoundError(
            f"logs of {function} on Alibaba Cloud live in Log Service (SLS), which this tool "
            "does not read",
            hint=f"open the function's Logs tab in the Function Compute console ({self._region})"
            f", or query its logstore with `aliyun sls GetLogs`; `deploy invoke {function}` "
            "prints the log tail of one invocation",
        )
