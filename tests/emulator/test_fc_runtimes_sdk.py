"""Node.js and custom runtimes, lifecycle hooks, layers and idle reaping through the official
Python SDK against mock_cloud(): CreateFunction with a zip, GetFunction, InvokeFunction."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_tea_openapi.exceptions import ClientException
from darabonba.runtime import RuntimeOptions

from deployer.testing import LocalCloud, mock_cloud

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def zip_b64(files: dict[str, str], executable: frozenset[str] = frozenset()) -> str:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, text in files.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o755 if name in executable else 0o644) << 16
            archive.writestr(info, text)
    return base64.b64encode(buf.getvalue()).decode()


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCloud]:
    with mock_cloud(state_dir=tmp_path_factory.mktemp("state")) as local:
        yield local


def create(cloud: LocalCloud, name: str, files: dict[str, str], **fields) -> fc.Function:
    executable = fields.pop("executable", frozenset())
    body = fc.CreateFunctionInput(function_name=name, timeout=fields.pop("timeout", 10),
                                  code=fc.InputCodeLocation(zip_file=zip_b64(files, executable)),
                                  **fields)
    return cloud.fc_client().create_function(fc.CreateFunctionRequest(body=body))


def invoke(cloud: LocalCloud, name: str, payload: bytes = b"") -> tuple[bytes, dict]:
    response = cloud.fc_client().invoke_function_with_options(
        name, fc.InvokeFunctionRequest(body=payload),
        fc.InvokeFunctionHeaders(x_fc_log_type="Tail"), RuntimeOptions())
    return response.body.read(), response.headers


def refused(call) -> ClientException:
    with pytest.raises(ClientException) as caught:
        call()
    return caught.value


NODE = """
exports.handler = async (event, context) => {
  console.log('got', event.toString());
  return { echo: JSON.parse(event), fn: context.function.name, rid: context.requestId };
};
"""


@needs_node
def test_nodejs_function_created_and_invoked_through_the_sdk(cloud):
    created = create(cloud, "node20", {"index.js": NODE}, runtime="nodejs20",
                     handler="index.handler")
    assert created.status_code == 200 and created.body.runtime == "nodejs20"
    body, headers = invoke(cloud, "node20", b'{"n": 1}')
    result = json.loads(body)
    assert result["echo"] == {"n": 1} and result["fn"] == "node20"
    assert result["rid"] == headers["x-fc-request-id"]
    tail = base64.b64decode(headers["x-fc-log-result"]).decode()
    assert "[info] got {\"n\": 1}" in tail
    assert tail.endswith(f"FC Invoke End RequestId: {result['rid']}\n")
    assert "x-fc-error-type" not in headers


@needs_node
def test_an_older_nodejs_runtime_is_run_by_the_local_node_and_says_so(cloud):
    created = create(cloud, "node16", {"index.js": NODE}, runtime="nodejs16",
                     handler="index.handler")
    assert "is run locally by this machine's Node.js v" in \
        created.headers["x-deployer-warning"]
    assert json.loads(invoke(cloud, "node16", b"[]")[0])["echo"] == []


SERVER = """
import json, os
from http.server import BaseHTTPRequestHandler, HTTPServer
class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def do_POST(self):
        rid = self.headers["x-fc-request-id"]
        data = self.rfile.read(int(self.headers.get("content-length") or 0))
        print(f"FC Invoke Start RequestId: {rid}", flush=True)
        print("serving", self.path, flush=True)
        print(f"FC Invoke End RequestId: {rid}", flush=True)
        body = json.dumps({"path": self.path, "event": data.decode(),
                           "function": self.headers["x-fc-function-name"],
                           "mode": os.environ.get("MODE")}).encode()
        status = 404 if data == b"fail" else 200
        self.send_response(status)
        self.send_header("x-fc-status", str(status))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        print("pre-stop", self.path, flush=True)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
HTTPServer(("0.0.0.0", int(os.environ["FC_CUSTOM_LISTEN_PORT"])), Handler).serve_forever()
"""


def test_custom_runtime_with_a_start_command_and_port(cloud):
    config = fc.CustomRuntimeConfig(command=[sys.executable], args=["server.py"], port=19531)
    created = create(cloud, "gateway", {"server.py": SERVER}, runtime="custom.debian10",
                     handler="index.handler", custom_runtime_config=config,
                     environment_variables={"MODE": "local"})
    assert created.body.custom_runtime_config.to_map() == {
        "command": [sys.executable], "args": ["server.py"], "port": 19531}
    body, headers = invoke(cloud, "gateway", b"ping")
    assert json.loads(body) == {"path": "/invoke", "event": "ping", "function": "gateway",
                                "mode": "local"}
    rid = headers["x-fc-request-id"]
    assert base64.b64decode(headers["x-fc-log-result"]).decode() == (
        f"FC Invoke Start RequestId: {rid}\nserving /invoke\nFC Invoke End RequestId: {rid}\n")
    failed, headers = invoke(cloud, "gateway", b"fail")
    assert headers["x-fc-error-type"] == "UnhandledInvocationError"
    assert json.loads(failed)["event"] == "fail"
    got = cloud.fc_client().get_function("gateway", fc.GetFunctionRequest())
    assert got.body.custom_runtime_config.port == 19531


def test_custom_runtime_bootstrap_is_the_default_command(cloud):
    bootstrap = f"#!/bin/sh\nexec {sys.executable} server.py\n"
    create(cloud, "boot", {"bootstrap": bootstrap, "server.py": SERVER}, runtime="custom",
           handler="index.handler", executable=frozenset({"bootstrap"}),
           custom_runtime_config=fc.CustomRuntimeConfig(port=19532))
    assert json.loads(invoke(cloud, "boot", b"x")[0])["event"] == "x"


def test_custom_runtime_settings_are_checked(cloud):
    bad_port = refused(lambda: create(
        cloud, "badport", {"server.py": SERVER}, runtime="custom.debian12", handler="h",
        custom_runtime_config=fc.CustomRuntimeConfig(port=70000)))
    assert bad_port.code == "InvalidArgument" and "customRuntimeConfig.port" in bad_port.message
    bad_check = refused(lambda: create(
        cloud, "badcheck", {"server.py": SERVER}, runtime="custom.debian12", handler="h",
        custom_runtime_config=fc.CustomRuntimeConfig(
            health_check_config=fc.CustomHealthCheckConfig(timeout_seconds=9))))
    assert "healthCheckConfig.timeoutSeconds" in bad_check.message
    no_dot = refused(lambda: create(cloud, "nodot", {"index.js": NODE}, runtime="nodejs20",
                                    handler="handler"))
    assert "invalid handler 'handler'" in no_dot.message


def test_custom_container_is_created_but_refused_at_invoke(cloud):
    created = create(cloud, "image", {"index.py": ""}, runtime="custom-container",
                     handler="index.handler",
                     custom_container_config=fc.CustomContainerConfig(
                         image="registry.cn-hangzhou.aliyuncs.com/ns/app:1", port=8080))
    assert created.status_code == 200
    assert "cannot invoke it (its container image needs a container engine)" in \
        created.headers["x-deployer-warning"]
    error = refused(lambda: invoke(cloud, "image", b"{}"))
    assert (error.code, error.status_code) == ("InvalidArgument", 400)
    assert "custom-container" in error.message and "container engine" in error.message


HOOKED = """
import os
def initialize(context):
    print("initializing", context.request_id)
def pre_stop(context):
    print("flushing before stop", context.request_id)
def handler(event, context):
    return str(os.getpid())
"""


def test_lifecycle_hooks_round_trip_run_and_appear_in_the_logs(cloud):
    hooks = fc.InstanceLifecycleConfig(
        initializer=fc.LifecycleHook(handler="index.initialize", timeout=5),
        pre_stop=fc.LifecycleHook(handler="index.pre_stop", timeout=7))
    create(cloud, "hooked", {"index.py": HOOKED}, runtime="python3.10",
           handler="index.handler", instance_lifecycle_config=hooks)
    got = cloud.fc_client().get_function("hooked", fc.GetFunctionRequest()).body
    assert got.instance_lifecycle_config.to_map() == {
        "initializer": {"handler": "index.initialize", "timeout": 5},
        "preStop": {"handler": "index.pre_stop", "timeout": 7}}
    pid = int(invoke(cloud, "hooked")[0])
    (first,) = cloud.invocations("hooked")
    assert "initializing" in first.log and first.invocation_type == "Sync"
    cloud.advance(301)  # past the idle time: the instance stops, preStop first
    records = cloud.invocations("hooked")
    assert [r.invocation_type for r in records] == ["PreStop", "Sync"]
    stop = records[0]
    assert stop.status == "Succeeded" and f"flushing before stop {stop.request_id}" in stop.log
    assert stop.log.startswith(f"FC PreStop Start RequestId: {stop.request_id}")
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert cloud.server.emulator.runtime.instance_count(cloud.account_id, cloud.region,
                                                        "hooked") == 0


def test_hook_settings_are_checked(cloud):
    command = refused(lambda: create(
        cloud, "cmdhook", {"index.py": HOOKED}, runtime="python3.10", handler="index.handler",
        instance_lifecycle_config=fc.InstanceLifecycleConfig(
            pre_stop=fc.LifecycleHook(command=["/bin/true"]))))
    assert "instanceLifecycleConfig.preStop.command is not supported" in command.message
    too_long = refused(lambda: create(
        cloud, "longhook", {"index.py": HOOKED}, runtime="python3.10", handler="index.handler",
        instance_lifecycle_config=fc.InstanceLifecycleConfig(
            pre_stop=fc.LifecycleHook(handler="index.pre_stop", timeout=91))))
    assert "preStop.timeout must be between 1 and 90" in too_long.message


def test_idle_timeout_keeps_instances_warm_longer(cloud):
    create(cloud, "longlived", {"index.py": HOOKED}, runtime="python3.10",
           handler="index.handler", idle_timeout=900)
    first = invoke(cloud, "longlived")[0]
    cloud.advance(600)
    assert invoke(cloud, "longlived")[0] == first  # still the same instance
    cloud.advance(901)
    assert invoke(cloud, "longlived")[0] != first


LAYERED = """
import greeting
def handler(event, context):
    return greeting.hello() + " / " + open("/opt/VERSION").read()
"""


def _layer_zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def test_published_layers_are_mounted_on_opt_and_unknown_ones_refused(cloud):
    from deployer.emulator.services.layers import LayerInput

    layers = cloud.server.emulator.layers
    for _ in range(2):  # versions 1 and 2 of another content: the function names version 3
        layers.create_version(cloud.account_id, cloud.region, "greeting",
                              LayerInput(_layer_zip({"VERSION": "old"})))
    version = layers.create_version(cloud.account_id, cloud.region, "greeting", LayerInput(
        _layer_zip({"python/greeting.py": "def hello():\n    return 'hi'\n",
                    "VERSION": "3"}), ("python3.10",)))
    arn = f"acs:fc:{cloud.region}:{cloud.account_id}:layers/greeting/versions/3"
    assert version.arn == arn
    create(cloud, "layered2", {"index.py": LAYERED}, runtime="python3.10",
           handler="index.handler", layers=[arn])
    assert invoke(cloud, "layered2")[0] == b"hi / 3"
    got = cloud.fc_client().get_function("layered2", fc.GetFunctionRequest()).body
    assert [layer.arn for layer in got.layers] == [arn]
    missing = f"acs:fc:{cloud.region}:{cloud.account_id}:layers/greeting/versions/9"
    official = f"acs:fc:{cloud.region}:official:layers/Python310/versions/2"
    for wanted, says in ((missing, f"layer version {missing} does not exist"),
                         (official, "official Function Compute layer")):
        error = refused(lambda w=wanted: create(cloud, "nolayer", {"index.py": LAYERED},
                                                runtime="python3.10", handler="index.handler",
                                                layers=[w]))
        assert says in error.message and error.status_code in (400, 404)


def test_reset_lets_pre_stop_hooks_finish_before_the_logs_are_wiped(tmp_path: Path):
    with mock_cloud(state_dir=tmp_path / "state") as local:
        hooks = fc.InstanceLifecycleConfig(
            pre_stop=fc.LifecycleHook(handler="index.pre_stop", timeout=5))
        slow = HOOKED.replace('print("flushing before stop"',
                              'import time; time.sleep(0.5); print("flushing before stop"')
        create(local, "resetme", {"index.py": slow}, runtime="python3.10",
               handler="index.handler", instance_lifecycle_config=hooks)
        invoke(local, "resetme")
        local.reset()
        assert local.server.emulator.runtime.settle(30)  # nothing is left stopping
        assert local.invocations("resetme") == []  # the preStop record did not outlive it
