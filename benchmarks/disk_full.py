"""A real full disk under the emulator (not a test; needs the right to mount a tmpfs: root).

The state directory lives on a small tmpfs (``--size``, default 16m). A flow whose first step
writes about a hundred history events (100 Pass states, a 2 KB input) is created; a filler
file then takes the whole disk but ``--room`` KB, so StartExecution (one row) still fits where
first steps (hundreds of pages each) do not. Starts go on until five are refused
(``507 StorageFull``); three CreateFunctions with a 1.8 MB zip are refused. Printed: the starts
answered and refused, how many answered executions are Running one second later, the files
left in ``code/`` besides zips, then, once the filler is removed, the status each answered
execution reaches (DescribeExecution long polls of ``--wait`` s) and how long that took,
without a restart. Files of the database and the free space are printed at the end (with a
``--size`` too small for what was answered, the disk is full again and they stay Running,
their steps tried again until it has room).

Run: python benchmarks/disk_full.py [--size 16m] [--room 192] [--wait 60] [--mount DIR]
"""

from __future__ import annotations

import argparse
import base64
import io
import logging
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from alibabacloud_fc20230330 import models as fc  # noqa: E402
from alibabacloud_fnf20190315 import models as fnf  # noqa: E402
from Tea.exceptions import TeaException  # noqa: E402

from deployer.emulator.clock import VirtualClock  # noqa: E402
from deployer.emulator.server import EmulatorServer  # noqa: E402
from deployer.testing.environment import LocalCloud  # noqa: E402
from deployer.testing.runtimes import EchoRuntime  # noqa: E402
from tests.emulator.cloudflow_support import create  # noqa: E402
from tests.emulator.test_storage_faults import PADDED, _many_passes  # noqa: E402


def _fill(filler: Path, room_kb: int) -> None:
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    with open(filler, "r+b") as fh:
        fh.truncate(max(0, filler.stat().st_size - room_kb * 1024))


def _starts(client: object) -> tuple[list[str], int]:
    answered, refused = [], 0
    for i in range(1000):
        try:
            client.start_execution(fnf.StartExecutionRequest(  # type: ignore[attr-defined]
                flow_name="many", execution_name=f"e{i}", input=PADDED))
            answered.append(f"e{i}")
        except TeaException as exc:
            assert exc.code == "StorageFull", exc.message
            refused += 1
            if refused == 5:
                break
    return answered, refused


def _refused_functions(cloud: LocalCloud) -> int:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("index.py", "x = '" + os.urandom(900_000).hex() + "'\n")
    code = base64.b64encode(buf.getvalue()).decode()
    refused = 0
    for k in range(3):
        try:
            cloud.fc_client().create_function(fc.CreateFunctionRequest(
                body=fc.CreateFunctionInput(function_name=f"big{k}", runtime="python3.10",
                                            handler="index.handler",
                                            code=fc.InputCodeLocation(zip_file=code))))
        except TeaException as exc:
            assert exc.code == "StorageFull", exc.message
            refused += 1
    return refused


def run(mount: Path, room_kb: int, wait: int) -> None:
    state = mount / "state"
    server = EmulatorServer(state, clock=VirtualClock(), runtime=EchoRuntime()).start()
    try:
        cloud = LocalCloud(server, "cn-hangzhou")
        client = cloud.fnf_client()
        create(client, "many", _many_passes("many"))
        filler = mount / "filler"
        _fill(filler, room_kb)
        answered, refused = _starts(client)
        time.sleep(1)
        running = sum(1 for n in answered if client.describe_execution(
            fnf.DescribeExecutionRequest(flow_name="many", execution_name=n)).body.status
            == "Running")
        functions = _refused_functions(cloud)
        left = sorted(p.name for p in (state / "code").glob("*") if p.suffix != ".zip")
        print(f"starts answered {len(answered)}, refused {refused} (StorageFull); Running one "
              f"second later: {running}; CreateFunction refused {functions} of 3; files in "
              f"code/ besides zips: {left or 'none'}", flush=True)
        filler.unlink()
        began = time.monotonic()
        statuses: dict[str, int] = {}
        for name in answered:
            status = client.describe_execution(fnf.DescribeExecutionRequest(
                flow_name="many", execution_name=name, wait_time_seconds=wait)).body.status
            statuses[status] = statuses.get(status, 0) + 1
        stats = server.emulator.flow_engine.stats()
        free = os.statvfs(mount)
        files = {p.name: p.stat().st_size // 1024 for p in state.glob("emulator.db*")}
        print(f"room again: {statuses} after {time.monotonic() - began:.2f} s (no restart); "
              f"engine running {stats.running_executions}, in flight {stats.in_flight}; "
              f"free {free.f_bavail * free.f_frsize // 1024} KB, database files (KB) {files}")
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="16m")
    parser.add_argument("--room", type=int, default=192)
    parser.add_argument("--wait", type=int, default=60)
    parser.add_argument("--mount", default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    mount = Path(args.mount or tempfile.mkdtemp(prefix="disk-full-"))
    mount.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={args.size}", "tmpfs", str(mount)],
                   check=True)
    try:
        run(mount, args.room, args.wait)
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv):
        print(__doc__)
    else:
        main()
