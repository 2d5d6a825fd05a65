"""A Distributed Map of N items on the emulator (not a test): wall time and peak memory.

The flow reads its items with an ``ItemReader`` (``OSS_JSON_LIST``, answered from a mocked
response holding N objects), builds each with an ``ItemConstructor``, runs a map run of N
Express child executions (each a Choice and a Pass) with ``MaxConcurrency`` 100 and writes its
results with a ``ResultWriter`` (so the Map's output stays small). Each size runs in a fresh
process (``mock_cloud()``, virtual clock, a durable state directory) that reports its time
and its peak RSS (``ru_maxrss``); the harness prints both for every size and the ratio of
peak RSS between the largest and the smallest size: bounded memory keeps it far below the
ratio of the sizes.

Run: python benchmarks/map_run.py [--sizes 1000,10000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FLOW = """\
Type: StateMachine
SpecVersion: v1
Name: fan-out
StartAt: Fan
States:
  - Type: Map
    Name: Fan
    ProcessorConfig:
      ExecutionMode: Express
    ItemReader:
      SourceType: OSS_JSON_LIST
      SourceParameters:
        Bucket: data
        ObjectName: items.json
    ItemConstructor:
      n.$: $Item.id
    MaxConcurrency: 100
    ResultWriter:
      Parameters:
        Bucket: data
        Prefix: results/
    Processor:
      StartAt: Check
      States:
        - Type: Choice
          Name: Check
          Branches:
            - Condition: $Input.n < 0
              Next: Negative
          Default: Square
        - Type: Pass
          Name: Square
          OutputConstructor:
            sq.$: $Input.n * $Input.n
          End: true
        - Type: Pass
          Name: Negative
          End: true
    End: true
"""


def one(size: int) -> dict[str, float]:
    """Run one map run of ``size`` items in this process."""
    sys.path.insert(0, str(ROOT))
    from alibabacloud_fnf20190315 import models as fnf

    from deployer.testing import mock_cloud

    mocks = {"StateMachines": {"fan-out": {"TestCases": {"Bench": {"Fan": "Items"}}}},
             "MockedResponses": {"Items": {"0": {"Return": {
                 "Body": json.dumps([{"id": i} for i in range(size)])}}}}}
    with tempfile.TemporaryDirectory() as state, \
            mock_cloud(state_dir=Path(state), mocks=mocks) as cloud:
        client = cloud.fnf_client()
        client.create_flow(fnf.CreateFlowRequest(name="fan-out", definition=FLOW,
                                                 description="", type="FDL"))
        started = time.perf_counter()
        client.start_execution(fnf.StartExecutionRequest(flow_name="fan-out",
                                                         execution_name="run#Bench"))
        done = cloud.wait_for_execution("fan-out", "run", timeout=3600)
        elapsed = time.perf_counter() - started
    output = json.loads(done.get("Output") or "{}")
    counts = output.get("ItemCounts", {})
    if done["Status"] != "Succeeded" or counts.get("Succeeded") != size:
        raise SystemExit(f"the map run did not complete: {done['Status']} {counts}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB
    return {"items": size, "seconds": elapsed, "peak_rss_mib": peak,
            "items_per_second": size / elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one)))
        return
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        out = subprocess.run([sys.executable, __file__, "--one", str(size)], check=True,
                             capture_output=True, text=True).stdout
        result = json.loads(out.strip().splitlines()[-1])
        results.append(result)
        print(f"{result['items']:>7,} items: {result['seconds']:8.1f} s "
              f"({result['items_per_second']:.0f} items/s), peak RSS "
              f"{result['peak_rss_mib']:.0f} MiB", flush=True)
    if len(results) > 1:
        small, large = results[0], results[-1]
        print(f"items x{large['items'] / small['items']:.0f}: peak RSS "
              f"x{large['peak_rss_mib'] / small['peak_rss_mib']:.2f}")


if __name__ == "__main__":
    main()
