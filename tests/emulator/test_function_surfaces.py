"""No path from a function to the emulator's control surfaces (docs/runtime.md "Network").

Handlers try every way to the emulator's admin API, console, console streams and log
endpoints, and to another port of this machine: urllib, raw sockets, a child Python process and
curl in a subprocess (processes the handler starts share its network). Each is refused, while
the handler's own SDK calls still reach the cloud APIs with its role's credentials and its own
loopback still works. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import base64
import io
import json
import shutil
import socket
import zipfile
from collections.abc import Iterator

import pytest
from alibabacloud_fc20230330 import models as fc_models
from alibabacloud_ram20150501 import models as ram_models

from deployer.testing.environment import LocalCloud, mock_cloud

HANDLER = r'''
import json, os, socket, subprocess, sys, urllib.request
from alibabacloud_credentials.client import Client as Credentials
from alibabacloud_tea_openapi import models as open_api
from alibabacloud_sts20150401.client import Client as STS

def attempt(call):
    try:
        return "reached: " + str(call())[:200]
    except Exception as exc:
        return f"refused: {type(exc).__name__}: {exc}"

def fetch(url):
    with urllib.request.urlopen(url, timeout=3) as answer:
        return answer.status

def raw(port, path="/_emulator/health"):
    with socket.create_connection(("127.0.0.1", port), 3) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        return sock.recv(64)

def child(code):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=20)
    if done.returncode:
        raise OSError(done.stderr.decode().strip().splitlines()[-1])
    return done.stdout.decode()

def own_loopback():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), 3):
            return "own port"

def handler(event, context):
    e = json.loads(event)
    main, other = e["main"], e["other"]
    seen = {
        "console page": attempt(lambda: fetch(f"http://127.0.0.1:{main}/_console/")),
        "console stream": attempt(lambda: fetch(
            f"http://127.0.0.1:{main}/_console/api/engine/stream")),
        "admin": attempt(lambda: fetch(f"http://127.0.0.1:{main}/_emulator/health")),
        "logs": attempt(lambda: fetch(f"http://127.0.0.1:{main}/_emulator/logs?function=x")),
        "localhost": attempt(lambda: fetch(f"http://localhost:{main}/_emulator/health")),
        "raw socket": attempt(lambda: raw(main)),
        "raw socket ipv6": attempt(lambda: socket.create_connection(("::1", main), 3)),
        "other port": attempt(lambda: raw(other)),
        "child process": attempt(lambda: child(
            f"import socket; socket.create_connection(('127.0.0.1', {main}), 3)")),
        "gateway admin": attempt(lambda: fetch(
            f"http://{e['gateway']}/_emulator/health")),
        "gateway console": attempt(lambda: fetch(f"http://{e['gateway']}/_console/")),
        "own loopback": attempt(own_loopback),
    }
    if e.get("curl"):
        seen["curl"] = attempt(lambda: subprocess.run(
            [e["curl"], "-sS", "-m", "3", f"http://127.0.0.1:{main}/_emulator/health"],
            capture_output=True, timeout=20, check=True).stdout)
    config = open_api.Config(credential=Credentials(), region_id=os.environ["FC_REGION"])
    seen["sdk"] = attempt(lambda: STS(config).get_caller_identity().body.identity_type)
    return seen
'''


NODE_HANDLER = r"""
const net = require('net');
const { execFileSync } = require('child_process');

function connect(port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host, timeout: 3000 }, () => {
      sock.destroy(); resolve('reached');
    });
    sock.on('error', (e) => resolve('refused: ' + e.code));
    sock.on('timeout', () => { sock.destroy(); resolve('refused: timeout'); });
  });
}

exports.handler = async (event) => {
  const e = JSON.parse(event.toString());
  const seen = {
    'raw socket': await connect(e.main),
    'raw socket ipv6': await connect(e.main, '::1'),
    'other port': await connect(e.other),
    'gateway': await connect(Number(e.gateway.split(':')[1])),
  };
  try {
    const r = await fetch(`http://127.0.0.1:${e.main}/_console/`);
    seen['fetch console'] = 'reached: ' + r.status;
  } catch (err) {
    seen['fetch console'] = 'refused: ' + (err.cause ? err.cause.code : err.message);
  }
  if (e.curl) {
    try {
      execFileSync(e.curl, ['-sS', '-m', '3', `http://127.0.0.1:${e.main}/_emulator/health`]);
      seen['curl'] = 'reached';
    } catch (err) { seen['curl'] = 'refused: ' + err.status; }
  }
  return seen;
};
"""


def _zip(name: str = "index.py", source: str = HANDLER) -> str:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, source)
    return base64.b64encode(buffer.getvalue()).decode()


@pytest.fixture(scope="module")
def cloud(tmp_path_factory) -> Iterator[LocalCloud]:
    with mock_cloud(intercept=False, state_dir=tmp_path_factory.mktemp("surfaces")) as c:
        trust = json.dumps({"Version": "1", "Statement": [{
            "Effect": "Allow", "Action": "sts:AssumeRole",
            "Principal": {"Service": ["fc.aliyuncs.com"]}}]})
        c.ram_client().create_role(ram_models.CreateRoleRequest(
            role_name="surface-role", assume_role_policy_document=trust))
        yield c


@pytest.fixture(scope="module")
def other_port() -> Iterator[int]:
    """A service of this machine that is not the function's (on loopback)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        yield server.getsockname()[1]


@pytest.mark.parametrize("internet", [True, False], ids=["internet", "no-internet"])
def test_a_handler_reaches_no_control_surface_and_no_other_port(cloud, other_port, internet):
    fc = cloud.fc_client()
    name = f"prober-{'online' if internet else 'offline'}"
    fc.create_function(fc_models.CreateFunctionRequest(body=fc_models.CreateFunctionInput(
        function_name=name, runtime="python3.12", handler="index.handler", timeout=60,
        memory_size=256, code=fc_models.InputCodeLocation(zip_file=_zip()),
        internet_access=internet, role=f"acs:ram::{cloud.account_id}:role/surface-role")))
    server = cloud.server
    event = {"main": server.port, "other": other_port, "curl": shutil.which("curl"),
             "gateway": f"127.0.0.1:{server.gateway_port}"}
    response = fc.invoke_function(name, fc_models.InvokeFunctionRequest(
        body=json.dumps(event).encode()))
    seen = json.loads(response.body.read())
    assert "x-fc-error-type" not in response.headers, seen
    for path in ("console page", "console stream", "admin", "logs", "localhost", "raw socket",
                 "raw socket ipv6", "other port", "child process", "curl"):
        if path in seen:
            assert seen[path].startswith("refused: "), (path, seen[path])
    assert "Connection refused" in seen["raw socket"] or "111" in seen["raw socket"]
    # the gateway where SDK calls arrive serves the cloud APIs only
    for path in ("gateway admin", "gateway console"):
        assert seen[path].startswith("refused: HTTPError: HTTP Error 400"), seen[path]
    assert seen["own loopback"] == "reached: own port"
    assert seen["sdk"] == "reached: AssumedRoleUser"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_nodejs_handler_and_its_child_process_reach_no_control_surface(cloud, other_port):
    fc = cloud.fc_client()
    fc.create_function(fc_models.CreateFunctionRequest(body=fc_models.CreateFunctionInput(
        function_name="prober-node", runtime="nodejs20", handler="index.handler", timeout=60,
        memory_size=256, code=fc_models.InputCodeLocation(
            zip_file=_zip("index.js", NODE_HANDLER)))))
    server = cloud.server
    event = {"main": server.port, "other": other_port, "curl": shutil.which("curl"),
             "gateway": f"127.0.0.1:{server.gateway_port}"}
    response = fc.invoke_function("prober-node", fc_models.InvokeFunctionRequest(
        body=json.dumps(event).encode()))
    seen = json.loads(response.body.read())
    assert "x-fc-error-type" not in response.headers, seen
    for path in ("raw socket", "raw socket ipv6", "other port", "fetch console", "curl"):
        if path in seen:
            assert seen[path].startswith("refused: "), (path, seen[path])
    assert seen["gateway"] == "reached"  # the one way out: the cloud APIs
