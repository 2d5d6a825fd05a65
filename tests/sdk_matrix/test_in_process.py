"""mock_cloud() answers the official SDKs in-process: no socket, the wire's checks all the same.

Sync (requests) and async (aiohttp) calls of both SDK cores — darabonba (the API clients) and
Tea (the credentials library's STS calls) — on the cloud's host names and on the emulator's own
address reach the emulator without a connection being opened; errors come back as the SDKs'
exceptions; signatures, freshness and RAM authorization are checked as over HTTP; long polls
and event streams work in both worlds; threads and asyncio tasks call at once. Besides the
normal suite, ``.ci/sdk-matrix/run`` runs this module against the lowest and the highest SDK,
aiohttp and requests versions ``pyproject.toml`` allows.
"""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import io
import json
import socket
import threading
import time
import zipfile
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
import requests
from alibabacloud_credentials.client import Client as CredentialClient
from alibabacloud_credentials.models import Config as CredentialConfig
from alibabacloud_fc20230330 import models as fc
from alibabacloud_fc20230330.client import Client as FcClient
from alibabacloud_fnf20190315 import models as fnf
from alibabacloud_fnf20190315.client import Client as FnfClient
from alibabacloud_ram20150501 import models as ram
from alibabacloud_sts20150401.client import Client as StsClient
from alibabacloud_tea_openapi import models as open_api

from deployer.testing import EchoRuntime, LocalCloud, mock_cloud
from tests.emulator.wire import acs_date, signed_headers

REGION = "cn-shanghai"
LIST_FUNCTIONS = "/2023-03-30/functions"
PASS = ("Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: p\nStates:\n"
        "  - Type: Pass\n    Name: p\n    End: true\n")
WAIT = ("Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: w\nStates:\n"
        "  - Type: Wait\n    Name: w\n    Seconds: 300\n    End: true\n")


def _trust(**principal: list[str]) -> str:
    return json.dumps({"Version": "1", "Statement": [{
        "Effect": "Allow", "Action": "sts:AssumeRole", "Principal": principal}]})


def _zip() -> str:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("index.py", "def handler(event, context):\n    return event\n")
    return base64.b64encode(buf.getvalue()).decode()


@dataclasses.dataclass
class RoleRuntime(EchoRuntime):
    """Answers a function's role credentials (as FC hands them to its instances) as JSON."""

    def invoke(self, spec: Any, event: bytes, *, request_id: str, tail_logs: bool) -> Any:
        answer = super().invoke(spec, event, request_id=request_id, tail_logs=tail_logs)
        creds = spec.credentials() if spec.credentials is not None else None
        payload = json.dumps(None if creds is None else {
            "id": creds.access_key_id, "secret": creds.access_key_secret,
            "token": creds.security_token}).encode()
        return dataclasses.replace(answer, payload=payload)


@pytest.fixture
def cloud() -> Iterator[LocalCloud]:
    with mock_cloud(runtime=RoleRuntime(), region=REGION) as local:
        yield local


@pytest.fixture
def no_sockets(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every attempt to resolve a name or open a connection fails the call and is recorded
    (the emulator's own listening socket was opened before)."""
    attempts: list[str] = []

    def refuse(what: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            attempts.append(f"{what}{args[1:] if what.startswith('socket.') else args}")
            raise OSError(f"test guard: {what} called")
        return call

    for name in ("connect", "connect_ex"):
        monkeypatch.setattr(socket.socket, name, refuse(f"socket.{name}"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    return attempts


def _default_config(**values: Any) -> Any:
    """A client config as application code writes it: region and the default credentials
    chain (mock_cloud() put the emulator's keys in the environment), no endpoint."""
    return open_api.Config(credential=CredentialClient(), region_id=REGION, **values)


def _fc_client(cloud: LocalCloud) -> Any:
    return FcClient(_default_config(endpoint=f"{cloud.account_id}.{REGION}.fc.aliyuncs.com"))


def test_sync_calls_on_cloud_hosts_and_the_own_address_open_no_socket(
        cloud: LocalCloud, no_sockets: list[str]) -> None:
    functions = _fc_client(cloud)
    functions.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="f", runtime="python3.10", handler="index.handler",
        code=fc.InputCodeLocation(zip_file=_zip()))))
    assert functions.invoke_function("f", fc.InvokeFunctionRequest(
        body=b"{}")).body.read() == b"null"  # no role: no credentials
    flows = FnfClient(_default_config())
    flows.create_flow(fnf.CreateFlowRequest(name="p", definition=PASS.format(name="p"),
                                            description="", type="FDL"))
    flows.start_execution(fnf.StartExecutionRequest(flow_name="p", execution_name="e",
                                                    input='{"k": 1}'))
    done = cloud.fnf_client().describe_execution(fnf.DescribeExecutionRequest(  # own address
        flow_name="p", execution_name="e", wait_time_seconds=10)).body
    assert (done.status, json.loads(done.output)) == ("Succeeded", {"k": 1})
    assert StsClient(_default_config()).get_caller_identity().body.account_id \
        == cloud.account_id
    assert cloud.ram_client().create_role(ram.CreateRoleRequest(  # own address
        role_name="r", assume_role_policy_document=_trust(Service=["fc.aliyuncs.com"]))
    ).body.role.arn == f"acs:ram::{cloud.account_id}:role/r"
    answer = requests.get(f"{cloud.url}/_emulator/health", timeout=5)
    assert answer.json()["status"] == "ok"
    assert answer.headers["Server"].startswith("cloudflow-deployer-emulator/")
    assert no_sockets == []


def test_async_calls_open_no_socket(cloud: LocalCloud, no_sockets: list[str]) -> None:
    async def scenario() -> tuple[Any, ...]:
        functions = _fc_client(cloud)
        await functions.create_function_async(fc.CreateFunctionRequest(
            body=fc.CreateFunctionInput(function_name="f", runtime="python3.10",
                                        handler="index.handler",
                                        code=fc.InputCodeLocation(zip_file=_zip()))))
        invoked = await functions.invoke_function_async("f", fc.InvokeFunctionRequest(
            body=b"{}"))
        flows = FnfClient(_default_config())
        await flows.create_flow_async(fnf.CreateFlowRequest(
            name="p", definition=PASS.format(name="p"), description="", type="FDL"))
        await flows.start_execution_async(fnf.StartExecutionRequest(
            flow_name="p", execution_name="e", input='{"k": 2}'))
        done = await cloud.fnf_client().describe_execution_async(fnf.DescribeExecutionRequest(
            flow_name="p", execution_name="e", wait_time_seconds=10))
        who = await StsClient(_default_config()).get_caller_identity_async()
        async with aiohttp.ClientSession() as session, \
                session.get(f"{cloud.url}/_emulator/health") as health:
            status = (await health.json())["status"]
        return (invoked.body.read() if hasattr(invoked.body, "read") else invoked.body,
                done.body.status, json.loads(done.body.output), who.body.account_id, status)

    assert asyncio.run(scenario()) == (b"null", "Succeeded", {"k": 2}, cloud.account_id, "ok")
    assert no_sockets == []


def _role_session(cloud: LocalCloud) -> dict[str, str]:
    """STS credentials of role ``caller`` (allowed to assume roles), as FC hands them to a
    function; and role ``target``, trusting the account."""
    roles = cloud.ram_client()
    roles.create_role(ram.CreateRoleRequest(
        role_name="caller", assume_role_policy_document=_trust(Service=["fc.aliyuncs.com"])))
    roles.attach_policy_to_role(ram.AttachPolicyToRoleRequest(
        role_name="caller", policy_type="System", policy_name="AliyunSTSAssumeRoleAccess"))
    roles.create_role(ram.CreateRoleRequest(
        role_name="target",
        assume_role_policy_document=_trust(RAM=[f"acs:ram::{cloud.account_id}:root"])))
    functions = cloud.fc_client()
    functions.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="creds", runtime="python3.10", handler="index.handler",
        role=f"acs:ram::{cloud.account_id}:role/caller",
        code=fc.InputCodeLocation(zip_file=_zip()))))
    out = functions.invoke_function("creds", fc.InvokeFunctionRequest(body=b"{}"))
    creds: dict[str, str] = json.loads(out.body.read())
    return creds


def test_the_tea_core_of_the_credentials_library_too(cloud: LocalCloud,
                                                       no_sockets: list[str]) -> None:
    """alibabacloud-credentials calls STS through the older Tea core (its own requests and
    aiohttp code): AssumeRole for ``ram_role_arn``, sync and async, refused and granted."""
    caller = _role_session(cloud)

    def chain(**keys: str) -> CredentialClient:
        return CredentialClient(CredentialConfig(
            type="ram_role_arn", role_arn=f"acs:ram::{cloud.account_id}:role/target",
            role_session_name="tea-core", **keys))

    own = {"access_key_id": cloud.access_key_id, "access_key_secret": cloud.access_key_secret}
    with pytest.raises(Exception, match="Roles may not be assumed by root accounts"):
        chain(**own).get_credential()
    with pytest.raises(Exception, match="Roles may not be assumed by root accounts"):
        asyncio.run(chain(**own).get_credential_async())

    session = {"access_key_id": caller["id"], "access_key_secret": caller["secret"],
               "security_token": caller["token"]}
    granted = chain(**session).get_credential()
    assert granted.access_key_id.startswith("STS.") and granted.security_token
    later = asyncio.run(chain(**session).get_credential_async())
    assert later.access_key_id.startswith("STS.") and later.access_key_id != granted.access_key_id
    arn = StsClient(open_api.Config(
        access_key_id=granted.access_key_id, access_key_secret=granted.access_key_secret,
        security_token=granted.security_token, region_id=REGION)).get_caller_identity().body.arn
    assert arn == f"acs:ram::{cloud.account_id}:assumed-role/target/tea-core"
    assert no_sockets == []


def test_errors_are_the_sdks_exceptions_with_the_cloud_bodies(cloud: LocalCloud) -> None:
    flows = FnfClient(_default_config())
    with pytest.raises(Exception) as info:
        flows.describe_execution(fnf.DescribeExecutionRequest(flow_name="nope",
                                                              execution_name="e"))
    assert (info.value.code, info.value.status_code) == ("FlowNotExists", 404)
    functions = _fc_client(cloud)
    with pytest.raises(Exception) as info:
        functions.get_function("missing", fc.GetFunctionRequest())
    assert (info.value.code, info.value.status_code) == ("FunctionNotFound", 404)
    assert info.value.data["RequestId"].startswith("1-")

    async def scenario() -> list[tuple[str, int]]:
        seen = []
        for call in (lambda: flows.describe_execution_async(fnf.DescribeExecutionRequest(
                         flow_name="nope", execution_name="e")),
                     lambda: functions.get_function_async("missing", fc.GetFunctionRequest())):
            with pytest.raises(Exception) as failed:
                await call()
            seen.append((failed.value.code, failed.value.status_code))
        return seen

    assert asyncio.run(scenario()) == [("FlowNotExists", 404), ("FunctionNotFound", 404)]


def test_signatures_freshness_and_authorization_are_checked_as_on_the_wire(
        cloud: LocalCloud, no_sockets: list[str]) -> None:
    wrong = {"access_key_id": cloud.access_key_id, "access_key_secret": "wrong",
             "region_id": REGION}
    for client, call, code in (
            (FnfClient(open_api.Config(**wrong)),
             lambda c: c.list_flows(fnf.ListFlowsRequest()), "SignatureNotMatch"),
            (StsClient(open_api.Config(**wrong)),
             lambda c: c.get_caller_identity(), "SignatureDoesNotMatch"),
            (FcClient(open_api.Config(endpoint=f"fcv3.{REGION}.aliyuncs.com", **wrong)),
             lambda c: c.list_functions(fc.ListFunctionsRequest()), "SignatureNotMatch")):
        with pytest.raises(Exception) as info:
            call(client)
        assert (info.value.code, info.value.status_code) == (code, 403)

    async def refused() -> str:
        with pytest.raises(Exception) as info:
            await StsClient(open_api.Config(**wrong)).get_caller_identity_async()
        return str(info.value.code)

    assert asyncio.run(refused()) == "SignatureDoesNotMatch"

    # the same signed request twice: its nonce is spent the first time; an old one is stale
    url = f"{cloud.url}{LIST_FUNCTIONS}"
    signed = signed_headers(cloud, "GET", LIST_FUNCTIONS)
    assert requests.get(url, headers=signed, timeout=5).status_code == 200
    again = requests.get(url, headers=signed, timeout=5)
    assert (again.status_code, again.json()["Code"]) == (403, "SignatureNonceUsed")
    stale = requests.get(url, timeout=5, headers=signed_headers(
        cloud, "GET", LIST_FUNCTIONS, **{"x-acs-date": acs_date(time.time() - 3600)}))
    assert (stale.status_code, stale.json()["Code"]) == (403, "RequestTimeTooSkewed")

    # a role session whose policies allow nothing here: RAM refuses its CloudFlow call
    caller = _role_session(cloud)
    limited = FnfClient(open_api.Config(
        access_key_id=caller["id"], access_key_secret=caller["secret"],
        security_token=caller["token"], region_id=REGION))
    with pytest.raises(Exception) as info:
        limited.list_flows(fnf.ListFlowsRequest())
    assert (info.value.code, info.value.status_code) == ("AccessDenied", 403)
    assert info.value.data["AccessDeniedDetail"]["AuthAction"] == "fnf:ListFlows"
    assert no_sockets == []


def _next_event(lines: Iterator[str]) -> tuple[str, str]:
    """The next server-sent event's name and data (comments skipped)."""
    event, data = "", []
    for line in lines:
        if not line:
            if event or data:
                return event, "\n".join(data)
            continue
        name, _, value = line.partition(": ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    raise AssertionError("the stream ended")


def test_event_streams_are_read_as_they_come(cloud: LocalCloud, no_sockets: list[str]) -> None:
    functions = cloud.fc_client()
    functions.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="f", runtime="python3.10", handler="index.handler",
        code=fc.InputCodeLocation(zip_file=_zip()))))
    query = {"function": "f", "region": REGION}
    token = {"X-Emulator-Token": cloud.admin_token}  # the log endpoints want it
    with requests.get(f"{cloud.url}/_emulator/logs/stream", params=query, stream=True,
                      headers=token, timeout=10) as answer:
        assert answer.headers["Content-Type"].startswith("text/event-stream")
        lines = answer.iter_lines(decode_unicode=True)
        assert _next_event(lines)[0] == "ready"
        functions.invoke_function("f", fc.InvokeFunctionRequest(body=b"{}"))
        event, data = _next_event(lines)
        assert event == "invocation" and json.loads(data)["status"] == "Succeeded"

    async def scenario() -> list[str]:
        seen = []
        async with aiohttp.ClientSession() as session, session.get(
                f"{cloud.url}/_emulator/logs/stream", params=query,
                headers=token) as streamed:
            lines = streamed.content.__aiter__()
            while len(seen) < 2:
                line = (await lines.__anext__()).decode().strip()
                if line.startswith("event: "):
                    seen.append(line[7:])
                    if line == "event: ready":
                        await functions.invoke_function_async(
                            "f", fc.InvokeFunctionRequest(body=b"{}"))
        return seen

    assert asyncio.run(scenario()) == ["ready", "invocation"]
    assert no_sockets == []


def test_long_polls_wait_without_a_socket(cloud: LocalCloud, no_sockets: list[str]) -> None:
    flows = FnfClient(_default_config())
    flows.create_flow(fnf.CreateFlowRequest(name="w", definition=WAIT.format(name="w"),
                                            description="", type="FDL"))

    def describe(name: str) -> str:
        return str(flows.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="w", execution_name=name, wait_time_seconds=30)).body.status)

    with cloud.auto_advance_disabled():
        flows.start_execution(fnf.StartExecutionRequest(flow_name="w", execution_name="sync"))
        seen: list[str] = []
        parked = threading.Thread(target=lambda: seen.append(describe("sync")))
        parked.start()
        cloud.wait_for_long_polls(1)
        cloud.advance(300)
        parked.join(timeout=30)
        assert seen == ["Succeeded"]

        async def scenario() -> str:
            await flows.start_execution_async(fnf.StartExecutionRequest(
                flow_name="w", execution_name="async"))
            waiting = asyncio.ensure_future(flows.describe_execution_async(
                fnf.DescribeExecutionRequest(flow_name="w", execution_name="async",
                                             wait_time_seconds=30)))
            await asyncio.to_thread(cloud.wait_for_long_polls, 1)
            cloud.advance(300)
            return str((await waiting).body.status)

        assert asyncio.run(scenario()) == "Succeeded"
    assert no_sockets == []


def test_a_long_poll_past_the_read_timeout_fails_as_on_the_wire(cloud: LocalCloud) -> None:
    impatient = FnfClient(_default_config(read_timeout=200))
    impatient.create_flow(fnf.CreateFlowRequest(name="w", definition=WAIT.format(name="w"),
                                                description="", type="FDL"))
    request = fnf.DescribeExecutionRequest(flow_name="w", execution_name="e",
                                           wait_time_seconds=30)
    with cloud.auto_advance_disabled():
        impatient.start_execution(fnf.StartExecutionRequest(flow_name="w", execution_name="e"))
        with pytest.raises(Exception, match=r"(?i)timed? ?out"):
            impatient.describe_execution(request)
        with pytest.raises(Exception, match=r"(?i)timed? ?out"):
            asyncio.run(impatient.describe_execution_async(request))


def test_threads_and_tasks_call_at_once(cloud: LocalCloud, no_sockets: list[str]) -> None:
    """(Over plain HTTP: the SDK's async https calls each load the CA bundle, which costs more
    than the calls.)"""
    flows = FnfClient(_default_config(protocol="http"))
    flows.create_flow(fnf.CreateFlowRequest(name="p", definition=PASS.format(name="p"),
                                            description="", type="FDL"))
    statuses: dict[str, str] = {}

    def run(prefix: str) -> None:
        client = FnfClient(_default_config(protocol="http"))
        for i in range(4):
            name = f"{prefix}-{i}"
            client.start_execution(fnf.StartExecutionRequest(
                flow_name="p", execution_name=name, input=json.dumps({"n": name})))
            done = client.describe_execution(fnf.DescribeExecutionRequest(
                flow_name="p", execution_name=name, wait_time_seconds=10)).body
            statuses[name] = f"{done.status} {json.loads(done.output)['n']}"

    threads = [threading.Thread(target=run, args=(f"t{t}",)) for t in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert statuses == {f"t{t}-{i}": f"Succeeded t{t}-{i}" for t in range(12) for i in range(4)}

    async def one(name: str) -> str:
        await flows.start_execution_async(fnf.StartExecutionRequest(
            flow_name="p", execution_name=name, input=json.dumps({"n": name})))
        done = await flows.describe_execution_async(fnf.DescribeExecutionRequest(
            flow_name="p", execution_name=name, wait_time_seconds=10))
        return f"{done.body.status} {json.loads(done.body.output)['n']}"

    async def scenario() -> list[str]:
        return list(await asyncio.gather(*(one(f"a{i}") for i in range(40))))

    assert asyncio.run(scenario()) == [f"Succeeded a{i}" for i in range(40)]
    assert no_sockets == []


def test_what_cannot_be_handed_over_goes_over_the_socket(cloud: LocalCloud) -> None:
    """A body the transport cannot represent (a generator) is sent over HTTP, as before; the
    front door's body limit holds in-process too."""
    assert cloud.server.http is not None
    accepted = cloud.server.http.accepted
    cloud.sts_client().get_caller_identity()
    assert cloud.server.http.accepted == accepted  # in-process: no connection

    streamed = requests.post(f"{cloud.url}/2023-03-30/functions", timeout=10,
                             data=(part for part in (b'{"functionName":', b' "x"}')))
    assert streamed.status_code in (400, 403) and streamed.json()["Code"]
    assert cloud.server.http.accepted == accepted + 1

    door = cloud.server.http.door
    door.limits = dataclasses.replace(door.limits, max_body=1024)
    refused = requests.post(f"{cloud.url}/2023-03-30/functions", data=b"x" * 2048, timeout=10)
    assert (refused.status_code, refused.json()["Code"]) == (400, "EntityTooLarge")
    assert cloud.server.http.accepted == accepted + 1


def test_the_engine_keeps_pace_with_a_busy_caller(cloud: LocalCloud,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A caller sharing the interpreter lock does not run ahead of the flow engine: an
    in-process call returns once the steps it queued are committed (bounded by
    ``transport.SETTLE``, raised here so a slow machine cannot make the test flaky). The
    answer itself is the wire's: StartExecution still answers before any step ran."""
    from deployer.testing import transport

    monkeypatch.setattr(transport, "SETTLE", 60.0)
    flows = FnfClient(_default_config(protocol="http"))
    flows.create_flow(fnf.CreateFlowRequest(name="p", definition=PASS.format(name="p"),
                                            description="", type="FDL"))
    for i in range(5):
        started = flows.start_execution(fnf.StartExecutionRequest(
            flow_name="p", execution_name=f"e{i}")).body
        assert started.status == "Running"
        now = flows.describe_execution(fnf.DescribeExecutionRequest(  # no long poll
            flow_name="p", execution_name=f"e{i}")).body
        assert now.status == "Succeeded"

    async def scenario() -> str:
        await flows.start_execution_async(fnf.StartExecutionRequest(
            flow_name="p", execution_name="a"))
        return str((await flows.describe_execution_async(fnf.DescribeExecutionRequest(
            flow_name="p", execution_name="a"))).body.status)

    assert asyncio.run(scenario()) == "Succeeded"
