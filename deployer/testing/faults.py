"""``LocalCloud.faults``: inject faults into a local cloud from Python tests.

A thin client of the emulator's admin endpoint ``/_emulator/faults`` (docs/emulator.md, "Fault
injection"), so what a test injects is exactly what ``deploy emulator faults`` and any HTTP
client can inject::

    with mock_cloud() as cloud:
        with cloud.faults.inject("fc", action="InvokeFunction", function="GetJobStatus",
                                 error="ResourceThrottled", times=2) as fault:
            ...                         # the next two invocations get 503 ResourceThrottled
        assert fault.fired == 2         # (read before the block ends; the fault is removed)

A bad fault raises :class:`FaultError` with the emulator's message. Faults live until removed,
cleared or :meth:`~deployer.testing.LocalCloud.reset`.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from deployer.emulator.api.local_guard import EMULATOR_TOKEN_HEADER

__all__ = ["FaultError", "InjectedFault", "LocalFaults"]



class FaultError(ValueError):
    """The emulator refused a fault request (``status`` and ``code`` of its answer)."""

    def __init__(self, message: str, *, status: int, code: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class InjectedFault:
    """A registered fault; :attr:`data` is what the admin API says about it (refreshed by
    :meth:`refresh` and the counters)."""

    def __init__(self, faults: LocalFaults, data: dict[str, Any]) -> None:
        self._faults = faults
        self.data = data
        self.id: str = str(data["id"])

    def refresh(self) -> dict[str, Any]:
        self.data = self._faults.get(self.id)
        return self.data

    @property
    def fired(self) -> int:
        """How many calls it failed or slowed so far."""
        return int(self.refresh()["fired"])

    @property
    def matched(self) -> int:
        """How many calls it matched (fired or not: ``probability``)."""
        return int(self.refresh()["matched"])

    def remove(self) -> None:
        self._faults.remove(self.id)

    def __repr__(self) -> str:
        return f"InjectedFault({self.data!r})"


class LocalFaults:
    """Fault injection of one local cloud (``url`` and its admin ``token``)."""

    def __init__(self, url: str, token: str) -> None:
        self._url = url.rstrip("/") + "/_emulator/faults"
        self._token = token

    def add(self, service: str, *, action: str | None = None, function: str | None = None,
            flow: str | None = None, error: str | None = None, status: int | None = None,
            message: str | None = None, retry_after_ms: int | None = None,
            function_error: bool | str | None = None, error_type: str | None = None,
            timeout: bool = False, latency: float | None = None, times: int | None = None,
            probability: float | None = None, seed: int | None = None) -> InjectedFault:
        """Make matching calls fail or slow down; see docs/emulator.md for every field.

        Exactly one effect: ``error`` (a cloud error code such as ``Throttling``,
        ``ResourceThrottled``, ``ResourceExhausted``, ``InternalServerError``; other codes need
        ``status``), ``function_error`` (True or the message), ``timeout=True`` (both for FC
        invocations) or ``latency`` (real seconds). ``times`` limits it to the next N matching
        calls, ``probability`` fires it at random (``seed`` makes that repeatable)."""
        fields = {"service": service, "action": action, "function": function, "flow": flow,
                  "error": error, "status": status, "message": message,
                  "retry_after_ms": retry_after_ms, "function_error": function_error,
                  "error_type": error_type, "timeout": timeout or None, "latency": latency,
                  "times": times, "probability": probability, "seed": seed}
        answer = self._request("POST", "", {k: v for k, v in fields.items() if v is not None})
        return InjectedFault(self, answer["fault"])

    @contextmanager
    def inject(self, service: str, **fields: Any) -> Iterator[InjectedFault]:
        """:meth:`add` for the duration of a ``with`` block (removed at its end)."""
        fault = self.add(service, **fields)
        try:
            yield fault
        finally:
            try:
                self.remove(fault.id)
            except FaultError as exc:
                if exc.status != 404:  # cleared or reset inside the block: already gone
                    raise

    def list(self) -> list[dict[str, Any]]:
        faults: list[dict[str, Any]] = self._request("GET", "")["faults"]
        return faults

    def get(self, fault_id: str) -> dict[str, Any]:
        fault: dict[str, Any] = self._request("GET", f"/{fault_id}")["fault"]
        return fault

    def remove(self, fault_id: str) -> None:
        self._request("DELETE", f"/{fault_id}")

    def clear(self) -> int:
        """Remove every fault; how many there were."""
        return int(self._request("DELETE", "")["cleared"])

    @property
    def throttle(self) -> str:
        """``"cloud"`` when the cloud's documented API quotas apply, else ``"off"``."""
        return str(self._request("GET", "/throttle")["throttle"])

    @throttle.setter
    def throttle(self, mode: str) -> None:
        self._request("PUT", "/throttle", {"mode": mode})

    def _request(self, method: str, path: str,
                 payload: dict[str, Any] | None = None) -> dict[str, Any]:
        headers = {"Content-Type": "application/json", EMULATOR_TOKEN_HEADER: self._token}
        data = json.dumps(payload).encode() if payload is not None else b""
        req = urllib.request.Request(self._url + path, data=data or None, method=method,
                                     headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                answer: dict[str, Any] = json.loads(resp.read())
                return answer
        except urllib.error.HTTPError as exc:
            try:
                body = json.loads(exc.read())
            except ValueError:
                body = {}
            raise FaultError(str(body.get("Message") or exc.reason), status=exc.code,
                             code=str(body.get("Code") or "")) from None
