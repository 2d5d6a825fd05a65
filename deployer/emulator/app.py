"""Wiring of one emulator instance without HTTP: identity, database, services, engines.

The composition root: the only module that knows both the services and the engine. The
services reach the engine through ``ExecutionEngine`` and ``ScheduleTimers``, the engine reaches
Function Compute through ``TaskRunner`` and the schedules through ``ScheduleSource`` (the ports
of ``emulator/ports.py``), and neither imports the other. The one piece of wire it wires in:
FC's error table, whose codes CloudFlow reports for its FC tasks (``FC.FunctionNotFound``...).
"""

from __future__ import annotations

import shutil
import uuid
from functools import partial
from pathlib import Path
from typing import Protocol

from deployer.emulator.api.cloudflow import CLOUDFLOW_ERRORS
from deployer.emulator.api.fc import FC_ERRORS
from deployer.emulator.clock import Clock
from deployer.emulator.engine import FlowEngine
from deployer.emulator.latency import EXACT, LatencyModel
from deployer.emulator.retention import DEFAULT as DEFAULT_RETENTION
from deployer.emulator.retention import Retention
from deployer.emulator.runtime.reaper import IdleReaper
from deployer.emulator.services.async_tasks import (
    AsyncInvokeConfigs,
    AsyncTaskService,
    deliver_to,
)
from deployer.emulator.services.authorization import Authorizer
from deployer.emulator.services.custom_domains import CustomDomainService
from deployer.emulator.services.execution_relations import ExecutionRelations
from deployer.emulator.services.executions import ExecutionService
from deployer.emulator.services.faults import FaultService
from deployer.emulator.services.fc_tasks import FunctionInvoker
from deployer.emulator.services.flow_versions import FlowReleases
from deployer.emulator.services.flows import FlowService
from deployer.emulator.services.function_concurrency import ConcurrencyLimits
from deployer.emulator.services.functions import FunctionService
from deployer.emulator.services.functions.versions import FunctionReleases
from deployer.emulator.services.http_tasks import HttpTasks
from deployer.emulator.services.layers import LayerService
from deployer.emulator.services.logs import LogService
from deployer.emulator.services.map_runs import MapRuns
from deployer.emulator.services.ports import FunctionRuntime
from deployer.emulator.services.provisioning import ProvisionedInstances
from deployer.emulator.services.quotas import CloudQuotas
from deployer.emulator.services.retention import RetentionSweeper
from deployer.emulator.services.roles import RoleService
from deployer.emulator.services.schedule_sources import ScheduleSources
from deployer.emulator.services.schedules import ScheduleService
from deployer.emulator.services.security_tokens import SecurityTokenService
from deployer.emulator.services.subflows import SubflowTasks
from deployer.emulator.services.task_mocks import TaskMocks
from deployer.emulator.services.task_router import TaskRouter
from deployer.emulator.services.triggers import TriggerService
from deployer.emulator.store.async_task_repos import AsyncTaskRepo
from deployer.emulator.store.db import Database
from deployer.emulator.store.flow_repos import FlowRepo
from deployer.emulator.store.function_config_repos import FunctionConfigRepo
from deployer.emulator.store.identity import Identity, load_or_create_identity
from deployer.emulator.store.layer_repos import LayerRepo
from deployer.emulator.store.link_repos import LinkRepo
from deployer.emulator.store.log_repos import InvocationLogRepo, LogStoreRepo
from deployer.emulator.store.map_run_repos import MapRunRepo
from deployer.emulator.store.release_repos import ReleaseRepo
from deployer.emulator.store.repos import CodeStore, FunctionRepo, InvocationRepo, RamRepo
from deployer.emulator.store.retention import RetentionRepo
from deployer.emulator.store.schedule_repos import ScheduleRepo
from deployer.emulator.store.trigger_repos import TriggerRepo

__all__ = ["DB_FILE", "Emulator", "Engine", "default_runtime"]

DB_FILE = "emulator.db"


class Engine(Protocol):
    """An extra background component (e.g. the CloudFlow engine) started with the server."""

    def start(self) -> None: ...

    def stop(self) -> None: ...


def default_runtime(state_dir: Path, clock: Clock, *,
                    cold_start: float = 0.0) -> FunctionRuntime:
    """The process runtime that runs handlers in subprocesses under ``<state_dir>/runtime``;
    a new instance spends ``cold_start`` seconds before its first call."""
    from deployer.emulator.runtime import ProcessRuntime

    runtime: FunctionRuntime = ProcessRuntime(state_dir / "runtime", clock,
                                              private_dirs=[state_dir], cold_start=cold_start)
    return runtime


class Emulator:
    """All state and services of one emulator; the server puts HTTP in front of it.

    ``latency`` (default: exact) is the platform time it adds: the process runtime's cold start
    and the flow engine's step latency. A ``runtime`` of the caller's keeps its own cold start,
    so a model with one is refused then (ValueError). ``durable=False``: answers never wait
    for the disk (a throwaway state directory; docs/emulator.md "Durability model").
    ``retention``: how long ended executions and invocation logs are kept."""

    def __init__(self, state_dir: Path, clock: Clock, runtime: FunctionRuntime | None = None,
                 *, region: str = "cn-hangzhou", latency: LatencyModel = EXACT,
                 flow_workers: int = 8, throttle: str = "off", durable: bool = True,
                 retention: Retention = DEFAULT_RETENTION) -> None:
        if runtime is not None and latency.cold_start:
            raise ValueError("a cold start applies to the process runtime; give it to the "
                             "runtime passed in instead")
        self.state_dir = state_dir
        self.clock = clock
        self.region = region
        self.latency = latency
        self.identity: Identity = load_or_create_identity(state_dir)
        self.db = Database.open(state_dir / DB_FILE, durable=durable)
        self.code = CodeStore(state_dir / "code", durable=durable)
        self.runtime = runtime if runtime is not None else default_runtime(
            state_dir, clock, cold_start=latency.cold_start)
        self.function_repo = FunctionRepo(self.db)
        self.invocation_repo = InvocationRepo(self.db)
        self.roles = RoleService(RamRepo(self.db), clock)
        self.authorizer = Authorizer(self.roles)
        self.tokens = SecurityTokenService(self.identity.access_key_secret, clock, self.roles,
                                           self.authorizer)
        self.functions = FunctionService(self.function_repo, self.invocation_repo, self.code,
                                         self.runtime, clock, tokens=self.tokens)
        self.logs = LogService(self.function_repo, InvocationLogRepo(self.db),
                               LogStoreRepo(self.db), clock.now)
        self.faults = FaultService()
        self.quotas = CloudQuotas(throttle)
        self.flow_repo = FlowRepo(self.db)
        self.flows = FlowService(self.flow_repo, clock, self.roles.role_trusts)
        self.function_tasks = FunctionInvoker(self.functions, FC_ERRORS.code, self.authorizer,
                                              faults=self.faults, quotas=self.quotas)
        links = LinkRepo(self.db)
        self.mocks = TaskMocks(links, state_dir)
        self.subflows = SubflowTasks(links, CLOUDFLOW_ERRORS.code)
        map_run_repo = MapRunRepo(self.db)
        self.map_runs = MapRuns(links, self.flow_repo, map_run_repo, clock)
        self.relations = ExecutionRelations(links, self.flow_repo, map_run_repo)
        self.tasks = TaskRouter(self.function_tasks, HttpTasks(), self.subflows, self.map_runs,
                                self.mocks, links, self.flow_repo)
        self.flow_engine = FlowEngine(self.db, clock, self.tasks, workers=flow_workers,
                                      step_latency=latency.step_latency)
        self.executions = ExecutionService(self.flow_repo, self.flows, self.flow_engine, clock)
        self.executions.mocks = self.mocks
        self.executions.links = links
        self.subflows.attach(self.executions, self.flow_engine)
        self.map_runs.attach(self.executions, self.flow_engine)
        self.flow_engine.on_ended(partial(_execution_ended, links, self.subflows, self.map_runs))
        self._wire_releases_and_schedules(clock)
        self.retention = RetentionSweeper(RetentionRepo(self.db), clock, retention)
        self.engines: list[Engine] = [self.flow_engine, self.retention]
        reap = getattr(self.runtime, "reap_idle", None)
        self.reaper = IdleReaper(self._reap_pass) if callable(reap) else None
        if self.reaper is not None:
            self.engines.append(self.reaper)

    def _reap_pass(self) -> int:
        """The idle reaper's pass: idle instances stop, provisioned ones are started again
        where fewer than their target run (services.provisioning)."""
        stopped = int(self.runtime.reap_idle())  # type: ignore[attr-defined]
        self.provisioned.reconcile()
        return stopped

    def clock_moved(self, *, wait: bool = False) -> None:
        """The clock was moved on purpose (advanced): the flow engine looks at what became due,
        idle function instances past their idle time are stopped (before this returns when
        ``wait``) and retention sweeps what is over."""
        self.flow_engine.clock_moved()
        self.retention.wake()
        if self.reaper is not None:
            self.reaper.clock_moved(wait=wait)

    def _wire_releases_and_schedules(self, clock: Clock) -> None:
        """Versions and aliases of both services, and CloudFlow's schedules (fired by the
        engine, deleted with their flow)."""
        self.function_versions = FunctionReleases(self.function_repo,
                                                  ReleaseRepo(self.db, "function"), clock)
        self.functions.versions = self.function_versions
        self.flow_versions = FlowReleases(self.flows, ReleaseRepo(self.db, "flow"), clock)
        self.executions.versions = self.flow_versions
        self.schedules = ScheduleService(ScheduleRepo(self.db), self.flows, self.executions,
                                         clock, self.flow_engine)
        self.triggers = TriggerService(TriggerRepo(self.db), clock, self._function_exists,
                                       self._trigger_invoke, self.flow_engine)
        self.flow_engine.attach_schedules(ScheduleSources(self.schedules, self.triggers))
        self.flows.on_delete.extend([self.flow_versions.forget, self.schedules.forget_flow])
        self.functions.on_delete.append(self.triggers.forget_function)
        self.layers = LayerService(LayerRepo(self.db), self.code, clock)
        self.functions.layer_source = self.layers.layer_source
        self.functions.layer_check = self.layers.check_function_layers
        self.concurrency = ConcurrencyLimits(FunctionConfigRepo(self.db), clock)
        self.functions.admission = self.concurrency.admitted
        self.functions.on_delete.append(self.concurrency.forget_function)
        self.async_configs = AsyncInvokeConfigs(FunctionConfigRepo(self.db), clock)
        self.async_tasks = AsyncTaskService(
            AsyncTaskRepo(self.db), self.async_configs, clock,
            submit=self.functions.runner.submit_job, attempt=self.functions.runner.run_async,
            deliver=self._deliver)
        self.functions.async_tasks = self.async_tasks
        self.custom_domains = CustomDomainService(FunctionConfigRepo(self.db), clock)
        self.provisioned = ProvisionedInstances(FunctionConfigRepo(self.db), clock, self.runtime,
                                                self.functions.instance_spec)
        self.functions.on_delete.append(self.provisioned.forget_function)
        self.functions.on_delete.append(self.async_tasks.forget_function)

    def _deliver(self, account_id: str, region: str, arn: str, event: bytes) -> None:
        """An asynchronous task's destination event: a function is invoked asynchronously
        with it, a flow starts an execution with it; others are not emulated."""
        kind = deliver_to(arn)
        tail = arn.split(":", 4)[4]
        if kind == "function":
            name, _, qualifier = tail.removeprefix("functions/").partition("/")
            self._trigger_invoke(account_id, region, name, event, qualifier or "LATEST")
        elif kind == "flow":
            self.executions.start_scheduled(account_id, region, tail.removeprefix("flow/"),
                                            name=str(uuid.uuid4()),
                                            input_text=event.decode())
        else:
            raise ValueError(f"destination {arn} is not emulated (functions and flows are)")

    def _function_exists(self, account_id: str, region: str, name: str) -> None:
        self.functions.get(account_id, region, name)

    def _trigger_invoke(self, account_id: str, region: str, name: str, event: bytes,
                        qualifier: str) -> None:
        """A trigger's asynchronous invocation, with a request id of FC's shape."""
        request_id = f"1-{int(self.clock.now()):08x}-{uuid.uuid4().hex[:24]}"
        self.functions.invoke(account_id, region, name, event, request_id=request_id,
                              asynchronous=True, qualifier=qualifier)

    def serve_at(self, endpoint: str) -> None:
        """The emulator now listens at ``endpoint`` (``host:port``): SDK calls from handlers go
        there."""
        self.functions.cloud_endpoint = endpoint

    def reset(self, *, rewind_clock: bool = False) -> None:
        """Forget every resource (functions, code, invocations, roles, policies, flows and
        executions) and every injected fault; with ``rewind_clock``, a virtual clock goes back
        to the present too (every timer is gone with the state).

        The identity (account id and keys) survives, so configured clients keep working.
        """
        for account_id, region, name in self.function_repo.all_keys():
            self.runtime.retire(account_id, region, name)
        settle = getattr(self.runtime, "settle", None)
        if callable(settle):
            settle()  # preStop hooks report before the logs are wiped, not after
        self.db.wipe()
        self.faults.reset()
        rewind = getattr(self.clock, "rewind", None)
        if rewind_clock and self.clock.is_virtual and rewind is not None:
            rewind()
            self.flow_engine.clock_moved()
        self.flow_engine.resync()
        shutil.rmtree(self.code.root, ignore_errors=True)

    def close(self) -> None:
        self.faults.close()
        for engine in reversed(self.engines):
            engine.stop()
        self.tasks.close()
        self.functions.close(wait=False)
        self.runtime.close()
        self.db.close()



def _execution_ended(links: LinkRepo, subflows: SubflowTasks, map_runs: MapRuns,
                     seq: int) -> None:
    """Execution ``seq`` ended: its links, read once, go to the services that follow them (a
    sub-flow reports to its parent's task, a map run counts its child); most executions have
    neither, and then that read is all."""
    found = links.links(seq)
    if not (found.callback_token or found.map_run):
        return
    try:
        subflows.execution_ended(seq, found)
    finally:
        map_runs.execution_ended(seq, found)
