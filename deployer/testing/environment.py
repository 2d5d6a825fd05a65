"""``mock_cloud()``: an in-process emulator that the official SDKs reach transparently.

Like moto for boto3, it intercepts the HTTP layer the Alibaba SDKs use — ``requests``
(``Session.send``, sync clients) and ``aiohttp`` (``ClientSession._request``, ``*_async``
clients) — and sends every request for an emulated cloud host (``fcv3.<region>.aliyuncs.com``,
``<account>.<region>.fc.aliyuncs.com``, ``ram.aliyuncs.com``, ``sts[.<region>].aliyuncs.com``,
``<region>.fnf.aliyuncs.com``; http or https) to the emulator, keeping the Host header the
client signed. Requests to loopback addresses pass through; any other host raises
:class:`UnmockedRequestError` naming the URL, so nothing leaves the machine.

Inside the block ``ALIBABA_CLOUD_ACCESS_KEY_ID/SECRET`` are the emulator's keys (restored
afterwards), both in ``os.environ`` and in the credentials library's import-time copy, so the
default credentials chain yields them. Time is a :class:`VirtualClock` unless given; virtual
time belongs to this one emulator instance.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, TypeVar
from unittest import mock
from urllib.parse import urlsplit, urlunsplit

from deployer.emulator.clock import Clock, VirtualClock
from deployer.emulator.server import EmulatorServer
from deployer.emulator.services.ports import FunctionRuntime

__all__ = ["EMULATED_HOSTS", "LocalCloud", "UnmockedRequestError", "mock_cloud"]

F = TypeVar("F", bound=Callable[..., Any])

EMULATED_HOSTS = re.compile(
    r"^(?:fcv3\.[a-z0-9-]+|\d+\.[a-z0-9-]+\.fc|[a-z0-9-]+\.fc|fc\.[a-z0-9-]+|ram"
    r"|sts(?:-vpc)?(?:\.[a-z0-9-]+)?|[a-z0-9-]+\.fnf|fnf\.[a-z0-9-]+)\.aliyuncs\.com$"
)


class UnmockedRequestError(ConnectionError):
    """A request inside ``mock_cloud()`` went to a host the emulator does not serve."""


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


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

    def now(self) -> float:
        return self.clock.now()

    def advance(self, seconds: float) -> float:
        """Move the virtual clock forward (TypeError on a real clock); timers that become due
        fire at once (asynchronously, on the engine)."""
        advance = getattr(self.clock, "advance", None)
        if advance is None:
            raise TypeError("this local cloud runs on the real clock")
        now = float(advance(seconds))
        self.server.emulator.flow_engine.clock_moved()
        return now

    def wait_for_execution(self, flow: str, name: str, *, timeout: float = 30.0) -> dict[str, Any]:
        """Block until the execution ends and return DescribeExecution-like data (wire keys:
        ``Name``, ``FlowName``, ``Status``, ``Input``, ``Output``, ``StartedTime``,
        ``StoppedTime``).

        While nothing is running, the engine jumps the virtual clock to the next Wait or retry
        timer (unless inside :meth:`auto_advance_disabled`), so long Waits cost no wall time.
        ``timeout`` is in real seconds; TimeoutError when the execution is still running then.
        """
        from deployer.fdl.interpreter.history import format_time

        view = self.server.emulator.executions.describe(
            self.account_id, self.region, flow, name, wait_seconds=timeout)
        if view.status == "Running":
            raise TimeoutError(f"execution {flow}/{name} still running after {timeout} s")
        data: dict[str, Any] = {"Name": view.name, "FlowName": view.flow_name,
                                "Status": view.status, "Input": view.input,
                                "StartedTime": format_time(view.started_at)}
        if view.output is not None:
            data["Output"] = view.output
        if view.stopped_at is not None:
            data["StoppedTime"] = format_time(view.stopped_at)
        return data

    @contextmanager
    def auto_advance_disabled(self) -> Iterator[None]:
        """Inside the block virtual time moves only through :meth:`advance`."""
        engine = self.server.emulator.flow_engine
        previous, engine.auto_advance = engine.auto_advance, False
        try:
            yield
        finally:
            engine.auto_advance = previous
            engine.notify()

    def invocations(self, function_name: str, limit: int = 20) -> list[Any]:
        """Recent invocation records of a function, newest first."""
        return self.server.emulator.functions.recent_invocations(
            self.account_id, self.region, function_name, limit)

    def reset(self) -> None:
        """Delete every resource; identity and clock stay."""
        self.server.emulator.reset()

    def target(self, url: str) -> str | None:
        """The emulator URL for a cloud ``url``; None for loopback; raises for other hosts."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if _is_loopback(host):
            return None
        if not EMULATED_HOSTS.match(host):
            raise UnmockedRequestError(
                f"mock_cloud() blocked a request to {url}: host {host!r} is not emulated "
                "(only Function Compute, CloudFlow, RAM and STS endpoints are)")
        return urlunsplit(("http", self.endpoint, parts.path or "/", parts.query, ""))


@contextmanager
def _intercept(cloud: LocalCloud) -> Iterator[None]:
    import aiohttp
    import requests

    real_send = requests.Session.send
    real_request = aiohttp.ClientSession._request

    def send(session: requests.Session, request: requests.PreparedRequest, **kwargs: Any) -> Any:
        target = cloud.target(request.url or "")
        if target is not None:
            request = request.copy()
            request.url = target
            kwargs["verify"] = False
            kwargs["proxies"] = {}
        return real_send(session, request, **kwargs)

    async def _request(session: aiohttp.ClientSession, method: str, str_or_url: Any,
                       **kwargs: Any) -> Any:
        target = cloud.target(str(str_or_url))
        if target is not None:
            str_or_url = target
            kwargs["ssl"] = False
            kwargs["proxy"] = None
        return await real_request(session, method, str_or_url, **kwargs)

    with mock.patch.object(requests.Session, "send", send), \
            mock.patch.object(aiohttp.ClientSession, "_request", _request):
        yield


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

    ``state_dir`` defaults to a temporary directory removed on exit; ``clock`` to a new
    :class:`VirtualClock`; ``runtime`` to the process runtime. ``intercept=False`` leaves
    ``requests``/``aiohttp`` and the environment untouched (use ``cloud.config()``).
    """

    def __init__(self, *, region: str = "cn-hangzhou", clock: Clock | None = None,
                 runtime: FunctionRuntime | None = None, state_dir: Path | None = None,
                 intercept: bool = True, step_latency: float = 0.0) -> None:
        self.step_latency = step_latency
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
                                    step_latency=self.step_latency)
            stack.callback(server.stop)
            server.start()
            cloud = LocalCloud(server, self.region)
            if self.intercept:
                stack.enter_context(_intercept(cloud))
                stack.enter_context(_credentials_env(cloud))
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
                                step_latency=self.step_latency):
                    return await fn(*args, **kwargs)
            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with mock_cloud(region=self.region, clock=self.clock, runtime=self.runtime,
                            state_dir=self.state_dir, intercept=self.intercept,
                                step_latency=self.step_latency):
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]
