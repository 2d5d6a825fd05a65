"""Load and slow clients, on loopback and bounded: 500 concurrent SDK clients run the seed flow
(functions answered in memory, virtual clock) and every acknowledged execution completes
exactly once with no client error; 200 slow-header clients do not delay anyone else."""

from __future__ import annotations

import http.client
import json
import socket
import statistics
import threading
import time
from collections.abc import Iterator

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_fnf20190315 import models as fnf

from deployer.emulator.services.ports import InstanceSpec, InvocationResult
from deployer.testing.environment import LocalCloud, mock_cloud
from tests.emulator.cloudflow_support import create, seed_flow

CLIENTS = 500
SLOW_CLIENTS = 200


class SeedRuntime:
    """StartJob and GetJobStatus of the seed, in memory: the job is done at the first poll."""

    def invoke(self, spec: InstanceSpec, event: bytes, *, request_id: str,
               tail_logs: bool) -> InvocationResult:
        evt = json.loads(event or b"{}")
        if spec.function_name == "StartJob":
            out = {"job_id": request_id}
        else:
            out = {"job_id": evt["job_id"], "job_status": "success",
                   "try_count": evt.get("try_count", 0) + 1}
        return InvocationResult(request_id, json.dumps(out).encode(), None, b"", "", "i-1",
                                0.1, spec.code_checksum, False)

    def retire(self, account_id: str, region: str, function_name: str) -> None:
        pass

    def close(self) -> None:
        pass


@pytest.fixture
def seed_cloud(zip_b64) -> Iterator[LocalCloud]:
    with mock_cloud(runtime=SeedRuntime(), intercept=False) as cloud:
        client = cloud.fc_client()
        for name in ("StartJob", "GetJobStatus"):
            client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
                function_name=name, runtime="python3.10", handler="index.handler",
                code=fc.InputCodeLocation(zip_file=zip_b64))))
        create(cloud.fnf_client(), "MyWorkFlow", seed_flow(account=cloud.account_id))
        yield cloud


@pytest.mark.timeout(300)
def test_500_concurrent_clients_start_and_poll_the_seed_flow(seed_cloud) -> None:
    barrier = threading.Barrier(CLIENTS)
    acknowledged: list[str] = []
    failures: list[str] = []
    final: dict[str, str] = {}
    lock = threading.Lock()

    def client(i: int) -> None:
        sdk = seed_cloud.fnf_client(read_timeout=120_000, connect_timeout=60_000)
        name = f"load-{i}"
        try:
            barrier.wait(timeout=120)
            sdk.start_execution(fnf.StartExecutionRequest(
                flow_name="MyWorkFlow", execution_name=name, input='{"delay": -1}'))
            with lock:
                acknowledged.append(name)
            status = "Running"
            while status == "Running":
                status = sdk.describe_execution(fnf.DescribeExecutionRequest(
                    flow_name="MyWorkFlow", execution_name=name,
                    wait_time_seconds=60)).body.status
            with lock:
                final[name] = status
        except Exception as exc:
            with lock:
                failures.append(f"{name}: {type(exc).__name__}: {exc}"[:300])

    threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=280)
    assert not failures, failures[:5]
    assert len(acknowledged) == CLIENTS
    assert final == {name: "Succeeded" for name in acknowledged}
    db = seed_cloud.server.emulator.db
    with db.transaction() as conn:
        rows = conn.execute(
            "SELECT e.name, e.status, SUM(h.type = 'ExecutionSucceeded'), "
            "SUM(h.type = 'ExecutionStarted') FROM executions e JOIN history h "
            "ON h.exec_seq = e.seq GROUP BY e.seq").fetchall()
    assert len(rows) == CLIENTS  # none lost, none doubled
    assert {(r[1], r[2], r[3]) for r in rows} == {("Succeeded", 1, 1)}  # exactly once


def _latencies(cloud: LocalCloud, count: int) -> list[float]:
    conn = http.client.HTTPConnection("127.0.0.1", cloud.server.port, timeout=10)
    took = []
    for _ in range(count):
        began = time.perf_counter()
        conn.request("GET", "/_emulator/clock", headers={"Host": cloud.endpoint})
        resp = conn.getresponse()
        assert resp.status == 200 and json.loads(resp.read())["virtual"] is True
        took.append(time.perf_counter() - began)
    conn.close()
    return took


@pytest.mark.timeout(120)
def test_slow_header_clients_do_not_delay_others(seed_cloud) -> None:
    slow = [socket.create_connection(("127.0.0.1", seed_cloud.server.port), timeout=10)
            for _ in range(SLOW_CLIENTS)]
    head = b"GET /_emulator/health HTTP/1.1\r\nHost: " + seed_cloud.endpoint.encode()
    stop = threading.Event()

    def trickle() -> None:  # one header byte a second on every slow connection
        for i in range(len(head)):
            for sock in slow:
                sock.send(head[i:i + 1])
            if stop.wait(1.0):
                return

    trickler = threading.Thread(target=trickle)
    trickler.start()
    try:
        _latencies(seed_cloud, 20)  # warm
        took = _latencies(seed_cloud, 300)
        assert seed_cloud.server.http.open_connections >= SLOW_CLIENTS
    finally:
        stop.set()
        trickler.join()
        for sock in slow:
            sock.close()
    p99 = statistics.quantiles(took, n=100)[98]
    assert p99 <= 0.100, f"p99 {p99 * 1000:.1f} ms"
