"""The front door's bounds: header timeout, connection bound, large-body budget, long polls
that hold no thread, one emulator per state directory, a full or read-only disk."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from alibabacloud_fnf20190315 import models as fnf

from deployer.emulator.clock import VirtualClock
from deployer.emulator.server import EmulatorServer, ServerLimits, StateDirInUse
from deployer.testing.environment import LocalCloud
from deployer.testing.runtimes import EchoRuntime
from tests.emulator.cloudflow_support import create, wait_flow
from tests.emulator.wire import Wire, assert_cloud_error, exchange, request


@pytest.fixture
def limited(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LocalCloud]:
    server = EmulatorServer(tmp_path / "state", clock=VirtualClock(), runtime=EchoRuntime(),
                            limits=ServerLimits(**request.param)).start()
    try:
        yield LocalCloud(server, "cn-hangzhou")
    finally:
        server.stop()


def _health(cloud: LocalCloud) -> bytes:
    return request("GET", "/_emulator/health", {"Host": cloud.endpoint})


@pytest.mark.parametrize("limited", [{"header_timeout": 0.3}], indirect=True)
def test_a_request_head_that_never_completes_gets_408(limited) -> None:
    with Wire(limited.server.port) as slow:
        slow.send(b"GET /_emulator/health HTTP/1.1\r\nHo")
        reply = slow.reply()  # the server answers by itself once the time is up
        assert_cloud_error(reply, 408, "RequestTimeout")
        assert slow.closed()
    assert exchange(limited.server.port, _health(limited)).status == 200


@pytest.mark.parametrize("limited", [{"header_timeout": 0.3}], indirect=True)
def test_keep_alive_requests_each_get_the_whole_header_timeout(limited) -> None:
    """One header timer per connection: requests that keep coming on a keep-alive
    connection for longer than the timeout are never cut, and a head that stalls gets the
    whole timeout counted from its own first byte, not from an earlier request's."""
    with Wire(limited.server.port) as conn:
        began = time.monotonic()
        while time.monotonic() - began < 0.9:  # three timeouts' worth of requests
            assert conn.send(_health(limited)).reply().status == 200
            time.sleep(0.05)  # the pace of the client under test, not a synchronisation
        time.sleep(0.2)  # the connection's timer (armed by an earlier request) is due soon
        stalled = time.monotonic()
        conn.send(b"GET /_emulator/health HTTP/1.1\r\nHo")
        reply = conn.reply()
        assert time.monotonic() - stalled >= 0.29
        assert_cloud_error(reply, 408, "RequestTimeout")


@pytest.mark.parametrize("limited", [{"max_connections": 2}], indirect=True)
def test_connections_beyond_the_bound_wait_instead_of_failing(limited) -> None:
    port = limited.server.port
    first, second = Wire(port), Wire(port)
    assert first.send(_health(limited)).reply().status == 200
    assert second.send(_health(limited)).reply().status == 200
    third = Wire(port, timeout=5)  # connected (the kernel queues it) but not yet accepted
    third.send(_health(limited))
    third.sock.settimeout(0.3)
    with pytest.raises(TimeoutError):
        third.sock.recv(1, 2)  # MSG_PEEK: nothing is answered while two are open
    third.sock.settimeout(10)
    first.close()
    assert third.reply().status == 200
    second.close()
    third.close()


@pytest.mark.parametrize("limited", [{"small_body": 1024, "body_memory": 64 * 1024,
                                      "body_wait": 0.3}], indirect=True)
def test_large_bodies_share_a_memory_budget(limited) -> None:
    port = limited.server.port
    big = 48 * 1024
    head = (f"POST /2023-03-30/functions HTTP/1.1\r\nHost: x\r\n"
            f"Content-Length: {big}\r\n\r\n").encode()
    holder = Wire(port)
    holder.send(head + b"x" * 100)  # reserves 48 KiB of 64 and stalls
    budget = limited.server.http.door.budget
    deadline = time.monotonic() + 10
    while budget.free == budget.capacity and time.monotonic() < deadline:
        time.sleep(0.005)
    assert budget.free == budget.capacity - big
    with Wire(port) as second:
        reply = second.send(head + b"y" * big).reply()
        assert_cloud_error(reply, 503, "ServiceUnavailable")
    holder.send(b"x" * (big - 100))
    assert_cloud_error(holder.reply(), 400, "MissingRequiredHeader")  # read, then refused
    holder.close()
    with Wire(port) as third:  # the budget is free again
        assert_cloud_error(third.send(head + b"z" * big).reply(), 400, "MissingRequiredHeader")


@pytest.mark.parametrize("limited", [{"worker_threads": 2}], indirect=True)
def test_long_polls_hold_no_thread(limited) -> None:
    client = limited.fnf_client()
    create(client, "w", wait_flow("w", seconds=100))
    with limited.auto_advance_disabled():
        for i in range(12):
            client.start_execution(fnf.StartExecutionRequest(flow_name="w",
                                                             execution_name=f"e{i}"))
        answers: dict[str, str] = {}

        def poll(name: str) -> None:
            body = limited.fnf_client().describe_execution(fnf.DescribeExecutionRequest(
                flow_name="w", execution_name=name, wait_time_seconds=30)).body
            answers[name] = body.status

        polls = [threading.Thread(target=poll, args=(f"e{i}",)) for i in range(12)]
        for t in polls:
            t.start()
        deadline = time.monotonic() + 20
        while limited.server.watch.watching() < 12 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert limited.server.watch.watching() == 12  # 12 parked long polls, 2 threads
        quick = limited.fnf_client().describe_execution(fnf.DescribeExecutionRequest(
            flow_name="w", execution_name="e0")).body
        assert quick.status == "Running" and not answers
        limited.advance(100)
        for t in polls:
            t.join(timeout=20)
    assert answers == {f"e{i}": "Succeeded" for i in range(12)}
    assert limited.server.watch.watching() == 0


def test_a_second_emulator_on_the_same_state_dir_is_refused(tmp_path) -> None:
    first = EmulatorServer(tmp_path, clock=VirtualClock(), runtime=EchoRuntime())
    try:
        with pytest.raises(StateDirInUse) as err:
            EmulatorServer(tmp_path, clock=VirtualClock(), runtime=EchoRuntime())
        assert f"pid {os.getpid()}" in str(err.value) and first.endpoint in str(err.value)
        proc = subprocess.run(
            [sys.executable, "-m", "deployer.emulator", "--state-dir", str(tmp_path),
             "--port", "0"], capture_output=True, text=True, timeout=60)
        assert proc.returncode == 1
        assert f"pid {os.getpid()}" in proc.stderr and first.endpoint in proc.stderr
    finally:
        first.stop()
    again = EmulatorServer(tmp_path, clock=VirtualClock(), runtime=EchoRuntime())
    again.stop()  # the lock went with the first one


def test_a_start_that_fails_leaves_nothing_running(tmp_path) -> None:
    from deployer.emulator import daemon
    from deployer.errors import OperationError

    with pytest.raises(OperationError, match="did not answer"):
        daemon.start_daemon(tmp_path, port=0, clock="virtual", timeout=0.01)
    assert not (tmp_path / daemon.INFO_FILE).exists()
    assert not (tmp_path / daemon.PID_FILE).exists()
    fresh = EmulatorServer(tmp_path, clock=VirtualClock(), runtime=EchoRuntime())
    fresh.stop()  # nobody holds the state directory any more
