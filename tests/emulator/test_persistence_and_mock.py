"""State survives a restart; mock_cloud() routes real cloud endpoints to the emulator."""

from __future__ import annotations

import asyncio
import os

import pytest
import requests
from alibabacloud_fc20230330 import models as fc
from alibabacloud_fc20230330.client import Client as FcClient
from alibabacloud_sts20150401.client import Client as StsClient
from alibabacloud_tea_openapi import models as open_api

from deployer.emulator.clock import VirtualClock
from deployer.emulator.server import EmulatorServer
from deployer.testing import UnmockedRequestError, mock_cloud
from deployer.testing.runtimes import EchoRuntime


def _creds():
    from alibabacloud_credentials.client import Client as CredentialClient

    return CredentialClient()


def test_state_survives_restart(tmp_path, zip_b64) -> None:
    with mock_cloud(state_dir=tmp_path, runtime=EchoRuntime(), intercept=False) as first:
        ident = (first.account_id, first.access_key_id, first.access_key_secret)
        first.fc_client().create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
            function_name="kept", runtime="python3.10", handler="index.handler",
            code=fc.InputCodeLocation(zip_file=zip_b64))))
    assert oct((tmp_path / "identity.json").stat().st_mode & 0o777) == "0o600"
    with mock_cloud(state_dir=tmp_path, runtime=EchoRuntime(), intercept=False) as second:
        assert (second.account_id, second.access_key_id, second.access_key_secret) == ident
        got = second.fc_client().get_function("kept", fc.GetFunctionRequest()).body
        assert got.function_name == "kept"
        assert second.fc_client().invoke_function(
            "kept", fc.InvokeFunctionRequest(body=b"x")).body.read() == b"echo:x"


def test_server_binds_loopback_and_free_port(tmp_path) -> None:
    server = EmulatorServer(tmp_path, clock=VirtualClock(), runtime=EchoRuntime())
    try:
        assert server.endpoint == f"127.0.0.1:{server.port}" and server.port > 0
    finally:
        server.stop()


def test_restart_on_the_same_port_right_after_stop(tmp_path) -> None:
    """Connections of the stopped server linger in TIME_WAIT; the restart must still bind."""
    first = EmulatorServer(tmp_path, clock=VirtualClock(), runtime=EchoRuntime()).start()
    port = first.port
    # "Connection: close": the server closes first, so its side of the port is left in TIME_WAIT
    # (as when a daemon process exits with clients connected)
    answer = requests.get(f"{first.url}/_emulator/health", headers={"Connection": "close"},
                          timeout=5)
    assert answer.status_code == 200
    first.stop()
    second = EmulatorServer(tmp_path, port=port, clock=VirtualClock(), runtime=EchoRuntime())
    try:
        second.start()
        assert requests.get(f"{second.url}/_emulator/health", timeout=5).status_code == 200
    finally:
        second.stop()


def test_real_endpoints_reach_the_emulator(zip_b64) -> None:
    with mock_cloud(runtime=EchoRuntime()) as cloud:
        assert os.environ["ALIBABA_CLOUD_ACCESS_KEY_ID"] == cloud.access_key_id
        # default credentials chain (no keys in the config), https and real hosts
        from alibabacloud_credentials.client import Client as CredentialClient

        client = FcClient(open_api.Config(credential=CredentialClient(),
                                          endpoint="fcv3.cn-shanghai.aliyuncs.com",
                                          region_id="cn-shanghai"))
        created = client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
            function_name="routed", runtime="python3.10", handler="index.handler",
            code=fc.InputCodeLocation(zip_file=zip_b64)))).body
        assert created.function_arn.startswith("acs:fc:cn-shanghai:")
        invoke = FcClient(cloud.config(
            endpoint=f"{cloud.account_id}.cn-shanghai.fc.aliyuncs.com", protocol="https"))
        assert invoke.invoke_function("routed", fc.InvokeFunctionRequest(
            body=b"1")).body.read() == b"echo:1"
        sts = StsClient(cloud.config(endpoint="sts.aliyuncs.com", protocol="https"))

        async def identity() -> str:
            return (await sts.get_caller_identity_async()).body.account_id

        assert asyncio.run(identity()) == cloud.account_id
        with pytest.raises(UnmockedRequestError, match=r"https://example\.com/"):
            requests.get("https://example.com/")
    assert os.environ.get("ALIBABA_CLOUD_ACCESS_KEY_ID") != cloud.access_key_id


def test_other_hosts_fail_loudly_through_the_sdk() -> None:
    with mock_cloud(runtime=EchoRuntime()):
        client = FcClient(open_api.Config(credential=_creds(), endpoint="fc.example.org"))
        with pytest.raises(Exception, match=r"fc\.example\.org"):
            client.list_functions(fc.ListFunctionsRequest())


@mock_cloud(runtime=EchoRuntime())
def test_decorator_sync() -> None:
    sts = StsClient(open_api.Config(credential=_creds(), endpoint="sts.aliyuncs.com"))
    assert sts.get_caller_identity().body.identity_type == "Account"


def test_decorator_async() -> None:
    @mock_cloud(runtime=EchoRuntime())
    async def scenario() -> str:
        sts = StsClient(open_api.Config(credential=_creds(),
                                        endpoint="sts.cn-hangzhou.aliyuncs.com"))
        return (await sts.get_caller_identity_async()).body.identity_type

    assert asyncio.run(scenario()) == "Account"


def test_pytest_fixtures(local_cloud, fc_client, sts_client) -> None:
    assert sts_client.get_caller_identity().body.account_id == local_cloud.account_id
    assert fc_client.list_functions(fc.ListFunctionsRequest()).body.functions == []
