"""Running invocations and keeping their records: a synchronous invocation runs on the
caller's thread; an asynchronous one is queued on a bounded worker pool (FC's payload limits
apply to both). Every invocation that reached the runtime leaves an :class:`InvocationRecord`
and wakes the readers following the function (:class:`InvocationWatch`).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for_futures
from contextlib import AbstractContextManager
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.records import InvocationRecord
from deployer.emulator.services.errors import InvalidValue, PayloadTooLarge
from deployer.emulator.services.invocation_watch import InvocationWatch
from deployer.emulator.services.ports import (
    FunctionRuntime,
    HookRun,
    HttpCall,
    InstanceSpec,
    InvocationResult,
    RuntimeUnavailableError,
)
from deployer.emulator.store.repos import InvocationRepo

__all__ = ["ASYNC_PAYLOAD_LIMIT", "SYNC_PAYLOAD_LIMIT", "InvocationRunner"]

log = logging.getLogger("deployer.emulator")

SYNC_PAYLOAD_LIMIT = 32 * 1024 * 1024
ASYNC_PAYLOAD_LIMIT = 128 * 1024
ASYNC_WORKERS = 4
ASYNC_QUEUE = 256


class InvocationRunner:
    """Run resolved functions on the runtime and record each invocation (module docstring)."""

    def __init__(self, runtime: FunctionRuntime, invocations: InvocationRepo,
                 clock: Clock) -> None:
        self._runtime = runtime
        self._invocations = invocations
        self._clock = clock
        self._pool = ThreadPoolExecutor(ASYNC_WORKERS, thread_name_prefix="fc-async")
        self._slots = threading.BoundedSemaphore(ASYNC_QUEUE)
        self._pending: set[Future[Any]] = set()  # async invocations not done
        self.watch = InvocationWatch()  # readers following invocations
        #: admits a request of (account, region, function) while inside; ``wait``: block for
        #: a slot instead of refusing (reserved concurrency, services.function_concurrency)
        self.admission: Callable[..., AbstractContextManager[None]] | None = None

    @staticmethod
    def check_payload(event: bytes, asynchronous: bool) -> None:
        """Raise PayloadTooLarge above 32 MB (sync) or 128 KB (async)."""
        limit = ASYNC_PAYLOAD_LIMIT if asynchronous else SYNC_PAYLOAD_LIMIT
        if len(event) > limit:
            raise PayloadTooLarge(f"payload size exceeds maximum allowed size ({limit} bytes)",
                                  limit=limit)

    def run(self, spec: InstanceSpec, event: bytes, request_id: str,
            tail_logs: bool = False, call: HttpCall | None = None) -> InvocationResult:
        """Run synchronously (blocks); with ``call``, forward that HTTP request to a custom
        runtime's server instead of an event. InvalidValue when the runtime cannot run it."""
        return self._run(spec, event, request_id, "Sync", tail_logs, call)

    def submit(self, spec: InstanceSpec, event: bytes, request_id: str) -> None:
        """Queue an asynchronous invocation; InvalidValue when the queue is full."""
        self.submit_job(lambda: self._run(spec, event, request_id, "Async"))

    def run_async(self, spec: InstanceSpec, event: bytes, request_id: str) -> InvocationResult:
        """One attempt of an asynchronous invocation, on the calling (pool) thread."""
        return self._run(spec, event, request_id, "Async")

    def submit_job(self, job: Callable[[], object]) -> None:
        """Queue ``job`` on the asynchronous pool (counted by :meth:`wait_async`);
        InvalidValue when the queue is full."""
        if not self._slots.acquire(blocking=False):
            raise InvalidValue("too many queued asynchronous invocations", field="body")
        future: Future[Any] = self._pool.submit(job)
        self._pending.add(future)
        future.add_done_callback(self._async_done)

    def _async_done(self, future: Future[Any]) -> None:
        self._pending.discard(future)
        self._slots.release()
        exc = future.exception() if not future.cancelled() else None
        if exc is not None and not isinstance(exc, InvalidValue):
            log.error("asynchronous invocation failed", exc_info=exc)

    def _run(self, spec: InstanceSpec, event: bytes, request_id: str, kind: str,
             tail: bool = False, call: HttpCall | None = None) -> InvocationResult:
        gate = contextlib.nullcontext() if self.admission is None else self.admission(
            spec.account_id, spec.region, spec.function_name, wait=kind != "Sync")
        with gate:
            return self._admitted(spec, event, request_id, kind, tail, call)

    def _admitted(self, spec: InstanceSpec, event: bytes, request_id: str, kind: str,
                  tail: bool, call: HttpCall | None) -> InvocationResult:
        started = self._clock.now()
        try:
            if call is not None:
                result = self._forward(spec, call, request_id, tail)
            else:
                result = self._runtime.invoke(spec, event, request_id=request_id,
                                              tail_logs=tail)
        except RuntimeUnavailableError as exc:
            self._record(InvocationRecord(
                spec.account_id, spec.region, spec.function_name, request_id, started, kind,
                "Failed", "RuntimeUnavailable", None, exc.message))
            raise InvalidValue(f"the emulator cannot run function '{spec.function_name}': "
                               f"{exc.message}", field="runtime") from None
        self._record(InvocationRecord(
            spec.account_id, spec.region, spec.function_name, request_id, started, kind,
            "Failed" if result.error_type else "Succeeded", result.error_type,
            result.duration_ms, result.log_text, result.instance_id, result.cold_start))
        return result

    def _forward(self, spec: InstanceSpec, call: HttpCall, request_id: str,
                 tail: bool) -> InvocationResult:
        forward = getattr(self._runtime, "invoke_http", None)
        if forward is None:
            raise RuntimeUnavailableError("this runtime forwards no HTTP requests")
        result: InvocationResult = forward(spec, call, request_id=request_id, tail_logs=tail)
        return result

    def record_hook(self, run: HookRun) -> None:
        """A lifecycle hook that ran outside any invocation (preStop): its log joins the
        function's logs as a record of type ``PreStop``."""
        self._record(InvocationRecord(
            run.account_id, run.region, run.function_name, run.request_id, run.started_at,
            run.hook, "Succeeded" if run.ok else "Failed", run.error_type, run.duration_ms,
            run.log_text, run.instance_id, False))

    def _record(self, rec: InvocationRecord) -> None:
        self._invocations.record(rec)
        self.watch.changed((rec.account_id, rec.region, rec.function_name))

    def wait_async(self, timeout: float) -> bool:
        """Block up to ``timeout`` real seconds until every asynchronous invocation accepted
        so far has finished; True when they have."""
        return not wait_for_futures(list(self._pending), timeout=timeout).not_done

    def close(self, wait: bool = True) -> None:
        """Stop the async pool (waiting for running invocations when ``wait``)."""
        self._pool.shutdown(wait=wait, cancel_futures=not wait)
