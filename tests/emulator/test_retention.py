"""Retention: ended executions (with their history) and invocation logs are deleted once their
period on the emulator's clock is over, the database gives the space back, and its size stays
flat however many executions run (the soak, shortened, on the virtual clock:
``benchmarks/soak.py`` is the long one on the real clock)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_fnf20190315 import models as fnf

from deployer.emulator.retention import Retention
from deployer.testing.environment import LocalCloud, mock_cloud
from deployer.testing.runtimes import EchoRuntime
from tests.emulator.cloudflow_support import client_error, create

DEADLINE = 60.0


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting: {what}")
        time.sleep(0.01)


def task_flow(name: str, account: str, mode: str = "RequestComplete") -> str:
    return (f"Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: call\nStates:\n"
            "  - Type: Task\n    Name: call\n    Action: FC:InvokeFunction\n"
            f"    TaskMode: {mode}\n    Parameters:\n"
            f"      resourceArn: acs:fc:cn-hangzhou:{account}:functions/f\n"
            "      invocationType: Sync\n      body:\n        pad.$: $Input.pad\n    End: true\n")


def retained(retention: Retention, zip_b64: str) -> Iterator[LocalCloud]:
    with mock_cloud(runtime=EchoRuntime(), intercept=False, retention=retention) as cloud:
        cloud.fc_client().create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
            function_name="f", runtime="python3.10", handler="index.handler",
            code=fc.InputCodeLocation(zip_file=zip_b64))))
        create(cloud.fnf_client(), "calls", task_flow("calls", cloud.account_id))
        create(cloud.fnf_client(), "parks",
               task_flow("parks", cloud.account_id, "WaitForCustomCallback"))
        yield cloud


@pytest.fixture
def hour_and_ten_minutes(zip_b64: str) -> Iterator[LocalCloud]:
    yield from retained(Retention(executions=3600, logs=600), zip_b64)


def run(cloud: LocalCloud, name: str, pad: str = "") -> None:
    client = cloud.fnf_client()
    client.start_execution(fnf.StartExecutionRequest(
        flow_name="calls", execution_name=name, input=json.dumps({"pad": pad})))
    assert cloud.wait_for_execution("calls", name)["Status"] == "Succeeded"


def exists(cloud: LocalCloud, flow: str, name: str) -> bool:
    try:
        cloud.fnf_client().describe_execution(fnf.DescribeExecutionRequest(
            flow_name=flow, execution_name=name))
    except Exception as exc:
        assert getattr(exc, "code", "") == "ExecutionNotExists", exc
        return False
    return True


def invocations(cloud: LocalCloud) -> int:
    return len(cloud.server.emulator.functions.recent_invocations(
        cloud.account_id, cloud.region, "f", 100))


def test_ended_executions_and_logs_go_when_their_retention_is_over(hour_and_ten_minutes):
    cloud = hour_and_ten_minutes
    for i in range(5):
        run(cloud, f"e{i}")
    client = cloud.fnf_client()
    client.start_execution(fnf.StartExecutionRequest(flow_name="parks", execution_name="p",
                                                     input='{"pad": ""}'))
    until(lambda: invocations(cloud) == 6, "the parked task's function invoked")
    cloud.advance(601)  # past the logs' ten minutes, within the executions' hour
    until(lambda: invocations(cloud) == 0, "invocation logs deleted")
    assert all(exists(cloud, "calls", f"e{i}") for i in range(5))
    cloud.advance(3000)  # the executions ended 3,601 s ago
    until(lambda: not exists(cloud, "calls", "e4"), "ended executions deleted")
    assert not any(exists(cloud, "calls", f"e{i}") for i in range(5))
    err = client_error(client.get_execution_history, fnf.GetExecutionHistoryRequest(
        flow_name="calls", execution_name="e0"))
    assert err.code == "ExecutionNotExists"
    assert exists(cloud, "parks", "p")  # running: never deleted
    listed = client.list_executions(fnf.ListExecutionsRequest(flow_name="calls")).body
    assert listed.executions == []
    with cloud.server.emulator.db.read() as conn:
        left = {table: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                for table in ("executions", "history", "tasks", "invocations")}
    assert left == {"executions": 1, "history": left["history"], "tasks": 1,
                    "invocations": 0}
    assert 0 < left["history"] < 20  # only the parked execution's


@pytest.fixture
def one_minute(zip_b64: str) -> Iterator[LocalCloud]:
    yield from retained(Retention(executions=60, logs=60), zip_b64)


def file_pages(cloud: LocalCloud) -> int:
    with cloud.server.emulator.db.read() as conn:
        return int(conn.execute("PRAGMA page_count").fetchone()[0])


def test_the_database_stays_flat_and_gives_space_back(one_minute):
    cloud = one_minute
    pad = "x" * 4000
    sizes = []
    for cycle in range(6):  # the soak, on the virtual clock: run, let retention sweep, again
        for i in range(40):
            run(cloud, f"c{cycle}-{i}", pad)
        grown = file_pages(cloud)
        cloud.advance(61)
        swept = 40 * (cycle + 1)
        until(lambda n=swept: cloud.server.emulator.retention.total.executions == n,
              "the cycle swept")
        sizes.append(file_pages(cloud))
        assert sizes[-1] < grown  # the space went back to the file system
    assert invocations(cloud) == 0
    assert max(sizes[2:]) <= sizes[1] * 1.1, sizes  # flat after retention kicks in
    swept = cloud.server.emulator.retention.total
    assert swept.executions == 240 and swept.invocations == 240 and swept.pages_freed > 0
