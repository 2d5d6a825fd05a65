"""The instants one invocation's requests tell its worker, and the cold start on a virtual clock.

On the real clock the worker reads the machine's time and sleeps the cold start itself, so
nothing is sent. On a virtual clock each request carries ``now``: the clock's instant when the
invocation began, ticking in real time; a cold start the worker spent (it reports it) moves
the virtual clock on by as much, so the flow and the handler agree on the time afterwards.
"""

from __future__ import annotations

import time
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.runtime.worker import Exchange

__all__ = ["RequestClock"]


class RequestClock:
    """The instants one invocation's requests tell the worker (virtual clock only: None on
    the real clock), ticking in real time from the clock's now; a cold start the worker spent
    moves the virtual clock on by as much (a real clock has already lived through it)."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._started = time.monotonic()
        self._virtual_start = clock.now() if clock.is_virtual else None
        self._spent = 0.0

    def request(self, kind: str, request_id: str, cold_start: float) -> dict[str, Any]:
        now = None
        if self._virtual_start is not None:
            now = self._virtual_start + self._spent + (time.monotonic() - self._started)
        header: dict[str, Any] = {"kind": kind, "request_id": request_id, "now": now}
        if cold_start > 0:
            header["cold_start"] = cold_start
        return header

    def spent(self, exchange: Exchange) -> None:
        waited = float((exchange.extra or {}).get("cold_start") or 0.0)
        if waited <= 0 or self._virtual_start is None:
            return
        self._spent += waited
        advance_to = getattr(self._clock, "advance_to", None)
        if advance_to is not None:
            advance_to(self._virtual_start + self._spent)
