"""mock_cloud()'s routing against the installed SDK and HTTP-library versions.

Sync and async calls of FC 3.0, CloudFlow, RAM and STS clients on their *default* endpoints
(https, real host names) reach the emulator; loopback passes; every other host fails loudly
before a connection is made. Besides the normal suite, ``.ci/run`` runs this module in small
venvs pinned to the lowest and the highest versions ``pyproject.toml`` allows
(``ci/sdk-matrix/``).
"""

from __future__ import annotations

import asyncio
import base64
import io
import json
import zipfile
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
import requests
import requests.adapters
from alibabacloud_credentials.client import Client as CredentialClient
from alibabacloud_fc20230330 import models as fc
from alibabacloud_fc20230330.client import Client as FcClient
from alibabacloud_fnf20190315 import models as fnf
from alibabacloud_fnf20190315.client import Client as FnfClient
from alibabacloud_ram20150501 import models as ram
from alibabacloud_ram20150501.client import Client as RamClient
from alibabacloud_sts20150401.client import Client as StsClient
from alibabacloud_tea_openapi import models as open_api

from deployer.testing import EchoRuntime, LocalCloud, UnmockedRequestError, mock_cloud
from deployer.testing.routing import EMULATED_HOSTS, install

REGION = "cn-shanghai"
TRUST = json.dumps({"Version": "1", "Statement": [{
    "Effect": "Allow", "Action": "sts:AssumeRole",
    "Principal": {"Service": ["fnf.aliyuncs.com"]}}]})
PASS = ("Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: p\nStates:\n"
        "  - Type: Pass\n    Name: p\n    End: true\n")


def _zip() -> str:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("index.py", "def handler(event, context):\n    return event\n")
    return base64.b64encode(buf.getvalue()).decode()


def _default_config(**endpoint: str) -> Any:
    """A client config as application code writes it: region, default credentials and no
    endpoint (FC clients before 4.2 need one: the cloud's own is given)."""
    return open_api.Config(credential=CredentialClient(), region_id=REGION, **endpoint)


@pytest.fixture
def cloud() -> Iterator[LocalCloud]:
    with mock_cloud(runtime=EchoRuntime(), region=REGION) as local:
        yield local


def test_sync_clients_on_default_endpoints_reach_the_emulator(cloud: LocalCloud) -> None:
    functions = FcClient(_default_config(endpoint=f"{cloud.account_id}.{REGION}.fc.aliyuncs.com"))
    functions.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="echo", runtime="python3.10", handler="index.handler",
        code=fc.InputCodeLocation(zip_file=_zip()))))
    assert functions.invoke_function("echo", fc.InvokeFunctionRequest(
        body=b"ping")).body.read() == b"echo:ping"

    role = RamClient(_default_config()).create_role(ram.CreateRoleRequest(
        role_name="FlowRole", assume_role_policy_document=TRUST)).body.role
    assert role.arn == f"acs:ram::{cloud.account_id}:role/flowrole"

    flows = FnfClient(_default_config())
    flows.create_flow(fnf.CreateFlowRequest(name="p", definition=PASS.format(name="p"),
                                            description="", type="FDL", role_arn=role.arn))
    flows.start_execution(fnf.StartExecutionRequest(flow_name="p", execution_name="e",
                                                    input='{"k": 1}'))
    done = flows.describe_execution(fnf.DescribeExecutionRequest(
        flow_name="p", execution_name="e", wait_time_seconds=10)).body
    assert (done.status, json.loads(done.output)) == ("Succeeded", {"k": 1})

    identity = StsClient(_default_config()).get_caller_identity().body
    assert identity.account_id == cloud.account_id


def test_async_clients_on_default_endpoints_reach_the_emulator(cloud: LocalCloud) -> None:
    async def scenario() -> tuple[str, str, str]:
        functions = FcClient(_default_config(endpoint=f"fcv3.{REGION}.aliyuncs.com"))
        await functions.create_function_async(fc.CreateFunctionRequest(
            body=fc.CreateFunctionInput(function_name="echo", runtime="python3.10",
                                        handler="index.handler",
                                        code=fc.InputCodeLocation(zip_file=_zip()))))
        listed = await functions.list_functions_async(fc.ListFunctionsRequest())
        flows = FnfClient(_default_config())
        await flows.create_flow_async(fnf.CreateFlowRequest(
            name="p", definition=PASS.format(name="p"), description="", type="FDL"))
        await flows.start_execution_async(fnf.StartExecutionRequest(
            flow_name="p", execution_name="e"))
        done = await flows.describe_execution_async(fnf.DescribeExecutionRequest(
            flow_name="p", execution_name="e", wait_time_seconds=10))
        who = await StsClient(_default_config()).get_caller_identity_async()
        return listed.body.functions[0].function_name, done.body.status, who.body.account_id

    assert asyncio.run(scenario()) == ("echo", "Succeeded", cloud.account_id)


def test_loopback_requests_pass_unchanged(cloud: LocalCloud) -> None:
    assert requests.get(f"{cloud.url}/_emulator/health", timeout=10).json()["status"] == "ok"

    async def health() -> str:
        async with aiohttp.ClientSession() as session, \
                session.get(f"{cloud.url}/_emulator/health") as answer:
            return str((await answer.json())["status"])

    assert asyncio.run(health()) == "ok"

    async def relative() -> str:
        async with aiohttp.ClientSession(base_url=cloud.url) as session, \
                session.get("/_emulator/health") as answer:
            return str((await answer.json())["status"])

    assert asyncio.run(relative()) == "ok"


def test_every_other_host_fails_loudly(cloud: LocalCloud) -> None:
    with pytest.raises(UnmockedRequestError, match=r"https://example\.com/"):
        requests.get("https://example.com/", timeout=5)
    with pytest.raises(UnmockedRequestError, match=r"10\.1\.2\.3"):
        requests.post("http://10.1.2.3:8080/x", data=b"", timeout=5)

    async def attempts() -> list[str]:
        seen = []
        async with aiohttp.ClientSession(base_url="https://example.com") as elsewhere:
            with pytest.raises(UnmockedRequestError, match=r"https://example\.com/e"):
                elsewhere.get("/e")
        async with aiohttp.ClientSession() as session:
            for call in (lambda: session.get("https://example.com/a"),
                         lambda: session.request("PUT", url="http://example.org/b"),
                         lambda: session.ws_connect("wss://example.net/c"),
                         lambda: aiohttp.request("GET", "https://example.com/d")):
                with pytest.raises(UnmockedRequestError) as info:
                    call()
                seen.append(str(info.value).split()[2])
        return seen

    assert asyncio.run(attempts()) == ["https://example.com/a", "http://example.org/b",
                                       "wss://example.net/c", "https://example.com/d"]

    client = FcClient(open_api.Config(credential=CredentialClient(), endpoint="fc.example.org",
                                      region_id=REGION))
    with pytest.raises(Exception, match=r"fc\.example\.org"):
        client.list_functions(fc.ListFunctionsRequest())
    with pytest.raises(Exception, match=r"fc\.example\.org"):
        asyncio.run(client.list_functions_async(fc.ListFunctionsRequest()))


def test_install_routes_a_process_until_uninstalled() -> None:
    originals = (requests.adapters.HTTPAdapter.send, aiohttp.ClientSession.request,
                 aiohttp.ClientSession.get, aiohttp.request)
    with mock_cloud(runtime=EchoRuntime(), region=REGION, intercept=False) as cloud:
        config = open_api.Config(access_key_id=cloud.access_key_id,
                                 access_key_secret=cloud.access_key_secret, region_id=REGION)
        with install({EMULATED_HOSTS: cloud.endpoint}) as routing:
            assert StsClient(config).get_caller_identity().body.account_id == cloud.account_id
            assert routing.target("https://fcv3.cn-shanghai.aliyuncs.com/2023-03-30/x?y=1") \
                == f"http://{cloud.endpoint}/2023-03-30/x?y=1"
            assert routing.target("http://127.0.0.5:1/") is None
            # the innermost routing decides
            with install({r"ram\.aliyuncs\.com": "127.0.0.1:9"}), \
                    pytest.raises(UnmockedRequestError):
                requests.get("https://sts.aliyuncs.com/", timeout=5)
            assert StsClient(config).get_caller_identity().body.account_id == cloud.account_id
    assert (requests.adapters.HTTPAdapter.send, aiohttp.ClientSession.request,
            aiohttp.ClientSession.get, aiohttp.request) == originals
