"""Cold and warm InvokeFunction latency of each local runtime, through the official FC 3.0 SDK.

Like for like: every runtime runs the same trivial function (answer a small JSON object from
the event's size), on an emulator with the real clock and no latency model (cold start 0), so
the numbers are the emulator's own cost. Runs are interleaved (round r measures every runtime
in turn) and reported as medians over rounds, with the ratio to python3.10.

* cold: InvokeFunction of a function created just before (a new instance: worker start,
  sandbox, interpreter or server start, module import), measured at the SDK;
* warm: InvokeFunction of an instance that already served.

Runtimes: python3.10 (FC's default ``internetAccess: true``: its instances get a network stack
attached, docs/runtime.md "Network") and python3.10 without internet access; nodejs20 (skipped
without node); custom.debian12 with a Python ``http.server`` server and with a Node.js ``http``
server (skipped without node).

    python benchmarks/runtimes.py [--rounds 5] [--warm 200]

Short run while developing: ``--rounds 2 --warm 50``. The long run is the default.
"""

from __future__ import annotations

import argparse
import base64
import io
import logging
import shutil
import statistics
import sys
import time
import zipfile
from collections.abc import Callable

from alibabacloud_fc20230330 import models
from darabonba.runtime import RuntimeOptions

from deployer.emulator.clock import SystemClock
from deployer.testing import mock_cloud

PY = "def handler(event, context):\n    return {'size': len(event)}\n"
NODE = "exports.handler = async (event) => ({ size: event.length });\n"
PY_SERVER = """
import json, os
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *args):
        pass
    def do_POST(self):
        size = len(self.rfile.read(int(self.headers.get("content-length") or 0)))
        body = json.dumps({"size": size}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
HTTPServer(("0.0.0.0", int(os.environ["FC_CUSTOM_LISTEN_PORT"])), H).serve_forever()
"""
NODE_SERVER = """
require('http').createServer((req, res) => {
  let size = 0;
  req.on('data', (chunk) => { size += chunk.length; });
  req.on('end', () => res.end(JSON.stringify({ size })));
}).listen(Number(process.env.FC_CUSTOM_LISTEN_PORT), '0.0.0.0');
"""


def zipped(name: str, source: str) -> str:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, source)
    return base64.b64encode(buffer.getvalue()).decode()


def runtimes() -> dict[str, Callable[[int], dict]]:
    """label -> CreateFunctionInput fields for the n-th function of that runtime."""
    out: dict[str, Callable[[int], dict]] = {
        "python3.10": lambda n: {"runtime": "python3.10", "handler": "index.handler",
                                 "code": zipped("index.py", PY)},
        "python3.10, internetAccess false": lambda n: {
            "runtime": "python3.10", "handler": "index.handler", "internet_access": False,
            "code": zipped("index.py", PY)},
        "custom.debian12 (python server)": lambda n: {
            "runtime": "custom.debian12", "handler": "x", "code": zipped("s.py", PY_SERVER),
            "custom_runtime_config": models.CustomRuntimeConfig(
                command=[sys.executable, "s.py"], port=19700 + n)},
    }
    if shutil.which("node"):
        out["nodejs20"] = lambda n: {"runtime": "nodejs20", "handler": "index.handler",
                                     "code": zipped("index.js", NODE)}
        out["custom.debian12 (node server)"] = lambda n: {
            "runtime": "custom.debian12", "handler": "x", "code": zipped("s.js", NODE_SERVER),
            "custom_runtime_config": models.CustomRuntimeConfig(
                command=["node", "s.js"], port=19850 + n)}
    return out


def create(client, name: str, fields: dict) -> None:
    fields = dict(fields)
    code = models.InputCodeLocation(zip_file=fields.pop("code"))
    client.create_function(models.CreateFunctionRequest(body=models.CreateFunctionInput(
        function_name=name, timeout=30, memory_size=512, code=code, **fields)))


def invoke_ms(client, name: str) -> float:
    started = time.perf_counter()
    response = client.invoke_function_with_options(
        name, models.InvokeFunctionRequest(body=b'{"x": 1}'), models.InvokeFunctionHeaders(),
        RuntimeOptions())
    body = response.body.read()
    elapsed = (time.perf_counter() - started) * 1000
    if b'"size"' not in body or "x-fc-error-type" in response.headers:
        raise SystemExit(f"{name} failed: {body[:300]!r}")
    return elapsed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--warm", type=int, default=200)
    args = parser.parse_args(argv)
    logging.getLogger("deployer.emulator").setLevel(logging.ERROR)  # no version warnings
    kinds = runtimes()
    cold: dict[str, list[float]] = {label: [] for label in kinds}
    warm: dict[str, list[float]] = {label: [] for label in kinds}
    with mock_cloud(clock=SystemClock(), intercept=False) as cloud:
        client = cloud.fc_client()
        for index, fields in enumerate(kinds.values()):  # warm-up: one of each
            create(client, f"warmup{index}", fields(99))
            invoke_ms(client, f"warmup{index}")
        for round_ in range(args.rounds):
            for index, (label, fields) in enumerate(kinds.items()):
                name = f"f{index}r{round_}"
                create(client, name, fields(round_ * 10 + index))
                cold[label].append(invoke_ms(client, name))
                samples = [invoke_ms(client, name) for _ in range(args.warm)]
                warm[label].append(statistics.median(samples))
            cloud.server.emulator.runtime.retire(cloud.account_id, cloud.region, name)
    base_cold = statistics.median(cold["python3.10"])
    base_warm = statistics.median(warm["python3.10"])
    print(f"{args.rounds} rounds, {args.warm} warm invocations per runtime and round "
          "(medians over rounds)")
    print(f"{'runtime':<32} {'cold ms':>9} {'x python':>9} {'warm ms':>9} {'x python':>9}")
    for label in kinds:
        c, w = statistics.median(cold[label]), statistics.median(warm[label])
        print(f"{label:<32} {c:>9.1f} {c / base_cold:>9.2f} {w:>9.2f} {w / base_warm:>9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
