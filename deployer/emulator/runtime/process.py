"""ProcessRuntime: FC function instances as local worker processes.

Every instance is a worker process started by ``bootstrap.py`` in the sandbox, whatever its
runtime: the worker stays a Python runtime, becomes ``node`` (Node.js) or supervises the
function's own HTTP server (custom runtimes) — ``families.py``. Which instance serves a request
and which ones stop is the pool's business (``pool.py``); the requests themselves are frames
(``frame_runs.py``) or HTTP (``custom_runs.py``). An instance that stops after serving runs its
preStop hook first; hooks that run outside an invocation are reported to ``hook_sink``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import secrets
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_all
from pathlib import Path

from deployer.emulator.clock import Clock
from deployer.emulator.runtime.ahead import initialize_ahead
from deployer.emulator.runtime.codecache import CodeCache
from deployer.emulator.runtime.custom_runs import CustomRequest, invoke_custom, pre_stop_custom
from deployer.emulator.runtime.families import Family, NodeBinary, family_of
from deployer.emulator.runtime.frame_runs import invoke_frames, pre_stop_frames
from deployer.emulator.runtime.invocation_results import (
    LogBuffer,
    append_failure,
    failure_body,
    invocation_result,
)
from deployer.emulator.runtime.isolation import Isolation
from deployer.emulator.runtime.launch import (
    mount_sources,
    sandbox_settings,
    worker_config,
    worker_environment,
)
from deployer.emulator.runtime.layers import LayerTrees
from deployer.emulator.runtime.model import (
    HookRun,
    HttpCall,
    InstanceSpec,
    InvocationResult,
    RuntimeNotEmulated,
    RuntimeUnavailableError,
)
from deployer.emulator.runtime.network import Attach
from deployer.emulator.runtime.packages import PackageViews, runtime_key
from deployer.emulator.runtime.pool import Instance, InstancePool
from deployer.emulator.runtime.worker import BOOTSTRAP_PATH, Exchange, RunOutcome, Worker

__all__ = ["DEFAULT_IDLE_TTL", "DEFAULT_MAX_INSTANCES", "ProcessRuntime", "worker_environment"]

log = logging.getLogger("deployer.emulator")

DEFAULT_MAX_INSTANCES = 10
DEFAULT_IDLE_TTL = 300.0  # FC: idle on-demand instances go "usually after 3 to 5 minutes"
STARTUP_TIMEOUT_S = 30.0  # real seconds for a new worker to become ready
STOPPERS = 4  # threads that stop instances (preStop hooks run there)


class ProcessRuntime:
    """Runs FC functions (Python, Node.js, custom runtimes) in worker subprocesses. Thread-safe.

    Timeouts are measured in real (monotonic) time, whatever the clock: a virtual clock never
    makes a handler time out early or late. The clock is used for the virtual instant handlers
    see (when ``clock.is_virtual``) and for idle-instance ages (``reap_idle``).
    """

    def __init__(
        self,
        work_dir: Path,
        clock: Clock,
        *,
        idle_ttl: float = DEFAULT_IDLE_TTL,
        python: str = sys.executable,
        node: str | None = None,
        max_instances: int = DEFAULT_MAX_INSTANCES,
        private_dirs: Sequence[Path] = (),
        sandbox: bool = True,
        cold_start: float = 0.0,
    ) -> None:
        """``private_dirs``: directories handler code must not reach (the emulator's state);
        ``work_dir`` always is. ``sandbox=False`` runs workers without Landlock, private /tmp
        and uid separation (resource limits and memory accounting stay). ``cold_start``:
        seconds a new instance spends between importing its module and its first call
        (docs/runtime.md "Latency model"; settable later through the attribute). ``idle_ttl``:
        seconds an idle instance lives unless its function sets ``idleTimeout``. ``node``: the
        Node.js executable (default: ``node`` on PATH)."""
        self._code = CodeCache(Path(work_dir))
        self._layers = LayerTrees(self._code, self._code.root)
        self._isolation = Isolation(
            Path(work_dir), private_dirs, separate_uids=None if sandbox else False,
            needed=[Path(python), Path(json.__file__), BOOTSTRAP_PATH])
        self._packages = PackageViews(Path(work_dir))
        self._sandbox = sandbox
        self._sandbox_noted = False
        self._clock = clock
        self._idle_ttl = idle_ttl
        self._python = python
        self._node = NodeBinary(node)
        self.cold_start = max(0.0, float(cold_start))
        #: where NAS and OSS mount points live (``nas/...``, ``oss/...``): the state directory
        self.mounts_root = Path(work_dir).parent
        self._pool = InstancePool(max_instances, self._ttl)
        self._stoppers = ThreadPoolExecutor(STOPPERS, thread_name_prefix="fc-stop")
        self._stopping: set[Future[None]] = set()  # stops running in the background
        self._stopping_lock = threading.Lock()
        self._provisioning = threading.Lock()  # one keep_warm at a time
        self.hook_sink: Callable[[HookRun], None] | None = None
        """Told about every hook that ran outside an invocation (preStop), for the logs."""

    def _ttl(self, spec: InstanceSpec) -> float:
        return float(spec.idle_timeout) if spec.idle_timeout else self._idle_ttl

    # -- public API

    def invoke(
        self, spec: InstanceSpec, event: bytes, *, request_id: str, tail_logs: bool
    ) -> InvocationResult:
        """Run ``spec``'s handler on ``event`` and block until it finished, failed or timed out.

        Function errors are results (``error_type`` set), never exceptions. Raises
        :class:`RuntimeUnavailableError` when the function cannot run at all (runtime closed,
        a runtime the emulator does not run — :class:`RuntimeNotEmulated` — or unreadable code).
        """
        return self._serve(spec, event, None, request_id, tail_logs)

    def invoke_http(self, spec: InstanceSpec, call: HttpCall, *, request_id: str,
                    tail_logs: bool = False) -> InvocationResult:
        """Forward an HTTP request to a custom runtime's server (an HTTP function) and return
        its answer: ``http_status``, ``http_headers`` and the body in ``payload``. A built-in
        runtime's HTTP trigger invokes its event handler instead (:meth:`invoke` with the
        trigger's event): RuntimeNotEmulated names the function then."""
        if spec.custom is None:
            raise RuntimeNotEmulated(
                f"function '{spec.function_name}' ({spec.runtime}) has no HTTP server to forward "
                "a request to: its HTTP trigger invokes its event handler")
        return self._serve(spec, b"", call, request_id, tail_logs)

    def _serve(self, spec: InstanceSpec, event: bytes, call: HttpCall | None, request_id: str,
               tail_logs: bool) -> InvocationResult:
        family = family_of(spec.runtime, spec.function_name)
        node = self._node.for_runtime(spec.runtime, spec.function_name) \
            if family is Family.NODEJS else ""
        taken = self._pool.acquire(spec, self._clock.now)
        self._stop_now(taken.stop_now)
        self._stop_later(taken.stop_later)
        slot, discard = taken.instance, True
        try:
            if slot.worker is None:  # the code is unpacked (or checked) for new instances only
                failed = self._start(slot, spec, family, node, request_id)
                if failed is not None:
                    return failed if tail_logs else dataclasses.replace(failed, log_tail=b"")
            cold_start = self.cold_start if taken.cold else 0.0
            if family is Family.CUSTOM:
                request = CustomRequest(event if call is None else None, call)
                result, discard = invoke_custom(slot, spec, request, request_id, self._clock,
                                                cold_start, taken.cold)
            else:
                result, discard = invoke_frames(slot, spec, event, request_id, self._clock,
                                                cold_start, taken.cold)
            slot.served += 1
            if not discard:
                self._pool.mark_ready(slot)
            return result if tail_logs else dataclasses.replace(result, log_tail=b"")
        finally:
            self._retire_slots(self._pool.release(slot, discard, self._clock.now()))

    def keep_warm(self, spec: InstanceSpec, target: int) -> tuple[int, str]:
        """Keep ``target`` instances of ``spec`` started and initialized ahead of requests
        and never reaped for idleness (a provision config; 0 lets them go): starts the missing
        ones before it returns (no cold start is modelled for them, their requests are warm).
        Returns how many are provisioned now and, when fewer than ``target``, why."""
        with self._provisioning:
            current, stop = self._pool.keep_provisioned(spec, target)
            self._retire_slots(stop)
            while current < target:
                problem = self._start_provisioned(spec)
                if problem:
                    return current, problem
                current += 1
            return current, ""

    def _start_provisioned(self, spec: InstanceSpec) -> str:
        """Start one provisioned instance (initializer run); "" or why it could not."""
        slot = self._pool.open_provisioned(spec, self._clock.now())
        if slot is None:
            return (f"function '{spec.function_name}' is at the emulator's cap of "
                    "instances (or its custom runtime's port is taken)")
        family = family_of(spec.runtime, spec.function_name)
        request_id, ok, why = _request_id(self._clock.now()), False, ""
        try:
            node = self._node.for_runtime(spec.runtime, spec.function_name) \
                if family is Family.NODEJS else ""
            failed = self._start(slot, spec, family, node, request_id)
            if failed is not None:
                return failed.payload.decode("utf-8", "replace")
            why, run = initialize_ahead(slot, spec, request_id, self._clock)
            if run is not None:
                self._report(run)
            ok = not why
            return why
        except RuntimeUnavailableError as exc:
            return exc.message
        finally:
            if ok:
                self._pool.mark_ready(slot)
            else:
                slot.provisioned = False
            self._retire_slots(self._pool.release(slot, not ok, self._clock.now()))

    def warm_count(self, spec: InstanceSpec) -> int:
        """Provisioned instances of ``spec`` (ready or starting)."""
        return self._pool.provisioned_count(spec)

    def attach_gateway(self, port: int, attach: Attach) -> None:
        """New instances reach the emulator's cloud APIs only, at ``127.0.0.1:port`` of their
        own network namespace (docs/runtime.md "Network"); ``attach`` serves a listener."""
        self._isolation.networks.attach_gateway(port, attach)

    def retire(self, account_id: str, region: str, function_name: str,
               qualifier: str | None = None) -> None:
        """Old instances of the function (of every version, or only those reached through
        ``qualifier``) get no new requests; idle ones stop now (after their preStop hook, in
        the background), busy ones when their current request ends."""
        self._retire_slots(self._pool.retire((account_id, region, function_name), qualifier))

    def reap_idle(self) -> int:
        """Stop the instances idle for longer than their idle time on the clock (each after its
        preStop hook, in parallel); returns how many, once they are stopped."""
        expired = self._pool.expired(self._clock.now())
        wait_all([self._stoppers.submit(self._stop, slot) for slot in expired])
        return len(expired)

    def close(self) -> None:
        """Stop every instance: idle ones after their preStop hooks, busy ones killed (their
        callers get a crash result); later calls raise RuntimeUnavailableError."""
        busy, idle = self._pool.close()
        for slot in busy:
            if slot.worker is not None:
                slot.worker.kill()
        wait_all([self._stoppers.submit(self._stop, slot) for slot in idle])
        self._stoppers.shutdown(wait=True)
        self._isolation.close()

    def instance_count(self, account_id: str, region: str, function_name: str) -> int:
        """Live instances of a function (busy, idle or starting)."""
        return self._pool.count((account_id, region, function_name))

    def instance_pids(self) -> list[int]:
        """Process ids of all live workers (for diagnostics and tests)."""
        return [worker.pid for worker in self._pool.workers()]

    # -- starting and stopping

    def _start(self, slot: Instance, spec: InstanceSpec, family: Family, node: str,
               request_id: str) -> InvocationResult | None:
        """Start the worker of a new instance; None once ready, else the failed invocation."""
        code_root = self._code.ensure(spec.code_checksum, spec.code_zip)
        layers = self._layers.tree(spec.layers)
        slot.worker = self._spawn(slot, spec, code_root, family, node, layers)
        timeout = STARTUP_TIMEOUT_S
        if spec.custom is not None:
            timeout += float(CUSTOM_READY_S)
        ready = slot.worker.start(timeout)
        if ready.outcome is not RunOutcome.OK:
            return self._failed_start(slot, spec, request_id, ready)
        self._note_sandbox(ready)
        netns = (ready.extra or {}).get("netns")
        if netns and netns != _own_netns():
            self._pool.shared_network = False  # instances have networks of their own
        return None

    def _spawn(self, slot: Instance, spec: InstanceSpec, code_root: Path, family: Family,
               node: str, layers: Path | None) -> Worker:
        """The worker of a new instance (its own uid, /tmp, memory accounting, sandbox)."""
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
            interpreter=self._python, layers=layers,
            network=iso.networks.settings(spec.internet_access) if self._sandbox else None,
            mounts=mount_sources(spec, self.mounts_root))
        slot.credentials = spec.credentials() if spec.credentials is not None else None
        config = worker_config(spec, packages=[str(view)], emulator_packages=[str(emulator_view)],
                               sandbox=sandbox, virtual_time=self._clock.is_virtual,
                               credentials=slot.credentials, family=family.value,
                               layers=layers, node=node)
        env = worker_environment(spec, code_root, slot.instance_id)
        monitor = iso.memory_monitor(slot.instance_id, spec.memory_size)
        try:
            return Worker(python=self._python, code_root=code_root, env=env, config=config,
                          monitor=monitor, uid=uid, relay=family is Family.CUSTOM)
        except OSError as exc:
            monitor.close()
            message = f"cannot start a worker with {self._python}: {exc}"
            raise RuntimeUnavailableError(message) from exc

    def _note_sandbox(self, ready: Exchange) -> None:
        """Log once what the host could not provide (docs/runtime.md "Sandbox")."""
        missing = (ready.extra or {}).get("sandbox") or []
        mounts = [m for m in missing if m.startswith("mounts:")]
        if mounts:  # a function's own setting: said for every instance
            log.warning("NAS/OSS mount points not mounted: %s", "; ".join(mounts))
        if missing and not self._sandbox_noted:
            self._sandbox_noted = True
            log.warning("function sandbox incomplete on this host: %s", "; ".join(missing))

    def _failed_start(self, slot: Instance, spec: InstanceSpec, request_id: str,
                      ready: Exchange) -> InvocationResult:
        """A worker that died, hung or could not start its server: a failed invocation."""
        log_data = LogBuffer(bytearray(ready.log))
        at = (slot.instance_id, spec, request_id)
        problem = (ready.extra or {}).get("error")
        if ready.outcome is RunOutcome.ERROR and problem:  # the server never became ready
            if log_data.data and not log_data.data.endswith(b"\n"):
                log_data.data += b"\n"
            body = json.dumps({"errorMessage": str(problem)}).encode()
            log_data.data += body + b"\n"
            return invocation_result(*at, body, log_data, ready, True, False)
        crash = dataclasses.replace(ready, outcome=RunOutcome.CRASHED)
        append_failure(log_data, crash, "Invoke", request_id, spec.timeout, "")
        return invocation_result(*at, failure_body(crash, spec.timeout, ""), log_data, crash,
                                 True, False)

    def _retire_slots(self, slots: list[Instance]) -> None:
        """Stop instances: at once when there is no preStop hook to run (a dead or hook-less
        instance), else in the background."""
        for slot in slots:
            if slot.served and slot.spec.pre_stop_handler and slot.worker is not None \
                    and slot.worker.alive():
                self._stop_later([slot])
            else:
                self._stop(slot)

    def _stop_now(self, slots: list[Instance]) -> None:
        for slot in slots:
            self._stop(slot)

    def _stop_later(self, slots: list[Instance]) -> None:
        for slot in slots:
            try:
                future = self._stoppers.submit(self._stop, slot)
            except RuntimeError:  # shutting down: stop it here
                self._stop(slot)
                continue
            with self._stopping_lock:
                self._stopping.add(future)
            future.add_done_callback(self._stopped)

    def _stopped(self, future: Future[None]) -> None:
        with self._stopping_lock:
            self._stopping.discard(future)

    def settle(self, timeout: float = 120.0) -> bool:
        """Wait up to ``timeout`` real seconds until the instances stopping in the background
        (retired, expired) are stopped, their preStop hooks reported; True when they are."""
        with self._stopping_lock:
            pending = list(self._stopping)
        return not wait_all(pending, timeout=timeout).not_done

    def _stop(self, slot: Instance) -> None:
        """Run the preStop hook of an instance that served (and did not die), then stop it."""
        try:
            if slot.worker is not None and slot.served and slot.spec.pre_stop_handler \
                    and slot.worker.alive():
                self._pre_stop(slot)
        finally:
            if slot.worker is not None:
                slot.worker.stop()
            if slot.tmp_dir is not None:
                Isolation.remove_instance_dir(slot.tmp_dir)
                slot.tmp_dir = None

    def _pre_stop(self, slot: Instance) -> None:
        started = self._clock.now()
        spec, request_id = slot.spec, _request_id(started)
        if spec.custom is not None:
            answer, text = pre_stop_custom(slot, spec, request_id)
        else:
            answer, text = pre_stop_frames(slot, spec, request_id, self._clock)
        ok = answer.outcome is RunOutcome.OK
        self._report(HookRun(spec.account_id, spec.region, spec.function_name, spec.qualifier,
                             "PreStop", request_id, slot.instance_id, started, ok,
                             None if ok else "UnhandledInvocationError",
                             round(answer.duration_ms, 3), text.decode("utf-8", "replace")))

    def _report(self, run: HookRun) -> None:
        sink = self.hook_sink
        if sink is not None:
            try:
                sink(run)
            except Exception:  # the logs must not stop an instance from stopping
                log.exception("recording the %s hook of %s failed", run.hook,
                              run.function_name)


CUSTOM_READY_S = 120  # FC: a custom runtime's server must listen within 120 s


def _own_netns() -> int:
    try:
        return os.stat("/proc/self/ns/net").st_ino
    except OSError:
        return 0


def _request_id(now: float) -> str:
    """A request id for a hook FC runs on its own, in the shape of FC's request ids."""
    return f"1-{int(now):08x}-{secrets.token_hex(12)}"
