"""The caller of ``reap_idle``: idle function instances stop after their idle time, and their
memory goes back to the machine.

A thread reaps every ``interval`` real seconds; when the clock is moved on purpose (a virtual
clock's ``advance``), :meth:`IdleReaper.clock_moved` reaps at once. Either way an instance past its
idle time is never handed out again (the pool checks ages when it picks one), so when a reap
happens decides only when the memory is returned, not which requests are cold.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

__all__ = ["REAP_INTERVAL_S", "IdleReaper"]

log = logging.getLogger("deployer.emulator")

REAP_INTERVAL_S = 5.0


class IdleReaper:
    """Calls ``reap`` periodically on its own thread (``start``/``stop`` follow the server)."""

    def __init__(self, reap: Callable[[], int], interval: float = REAP_INTERVAL_S) -> None:
        self._reap = reap
        self._interval = interval
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True, name="fc-reaper")
            self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30.0)
            self._thread = None

    def clock_moved(self, *, wait: bool) -> None:
        """The clock jumped: reap now, in the caller's thread when ``wait`` (the instances past
        their idle time are stopped, preStop hooks run, when this returns), else soon."""
        if wait:
            self._pass()
        else:
            self._wake.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(self._interval)
            self._wake.clear()
            if not self._stopping.is_set():
                self._pass()

    def _pass(self) -> None:
        try:
            stopped = self._reap()
        except Exception:  # a failed pass must not end the reaper
            log.exception("reaping idle function instances failed")
            return
        if stopped:
            log.info("stopped %d idle function instance(s)", stopped)
