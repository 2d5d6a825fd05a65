"""Benchmark of the local FC Python runtime layer (``ProcessRuntime.invoke`` directly).

Measures warm invoke round trips (requests/s, p50, p99) and cold starts (new worker process to
first result, p50/p99) with a small handler that logs one line and returns a dict. The HTTP
layer and the SDK are not involved; the SDK-level numbers belong to the FC API benchmark.

Targets: warm round trip <= 1-2 ms; cold start <= 300 ms.

    python benchmarks/invoke.py [--warm 2000] [--cold 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from deployer.emulator.clock import SystemClock, VirtualClock
from deployer.emulator.runtime import InstanceSpec, ProcessRuntime

HANDLER = """\
import logging
def handler(event, context):
    logging.getLogger().info("event %d bytes", len(event))
    return {"ok": True, "size": len(event)}
"""


def build_spec(directory: Path, name: str) -> InstanceSpec:
    path = directory / "code.zip"
    if not path.exists():
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("index.py", HANDLER)
    return InstanceSpec(
        account_id="1234567890123456",
        region="cn-hangzhou",
        function_name=name,
        handler="index.handler",
        runtime="python3.10",
        timeout=10,
        memory_size=128,
        environment={},
        code_checksum="bench",
        code_zip=path,
    )


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def warm(runtime: ProcessRuntime, spec: InstanceSpec, count: int) -> list[float]:
    runtime.invoke(spec, b"{}", request_id="warmup", tail_logs=True)
    samples = []
    for index in range(count):
        started = time.perf_counter()
        result = runtime.invoke(spec, b'{"job_id": "x"}', request_id=f"r{index}", tail_logs=True)
        samples.append((time.perf_counter() - started) * 1000)
        assert result.error_type is None and not result.cold_start
    return samples


def cold(runtime: ProcessRuntime, directory: Path, count: int) -> list[float]:
    samples = []
    for index in range(count):
        spec = build_spec(directory, f"cold-{index}")
        started = time.perf_counter()
        result = runtime.invoke(spec, b"{}", request_id=f"c{index}", tail_logs=True)
        samples.append((time.perf_counter() - started) * 1000)
        assert result.error_type is None and result.cold_start
        runtime.retire(spec.account_id, spec.region, spec.function_name)
    return samples


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", type=int, default=2000, help="warm invocations per clock")
    parser.add_argument("--cold", type=int, default=20, help="cold starts per clock")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        for label, clock in (("system", SystemClock()), ("virtual", VirtualClock())):
            runtime = ProcessRuntime(directory / "work", clock)
            try:
                spec = build_spec(directory, f"warm-{label}")
                started = time.perf_counter()
                samples = warm(runtime, spec, args.warm)
                elapsed = time.perf_counter() - started
                rows.append(
                    (
                        f"warm invoke ({label} clock)",
                        len(samples) / elapsed,
                        statistics.median(samples),
                        percentile(samples, 0.99),
                    )
                )
                samples = cold(runtime, directory, args.cold)
                rows.append(
                    (
                        f"cold start ({label} clock)",
                        len(samples) / sum(samples) * 1000,
                        statistics.median(samples),
                        percentile(samples, 0.99),
                    )
                )
            finally:
                runtime.close()
    print("Runtime layer only: ProcessRuntime.invoke, no HTTP, no SDK.")
    print(f"{'measure':<30} {'per second':>12} {'p50 ms':>9} {'p99 ms':>9}")
    for name, rate, p50, p99 in rows:
        print(f"{name:<30} {rate:>12.0f} {p50:>9.3f} {p99:>9.3f}")
    print("targets: warm round trip <= 1-2 ms; cold start p50 <= 300 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
