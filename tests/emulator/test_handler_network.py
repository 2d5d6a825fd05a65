"""What handler code may reach (docs/runtime.md "Cloud calls from handlers"), through the
official FC SDK against an in-process emulator: clients the SDK routing does not wrap meet the
socket guard, the ECS metadata service is refused, and ``internetAccess: false`` closes every
non-loopback host while emulated endpoints stay routed. No attempt sends a packet: each is
refused before a connection, and the only host reached is the emulator on loopback."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from collections.abc import Iterator

import pytest
from alibabacloud_fc20230330 import models as fc_models
from alibabacloud_ram20150501 import models as ram_models

from deployer.testing.environment import LocalCloud, mock_cloud

ATTEMPTS = """
import http.client, json, os, socket, urllib.request
import requests
from alibabacloud_credentials.client import Client as Credentials
from alibabacloud_tea_openapi import models as open_api
from alibabacloud_sts20150401.client import Client as STS

def attempt(call):
    try:
        call()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return "reached"

def https_get(host):
    connection = http.client.HTTPSConnection(host, timeout=1)
    connection.request("GET", "/")

ATTEMPTS_OF_THIS_FUNCTION
"""

GUARDED = """
def handler(event, context):
    return {
        "urllib": attempt(lambda: urllib.request.urlopen("https://ecs.aliyuncs.com/", timeout=1)),
        "http.client": attempt(lambda: https_get("fcv3.cn-hangzhou.aliyuncs.com")),
        "metadata": attempt(lambda: requests.get("http://100.100.100.200/latest/", timeout=1)),
        "raw socket": attempt(lambda: socket.create_connection(("100.100.100.200", 80), 1)),
    }
"""

OFFLINE = """
def handler(event, context):
    config = open_api.Config(credential=Credentials(), region_id=os.environ["FC_REGION"])
    return {
        "sdk": STS(config).get_caller_identity().body.identity_type,
        "requests": attempt(lambda: requests.get("https://example.com/", timeout=1)),
        "raw socket": attempt(lambda: socket.create_connection(("192.0.2.1", 80), 1)),
        "lookup": attempt(lambda: socket.getaddrinfo("example.com", 443)),
    }
"""


def _zip(attempts: str) -> str:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("index.py", ATTEMPTS.replace("ATTEMPTS_OF_THIS_FUNCTION", attempts))
    return base64.b64encode(buffer.getvalue()).decode()


@pytest.fixture(scope="module")
def cloud(tmp_path_factory) -> Iterator[LocalCloud]:
    with mock_cloud(intercept=False, state_dir=tmp_path_factory.mktemp("network")) as c:
        trust = json.dumps({"Version": "1", "Statement": [{
            "Effect": "Allow", "Action": "sts:AssumeRole",
            "Principal": {"Service": ["fc.aliyuncs.com"]}}]})
        c.ram_client().create_role(ram_models.CreateRoleRequest(
            role_name="net-role", assume_role_policy_document=trust))
        yield c


def _run(cloud: LocalCloud, name: str, attempts: str, event: bytes = b"", **kwargs) -> dict:
    fc = cloud.fc_client()
    fc.create_function(fc_models.CreateFunctionRequest(body=fc_models.CreateFunctionInput(
        function_name=name, runtime="python3.12", handler="index.handler", timeout=30,
        memory_size=256, code=fc_models.InputCodeLocation(zip_file=_zip(attempts)),
        role=f"acs:ram::{cloud.account_id}:role/net-role", **kwargs)))
    response = fc.invoke_function(name, fc_models.InvokeFunctionRequest(body=event))
    body = response.body.read()
    assert "x-fc-error-type" not in response.headers, body
    return json.loads(body)


def test_clients_outside_the_routing_and_the_metadata_service_are_refused(cloud):
    seen = _run(cloud, "guarded", GUARDED)
    assert seen["urllib"].startswith("URLError: ")  # urllib wraps the guard's error
    assert "does not serve the Alibaba Cloud service 'ecs' (ecs.aliyuncs.com)" in seen["urllib"]
    assert seen["http.client"] == (
        "CloudEndpointNotEmulated: fcv3.cn-hangzhou.aliyuncs.com was looked up by an HTTP "
        "client the local emulator does not route; SDK clients built on requests or aiohttp "
        "reach the emulator, other clients cannot")
    assert seen["metadata"].startswith(
        "CloudEndpointNotEmulated: request to http://100.100.100.200/latest/ blocked: "
        "100.100.100.200 (the ECS instance metadata service) is not available locally")
    assert seen["raw socket"].startswith(
        "CloudEndpointNotEmulated: 100.100.100.200 (the ECS instance metadata service)")


def test_without_internet_access_only_loopback_and_emulated_endpoints_are_reached(cloud):
    seen = _run(cloud, "offline", OFFLINE, internet_access=False)
    assert seen == {
        "sdk": "AssumedRoleUser",
        "requests": "InternetAccessDisabled: the function has internetAccess disabled: "
                    "https://example.com/ cannot be reached",
        "raw socket": "InternetAccessDisabled: the function has internetAccess disabled: "
                      "192.0.2.1 cannot be reached",
        "lookup": "InternetAccessDisabled: the function has internetAccess disabled: "
                  "example.com cannot be reached",
    }
