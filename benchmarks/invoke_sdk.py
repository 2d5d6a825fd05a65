"""InvokeFunction through the official FC 3.0 SDK: the emulator vs a trivial server.

The same SDK client code invokes (a) a function on the emulator (signature checked, handler run
in its worker process, logs captured) and (b) a trivial HTTP server that answers every request
with a fixed 200 body (no signature check, no function). The difference of the two is what
the emulator adds on top of the SDK's own cost. Cold start = CreateFunction of a new function,
then its first InvokeFunction (new worker process), measured at the SDK.

Targets: warm p50 <= 5 ms above the trivial server; cold start <= 300 ms.

    python benchmarks/invoke_sdk.py [--warm 1000] [--cold 10]
"""

from __future__ import annotations

import argparse
import base64
import io
import logging
import statistics
import sys
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from alibabacloud_fc20230330 import models
from darabonba.runtime import RuntimeOptions

from deployer.emulator.clock import SystemClock
from deployer.testing import mock_cloud

HANDLER = b"def handler(event, context):\n    return {'job_id': 'j-1'}\n"


class Trivial(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"job_id": "j-1"}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("x-fc-request-id", "1-00000000-000000000000000000000000")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def zipped() -> str:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("index.py", HANDLER)
    return base64.b64encode(buffer.getvalue()).decode()


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def time_invokes(client, name: str, count: int) -> list[float]:
    request = models.InvokeFunctionRequest(body=b'{"x": 1}')
    headers = models.InvokeFunctionHeaders()
    client.invoke_function_with_options(name, request, headers, RuntimeOptions())
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        response = client.invoke_function_with_options(name, request, headers, RuntimeOptions())
        response.body.read()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def create(client, name: str, code: str) -> None:
    client.create_function(models.CreateFunctionRequest(body=models.CreateFunctionInput(
        function_name=name, runtime="python3.10", handler="index.handler", timeout=10,
        code=models.InputCodeLocation(zip_file=code))))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", type=int, default=1000)
    parser.add_argument("--cold", type=int, default=10)
    args = parser.parse_args(argv)
    logging.getLogger("deployer.emulator").setLevel(logging.ERROR)  # no host-Python warnings
    code = zipped()
    rows = []

    trivial = ThreadingHTTPServer(("127.0.0.1", 0), Trivial)
    threading.Thread(target=trivial.serve_forever, daemon=True).start()
    with mock_cloud(clock=SystemClock(), intercept=False) as cloud:
        baseline_client = cloud.fc_client(endpoint=f"127.0.0.1:{trivial.server_address[1]}")
        baseline = time_invokes(baseline_client, "any", args.warm)
        client = cloud.fc_client()
        create(client, "bench", code)
        emulated = time_invokes(client, "bench", args.warm)
        colds = []
        for index in range(args.cold):
            started = time.perf_counter()
            create(client, f"cold{index}", code)
            client.invoke_function(f"cold{index}", models.InvokeFunctionRequest(body=b"{}"))
            colds.append((time.perf_counter() - started) * 1000)
    trivial.shutdown()

    rows.append(("SDK -> trivial server", baseline))
    rows.append(("SDK -> emulator (warm)", emulated))
    rows.append(("create + first invoke (cold)", colds))
    print(f"{'measure':<32} {'per second':>11} {'p50 ms':>8} {'p99 ms':>8}")
    for label, samples in rows:
        rate = len(samples) / (sum(samples) / 1000)
        print(f"{label:<32} {rate:>11.0f} {statistics.median(samples):>8.2f} "
              f"{percentile(samples, 0.99):>8.2f}")
    overhead = statistics.median(emulated) - statistics.median(baseline)
    print(f"emulator overhead at p50: {overhead:.2f} ms (target <= 5 ms); "
          f"cold start p50: {statistics.median(colds):.0f} ms (target <= 300 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
