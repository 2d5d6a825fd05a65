"""No head-of-line blocking: executions waiting on a slow function hold no engine thread, so an
unrelated execution runs at once; and the waiting ones all finish once the function answers.

The slow function blocks on a gate the test opens (no real 40 s); the latency figure under load
is measured by ``benchmarks/head_of_line.py``."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_fnf20190315 import models as fnf

from deployer.emulator.services.ports import InstanceSpec, InvocationResult
from deployer.testing.environment import LocalCloud, mock_cloud
from tests.emulator.cloudflow_support import create, pass_flow

WAITING = 1000
DEADLINE = 120.0  # real seconds any one wait of this test may take before it fails


class GatedRuntime:
    """Function ``slow`` blocks until :meth:`open` is called; any other answers at once."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self._lock = threading.Lock()
        self.inside = 0  # calls of ``slow`` blocked at the gate right now
        self.most_inside = 0
        self.calls = 0

    def invoke(self, spec: InstanceSpec, event: bytes, *, request_id: str,
               tail_logs: bool) -> InvocationResult:
        if spec.function_name == "slow":
            with self._lock:
                self.calls += 1
                self.inside += 1
                self.most_inside = max(self.most_inside, self.inside)
            self.gate.wait(DEADLINE)
            with self._lock:
                self.inside -= 1
        return InvocationResult(request_id, event or b"{}", None, b"", "", "i-1", 1.0,
                                spec.code_checksum, False)

    def retire(self, account_id: str, region: str, function_name: str,
               qualifier: str | None = None) -> None:
        pass

    def close(self) -> None:
        self.gate.set()


def task_flow(name: str, account: str) -> str:
    return (f"Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: call\nStates:\n"
            "  - Type: Task\n    Name: call\n    Action: FC:InvokeFunction\n"
            f"    TaskMode: RequestComplete\n    Parameters:\n"
            f"      resourceArn: acs:fc:cn-hangzhou:{account}:functions/slow\n"
            "      invocationType: Sync\n      body: {}\n    End: true\n")


def until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting: {what}")
        time.sleep(0.01)


@pytest.fixture
def gated(zip_b64: str) -> Iterator[tuple[LocalCloud, GatedRuntime]]:
    runtime = GatedRuntime()
    with mock_cloud(runtime=runtime, intercept=False) as cloud:
        cloud.fc_client().create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
            function_name="slow", runtime="python3.10", handler="index.handler",
            code=fc.InputCodeLocation(zip_file=zip_b64))))
        create(cloud.fnf_client(), "waits", task_flow("waits", cloud.account_id))
        create(cloud.fnf_client(), "quick", pass_flow("quick"))
        try:
            yield cloud, runtime
        finally:
            runtime.gate.set()


def start_many(cloud: LocalCloud, flow: str, count: int) -> None:
    """StartExecution ``count`` times, through the execution service (the same call the API
    makes, without a thousand signed requests)."""
    executions = cloud.server.emulator.executions
    for i in range(count):
        executions.start(cloud.account_id, cloud.region, flow, name=f"w{i}")


@pytest.mark.timeout(600)
def test_a_thousand_executions_waiting_on_a_slow_function_delay_nobody(gated) -> None:
    cloud, runtime = gated
    engine = cloud.server.emulator.flow_engine
    start_many(cloud, "waits", WAITING)
    until(lambda: runtime.inside >= 1, "the slow function called")
    client = cloud.fnf_client()
    for i in range(20):  # unrelated executions run to their end while those wait
        client.start_execution(fnf.StartExecutionRequest(flow_name="quick",
                                                         execution_name=f"q{i}"))
        status = client.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="quick", execution_name=f"q{i}", wait_time_seconds=30)).body.status
        assert status == "Succeeded", f"an unrelated execution is still {status}"
    until(lambda: engine.stats().waiting_tasks == WAITING,
          f"{WAITING} tasks handed to the function")
    assert runtime.inside >= 1 and not runtime.gate.is_set()
    # a waiting call holds no thread: only the function's concurrent calls are inside it
    assert runtime.most_inside <= cloud.server.emulator.function_tasks.calls.per_function
    runtime.gate.set()
    until(lambda: engine.stats().running_executions == 0, "every execution ended")
    listed = client.list_executions(fnf.ListExecutionsRequest(
        flow_name="waits", limit=99, status="Running"))
    assert listed.body.executions == []
    assert runtime.calls == WAITING


def test_a_task_beyond_the_accounts_instances_fails_at_once_under_cloud_throttling(
        gated) -> None:
    """``--throttle cloud``: FC's 100 instances per account and region; a synchronous task
    holds one while it waits for its function, and one more fails ``FC.ResourceExhausted``
    at once instead of waiting."""
    cloud, runtime = gated
    emulator = cloud.server.emulator
    emulator.quotas.set_mode("cloud")
    emulator.quotas.fc_instances = 3
    engine = emulator.flow_engine
    start_many(cloud, "waits", 3)
    until(lambda: engine.stats().waiting_tasks == 3, "three tasks handed to the function")
    client = cloud.fnf_client()
    client.start_execution(fnf.StartExecutionRequest(flow_name="waits", execution_name="x"))
    ended = client.describe_execution(fnf.DescribeExecutionRequest(
        flow_name="waits", execution_name="x", wait_time_seconds=60)).body
    assert ended.status == "Failed"
    history = client.get_execution_history(fnf.GetExecutionHistoryRequest(
        flow_name="waits", execution_name="x", limit=100)).body.events
    failed = [e for e in history if e.type == "TaskFailed"]
    assert json.loads(failed[0].event_detail)["Error"] == "FC.ResourceExhausted"
    runtime.gate.set()
    until(lambda: engine.stats().running_executions == 0, "every execution ended")
