"""A Serverless Devs fc3 project with an HTTP-triggered Node.js function, a custom runtime
function, a Python function with a layer, an initializer and a timer trigger, and an
OSS-triggered function: `deploy up` deploys it (the cloud target's code path inside
mock_cloud(), so every property crosses the emulator's wire), curl reaches the HTTP trigger,
the timer fires on the virtual clock, `deploy invoke --event-template` feeds the OSS function
its trigger's event, and a second `deploy up` finds nothing to change."""

from __future__ import annotations

import io
import json
import subprocess
import textwrap
import zipfile
from pathlib import Path
from typing import Any

from alibabacloud_fc20230330 import models as fc
from click.testing import CliRunner

from deployer.cli.main import cli
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
      triggers:
        - triggerName: web
          triggerType: http
          triggerConfig: {authType: anonymous, methods: [GET, POST]}
  gateway:
    component: fc3
    props:
      region: cn-hangzhou
      functionName: orders-gateway
      runtime: custom.debian10
      code: ./gateway
      customRuntimeConfig: {command: [python3, server.py], port: 9123}
      triggers:
        - triggerName: edge
          triggerType: http
          triggerConfig: {authType: anonymous, methods: [POST]}
  worker:
    component: fc3
    props:
      region: cn-hangzhou
      functionName: orders-worker
      runtime: python3.10
      code: ./worker.zip
      handler: index.handler
      layers: [./layers/prices]
      instanceLifecycleConfig:
        initializer: {handler: index.initialize, timeout: 5}
      triggers:
        - triggerName: nightly
          triggerType: timer
          triggerConfig: {cronExpression: "0 0 2 * * *", enable: true, payload: reprice}
  images:
    component: fc3
    props:
      region: cn-hangzhou
      functionName: orders-images
      runtime: python3.10
      code: ./images
      handler: index.handler
      triggers:
        - triggerName: uploads
          triggerType: oss
          sourceArn: acs:oss:cn-hangzhou:{account}:orders-uploads
          triggerConfig:
            events: [oss:ObjectCreated:PutObject]
            filter: {key: {prefix: uploads/, suffix: .png}}
"""
IMAGES = textwrap.dedent("""\
    import json
    def handler(event, context):
        record = json.loads(event)["events"][0]
        return {"bucket": record["oss"]["bucket"]["name"], "key": record["oss"]["object"]["key"]}
    """)
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
        print("event", event.decode() if isinstance(event, bytes) else event)
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


def _curl(url: str) -> str:
    done = subprocess.run(["curl", "-sS", "--max-time", "20", "-X", "POST", "-H",
                           "Content-Type: application/json", "-d", '{"n": 3}', url],
                          capture_output=True, text=True, timeout=30, check=True)
    return done.stdout


def test_an_fc3_project_with_triggers_runtimes_and_a_layer(tmp_path: Path) -> None:
    (tmp_path / "api").mkdir()
    (tmp_path / "api" / "index.js").write_text(NODE)
    (tmp_path / "gateway").mkdir()
    (tmp_path / "gateway" / "server.py").write_text(SERVER)
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "index.py").write_text(IMAGES)
    (tmp_path / "worker.zip").write_bytes(_zip({"index.py": WORKER}))
    prices = tmp_path / "layers" / "prices" / "python" / "prices.py"
    prices.parent.mkdir(parents=True)
    prices.write_text("PRICE = 42\n")
    with mock_cloud() as cloud:
        (tmp_path / "s.yaml").write_text(S_YAML.replace("{account}", cloud.account_id))
        plan = _run(tmp_path, "plan")
        up = _run(tmp_path, "up", "--yes")
        url = next(r["url"] for r in up["resources"] if r["name"] == "orders-api/web")
        curled = json.loads(_curl(url + "/orders?page=2"))
        edge = next(r["url"] for r in up["resources"] if r["name"] == "orders-gateway/edge")
        forwarded = _curl(edge + "/checkout")
        api = _run(tmp_path, "invoke", "orders-api", "--event", '{"n": 1}')
        gateway = _run(tmp_path, "invoke", "orders-gateway", "--event", '{"n": 2}')
        worker = _run(tmp_path, "invoke", "orders-worker")
        fires = cloud.wait_for_timer_trigger("orders-worker", "nightly", fires=1)
        timer_events = [r for r in cloud.invocations("orders-worker")
                        if r.invocation_type == "Async"]
        image = _run(tmp_path, "invoke", "orders-images", "--event-template",
                     "oss:ObjectCreated:PutObject")
        again = _run(tmp_path, "up", "--yes")
        prices.write_text("PRICE = 43\n")
        repriced = _run(tmp_path, "up", "--yes")
        worker_after = _run(tmp_path, "invoke", "orders-worker")
        (layer,) = cloud.fc_client().list_layers(fc.ListLayersRequest()).body.layers
    actions = {r["name"]: r["action"] for r in up["resources"]}
    assert actions == {"prices": "create", "orders-api": "create", "orders-gateway": "create",
                       "orders-worker": "create", "orders-images": "create",
                       "orders-api/web": "create", "orders-gateway/edge": "create",
                       "orders-worker/nightly": "create", "orders-images/uploads": "create"}
    sent = {s["name"]: s["new"] for r in plan["resources"] if r["type"] == "trigger"
            for s in r["settings"]}
    assert sent["triggers.uploads"]["sourceArn"].endswith(":orders-uploads")
    assert sent["triggers.uploads"]["triggerConfig"]["filter"]["key"]["suffix"] == ".png"
    assert sent["triggers.nightly"]["triggerConfig"]["payload"] == "reprice"
    assert up["not_deployed"] == [] and url.startswith(f"http://{cloud.endpoint}/fcapp/")
    assert curled["ok"] is True and curled["got"]["rawPath"] == "/orders"
    assert curled["got"]["body"] == '{"n": 3}' and curled["got"]["queryParameters"] == {
        "page": "2"}
    assert forwarded == 'gateway:{"n": 3}'
    assert api["response"] == {"ok": True, "got": {"n": 1}}
    assert gateway["response"] == 'gateway:{"n": 2}'
    assert worker["response"] == {"ready": True, "price": 42}
    assert fires == 1 and len(timer_events) == 1 and timer_events[0].status == "Succeeded"
    assert image["response"]["bucket"] == "orders-uploads"
    assert image["response"]["key"].startswith("uploads/")
    assert image["response"]["key"].endswith(".png")
    assert {r["action"] for r in again["resources"]} == {"no-change"} and not again["changed"]
    changed = {r["name"]: r["action"] for r in repriced["resources"] if r["action"] != "no-change"}
    assert changed == {"prices": "create", "orders-worker": "update"}
    assert worker_after["response"] == {"ready": True, "price": 43}
    assert (layer.layer_name, layer.version, layer.compatible_runtime) == (
        "prices", 2, ["python3.10"])
