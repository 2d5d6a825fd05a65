"""A full disk or a database that cannot grow: a clear 5xx naming the cause, nothing committed
lost, the emulator stays up and works again once there is room."""

from __future__ import annotations

import base64
import os
import resource
import shutil
import signal
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_fnf20190315 import models as fnf
from Tea.exceptions import TeaException

from deployer.emulator.clock import VirtualClock
from deployer.emulator.server import EmulatorServer
from deployer.testing.environment import LocalCloud
from deployer.testing.runtimes import EchoRuntime
from tests.emulator.cloudflow_support import create, pass_flow


def _function(cloud: LocalCloud, name: str, zip_bytes: bytes) -> None:
    cloud.fc_client().create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name=name, runtime="python3.10", handler="index.handler",
        code=fc.InputCodeLocation(zip_file=base64.b64encode(zip_bytes).decode()))))


def _fill_until_refused(write) -> tuple[TeaException, int]:
    for i in range(10_000):
        try:
            write(i)
        except TeaException as exc:
            return exc, i
    pytest.fail("the state never filled up")


def _assert_intact_and_recovers(cloud: LocalCloud, make_room, write, failed: int,
                                name) -> None:
    """Everything written before the failure is there, the failed write left nothing, and
    the same write succeeds once there is room."""
    fc_client = cloud.fc_client()
    names = {f.function_name for f in
             fc_client.list_functions(fc.ListFunctionsRequest(limit=100)).body.functions}
    assert {name(i) for i in range(failed)} <= names and name(failed) not in names
    execution = cloud.fnf_client().describe_execution(fnf.DescribeExecutionRequest(
        flow_name="p", execution_name="before")).body
    assert execution.status == "Succeeded"
    make_room()
    write(failed)  # works again, and is saved
    assert fc_client.get_function(name(failed), fc.GetFunctionRequest()).body.function_name
    flows = cloud.fnf_client().list_flows(fnf.ListFlowsRequest()).body
    assert [f.name for f in flows.flows] == ["p"]


def test_database_that_cannot_grow(tmp_path, make_zip) -> None:
    server = EmulatorServer(tmp_path, clock=VirtualClock(), runtime=EchoRuntime()).start()
    try:
        cloud = LocalCloud(server, "cn-hangzhou")
        create(cloud.fnf_client(), "p", pass_flow("p"))
        cloud.fnf_client().start_execution(fnf.StartExecutionRequest(
            flow_name="p", execution_name="before"))
        db = server.emulator.db
        with db.transaction() as conn:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {pages + 2}")
        zip_bytes = make_zip()

        def name(i: int) -> str:
            return f"f{i}-{'x' * 60}"

        def write(i: int) -> None:
            _function(cloud, name(i), zip_bytes)

        exc, failed = _fill_until_refused(write)
        assert exc.code == "StorageFull" and exc.statusCode == 507
        assert "full" in exc.message and str(tmp_path) in exc.message
        with pytest.raises(TeaException) as started:
            cloud.fnf_client().start_execution(fnf.StartExecutionRequest(
                flow_name="p", execution_name="during", input='{"pad": "' + "y" * 60000 + '"}'))
        assert started.value.code == "StorageFull"

        def room() -> None:
            with db.transaction() as conn:
                conn.execute("PRAGMA max_page_count = 1073741823")

        _assert_intact_and_recovers(cloud, room, write, failed, name)
    finally:
        server.stop()


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MiB tmpfs (needs the right to mount: root in CI)."""
    mount = tmp_path / "small-disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk(small_disk, make_zip) -> None:
    state = small_disk / "state"
    server = EmulatorServer(state, clock=VirtualClock(), runtime=EchoRuntime()).start()
    filler = small_disk / "filler"
    try:
        cloud = LocalCloud(server, "cn-hangzhou")
        create(cloud.fnf_client(), "p", pass_flow("p"))
        cloud.fnf_client().start_execution(fnf.StartExecutionRequest(
            flow_name="p", execution_name="before"))
        _function(cloud, "first", make_zip())
        # take (nearly) all that is left; unbuffered, so closing has nothing left to write
        with open(filler, "wb", buffering=0) as fh:
            try:
                while True:
                    fh.write(b"\0" * 65536)
            except OSError:
                pass

        def name(i: int) -> str:
            return f"fn{i}"

        def write(i: int) -> None:
            _function(cloud, name(i), make_zip({"index.py": uuid.uuid4().hex * 3000}))

        exc, failed = _fill_until_refused(write)
        assert exc.code == "StorageFull" and exc.statusCode == 507, exc.message
        assert str(state) in exc.message
        got = cloud.fc_client().get_function("first", fc.GetFunctionRequest()).body
        assert got.function_name == "first"
        _assert_intact_and_recovers(cloud, filler.unlink, write, failed, name)
    finally:
        server.stop()
        shutil.rmtree(state, ignore_errors=True)


def _many_passes(name: str, count: int = 100) -> str:
    """A flow whose first step writes several history events per Pass state, each with the
    state's input (so with a 2 KB input, a first step needs about a hundred pages where its
    start needs one or two)."""
    states = "".join(f"  - Type: Pass\n    Name: p{i}\n    "
                     + (f"Next: p{i + 1}\n" if i < count else "End: true\n")
                     for i in range(1, count + 1))
    return (f"Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: p1\nStates:\n"
            + states)


PADDED = '{"pad": "' + "y" * 2000 + '"}'


def test_every_answered_execution_ends_once_the_disk_has_room(tmp_path) -> None:
    """The database fills up while executions start: each start answered ``Running`` ends
    once there is room again, without a restart (their first steps, refused by the full
    database, are tried again), and the starts refused got StorageFull."""
    server = EmulatorServer(tmp_path, clock=VirtualClock(), runtime=EchoRuntime()).start()
    try:
        cloud = LocalCloud(server, "cn-hangzhou")
        client = cloud.fnf_client()
        create(client, "many", _many_passes("many"))
        db = server.emulator.db
        with db.transaction() as conn:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {pages + 16}")  # room for starts only
        answered = []
        for i in range(200):
            try:
                client.start_execution(fnf.StartExecutionRequest(
                    flow_name="many", execution_name=f"e{i}", input=PADDED))
            except TeaException as exc:
                assert exc.code == "StorageFull", exc.message
                break
            answered.append(f"e{i}")
        else:
            pytest.fail("the database never filled up")
        assert answered
        with db.transaction() as conn:
            conn.execute("PRAGMA max_page_count = 1073741823")
        for name in answered:
            ended = client.describe_execution(fnf.DescribeExecutionRequest(
                flow_name="many", execution_name=name, wait_time_seconds=30)).body
            assert ended.status == "Succeeded", (name, ended.status)
        assert server.emulator.flow_engine.stats().running_executions == 0
    finally:
        server.stop()


@pytest.fixture
def file_size_limit() -> Iterator[Callable[[int], None]]:
    """Set RLIMIT_FSIZE for this process (writes past it fail with EFBIG, as on a full disk;
    no privilege needed); restored afterwards."""
    previous = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    def limit(size: int) -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, previous[1]))

    try:
        yield limit
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, previous)
        signal.signal(signal.SIGXFSZ, handler)


def test_a_refused_code_upload_leaves_no_file_behind(tmp_path, make_zip,
                                                     file_size_limit) -> None:
    server = EmulatorServer(tmp_path, clock=VirtualClock(), runtime=EchoRuntime()).start()
    try:
        cloud = LocalCloud(server, "cn-hangzhou")
        _function(cloud, "small", make_zip())
        biggest = max(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
        big = make_zip({"index.py": "x = '" + os.urandom(600_000).hex() + "'\n"})
        file_size_limit(biggest + 256 * 1024)  # the database may grow; the zip may not
        for attempt in range(3):
            with pytest.raises(TeaException) as refused:
                _function(cloud, f"big{attempt}", big)
            assert refused.value.code == "StorageFull", refused.value.message
        code = tmp_path / "code"
        assert sorted(p.suffix for p in code.iterdir()) == [".zip"]  # only "small"'s
        file_size_limit(resource.RLIM_INFINITY)
        _function(cloud, "big", big)
        assert len(list(code.iterdir())) == 2
    finally:
        server.stop()
