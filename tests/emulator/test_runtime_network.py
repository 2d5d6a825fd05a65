"""Cloud calls and network rules of Node.js handlers and of custom runtimes' servers (Python and
Node.js), through the official SDK against mock_cloud(): emulated endpoints reach the emulator,
other Alibaba Cloud hosts and the metadata service are refused, ``internetAccess: false`` closes
every other host. Every refusal happens before a connection: no packet leaves loopback."""

from __future__ import annotations

import base64
import io
import json
import shutil
import sys
import zipfile
from collections.abc import Iterator

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_ram20150501 import models as ram

from deployer.testing.environment import LocalCloud, mock_cloud

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


@pytest.fixture(scope="module")
def cloud(tmp_path_factory) -> Iterator[LocalCloud]:
    with mock_cloud(intercept=False, state_dir=tmp_path_factory.mktemp("net")) as local:
        trust = json.dumps({"Version": "1", "Statement": [{
            "Effect": "Allow", "Action": "sts:AssumeRole",
            "Principal": {"Service": ["fc.aliyuncs.com"]}}]})
        local.ram_client().create_role(ram.CreateRoleRequest(
            role_name="fn-role", assume_role_policy_document=trust))
        yield local


def _zip(files: dict[str, str]) -> str:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return base64.b64encode(buf.getvalue()).decode()


def _run(cloud: LocalCloud, name: str, files: dict[str, str], **fields) -> dict:
    client = cloud.fc_client()
    client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name=name, timeout=30, memory_size=512,
        role=f"acs:ram::{cloud.account_id}:role/fn-role",
        code=fc.InputCodeLocation(zip_file=_zip(files)), **fields)))
    response = client.invoke_function(name, fc.InvokeFunctionRequest(body=b""))
    body = response.body.read()
    assert "x-fc-error-type" not in response.headers, body
    return json.loads(body)


NODE_ATTEMPTS = """
const http = require('http');
const https = require('https');
const net = require('net');
const attempt = (start) => new Promise((done) => {
  try {
    const req = start((res) => {
      let text = '';
      res.on('data', (chunk) => { text += chunk; });
      res.on('end', () => done(`answered ${res.statusCode} ${text.slice(0, 200)}`));
    });
    if (req && req.on) {
      req.on('error', (err) => done(`${err.name}: ${err.message}`));
      req.end();
    }
  } catch (err) {
    done(`${err.name}: ${err.message}`);
  }
});
const STS = 'https://sts.aliyuncs.com/?Action=GetCallerIdentity';
const OSS = { host: 'bucket.oss-cn-hangzhou.aliyuncs.com', path: '/' };
exports.handler = async () => ({
  sts: await attempt((cb) => https.request(STS, cb)),
  oss: await attempt((cb) => http.request(OSS, cb)),
  metadata: await attempt((cb) => http.request('http://100.100.100.200/latest/meta-data', cb)),
  fetch: await fetch('https://fcv3.cn-hangzhou.aliyuncs.com/').then(() => 'reached',
    (err) => `${(err.cause || err).name}: ${(err.cause || err).message}`),
  internet: await attempt(() => net.connect(80, '192.0.2.1')),
});
"""


@needs_node
def test_nodejs_handlers_reach_emulated_endpoints_and_nothing_else(cloud):
    seen = _run(cloud, "node-net", {"index.js": NODE_ATTEMPTS}, runtime="nodejs20",
                handler="index.handler", internet_access=False)
    assert seen["sts"].startswith("answered 4") and '"Code"' in seen["sts"]  # the emulator's
    assert seen["oss"].startswith("CloudEndpointNotEmulated: request to http://bucket.oss-cn-"
                                  "hangzhou.aliyuncs.com/ blocked: the local emulator does not "
                                  "serve the Alibaba Cloud service 'oss'")
    assert "(the ECS instance metadata service) is not available locally" in seen["metadata"]
    assert seen["fetch"].startswith("CloudEndpointNotEmulated: fcv3.cn-hangzhou.aliyuncs.com "
                                    "was looked up by an HTTP client the local emulator does "
                                    "not route")
    assert seen["internet"] == ("InternetAccessDisabled: the function has internetAccess "
                                "disabled: 192.0.2.1 cannot be reached")


PY_SERVER = """
import json, os, urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer
import requests
from alibabacloud_credentials.client import Client as Credentials
from alibabacloud_tea_openapi import models as open_api
from alibabacloud_sts20150401.client import Client as STS

def attempt(call):
    try:
        return call()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length") or 0))
        config = open_api.Config(credential=Credentials(), region_id=os.environ["FC_REGION"])
        body = json.dumps({
            "sdk": attempt(lambda: STS(config).get_caller_identity().body.identity_type),
            "ecs": attempt(lambda: urllib.request.urlopen("https://ecs.aliyuncs.com/", timeout=1)),
            "internet": attempt(lambda: requests.get("https://example.com/", timeout=1)),
        }).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

HTTPServer(("0.0.0.0", int(os.environ["FC_CUSTOM_LISTEN_PORT"])), Handler).serve_forever()
"""


def test_a_python_custom_runtime_server_gets_the_same_routing(cloud):
    seen = _run(cloud, "py-server", {"server.py": PY_SERVER}, runtime="custom.debian12",
                handler="index.handler", internet_access=False,
                custom_runtime_config=fc.CustomRuntimeConfig(
                    command=[sys.executable, "server.py"], port=19611))
    assert seen["sdk"] == "AssumedRoleUser"  # role keys in the environment, call routed
    assert "does not serve the Alibaba Cloud service 'ecs'" in seen["ecs"]
    assert seen["internet"] == ("InternetAccessDisabled: the function has internetAccess "
                                "disabled: https://example.com/ cannot be reached")


NODE_SERVER = """
const http = require('http');
const https = require('https');
http.createServer((req, res) => {
  https.get('https://sts.aliyuncs.com/?Action=GetCallerIdentity', (answer) => {
    res.end(JSON.stringify({ routed: answer.statusCode }));
  }).on('error', (err) => res.end(JSON.stringify({ error: err.message })));
}).listen(Number(process.env.FC_CUSTOM_LISTEN_PORT), '0.0.0.0');
"""


@needs_node
def test_a_node_custom_runtime_server_gets_the_same_routing(cloud):
    seen = _run(cloud, "node-server", {"server.js": NODE_SERVER}, runtime="custom.debian10",
                handler="index.handler",
                custom_runtime_config=fc.CustomRuntimeConfig(
                    command=["node", "server.js"], port=19612))
    assert 400 <= seen["routed"] < 500  # the emulator's answer to an unsigned request
