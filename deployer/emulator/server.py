"""The emulator behind its HTTP front door (:mod:`deployer.emulator.httpd`, on aiohttp).

``EmulatorServer(state_dir, host, port, clock, runtime)`` takes the state directory's lock
(a second emulator on it is refused with :class:`StateDirInUse`; a directory it cannot write
or a damaged database with :class:`~deployer.emulator.state_dir.StateDirUnusable`), binds
127.0.0.1 by default (another interface only when ``host`` says so; port 0 picks a free port)
and listens at once.
``start()`` serves from a background event-loop thread; ``stop()`` shuts it down, closes the
state and releases the lock.

Every request keeps its raw target (signatures are computed over it) and a de-chunked body;
bodies over ``max_body`` (140 MB: a base64 100 MB zip in JSON) are refused with
``EntityTooLarge``. ``cold_start`` and ``step_latency`` (seconds, default 0: exact) are the
latency model (:mod:`deployer.emulator.latency`), shown in the health document.
``admin_token`` is this instance's random token for the admin surface's state-changing
requests (``guard`` checks them; docs/emulator.md "Admin and console surfaces").
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from deployer import __version__
from deployer.emulator.api import errors as e
from deployer.emulator.api.access import RequestAccess
from deployer.emulator.api.admin import AdminApi
from deployer.emulator.api.cloudflow import CloudFlowApi
from deployer.emulator.api.errors import Style, error_response
from deployer.emulator.api.faults import FaultInjector
from deployer.emulator.api.fc import FcApi, FcServices
from deployer.emulator.api.freshness import RequestFreshness
from deployer.emulator.api.http import Answer, DeferredResponse, HttpRequest
from deployer.emulator.api.http_trigger_serving import HttpTriggerApi
from deployer.emulator.api.local_guard import LocalGuard, new_token
from deployer.emulator.api.log_stream import LogStreamApi
from deployer.emulator.api.ram import RamApi
from deployer.emulator.api.router import Router, fc_request_id
from deployer.emulator.api.sls import SlsApi
from deployer.emulator.api.sts import StsApi
from deployer.emulator.app import Emulator, Engine
from deployer.emulator.clock import Clock, SystemClock
from deployer.emulator.httpd import MAX_BODY, FrontDoor, HttpServer, ServerLimits
from deployer.emulator.httpd.listener import listening_socket
from deployer.emulator.latency import LatencyModel
from deployer.emulator.retention import DEFAULT as DEFAULT_RETENTION
from deployer.emulator.retention import Retention
from deployer.emulator.services.execution_watch import ExecutionWatch
from deployer.emulator.services.ports import FunctionRuntime
from deployer.emulator.state_dir import check_writable, damaged_database
from deployer.emulator.state_lock import StateDirInUse, StateLock
from deployer.emulator.store.errors import DatabaseDamaged

__all__ = ["MAX_BODY", "EmulatorServer", "ServerLimits", "StateDirInUse"]

log = logging.getLogger("deployer.emulator")
DURABLE_WAIT = 60.0  # seconds an answer waits for the disk before it says the disk is stuck


class EmulatorServer:
    """An emulator behind an HTTP listener; see the module docstring."""

    def __init__(self, state_dir: Path, host: str = "127.0.0.1", port: int = 0,
                 clock: Clock | None = None, runtime: FunctionRuntime | None = None, *,
                 region: str = "cn-hangzhou", engines: Sequence[Engine] = (),
                 max_body: int | None = None, step_latency: float = 0.0,
                 cold_start: float = 0.0, limits: ServerLimits | None = None,
                 console: bool = True, throttle: str = "off", durable: bool = True,
                 retention: Retention = DEFAULT_RETENTION) -> None:
        self.state_dir = Path(state_dir)
        self.clock = clock or SystemClock()
        self.limits = limits or ServerLimits()
        if max_body is not None:
            self.limits = replace(self.limits, max_body=max_body)
        check_writable(self.state_dir)  # StateDirUnusable: read-only, no permission, full
        self._lock = StateLock.acquire(self.state_dir)
        try:
            self.emulator = Emulator(self.state_dir, self.clock, runtime, region=region,
                                     latency=LatencyModel(cold_start, step_latency),
                                     throttle=throttle, durable=durable,
                                     retention=retention)
        except DatabaseDamaged as exc:
            self._lock.release()
            raise damaged_database(self.state_dir, str(exc)) from None
        except BaseException:
            self._lock.release()
            raise
        emulator = self.emulator
        self.watch = ExecutionWatch(emulator.flow_repo, emulator.flow_engine.wait_ended,
                                    emulator.flow_engine.waiters.wake)
        emulator.engines.append(self.watch)
        emulator.engines.extend(engines)
        self.router = self._cloud_router(region)
        self.admin_token = new_token()
        door = FrontDoor(self._dispatch, self.limits, self._request_id,
                         f"cloudflow-deployer-emulator/{__version__}", self.router.is_quick)
        try:
            self._httpd: HttpServer | None = HttpServer(host, port, door, self.limits)
        except BaseException:
            emulator.close()
            self._lock.release()
            raise
        self.host = host
        self.port = self._httpd.port
        self.guard = LocalGuard(self.admin_token, self.port, host)
        self.router.add_local(self._admin())
        self.router.hosts = HttpTriggerApi(emulator.triggers, emulator.functions, self.clock,
                                           self.router.authenticate, emulator.custom_domains)
        self.router.add_local(self.router.hosts)
        self.console = self._console() if console else None
        self.router.public_url = self.url
        self.gateway_port = self._gateway(door)
        self.emulator.serve_at(f"127.0.0.1:{self.gateway_port}")
        self._lock.record(self.endpoint)
        self._started = False

    def _gateway(self, door: FrontDoor) -> int:
        """The function gateway: where handlers' SDK calls arrive, serving the cloud APIs and
        nothing else (no admin API, console or log endpoints: docs/runtime.md "Network"). It
        listens on 127.0.0.1 of this host and, for each instance in a network namespace of its
        own, on the same port inside that namespace; returns the port."""
        assert self._httpd is not None
        router = replace(self.router, local=[])  # the cloud APIs only
        gateway = FrontDoor(router.dispatch, self.limits, self._request_id,
                            f"cloudflow-deployer-emulator/{__version__}", router.is_quick)
        gateway.budget = door.budget  # one memory budget for every large body
        sock = listening_socket("127.0.0.1", 0, self.limits.backlog)
        port = int(sock.getsockname()[1])
        httpd = self._httpd
        httpd.add_listener(sock, gateway)
        attach = getattr(self.emulator.runtime, "attach_gateway", None)
        if attach is not None:
            attach(port, lambda listener: httpd.add_listener(listener, gateway))
        return port

    def _cloud_router(self, region: str) -> Router:
        """The router with the cloud APIs (FC, Log Service, RAM, STS, CloudFlow) and the
        checks every request passes: signature and access, freshness, injected faults."""
        emulator, ident = self.emulator, self.emulator.identity
        router = Router(ident.account_id, ident.secret_for, self.clock, region,
                        state_dir=str(self.state_dir))
        router.access = RequestAccess(ident.account_id, ident.secret_for, emulator.tokens,
                                      emulator.authorizer)
        router.freshness = RequestFreshness(self.clock)
        router.faults = FaultInjector(emulator.faults, emulator.quotas, emulator.functions)
        router.add_roa(FcApi(emulator.functions, emulator.function_versions, FcServices(
            triggers=emulator.triggers, layers=emulator.layers,
            async_configs=emulator.async_configs, async_tasks=emulator.async_tasks,
            concurrency=emulator.concurrency, custom_domains=emulator.custom_domains,
            provisioned=emulator.provisioned)))
        router.add_roa(SlsApi(emulator.logs, router.access, router.freshness))
        router.add_rpc(RamApi(emulator.roles))
        router.add_rpc(StsApi(emulator.tokens))
        router.add_rpc(CloudFlowApi(emulator.flows, emulator.executions, self.watch,
                                    emulator.flow_versions, emulator.schedules,
                                    emulator.map_runs, emulator.relations))
        return router

    def _admin(self) -> AdminApi:
        """The admin surface (``/_emulator/...``), behind the local guard."""
        emulator = self.emulator
        return AdminApi(clock=self.clock, health=self._health, reset=emulator.reset,
                        code_path=emulator.code.path, guard=self.guard,
                        advanced=emulator.clock_moved, faults=self.router.faults,
                        logs=LogStreamApi(emulator.functions, emulator.identity.account_id,
                                          emulator.region),
                        mocks=emulator.mocks)

    def _dispatch(self, request: HttpRequest) -> Answer:
        """The router's answer, sent once what the request committed is on disk (the WAL
        syncer has fsynced past the request's last commit; docs/emulator.md "Durability
        model"): a worker thread waits for it; on the event loop (a quick request) the answer
        is deferred, holding no thread."""
        answer = self.router.dispatch(request)
        syncer = self.emulator.db.syncer
        commit = self.emulator.db.pending_ack()
        if not commit:
            return answer
        if not _on_event_loop():
            try:
                syncer.sync(commit)
            except OSError as exc:
                return self._unsaved(request, exc)
            return answer

        def then() -> Answer:
            if syncer.is_durable(commit):
                return answer
            return self._unsaved(request, syncer.failure or TimeoutError(
                f"the disk did not confirm the write within {DURABLE_WAIT:g} s"))

        return DeferredResponse(lambda wake: syncer.when_durable(commit, wake), DURABLE_WAIT,
                                then, inline=True)

    def _unsaved(self, request: HttpRequest, exc: OSError) -> Answer:
        """The answer to a request whose commit could not be made durable (its fsync
        failed): not an acknowledgement."""
        style = Style.RPC if request.raw_path == "/" else Style.ROA
        kind = e.StorageFull if exc.errno in (errno.ENOSPC, errno.EDQUOT) else e.StorageError
        err = kind(f"the emulator could not make this change durable: syncing its database "
                   f"in {self.state_dir} to disk failed ({exc}). The change is applied but "
                   "may be lost if the machine loses power; check the disk and retry.")
        return error_response(err, self._request_id(style), style,
                              request.headers.get("host") or "")

    @property
    def http(self) -> HttpServer | None:
        """The HTTP server (None once stopped): open connections, the body budget."""
        return self._httpd

    def _request_id(self, style: Style) -> str:
        if style is Style.ROA:
            return fc_request_id(self.clock.now())
        return str(uuid.uuid4()).upper()

    @property
    def endpoint(self) -> str:
        """``host:port`` as the SDKs' ``Config.endpoint`` wants it (no scheme)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.endpoint}"

    def _console(self) -> object:
        """The web console under ``/_console/`` (behind the same guard as the admin API)."""
        from deployer.console.sources import Sources
        from deployer.emulator.api.console import ConsoleApi

        em = self.emulator
        flows, changes = em.flow_engine.flows, em.flow_engine.changes
        sources = Sources(em.flows, em.executions, em.functions, self.clock,
                          em.identity.account_id, em.region, lambda: self.endpoint,
                          self._flow_stats, lambda definition: flows.get(definition).flow,
                          lambda: changes.generation, changes.watch_engine)
        api = ConsoleApi(sources, self.guard)
        self.router.add_local(api)
        return api

    def _health(self) -> dict[str, object]:
        return {"endpoint": self.endpoint, "accountId": self.emulator.identity.account_id,
                "region": self.emulator.region, "pid": os.getpid(), "version": __version__,
                "clock": "virtual" if self.clock.is_virtual else "real",
                "latency": self.emulator.latency.to_wire(),
                "stateDir": str(self.state_dir), "cloudflow": self._flow_stats(),
                "store": self._store_stats(),
                "retention": {"executionSeconds": self.emulator.retention.retention.executions,
                              "logSeconds": self.emulator.retention.retention.logs}}

    def _store_stats(self) -> dict[str, object]:
        """Commits and the fsyncs that made them durable (group commit: fewer syncs)."""
        syncer = self.emulator.db.syncer
        return {"commits": syncer.commits, "durableCommits": syncer.synced,
                "diskSyncs": syncer.syncs, "syncsBeforeAnswers": syncer.durable}

    def _flow_stats(self) -> dict[str, object]:
        engine = self.emulator.flow_engine
        stats = engine.stats()
        return {"runningExecutions": stats.running_executions,
                "pendingTimers": stats.pending_timers, "inFlight": stats.in_flight,
                "stepsCommitted": stats.steps_committed,
                "stepTransactions": stats.step_transactions,
                "waitingTasks": stats.waiting_tasks,
                "stepLatency": engine.step_latency, "autoAdvance": engine.auto_advance}

    def start(self) -> EmulatorServer:
        """Start the engines, then serve from a background thread (the socket already
        listens, so early clients wait in the queue)."""
        for engine in self.emulator.engines:
            engine.start()
        if self._httpd is not None:
            self._httpd.start()
        self._started = True
        return self

    def stop(self) -> None:
        """Stop listening (requests in progress get ``limits.shutdown_grace`` to finish), stop
        engines and the runtime, close the database, release the state lock. Idempotent."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        try:
            httpd.stop()
            self.emulator.close()
        finally:
            self._lock.release()

    def __enter__(self) -> EmulatorServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _on_event_loop() -> bool:
    """Whether this thread runs an event loop (the front door's, for quick requests)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
