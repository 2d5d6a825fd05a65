"""Invocation logs of a function: Log Service (SLS) through its official SDK, on any target.

Function Compute writes a function's logs to the SLS logstore its ``logConfig`` names: one
entry per logged line and, with request metrics on, one entry per invocation (status, duration).
:class:`SlsLogs` reads them with GetLogs (``alibabacloud-sls20201230``) and groups them into
:class:`InvocationLog` values; the local emulator serves the same API for its own functions.
A function without ``logConfig`` has no logs in SLS; on the local target the emulator still
keeps them and :class:`EmulatorLogs` reads them over its admin API (the fallback the CLI's
wiring gives only there). Both are a :class:`LogSource`; nothing above asks which.

Following (``poll``) reads what is newer than the previous poll: entries from the last second
seen onwards, minus those already returned (an entry is known by its request id, second,
message and its rank among equal ones), so nothing is shown twice or skipped. A source whose
target streams its logs as they happen (the local emulator: :mod:`deployer.cloud.log_stream`)
also offers ``open_stream``; the others answer None there and are polled.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cached_property
from typing import Any, Protocol

from deployer.cloud.connection import CloudConnection
from deployer.cloud.errors import CloudConnectionError, CloudNotFoundError
from deployer.cloud.fc import FunctionComputeClient, LogConfig
from deployer.cloud.log_stream import TOKEN_HEADER, TOKEN_HINT, LogStream
from deployer.errors import NotFoundError, OperationError

__all__ = ["EmulatorLogs", "FollowState", "InvocationLog", "LogSource", "SlsLogs"]

#: The bare-loopback emulator cannot take the project in the host name (``Host`` is also the
#: URL the SDK connects to); it reads it from this header instead (``emulator/api/sls.py``).
PROJECT_HEADER = "x-deployer-sls-project"
LOOKBACK_SECONDS = 30 * 86400  # SLS keeps logs 30 days by default
AHEAD_SECONDS = 366 * 86400  # an emulator's virtual clock may run ahead of this machine's
PAGE = 100  # GetLogs returns at most 100 entries per call
MAX_PAGES = 50
IN_FLIGHT_MARGIN = 60  # seconds an invocation may outlast its timeout (cold start, delivery)


@dataclass(frozen=True, slots=True)
class InvocationLog:
    """One invocation of a function and what it logged (with ``continued``: more lines of an
    invocation already reported by an earlier poll)."""

    request_id: str
    invoked_at: datetime
    invocation_type: str
    status: str  # Succeeded | Failed | "" (unknown: no request metrics)
    error_type: str | None
    duration_ms: float | None
    log: str
    instance_id: str = ""  # the function instance that served it ("" when unknown)
    cold_start: bool = False
    function: str = ""
    continued: bool = False


@dataclass(frozen=True, slots=True)
class FollowState:
    """Where following stands: the newest second read, and the entries already returned
    within the window before it that is read again (entries of invocations that were still
    running can turn up there; see ``SlsLogs._function``)."""

    since: int
    seen: frozenset[Any] = field(default_factory=frozenset)


class LogSource(Protocol):
    def recent(self, function: str, limit: int) -> list[InvocationLog]:
        """The ``limit`` most recent invocations of ``function``, newest first."""
        ...

    def poll(self, function: str, state: FollowState | None
             ) -> tuple[list[InvocationLog], FollowState]:
        """What ``function`` logged since ``state`` (None: start now, return nothing older),
        oldest first, and the state for the next poll."""
        ...

    def open_stream(self, function: str) -> LogStream | None:
        """What ``function`` logs from now on, pushed by the target as it happens; None when
        the target offers no stream (then :meth:`poll`)."""
        ...


def _when(seconds: float) -> datetime:
    return datetime.fromtimestamp(float(seconds), tz=timezone.utc)


class SlsLogs:
    """A function's logs from the logstore of its ``logConfig``, through GetLogs."""

    SERVICE = "Log Service"

    def __init__(self, connection: CloudConnection, fc: FunctionComputeClient, *,
                 fallback: LogSource | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self._conn, self._fc, self._fallback, self._clock = connection, fc, fallback, clock

    @cached_property
    def _client(self) -> Any:
        from alibabacloud_sls20201230.client import Client

        return Client(self._conn.sdk_config(self._conn.endpoints.sls))

    def _config(self, function: str) -> LogConfig | None:
        return self._function(function)[0]

    def _function(self, function: str) -> tuple[LogConfig | None, int]:
        """The function's logConfig and how far back an entry may still turn up: an entry
        carries the second its invocation began but is written when it ends, so one may
        appear behind newer ones until the function's timeout (plus
        :data:`IN_FLIGHT_MARGIN`) has passed."""
        remote = self._fc.get_function(function)
        if remote is None:
            raise NotFoundError(f"function {function} does not exist",
                                hint="deploy it with `deploy up`; s.yaml names its functions "
                                "under functionName")
        if remote.config.log_config is None and self._fallback is None:
            raise NotFoundError(
                f"function {function} has no logConfig, so Function Compute keeps no logs of "
                "it in Log Service",
                hint="add logConfig: {project: <SLS project>, logstore: <logstore>} to its "
                "props in s.yaml and run `deploy up`; `deploy invoke` prints the log tail of "
                "one invocation")
        return remote.config.log_config, int(remote.config.timeout) + IN_FLIGHT_MARGIN

    def _get_logs(self, config: LogConfig, *, start: int, end: int, query: str, offset: int,
                  reverse: bool) -> list[dict[str, str]]:
        from alibabacloud_sls20201230 import models
        from darabonba.runtime import RuntimeOptions

        headers: dict[str, str] = {}
        if not self._conn.endpoints.sls_virtual_hosts:
            headers = {"host": self._conn.endpoints.sls, PROJECT_HEADER: config.project}
        request = models.GetLogsRequest(from_=start, to=end, query=query, line=PAGE,
                                        offset=offset, reverse=reverse)
        try:
            response = self._conn.call(
                self.SERVICE, "GetLogs", lambda: self._client.get_logs_with_options(
                    config.project, config.logstore, request,
                    models.GetLogsHeaders(common_headers=headers), RuntimeOptions()))
        except CloudNotFoundError as exc:
            exc.hint = (f"logConfig names Log Service project {config.project!r}, logstore "
                        f"{config.logstore!r}; create them (or fix logConfig in s.yaml and run "
                        "`deploy up`)")
            raise
        body = response.body
        return [dict(e) for e in (body.data if body is not None and body.data else [])]

    def _entries(self, function: str, config: LogConfig, *, start: int, reverse: bool,
                 enough: Callable[[list[dict[str, str]]], bool]) -> list[dict[str, str]]:
        """Entries of ``function`` from ``start`` on, page after page until ``enough``."""
        now = int(self._clock())
        found: list[dict[str, str]] = []
        for page in range(MAX_PAGES):
            batch = self._get_logs(config, start=start, end=now + AHEAD_SECONDS,
                                   query=f"functionName: {function}", offset=page * PAGE,
                                   reverse=reverse)
            found += batch
            if len(batch) < PAGE or enough(found):
                break
        return found

    def recent(self, function: str, limit: int) -> list[InvocationLog]:
        config = self._config(function)
        if config is None:
            assert self._fallback is not None
            return self._fallback.recent(function, limit)

        def enough(entries: list[dict[str, str]]) -> bool:
            return len({e.get("requestId") for e in entries}) > limit

        entries = self._entries(function, config, start=int(self._clock()) - LOOKBACK_SECONDS,
                                reverse=True, enough=enough)
        invocations = _group(reversed(entries), function)
        return list(reversed(invocations))[:limit]

    def open_stream(self, function: str) -> LogStream | None:
        """Log Service has no push: None, unless the fallback (the local emulator's own
        records, which hold the same invocations) streams."""
        return self._fallback.open_stream(function) if self._fallback is not None else None

    def poll(self, function: str, state: FollowState | None
             ) -> tuple[list[InvocationLog], FollowState]:
        config, in_flight = self._function(function)
        if config is None:
            assert self._fallback is not None
            return self._fallback.poll(function, state)
        if state is None:  # start after the newest entry; not at the local clock's now: an
            newest = self._entries(  # emulator's virtual clock may run ahead of this machine's
                function, config, start=int(self._clock()) - LOOKBACK_SECONDS, reverse=True,
                enough=lambda found: True)
            since = int(newest[0].get("__time__") or 0) if newest else int(self._clock())
            current = self._entries(function, config, start=since - in_flight, reverse=False,
                                    enough=lambda found: False)
            return [], FollowState(since, frozenset(_keys(current)))
        entries = self._entries(function, config, start=state.since - in_flight,
                                reverse=False, enough=lambda found: False)
        keys = _keys(entries)
        fresh = [e for e, k in zip(entries, keys, strict=True) if k not in state.seen]
        since = max((int(e.get("__time__") or 0) for e in entries), default=state.since)
        seen = frozenset(k for e, k in zip(entries, keys, strict=True)
                         if int(e.get("__time__") or 0) >= since - in_flight)
        earlier = {k[0] for k in state.seen}
        return _group(fresh, function, continued=earlier), FollowState(since, seen)


def _keys(entries: list[dict[str, str]]) -> list[tuple[str, str, str, str, int]]:
    """A stable identity for each entry: request, second, topic, message and rank."""
    counts: Counter[tuple[str, str, str, str]] = Counter()
    keys = []
    for e in entries:
        base = (e.get("requestId", ""), e.get("__time__", ""), e.get("__topic__", ""),
                e.get("message", e.get("operation", "")))
        keys.append((*base, counts[base]))
        counts[base] += 1
    return keys


def _group(entries: Iterable[dict[str, str]], function: str, *,
           continued: set[str] | frozenset[str] = frozenset()) -> list[InvocationLog]:
    """Entries (oldest first) grouped into invocations, in order of their first entry."""
    grouped: dict[str, list[dict[str, str]]] = {}
    for e in entries:
        grouped.setdefault(e.get("requestId", ""), []).append(e)
    out = []
    for request_id, items in grouped.items():
        metrics = next((e for e in items if e.get("operation") == "InvokeFunction"), {})
        lines = [e["message"] for e in items if "message" in e]
        error = metrics.get("errorType") or None
        status = "" if not metrics else "Failed" if metrics.get(
            "hasFunctionError") == "true" else "Succeeded"
        duration = metrics.get("durationMs") or ""
        out.append(InvocationLog(
            request_id=request_id, invoked_at=_when(int(items[0].get("__time__") or 0)),
            invocation_type=metrics.get("invocationType", ""), status=status,
            error_type=error, duration_ms=float(duration) if duration else None,
            log="".join(f"{line}\n" for line in lines), function=function,
            continued=request_id in continued))
    return out


class EmulatorLogs:
    """Reads the local emulator's invocation records over its admin API (loopback only, with
    its admin ``token``): every invocation's log, whether or not the function has a
    ``logConfig``."""

    def __init__(self, endpoint: str, region: str, timeout: float = 10.0, *,
                 token: str = "") -> None:
        self._endpoint, self._region, self._timeout = endpoint, region, timeout
        self._token = token

    def recent(self, function: str, limit: int) -> list[InvocationLog]:
        query = urllib.parse.urlencode({"function": function, "region": self._region,
                                        "limit": limit})
        url = f"http://{self._endpoint}/_emulator/logs?{query}"
        request = urllib.request.Request(url, headers={TOKEN_HEADER: self._token})
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                data = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise OperationError(f"the emulator refused the log query: HTTP {exc.code}",
                                 hint=TOKEN_HINT if exc.code == 403 else None) from None
        except (OSError, ValueError) as exc:
            raise CloudConnectionError(f"cannot read logs from the emulator at {self._endpoint}:"
                                       f" {exc}", service="emulator", operation="logs") from None
        return [_from_record(r, function) for r in data["invocations"]]

    def open_stream(self, function: str) -> LogStream | None:
        """The emulator's log stream of ``function`` (None from a daemon without one)."""
        return LogStream.open(self._endpoint, self._region, function,
                              lambda record: _from_record(record, function), token=self._token)

    def poll(self, function: str, state: FollowState | None
             ) -> tuple[list[InvocationLog], FollowState]:
        latest = self.recent(function, 100)
        ids = frozenset(i.request_id for i in latest)
        if state is None:
            return [], FollowState(0, ids)
        fresh = [i for i in reversed(latest) if i.request_id not in state.seen]
        return fresh, FollowState(0, ids)


def _from_record(r: dict[str, Any], function: str) -> InvocationLog:
    """An emulator invocation record (``/_emulator/logs`` and its stream)."""
    return InvocationLog(
        request_id=r["requestId"], invoked_at=_when(r["invokedAt"]),
        invocation_type=r["invocationType"], status=r["status"], error_type=r["errorType"],
        duration_ms=r["durationMs"], log=r["log"] or "", function=function,
        instance_id=r.get("instanceId") or "", cold_start=bool(r.get("coldStart")))
