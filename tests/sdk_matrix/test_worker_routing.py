"""The routing as function workers use it, against the installed SDK, aiohttp and requests
versions (``.ci/sdk-matrix/run`` runs this module on the lowest and the highest allowed ones).

A worker loads ``routing.py`` and ``cloud_access.py`` by path, with neither ``deployer`` nor
the host's site-packages on ``sys.path``, installs the routing before user code runs, and the
handler imports ``requests``/``aiohttp`` (FC's built-in packages) afterwards: the import hook
wraps their public request methods then."""

from __future__ import annotations

import base64
import importlib.metadata
import io
import json
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import alibabacloud_fnf20190315
import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_fnf20190315 import models as fnf
from alibabacloud_ram20150501 import models as ram

from deployer.emulator import runtime
from deployer.testing import LocalCloud, mock_cloud

RUNTIME_DIR = Path(runtime.__file__).resolve().parent
SITE = Path(alibabacloud_fnf20190315.__file__).resolve().parents[1]
REGION = "cn-shanghai"

LOAD_LIKE_A_WORKER = f"""
import importlib.util, json, sys

def load(name):
    spec = importlib.util.spec_from_file_location(f"_fc_emulator_{{name}}",
                                                  {str(RUNTIME_DIR)!r} + f"/{{name}}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module

routing, access = load("routing"), load("cloud_access")
THIRD_PARTY = ("deployer", "requests", "aiohttp", "urllib3", "alibabacloud_tea_openapi",
               "darabonba", "Tea")
out = {{"deployer_importable": importlib.util.find_spec("deployer") is not None}}
"""

STANDALONE = LOAD_LIKE_A_WORKER + """
access.install_cloud_routing("127.0.0.1:9", internet_access=False)
import socket
for name, call in (("lookup", lambda: socket.getaddrinfo("fcv3.cn-hangzhou.aliyuncs.com", 443)),
                   ("metadata", lambda: socket.create_connection(("100.100.100.200", 80), 1)),
                   ("offline", lambda: socket.create_connection(("192.0.2.1", 80), 1))):
    try:
        call()
    except ConnectionError as exc:
        out[name] = type(exc).__name__
access.uninstall_cloud_routing()
out["loaded"] = sorted(m for m in sys.modules if m.split(".")[0] in THIRD_PARTY)
print(json.dumps(out))
"""

HOOKED = LOAD_LIKE_A_WORKER + """
installed = routing.install({routing.EMULATED_HOSTS: "127.0.0.1:9"})
out["before"] = sorted(m for m in sys.modules if m.split(".")[0] in THIRD_PARTY)
import asyncio, aiohttp, requests, requests.adapters

def points():
    return {"HTTPAdapter.send": requests.adapters.HTTPAdapter.send,
            "ClientSession.request": aiohttp.ClientSession.request,
            "ClientSession.get": aiohttp.ClientSession.get,
            "ClientSession.ws_connect": aiohttp.ClientSession.ws_connect,
            "aiohttp.request": aiohttp.request, "aiohttp.client.request": aiohttp.client.request}

MARK = "_deployer_routing_original"
out["wrapped"] = sorted(name for name, method in points().items() if hasattr(method, MARK))
try:
    requests.get("https://oss-cn-hangzhou.aliyuncs.com/bucket", timeout=1)
except ConnectionError as exc:
    out["requests"] = type(exc).__name__

async def attempts():
    refused = []
    async with aiohttp.ClientSession() as session:
        for call in (lambda: session.get("https://example.com/"),
                     lambda: aiohttp.request("GET", "http://100.100.100.200/")):
            try:
                async with call():
                    pass
            except ConnectionError as exc:
                refused.append(type(exc).__name__)
    return refused

out["aiohttp"] = asyncio.run(attempts())
installed.uninstall()
out["restored"] = not any(hasattr(method, MARK) for method in points().values()) and \\
    aiohttp.request is aiohttp.client.request
out["hook_removed"] = not any(type(f).__name__ == "_WrapOnImport" for f in sys.meta_path)
print(json.dumps(out))
"""


def _run(*args: str) -> dict:
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60,
                          check=False, cwd="/")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_worker_modules_load_by_path_with_the_standard_library_only() -> None:
    seen = _run("-S", "-I", "-c", STANDALONE)
    assert seen == {"deployer_importable": False, "lookup": "CloudEndpointNotEmulated",
                    "metadata": "CloudEndpointNotEmulated", "offline": "InternetAccessDisabled",
                    "loaded": []}


def test_clients_imported_after_install_are_wrapped_and_restored() -> None:
    seen = _run("-I", "-c", HOOKED)
    seen.pop("deployer_importable")  # the editable install's site-packages is on sys.path
    assert seen == {
        "before": [],
        "wrapped": ["ClientSession.get", "ClientSession.request", "ClientSession.ws_connect",
                    "HTTPAdapter.send", "aiohttp.client.request", "aiohttp.request"],
        "requests": "CloudEndpointNotEmulated",
        "aiohttp": ["UnmockedRequestError", "CloudEndpointNotEmulated"],
        "restored": True, "hook_removed": True,
    }


HANDLER = """
import asyncio, json, os
import aiohttp, requests
from alibabacloud_credentials.client import Client as Credentials
from alibabacloud_tea_openapi import models as open_api
from alibabacloud_sts20150401.client import Client as STS
from alibabacloud_fnf20190315.client import Client as CloudFlow
from alibabacloud_fnf20190315 import models as fnf

def handler(event, context):
    config = open_api.Config(credential=Credentials(), region_id=os.environ["FC_REGION"])
    seen = {"versions": [aiohttp.__version__, requests.__version__],
            "sync": STS(config).get_caller_identity().body.arn}

    async def calls():
        who = await STS(config).get_caller_identity_async()
        flows = await CloudFlow(config).list_flows_async(fnf.ListFlowsRequest())
        refused = []
        async with aiohttp.ClientSession() as session:
            for url in ("https://oss-cn-hangzhou.aliyuncs.com/b", "http://100.100.100.200/"):
                try:
                    async with session.get(url):
                        pass
                except Exception as exc:
                    refused.append(f"{type(exc).__name__}: {exc}")
        return who.body.arn, [flow.name for flow in flows.body.flows], refused

    seen["async"], seen["flows"], seen["refused"] = asyncio.run(calls())
    return seen
"""


def _zip() -> str:
    """The handler plus the CloudFlow SDK (FC's python3.12 ships STS and its dependencies,
    requests and aiohttp among them, but not CloudFlow's)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("index.py", HANDLER)
        for path in sorted((SITE / "alibabacloud_fnf20190315").rglob("*.py")):
            archive.write(path, path.relative_to(SITE).as_posix())
    return base64.b64encode(buffer.getvalue()).decode()


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[LocalCloud]:
    with mock_cloud(region=REGION, intercept=False, state_dir=tmp_path) as local:
        yield local


def test_a_handler_reaches_the_emulator_through_the_installed_sdk_and_aiohttp(cloud) -> None:
    trust = json.dumps({"Version": "1", "Statement": [{
        "Effect": "Allow", "Action": "sts:AssumeRole",
        "Principal": {"Service": ["fc.aliyuncs.com"]}}]})
    roles = cloud.ram_client()
    roles.create_role(ram.CreateRoleRequest(role_name="worker", assume_role_policy_document=trust))
    roles.attach_policy_to_role(ram.AttachPolicyToRoleRequest(
        role_name="worker", policy_type="System", policy_name="AliyunFnFFullAccess"))
    cloud.fnf_client().create_flow(fnf.CreateFlowRequest(
        name="listed", type="FDL", description="", definition=(
            "Type: StateMachine\nSpecVersion: v1\nName: listed\nStartAt: p\nStates:\n"
            "  - Type: Pass\n    Name: p\n    End: true\n")))
    functions = cloud.fc_client()
    functions.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="caller", runtime="python3.12", handler="index.handler", timeout=30,
        memory_size=256, role=f"acs:ram::{cloud.account_id}:role/worker",
        code=fc.InputCodeLocation(zip_file=_zip()))))

    answer = functions.invoke_function("caller", fc.InvokeFunctionRequest(body=b""))
    body = answer.body.read()
    assert "x-fc-error-type" not in answer.headers, body
    seen = json.loads(body)
    assert seen["versions"] == [importlib.metadata.version("aiohttp"),
                                importlib.metadata.version("requests")]
    role = f"acs:ram::{cloud.account_id}:assumed-role/worker/fc-caller"
    assert (seen["sync"], seen["async"], seen["flows"]) == (role, role, ["listed"])
    oss, metadata = seen["refused"]
    assert oss.startswith("CloudEndpointNotEmulated: request to https://oss-cn-hangzhou")
    assert "service 'oss'" in oss
    assert metadata.startswith("CloudEndpointNotEmulated: request to http://100.100.100.200/")
