"""Retries with exponential back-off and jitter for retryable cloud errors (tenacity).

Only :class:`~deployer.cloud.errors.CloudError` with ``retryable`` set (throttling, 5xx,
connection failures) is retried. ``sleep`` is injected so tests never wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from deployer.cloud.errors import CloudError

T = TypeVar("T")


def _is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, CloudError) and exc.retryable


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry a retryable call."""

    max_attempts: int = 5
    initial_delay: float = 0.5
    max_delay: float = 8.0
    sleep: Callable[[float], None] = field(default=time.sleep)

    def call(self, fn: Callable[[], T]) -> T:
        """Call ``fn``; retry retryable CloudErrors; re-raise the last error when out of tries."""
        retrying = Retrying(
            retry=retry_if_exception(_is_retryable),
            stop=stop_after_attempt(self.max_attempts),
            wait=wait_random_exponential(multiplier=self.initial_delay, max=self.max_delay),
            sleep=self.sleep,
            reraise=True,
        )
        return retrying(fn)


NO_RETRY = RetryPolicy(max_attempts=1)
