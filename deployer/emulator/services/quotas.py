"""The cloud's documented API quotas, applied when the emulator runs with ``--throttle cloud``.

* CloudFlow (the product's Limits page, "API rate limits": "each operation has a token
  bucket"): one bucket per operation and account, in real seconds: StartExecution 100 tokens
  refilled at 100/s; DescribeExecution and GetExecutionHistory 50 at 5/s; every other
  operation 10 at 2/s (each its own bucket). A call that finds its bucket
  empty is refused (the API layer answers CloudFlow's throttling error). Buckets are kept per
  (account, region): CloudFlow is a regional service (INFERRED: the page says "per account").
* Function Compute 3.0: 100 instances per account and region by default (the "maximum number
  of instances" page; some pages say 300), and a built-in runtime instance serves one request
  at a time, so at most 100 synchronous invocations run at once; one more is refused with
  ``ResourceExhausted`` (INFERRED: which of FC's two capacity codes it is).

RAM and STS document no per-operation quotas here and are never throttled. The limits are off
unless the mode is ``cloud``; they count real (monotonic) time whatever the emulator's clock,
as clients poll in real time.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from deployer.emulator.services.errors import InvalidValue, Quota, QuotaExceeded

__all__ = ["CLOUDFLOW_RATES", "FC_INSTANCE_LIMIT", "THROTTLE_MODES", "CloudQuotas", "Rate"]

THROTTLE_MODES = ("off", "cloud")


@dataclass(frozen=True, slots=True)
class Rate:
    """A token bucket: ``burst`` tokens at most, ``per_second`` added each second."""

    burst: float
    per_second: float


CLOUDFLOW_RATES = {"StartExecution": Rate(100, 100), "DescribeExecution": Rate(50, 5),
                   "GetExecutionHistory": Rate(50, 5)}
CLOUDFLOW_OTHER = Rate(10, 2)
FC_INSTANCE_LIMIT = 100


class CloudQuotas:
    """The quotas above, switched by :attr:`mode`; thread-safe."""

    def __init__(self, mode: str = "off", monotonic: Callable[[], float] = time.monotonic,
                 fc_instances: int = FC_INSTANCE_LIMIT) -> None:
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._buckets: dict[tuple[str, str, str], tuple[float, float]] = {}
        self._running: dict[tuple[str, str], int] = {}
        self.fc_instances = fc_instances
        if mode not in THROTTLE_MODES:
            raise ValueError(f"throttle mode must be one of {', '.join(THROTTLE_MODES)}; got "
                             f"{mode!r}")
        self.mode = mode

    def set_mode(self, mode: str) -> None:
        """``cloud`` applies the quotas, ``off`` none (buckets start full again)."""
        if mode not in THROTTLE_MODES:
            raise InvalidValue(f"throttle mode must be one of {', '.join(THROTTLE_MODES)}; got "
                               f"{mode!r}", field="mode")
        with self._lock:
            self.mode = mode
            self._buckets.clear()

    @property
    def enabled(self) -> bool:
        return self.mode == "cloud"

    def admit(self, account_id: str, region: str, service: str, action: str) -> None:
        """Take a token for one API call, or raise :class:`QuotaExceeded` (``Throttling``)."""
        if not self.enabled or service != "cloudflow":
            return
        rate = CLOUDFLOW_RATES.get(action, CLOUDFLOW_OTHER)
        key = (account_id, region, action)
        now = self._monotonic()
        with self._lock:
            tokens, since = self._buckets.get(key, (rate.burst, now))
            tokens = min(rate.burst, tokens + (now - since) * rate.per_second)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                return
            self._buckets[key] = (tokens, now)
        wait = (1.0 - tokens) / rate.per_second
        raise QuotaExceeded(
            f"Request was denied due to request throttling: {action} is limited to "
            f"{rate.per_second:g} calls per second (bursts of {rate.burst:g}) per account "
            "(the emulator runs with --throttle cloud)", Quota.API_RATE, retry_after=wait)

    @contextlib.contextmanager
    def instance(self, account_id: str, region: str) -> Iterator[None]:
        """Hold one FC instance for a synchronous invocation, or raise
        :class:`QuotaExceeded` (``ResourceExhausted``) when all are busy."""
        if not self.enabled:
            yield
            return
        key = (account_id, region)
        with self._lock:
            running = self._running.get(key, 0)
            if running >= self.fc_instances:
                raise QuotaExceeded(
                    f"the number of running instances reached the limit of "
                    f"{self.fc_instances} for this account in {region} (the emulator runs "
                    "with --throttle cloud)", Quota.INSTANCES, retry_after=None)
            self._running[key] = running + 1
        try:
            yield
        finally:
            with self._lock:
                self._running[key] -= 1
