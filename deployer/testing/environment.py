"""``mock_cloud()``: an in-process emulator that the official SDKs reach transparently.

Like moto for boto3, it routes the HTTP traffic of the Alibaba SDKs (sync clients through
``requests``, ``*_async`` clients through ``aiohttp``) with the routing function workers use
too (:mod:`deployer.emulator.runtime.routing`, public as :mod:`deployer.testing.routing`):
every request for an emulated cloud host (``fcv3.<region>.aliyuncs.com``,
``<account>.<region>.fc.aliyuncs.com``, ``ram.aliyuncs.com``, ``sts[.<region>].aliyuncs.com``,
``<region>.fnf.aliyuncs.com``, ``<project>.<region>.log.aliyuncs.com``; http or https) goes to
the emulator, keeping the Host header the client signed. Requests to loopback addresses pass
through; any other host raises :class:`UnmockedRequestError` naming the URL (for another
Alibaba Cloud endpoint, its subclass ``CloudEndpointNotEmulated`` naming the service), so
nothing leaves the machine.

Inside the block ``ALIBABA_CLOUD_ACCESS_KEY_ID/SECRET`` are the emulator's keys (restored
afterwards), both in ``os.environ`` and in the credentials library's import-time copy, so the
default credentials chain yields them. Time is a :class:`VirtualClock` unless given; virtual
time belongs to this one emulator instance.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import shutil
import tempfile
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path
from typing import Any, TypeVar
from unittest import mock

from deployer.emulator.api.cloudflow import execution_to_wire
from deployer.emulator.clock import Clock, VirtualClock
from deployer.emulator.retention import DEFAULT as DEFAULT_RETENTION
from deployer.emulator.retention import Retention
from deployer.emulator.runtime import routing
from deployer.emulator.runtime.routing import EMULATED_HOSTS, UnmockedRequestError
from deployer.emulator.server import EmulatorServer
from deployer.emulator.services.errors import InvalidValue
from deployer.emulator.services.ports import FunctionRuntime
from deployer.testing.faults import LocalFaults
from deployer.testing.transport import InProcessTransport

__all__ = ["EMULATED_HOSTS", "LocalCloud", "UnmockedRequestError", "mock_cloud"]

F = TypeVar("F", bound=Callable[..., Any])

class LocalCloud:
    """A running local cloud: endpoint, identity, clock and ready SDK clients."""

    def __init__(self, server: EmulatorServer, region: str) -> None:
        self.server = server
        self.region = region
        ident = server.emulator.identity
        self.endpoint = server.endpoint
        self.url = server.url
        self.account_id = ident.account_id
        self.access_key_id = ident.access_key_id
        self.access_key_secret = ident.access_key_secret
        self.clock: Clock = server.clock
        self.state_dir = server.state_dir
        self.admin_token: str = server.admin_token
        """Send it as ``X-Emulator-Token`` (with ``Content-Type: application/json``) on POSTs
        to the admin surface ``/_emulator/...``."""
        self.faults = LocalFaults(server.url, server.admin_token)
        """Fault injection (:class:`~deployer.testing.faults.LocalFaults`): make chosen calls
        fail or slow down, or apply the cloud's API quotas (``faults.throttle = "cloud"``)."""

    def config(self, **overrides: Any) -> Any:
        """An ``open_api`` ``Config`` for any Alibaba SDK client, pointed at the emulator."""
        from alibabacloud_tea_openapi import models as open_api

        values: dict[str, Any] = {
            "access_key_id": self.access_key_id, "access_key_secret": self.access_key_secret,
            "endpoint": self.endpoint, "protocol": "http", "region_id": self.region,
            "read_timeout": 60000, "connect_timeout": 5000,
        }
        values.update(overrides)
        return open_api.Config(**values)

    def fc_client(self, **overrides: Any) -> Any:
        from alibabacloud_fc20230330.client import Client

        return Client(self.config(**overrides))

    def ram_client(self, **overrides: Any) -> Any:
        from alibabacloud_ram20150501.client import Client

        return Client(self.config(**overrides))

    def sts_client(self, **overrides: Any) -> Any:
        from alibabacloud_sts20150401.client import Client

        return Client(self.config(**overrides))

    def fnf_client(self, **overrides: Any) -> Any:
        """A CloudFlow (fnf 2019-03-15) SDK client; its read timeout allows 60 s long polls."""
        from alibabacloud_fnf20190315.client import Client

        return Client(self.config(**{"read_timeout": 70000, **overrides}))

    @property
    def console_url(self) -> str:
        """The web console's root (served only under ``mock_cloud(console=True)``)."""
        return f"{self.url}/_console/r/{self.region}/flows"

    def now(self) -> float:
        return self.clock.now()

    def advance(self, seconds: float) -> float:
        """Move the virtual clock forward (TypeError on a real clock); timers that become due
        fire at once (asynchronously, on the engine), and function instances idle for longer
        than their idle time are stopped, preStop hooks run, before this returns."""
        advance = getattr(self.clock, "advance", None)
        if advance is None:
            raise TypeError("this local cloud runs on the real clock")
        now = float(advance(seconds))
        self.server.emulator.clock_moved(wait=True)  # idle instances past their time stop
        return now

    def wait_for_execution(self, flow: str, name: str, *, timeout: float = 30.0) -> dict[str, Any]:
        """Block until the execution ends and return it as DescribeExecution answers it (wire
        keys: ``Name``, ``FlowName``, ``Status``, ``Input``, ``Output``, ``StartedTime``,
        ``StoppedTime``...).

        While nothing is running, the engine jumps the virtual clock to the next Wait or retry
        timer (unless inside :meth:`auto_advance_disabled`), so long Waits cost no wall time.
        ``timeout`` is in real seconds; TimeoutError when the execution is still running then.
        """
        view = self.server.emulator.executions.describe(
            self.account_id, self.region, flow, name, wait_seconds=timeout)
        if view.status == "Running":
            raise TimeoutError(f"execution {flow}/{name} still running after {timeout} s")
        return execution_to_wire(view)

    def wait_for_schedule(self, flow: str, schedule: str, *, fires: int | None = None,
                          timeout: float = 30.0) -> dict[str, Any]:
        """Block until schedule ``schedule`` of ``flow`` fires next (with ``fires``: until it
        has fired that many times since its creation) and return the execution it started
        last, as DescribeExecution answers it then (``Name``, ``Status``, ...;
        the execution may still be running: wait for it with :meth:`wait_for_execution`).

        While the engine is idle the virtual clock jumps to the schedule's next instant, so a
        daily schedule fires in milliseconds of wall time (unless inside
        :meth:`auto_advance_disabled`). Only while somebody waits here does a schedule make
        virtual time jump: schedules recur forever. ``timeout`` is in real seconds;
        TimeoutError when the schedule has not fired by then."""
        emulator = self.server.emulator
        before = emulator.schedules.describe(self.account_id, self.region, flow, schedule)
        if before.next_fire_at is None:
            raise ValueError(f"schedule {flow}/{schedule} is disabled: it never fires")

        wanted = before.fire_count + 1 if fires is None else fires

        def fired() -> bool:
            row = emulator.schedules.describe(self.account_id, self.region, flow, schedule)
            return row.fire_count >= wanted

        key = (self.account_id, self.region, flow, schedule)
        if not emulator.flow_engine.wait_for_schedule(key, fired, timeout):
            raise TimeoutError(f"schedule {flow}/{schedule} did not fire within {timeout} s")
        row = emulator.schedules.describe(self.account_id, self.region, flow, schedule)
        return execution_to_wire(emulator.executions.describe(
            self.account_id, self.region, flow, row.last_execution))

    def wait_for_timer_trigger(self, function: str, trigger: str, *, fires: int | None = None,
                               timeout: float = 30.0) -> int:
        """Block until timer trigger ``trigger`` of ``function`` fires next (with ``fires``:
        until it has fired that many times since its creation) and its invocation has run;
        the number of fires. Virtual time jumps to its next instant as for
        :meth:`wait_for_schedule`. TimeoutError after ``timeout`` real seconds."""
        emulator = self.server.emulator
        before = emulator.triggers.get(self.account_id, self.region, function, trigger)
        if before.next_fire_at is None:
            raise ValueError(f"timer trigger {function}/{trigger} is disabled: it never fires")
        wanted = before.fire_count + 1 if fires is None else fires

        def fired() -> bool:
            row = emulator.triggers.get(self.account_id, self.region, function, trigger)
            return row.fire_count >= wanted

        key = (self.account_id, self.region, f"fc:{function}", trigger)
        if not emulator.flow_engine.wait_for_schedule(key, fired, timeout):
            raise TimeoutError(f"timer trigger {function}/{trigger} did not fire within "
                               f"{timeout} s")
        self.wait_for_async_invocations(timeout=timeout)
        return emulator.triggers.get(self.account_id, self.region, function,
                                     trigger).fire_count

    @contextmanager
    def auto_advance_disabled(self) -> Iterator[None]:
        """Inside the block virtual time moves only through :meth:`advance`."""
        engine = self.server.emulator.flow_engine
        previous, engine.auto_advance = engine.auto_advance, False
        try:
            yield
        finally:
            engine.auto_advance = previous

    def invocations(self, function_name: str, limit: int = 20) -> list[Any]:
        """Recent invocation records of a function, newest first."""
        return self.server.emulator.functions.recent_invocations(
            self.account_id, self.region, function_name, limit)

    def load_mocks(self, mocks: str | Path | Mapping[str, Any]) -> dict[str, Any]:
        """Load mocked task results: a mock file's path, or its content as a mapping (either
        layout); ValueError says what is wrong. Returns what is loaded now."""
        store = self.server.emulator.mocks
        try:
            if isinstance(mocks, Mapping):
                listing = store.load(dict(mocks), "mock_cloud(mocks=...)")
            else:
                listing = store.load_file(Path(mocks))
        except InvalidValue as exc:
            raise ValueError(exc.message) from None
        return listing.to_json()

    def clear_mocks(self) -> None:
        """Forget every loaded mock."""
        self.server.emulator.mocks.clear()

    def reset(self) -> None:
        """Delete every resource; identity and clock stay."""
        self.server.emulator.reset()

    def health(self) -> dict[str, Any]:
        """The admin health document (``GET /_emulator/health``): identity, clock and CloudFlow
        engine counts (``cloudflow.runningExecutions``, ``pendingTimers``, ``inFlight``)."""
        with urllib.request.urlopen(f"{self.url}/_emulator/health", timeout=10) as answer:
            data: dict[str, Any] = json.loads(answer.read())
        return data

    def wait_for_long_polls(self, count: int = 1, *, timeout: float = 10.0) -> None:
        """Block until at least ``count`` callers are parked waiting for executions to end
        (DescribeExecution with ``WaitTimeSeconds``, StartSyncExecution, or
        :meth:`wait_for_execution` in another thread), so a test can make something happen
        only once they wait. ``timeout`` is in real seconds; TimeoutError after it."""
        if not self.server.emulator.flow_engine.waiters.wait_parked(count, timeout):
            raise TimeoutError(f"fewer than {count} long poll(s) parked after {timeout} s")

    def wait_for_engine_idle(self, *, timeout: float = 10.0) -> None:
        """Block until the CloudFlow engine has nothing in flight: the first steps of an
        execution whose StartExecution was just answered (they run after the answer, as on
        the cloud), task results being delivered, tasks being carried out. A Wait parked on
        a timer that is not due yet counts as idle. ``timeout`` is in real seconds;
        TimeoutError after it."""
        if not self.server.emulator.flow_engine.wait_idle(timeout):
            raise TimeoutError(f"the CloudFlow engine still had work in flight after {timeout} s")

    def wait_for_async_invocations(self, *, timeout: float = 30.0) -> None:
        """Block until every asynchronous FC invocation accepted so far has finished (its
        record is in :meth:`invocations`). ``timeout`` is in real seconds; TimeoutError after
        it."""
        if not self.server.emulator.functions.wait_async(timeout):
            raise TimeoutError(f"asynchronous invocations still running after {timeout} s")

    def target(self, url: str) -> str | None:
        """The emulator URL for a cloud ``url``; None for loopback; raises for other hosts."""
        return routing.Routing(self._routes()).target(url)

    def _routes(self) -> dict[Any, str]:
        return {EMULATED_HOSTS: self.endpoint}

    # --- the deploy CLI inside this cloud (deployer.cli.in_process, deployer.testing.projects)

    def workspace(self, project_dir: str | Path) -> Path:
        """Where ``deploy`` commands run inside this cloud keep what they would write under
        ``<project_dir>/.deploy/`` (zips, rendered flows, deployment records, locks)."""
        from deployer.testing.projects import workspace

        return workspace(self, Path(project_dir))

    def deploy_project(self, project_dir: str | Path = ".", **options: Any) -> Any:
        """Deploy the project at ``project_dir`` into this cloud, as ``deploy up --yes`` does;
        see :func:`deployer.testing.projects.deploy_project`."""
        from deployer.testing.projects import deploy_project

        return deploy_project(self, Path(project_dir), **options)

    def _activated(self, *, intercepts: bool) -> AbstractContextManager[object]:
        """This cloud handed to the ``deploy`` CLI of this process while the block runs."""
        from deployer.testing import active

        return active.activate(active.handle(self, intercepts=intercepts))



@contextmanager
def _in_process(cloud: LocalCloud) -> Iterator[InProcessTransport]:
    """The SDK routing with the emulator as its in-process endpoint, for the emulated cloud
    hosts and for the emulator's own address (``cloud.config()`` clients); its streams end
    before the server stops."""
    transport = InProcessTransport(cloud.server)
    port = cloud.server.port
    addresses = {cloud.endpoint: transport, f"localhost:{port}": transport}
    try:
        with routing.Routing({EMULATED_HOSTS: transport}, addresses=addresses).install():
            yield transport
    finally:
        transport.close()


@contextmanager
def _credentials_env(cloud: LocalCloud) -> Iterator[None]:
    from alibabacloud_credentials.utils import auth_util

    env = {"ALIBABA_CLOUD_ACCESS_KEY_ID": cloud.access_key_id,
           "ALIBABA_CLOUD_ACCESS_KEY_SECRET": cloud.access_key_secret}
    with mock.patch.dict(os.environ, env), ExitStack() as stack:
        os.environ.pop("ALIBABA_CLOUD_SECURITY_TOKEN", None)
        for attr, value in (("environment_access_key_id", cloud.access_key_id),
                            ("environment_access_key_secret", cloud.access_key_secret),
                            ("environment_security_token", None)):
            stack.enter_context(mock.patch.object(auth_util, attr, value))
        yield


class mock_cloud:
    """Run an in-process local cloud; a context manager (yields :class:`LocalCloud`) and a
    decorator for sync and async test functions.

    ``state_dir`` defaults to a temporary directory removed on exit (whose answers then never
    wait for the disk: nothing of it outlives the process); ``clock`` to a new
    :class:`VirtualClock`; ``runtime`` to the process runtime. ``intercept=False`` installs
    no routing and leaves the environment untouched (use ``cloud.config()``).
    ``throttle="cloud"`` applies the cloud's documented API quotas (docs/emulator.md).
    ``mocks`` (a mock file's path, or its content as a mapping) loads mocked task results
    (docs/emulator.md "Mocked integrations"); an execution picks a test case with an
    ``ExecutionName`` ending in ``#<case>``.
    ``retention`` (:class:`deployer.emulator.retention.Retention`, seconds of the clock)
    says how long ended executions and invocation logs are kept (default: 30 days each).
    ``step_latency`` and ``cold_start`` (seconds, default 0: exact, whatever the clock) are
    the latency model (docs/runtime.md "Latency model"): each CloudFlow step arrives
    ``step_latency`` late; a new function instance spends ``cold_start`` between importing its
    module and its first call (on the virtual clock that much virtual time passes).
    """

    def __init__(self, *, region: str = "cn-hangzhou", clock: Clock | None = None,
                 runtime: FunctionRuntime | None = None, state_dir: Path | None = None,
                 intercept: bool = True, step_latency: float = 0.0,
                 cold_start: float = 0.0, console: bool = False, throttle: str = "off",
                 retention: Retention | None = None,
                 mocks: str | Path | Mapping[str, Any] | None = None) -> None:
        self.throttle = throttle
        self.retention = retention
        self.mocks = mocks
        self.step_latency = step_latency
        self.cold_start = cold_start
        self.console = console
        self.region = region
        self.clock = clock
        self.runtime = runtime
        self.state_dir = state_dir
        self.intercept = intercept
        self._stack: ExitStack | None = None

    def __enter__(self) -> LocalCloud:
        stack = ExitStack()
        try:
            state_dir = self.state_dir
            if state_dir is None:
                tmp = tempfile.mkdtemp(prefix="deployer-cloud-")
                stack.callback(shutil.rmtree, tmp, True)
                state_dir = Path(tmp)
            server = EmulatorServer(state_dir, "127.0.0.1", 0, self.clock or VirtualClock(),
                                    self.runtime, region=self.region,
                                    step_latency=self.step_latency,
                                    cold_start=self.cold_start, console=self.console,
                                    throttle=self.throttle,
                                    durable=self.state_dir is not None,
                                    retention=self.retention or DEFAULT_RETENTION)
            stack.callback(server.stop)
            server.start()
            cloud = LocalCloud(server, self.region)
            if self.mocks is not None:
                cloud.load_mocks(self.mocks)
            if self.intercept:
                stack.enter_context(_in_process(cloud))
                stack.enter_context(_credentials_env(cloud))
            stack.enter_context(cloud._activated(intercepts=self.intercept))
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return cloud

    def __exit__(self, *exc: object) -> None:
        stack, self._stack = self._stack, None
        if stack is not None:
            stack.close()

    def __call__(self, fn: F) -> F:
        if asyncio.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                with mock_cloud(region=self.region, clock=self.clock, runtime=self.runtime,
                                state_dir=self.state_dir, intercept=self.intercept,
                                step_latency=self.step_latency, cold_start=self.cold_start,
                                console=self.console, throttle=self.throttle,
                                retention=self.retention, mocks=self.mocks):
                    return await fn(*args, **kwargs)
            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with mock_cloud(region=self.region, clock=self.clock, runtime=self.runtime,
                            state_dir=self.state_dir, intercept=self.intercept,
                            step_latency=self.step_latency, cold_start=self.cold_start,
                            console=self.console, throttle=self.throttle,
                            retention=self.retention, mocks=self.mocks):
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]
