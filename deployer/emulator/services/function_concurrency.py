"""Reserved concurrency of a function (Get/Put/Delete/ListConcurrencyConfig) and its
enforcement (no HTTP).

FC (docs "Configure instance concurrency limits"; fc3-api.md §9): ``reservedConcurrency``
caps how many requests of the function run at once; ``0`` stops every invocation. A
synchronous request beyond it is throttled with ``429 ResourceExhausted`` [INFERRED: the
reference lists that code for concurrency limits]; an asynchronous one waits for a slot, as
FC queues asynchronous requests. Without a configuration nothing is capped here (the
account-wide instance quota is :mod:`.quotas`, ``--throttle cloud``).
"""

from __future__ import annotations

import builtins
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from deployer.emulator.clock import Clock
from deployer.emulator.services.errors import (
    InvalidValue,
    Quota,
    QuotaExceeded,
    Resource,
    ResourceNotFound,
)
from deployer.emulator.store.function_config_repos import FunctionConfigRepo

__all__ = ["MAX_RESERVED", "ConcurrencyConfig", "ConcurrencyLimits"]

MAX_RESERVED = 300  # FC's default per-region instance quota (INFERRED as the upper bound)
_KIND = "concurrency"


@dataclass(frozen=True, slots=True)
class ConcurrencyConfig:
    function_name: str
    function_arn: str
    reserved_concurrency: int
    modified_at: float


class ConcurrencyLimits:
    """Reserved concurrency per function, and the count of its requests running now."""

    def __init__(self, repo: FunctionConfigRepo, clock: Clock) -> None:
        self._repo = repo
        self._clock = clock
        self._running: dict[tuple[str, str, str], int] = {}
        self._cond = threading.Condition()

    def put(self, account_id: str, region: str, function: str,
            reserved: int) -> ConcurrencyConfig:
        if isinstance(reserved, bool) or not isinstance(reserved, int) or not \
                0 <= reserved <= MAX_RESERVED:
            raise InvalidValue(f"reservedConcurrency must be an integer between 0 and "
                               f"{MAX_RESERVED}, got {reserved!r}",
                               field="reservedConcurrency")
        now = self._clock.now()
        self._repo.put((account_id, region, function, _KIND, ""),
                       {"reservedConcurrency": reserved}, now)
        with self._cond:
            self._cond.notify_all()
        return self._config(account_id, region, function, reserved, now)

    def get(self, account_id: str, region: str, function: str) -> ConcurrencyConfig:
        found = self._repo.get((account_id, region, function, _KIND, ""))
        if found is None:
            raise ResourceNotFound(f"function '{function}' has no concurrency config",
                                   Resource.CONCURRENCY_CONFIG, name=function)
        return self._config(account_id, region, function,
                            int(found[0]["reservedConcurrency"]), found[1])

    def delete(self, account_id: str, region: str, function: str) -> None:
        self._repo.delete((account_id, region, function, _KIND, ""))
        with self._cond:
            self._cond.notify_all()

    def list(self, account_id: str, region: str, *, function: str = "", next_token: str = "",
             limit: int = 20) -> tuple[builtins.list[ConcurrencyConfig], str]:
        rows = self._repo.list(account_id, region, _KIND, function_name=function,
                               start=next_token, limit=limit + 1)
        configs = [self._config(account_id, region, name, int(doc["reservedConcurrency"]),
                                at) for name, _q, doc, at in rows[:limit]]
        return configs, rows[limit][0] if len(rows) > limit else ""

    def forget_function(self, account_id: str, region: str, function: str) -> None:
        self._repo.delete((account_id, region, function, _KIND, ""))

    @staticmethod
    def _config(account_id: str, region: str, function: str, reserved: int,
                at: float) -> ConcurrencyConfig:
        return ConcurrencyConfig(function, f"acs:fc:{region}:{account_id}:functions/{function}",
                                 reserved, at)

    def _limit(self, key: tuple[str, str, str]) -> int | None:
        found = self._repo.get((*key, _KIND, ""))
        return None if found is None else int(found[0]["reservedConcurrency"])

    @contextlib.contextmanager
    def admitted(self, account_id: str, region: str, function: str, *,
                 wait: bool) -> Iterator[None]:
        """Hold one of the function's slots while inside: a synchronous caller (``wait``
        false) beyond the reserved concurrency gets QuotaExceeded; an asynchronous one waits
        for a slot (real time)."""
        key = (account_id, region, function)
        with self._cond:
            while True:
                limit = self._limit(key)
                if limit is None or self._running.get(key, 0) < limit:
                    break
                if not wait:
                    raise QuotaExceeded(
                        f"function '{function}' is throttled: its reserved concurrency is "
                        f"{limit} and {self._running.get(key, 0)} requests are running",
                        Quota.RESERVED_CONCURRENCY, retry_after=None)
                self._cond.wait(1.0)
            self._running[key] = self._running.get(key, 0) + 1
        try:
            yield
        finally:
            with self._cond:
                self._running[key] -= 1
                if not self._running[key]:
                    del self._running[key]
                self._cond.notify_all()
