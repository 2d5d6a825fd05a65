"""A Serverless Devs fc3 project with a Node.js function, a custom runtime function and a
Python function with a layer and an initializer: `deploy up` deploys it and `deploy invoke`
runs each on the emulator (the cloud target's code path inside mock_cloud())."""

from __future__ import annotations

import io
import json
import textwrap
import zipfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.emulator.services.layers import LayerInput
from deployer.testing import mock_cloud

S_YAML = """\
edition: 3.0.0
name: orders
resources:
  api:
    component: fc3
    props:
      region: cn-hangzhou
      functionName: orders-api
      runtime: nodejs20
      code: ./api
      handler: index.handler
  gateway:
    component: fc3
    props:
      region: cn-hangzhou
      functionName: orders-gateway
      runtime: custom.debian10
      code: ./gateway
      customRuntimeConfig: {command: [python3, server.py], port: 9123}
  worker:
    component: fc3
    props:
      region: cn-hangzhou
      functionName: orders-worker
      runtime: python3.10
      code: ./worker.zip
      handler: index.handler
      layers: [acs:fc:cn-hangzhou:{account}:layers/prices/versions/1]
      instanceLifecycleConfig:
        initializer: {handler: index.initialize, timeout: 5}
"""
NODE = "exports.handler = async (event) => ({ok: true, got: JSON.parse(event.toString())});\n"
SERVER = textwrap.dedent("""\
    from http.server import BaseHTTPRequestHandler, HTTPServer
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"gateway:" + body)
        def log_message(self, *args):
            pass
    HTTPServer(("0.0.0.0", 9123), Handler).serve_forever()
    """)
WORKER = textwrap.dedent("""\
    import prices
    STATE = {}
    def initialize(context):
        STATE["ready"] = True
    def handler(event, context):
        return {"ready": STATE.get("ready", False), "price": prices.PRICE}
    """)


def _zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def _run(root: Path, *args: str) -> Any:
    result = CliRunner().invoke(cli, ["-C", str(root), *args, "--target", "aliyun",
                                      "--output", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr + result.stdout
    return json.loads(result.stdout)


def test_node_custom_and_layered_python_functions_deploy_and_run(tmp_path: Path) -> None:
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "index.js").write_text(NODE)
    (tmp_path / "gateway").mkdir()
    (tmp_path / "gateway" / "server.py").write_text(SERVER)
    (tmp_path / "worker.zip").write_bytes(_zip({"index.py": WORKER}))
    with mock_cloud() as cloud:
        cloud.server.emulator.layers.create_version(
            cloud.account_id, "cn-hangzhou", "prices",
            LayerInput(_zip({"python/prices.py": "PRICE = 42\n"}), ("python3.10",)))
        (tmp_path / "s.yaml").write_text(S_YAML.replace("{account}", cloud.account_id))
        up = _run(tmp_path, "up", "--yes")
        api = _run(tmp_path, "invoke", "orders-api", "--event", '{"n": 1}')
        gateway = _run(tmp_path, "invoke", "orders-gateway", "--event", '{"n": 2}')
        worker = _run(tmp_path, "invoke", "orders-worker")
    assert {r["name"]: r["action"] for r in up["resources"]} == {
        "orders-api": "create", "orders-gateway": "create", "orders-worker": "create"}
    assert up["not_deployed"] == []
    assert api["response"] == {"ok": True, "got": {"n": 1}}
    assert gateway["response"] == 'gateway:{"n": 2}'
    assert worker["response"] == {"ready": True, "price": 42}
