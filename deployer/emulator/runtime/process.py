"""ProcessRuntime: FC function instances as local worker processes.

Pool rules (docs/runtime.md): an instance serves one request at a time and is reused only for
an equal :class:`FunctionSpec`; a function (account, region, name) has at most
``max_instances`` live instances, beyond which callers wait for one to become free; idle
instances are stopped by :meth:`ProcessRuntime.reap_idle` after ``idle_ttl`` seconds of the
injected clock; a timed-out, crashed or failed-initializer instance is discarded.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sys
import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.runtime.codecache import CodeCache
from deployer.emulator.runtime.invocation_results import (
    InvocationLog,
    append_failure,
    failure_body,
    invocation_result,
)
from deployer.emulator.runtime.isolation import Isolation
from deployer.emulator.runtime.launch import (
    credentials_frame,
    sandbox_settings,
    worker_config,
    worker_environment,
)
from deployer.emulator.runtime.model import (
    Credentials,
    FunctionSpec,
    InvocationResult,
    RuntimeUnavailableError,
)
from deployer.emulator.runtime.network import Attach
from deployer.emulator.runtime.packages import PackageViews, runtime_key
from deployer.emulator.runtime.request_clock import RequestClock
from deployer.emulator.runtime.worker import BOOTSTRAP_PATH, Exchange, Outcome, Worker

__all__ = ["DEFAULT_MAX_INSTANCES", "ProcessRuntime", "worker_environment"]

log = logging.getLogger("deployer.emulator")

DEFAULT_MAX_INSTANCES = 10
STARTUP_TIMEOUT_S = 30.0  # real seconds for a new worker to become ready


@dataclass(eq=False, slots=True)
class _Slot:
    """Bookkeeping of one instance (its worker is None while it starts)."""

    spec: FunctionSpec
    instance_id: str
    last_used: float
    worker: Worker | None = None
    busy: bool = True
    retired: bool = False
    initialized: bool = False
    tmp_dir: Path | None = None
    credentials: Credentials | None = None  # the role keys the worker has


class ProcessRuntime:
    """Runs FC Python functions in worker subprocesses. Thread-safe.

    Timeouts are measured in real (monotonic) time, whatever the clock: a virtual clock never
    makes a handler time out early or late. The clock is used for the virtual instant handlers
    see (when ``clock.is_virtual``) and for idle-instance ages (``reap_idle``).
    """

    def __init__(
        self,
        work_dir: Path,
        clock: Clock,
        *,
        idle_ttl: float = 600.0,
        python: str = sys.executable,
        max_instances: int = DEFAULT_MAX_INSTANCES,
        private_dirs: Sequence[Path] = (),
        sandbox: bool = True,
        cold_start: float = 0.0,
    ) -> None:
        """``private_dirs``: directories handler code must not reach (the emulator's state);
        ``work_dir`` always is. ``sandbox=False`` runs workers without Landlock, private /tmp
        and uid separation (resource limits and memory accounting stay). ``cold_start``:
        seconds a new instance spends between importing its module and its first call
        (docs/runtime.md "Latency model"; settable later through the attribute)."""
        self._code = CodeCache(Path(work_dir))
        self._isolation = Isolation(
            Path(work_dir), private_dirs, separate_uids=None if sandbox else False,
            needed=[Path(python), Path(json.__file__), BOOTSTRAP_PATH])
        self._packages = PackageViews(Path(work_dir))
        self._sandbox = sandbox
        self._sandbox_noted = False
        self._clock = clock
        self._idle_ttl = idle_ttl
        self._python = python
        self._max_instances = max_instances
        self.cold_start = max(0.0, float(cold_start))
        self._cond = threading.Condition()
        self._slots: dict[tuple[str, str, str], list[_Slot]] = {}
        self._closed = False

    # -- public API

    def invoke(
        self, spec: FunctionSpec, event: bytes, *, request_id: str, tail_logs: bool
    ) -> InvocationResult:
        """Run ``spec``'s handler on ``event`` and block until it finished, failed or timed out.

        Function errors are results (``error_type`` set), never exceptions. Raises
        :class:`RuntimeUnavailableError` when the function cannot run at all (runtime closed,
        non-Python runtime, unreadable code zip).
        """
        if not spec.runtime.startswith("python3"):
            raise RuntimeUnavailableError(
                f"runtime '{spec.runtime}' of function '{spec.function_name}' is not supported "
                "by the local runtime (python3.x only)"
            )
        slot, cold = self._acquire(spec)
        discard = True
        try:
            if slot.worker is None:  # the code is unpacked (or checked) for new instances only
                code_root = self._code.ensure(spec.code_checksum, spec.code_zip)
                slot.worker = self._spawn(slot, spec, code_root)
                ready = slot.worker.start(STARTUP_TIMEOUT_S)
                if ready.outcome is not Outcome.OK:
                    return self._failed_start(slot, spec, request_id, ready, tail_logs)
                self._note_sandbox(ready)
            result, discard = self._run(slot, spec, event, request_id, cold)
            return result if tail_logs else dataclasses.replace(result, log_tail=b"")
        finally:
            self._release(slot, discard)

    def attach_gateway(self, port: int, attach: Attach) -> None:
        """New instances reach the emulator's cloud APIs only, at ``127.0.0.1:port`` of their
        own network namespace (docs/runtime.md "Network"); ``attach`` serves a listener."""
        self._isolation.networks.attach_gateway(port, attach)

    def _note_sandbox(self, ready: Exchange) -> None:
        """Log once what the host could not provide (docs/runtime.md "Sandbox")."""
        missing = (ready.extra or {}).get("sandbox") or []
        if missing and not self._sandbox_noted:
            self._sandbox_noted = True
            log.warning("function sandbox incomplete on this host: %s", "; ".join(missing))

    def retire(self, account_id: str, region: str, function_name: str,
               qualifier: str | None = None) -> None:
        """Old instances of the function (of every version, or only those reached through
        ``qualifier``) get no new requests; idle ones stop now, busy ones when their current
        request ends."""
        with self._cond:
            slots = self._slots.get((account_id, region, function_name), [])
            chosen = [s for s in slots if qualifier is None or s.spec.qualifier == qualifier]
            idle = [slot for slot in chosen if not slot.busy]
            for slot in chosen:
                slot.retired = True
            for slot in idle:
                slots.remove(slot)
            self._cond.notify_all()
        _stop_all(idle)

    def reap_idle(self) -> int:
        """Stop instances idle for more than ``idle_ttl`` seconds of the clock; return how many."""
        now = self._clock.now()
        with self._cond:
            expired = [
                slot
                for slots in self._slots.values()
                for slot in slots
                if not slot.busy and now - slot.last_used > self._idle_ttl
            ]
            for slot in expired:
                self._slots[slot.spec.function_key].remove(slot)
            self._cond.notify_all()
        _stop_all(expired)
        return len(expired)

    def close(self) -> None:
        """Stop every instance; busy ones are killed (their callers get a crash result)."""
        with self._cond:
            self._closed = True
            everything = [slot for slots in self._slots.values() for slot in slots]
            idle = [slot for slot in everything if not slot.busy]
            for slot in everything:
                slot.retired = True
            for slot in idle:
                self._slots[slot.spec.function_key].remove(slot)
            self._cond.notify_all()
        for slot in everything:
            if slot.busy and slot.worker is not None:
                slot.worker.kill()
        _stop_all(idle)
        self._isolation.close()

    def instance_count(self, account_id: str, region: str, function_name: str) -> int:
        """Live instances of a function (busy, idle or starting)."""
        with self._cond:
            return len(self._slots.get((account_id, region, function_name), []))

    def instance_pids(self) -> list[int]:
        """Process ids of all live workers (for diagnostics and tests)."""
        with self._cond:
            return [
                slot.worker.pid
                for slots in self._slots.values()
                for slot in slots
                if slot.worker is not None
            ]

    # -- pool

    def _acquire(self, spec: FunctionSpec) -> tuple[_Slot, bool]:
        """A free warm instance of ``spec`` (cold=False) or a new slot to start (cold=True)."""
        to_stop: list[_Slot] = []
        with self._cond:
            while True:
                if self._closed:
                    raise RuntimeUnavailableError("the function runtime has been closed")
                slots = self._slots.setdefault(spec.function_key, [])
                warm = [s for s in slots if not s.busy and not s.retired and s.spec == spec]
                if warm:
                    slot = max(warm, key=lambda s: s.last_used)
                    slot.busy = True
                    break
                stale = [s for s in slots if not s.busy and (s.retired or (
                    s.spec.instance_key == spec.instance_key and s.spec != spec))]
                for old in stale:
                    slots.remove(old)
                to_stop.extend(stale)
                if len(slots) < self._max_instances:
                    slot = _Slot(spec, _new_instance_id(), self._clock.now())
                    slots.append(slot)
                    break
                self._cond.wait()
        _stop_all(to_stop)
        return slot, slot.worker is None

    def _release(self, slot: _Slot, discard: bool) -> None:
        stop = None
        with self._cond:
            slot.busy = False
            slot.last_used = self._clock.now()
            if discard or slot.retired or slot.worker is None:
                slots = self._slots.get(slot.spec.function_key, [])
                if slot in slots:
                    slots.remove(slot)
                stop = slot
            self._cond.notify_all()
        if stop is not None:
            _stop_all([stop])

    def _spawn(self, slot: _Slot, spec: FunctionSpec, code_root: Path) -> Worker:
        """Start the worker of a new instance (its own uid, /tmp, memory accounting, sandbox)."""
        iso = self._isolation
        uid = iso.new_uid() if self._sandbox else None
        slot.tmp_dir = iso.instance_dir(slot.instance_id, uid)
        view, sources = self._packages.view(runtime_key(spec.runtime))
        emulator_view, emulator_sources = self._packages.view("emulator")
        sandbox = sandbox_settings(
            spec, tmp_dir=slot.tmp_dir, code_root=code_root,
            readable=iso.readable() if self._sandbox else [],
            package_sources=[str(view), str(emulator_view), *sources, *emulator_sources],
            landlock=self._sandbox, private_tmp=self._sandbox, separate_uid=uid is not None,
            interpreter=self._python,
            network=iso.networks.settings(spec.internet_access) if self._sandbox else None)
        slot.credentials = spec.credentials() if spec.credentials is not None else None
        config = worker_config(spec, packages=[str(view)], emulator_packages=[str(emulator_view)],
                               sandbox=sandbox, virtual_time=self._clock.is_virtual,
                               credentials=slot.credentials)
        env = worker_environment(spec, code_root, slot.instance_id)
        monitor = iso.memory_monitor(slot.instance_id, spec.memory_size)
        try:
            return Worker(python=self._python, code_root=code_root, env=env, config=config,
                          monitor=monitor, uid=uid)
        except OSError as exc:
            monitor.close()
            message = f"cannot start a worker with {self._python}: {exc}"
            raise RuntimeUnavailableError(message) from exc

    # -- one request

    def _failed_start(
        self, slot: _Slot, spec: FunctionSpec, request_id: str, ready: Exchange, tail: bool
    ) -> InvocationResult:
        """A worker that died or hung before it was ready: a crash of this invocation."""
        log = InvocationLog(bytearray(ready.log))
        crash = dataclasses.replace(ready, outcome=Outcome.CRASHED)
        append_failure(log, crash, "Invoke", request_id, spec.timeout, "")
        body = failure_body(crash, spec.timeout, "")
        at = (slot.instance_id, spec, request_id)
        result = invocation_result(*at, body, log, crash, True, False)
        return result if tail else dataclasses.replace(result, log_tail=b"")

    def _run(
        self, slot: _Slot, spec: FunctionSpec, event: bytes, request_id: str, cold: bool
    ) -> tuple[InvocationResult, bool]:
        """Initialize if needed, then invoke. Returns the result and whether to discard.

        The first request of a new instance carries the cold start (docs/runtime.md "Latency
        model"); it does not count against the function's timeout."""
        assert slot.worker is not None
        log = InvocationLog()
        at = (slot.instance_id, spec, request_id)  # what every result of this call names
        clock = RequestClock(self._clock)
        cold_start = self.cold_start if cold else 0.0
        if spec.initializer_handler and not slot.initialized:
            timeout = spec.initializer_timeout or spec.timeout
            header = clock.request("initialize", request_id, cold_start)
            init = slot.worker.exchange(header, b"", timeout + cold_start)
            clock.spent(init)
            cold_start = 0.0
            log.data += init.log
            if init.outcome is not Outcome.OK:
                append_failure(log, init, "Initialize", request_id, timeout, "initialization ")
                body = failure_body(init, timeout, "initialization ")
                return invocation_result(*at, body, log, init, cold, True), True
            slot.initialized = True
            log.tail_from = len(log.data)
        header = clock.request("invoke", request_id, cold_start)
        self._renew_credentials(slot, spec, header)
        answer = slot.worker.exchange(header, event, spec.timeout + cold_start)
        clock.spent(answer)
        log.data += answer.log
        if answer.outcome in (Outcome.TIMEOUT, Outcome.CRASHED, Outcome.OUT_OF_MEMORY):
            append_failure(log, answer, "Invoke", request_id, spec.timeout, "")
            body = failure_body(answer, spec.timeout, "")
            return invocation_result(*at, body, log, answer, cold, False), True
        return invocation_result(*at, answer.body, log, answer, cold, False), False

    @staticmethod
    def _renew_credentials(slot: _Slot, spec: FunctionSpec, header: dict[str, Any]) -> None:
        """Hand the worker the role's current keys when they changed (renewed before expiry)."""
        if spec.credentials is None:
            return
        current = spec.credentials()
        if current is not None and current != slot.credentials:
            header["credentials"] = credentials_frame(current)
            slot.credentials = current


def _stop_all(slots: list[_Slot]) -> None:
    for slot in slots:
        if slot.worker is not None:
            slot.worker.stop()
        if slot.tmp_dir is not None:
            Isolation.remove_instance_dir(slot.tmp_dir)
            slot.tmp_dir = None


def _new_instance_id() -> str:
    """FC's instance id shape: ``c-`` + 8 + 8 + 12 hex digits."""
    digits = uuid.uuid4().hex
    return f"c-{digits[:8]}-{digits[8:16]}-{digits[16:28]}"
