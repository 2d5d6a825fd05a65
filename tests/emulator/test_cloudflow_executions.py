"""CloudFlow executions through the official SDK: start, describe, list, history, stop,
callbacks, sync executions, and restarts with executions parked in long Waits."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from alibabacloud_fnf20190315 import models as fnf

from deployer.emulator.clock import VirtualClock
from deployer.testing.environment import LocalCloud, mock_cloud
from deployer.testing.runtimes import EchoRuntime
from tests.emulator.cloudflow_support import (
    client_error,
    create,
    history,
    pass_flow,
    start,
    wait_flow,
)

CALLBACK = """Type: StateMachine
SpecVersion: v1
Name: {name}
StartAt: ask
States:
  - Type: Task
    Name: ask
    Action: MNS:SendMessage
    TaskMode: WaitForCustomCallback
    Parameters:
      token.$: $Context.Current.TaskToken
    Next: done
  - Type: Pass
    Name: done
    End: true
"""


@pytest.fixture
def client(cloud: LocalCloud) -> Any:
    return cloud.fnf_client()


def _describe(client: Any, flow: str, name: str, wait: int = 0) -> Any:
    return client.describe_execution(fnf.DescribeExecutionRequest(
        flow_name=flow, execution_name=name, wait_time_seconds=wait)).body


def _pending_timers(cloud: LocalCloud) -> int:
    return int(cloud.health()["cloudflow"]["pendingTimers"])


def _token(client: Any, flow: str, name: str) -> str:
    """The token of the execution's callback task. StartExecution answers before the first
    step is committed (as the cloud's does), so the history is read again until the task's
    TaskSubmitted event is in it (each read is a real request; bounded)."""
    deadline = time.monotonic() + 30
    while True:
        submitted = [e for e in history(client, flow, name) if e.type == "TaskSubmitted"]
        if submitted or time.monotonic() > deadline:
            return str(json.loads(submitted[-1].event_detail)["TaskToken"])


def test_an_input_over_64_kib_is_refused_at_start(client: Any, cloud: LocalCloud) -> None:
    create(client, "w", wait_flow("w", seconds=100))
    limit = 64 * 1024
    padding = limit - len(json.dumps({"pad": ""}))
    with cloud.auto_advance_disabled():
        assert start(client, "w", "fits", json.dumps({"pad": "x" * padding})).status == "Running"
        err = client_error(start, client, "w", "big", json.dumps({"pad": "x" * (padding + 1)}))
    assert err.code == "EntityTooLarge" and err.status_code == 400
    assert "65537 bytes" in err.message


def test_start_names_idempotency_and_snapshot(client: Any, cloud: LocalCloud) -> None:
    create(client, "w", wait_flow("w", seconds=100))
    with cloud.auto_advance_disabled():
        first = start(client, "w", "e1", '{"a": 1}')
        assert first.status == "Running" and first.input == '{"a": 1}'
        assert first.stopped_time is None
        again = start(client, "w", "e1", '{"other": 2}')
        assert again.name == "e1" and again.input == '{"a": 1}'  # the running one
        generated = client.start_execution(fnf.StartExecutionRequest(flow_name="w")).body
        assert len(generated.name) == 36 and generated.status == "Running"
        client.update_flow(fnf.UpdateFlowRequest(name="w", definition=pass_flow("w")))
        assert _describe(client, "w", "e1").flow_definition == wait_flow("w", seconds=100)
        cloud.advance(100)
        assert _describe(client, "w", "e1", wait=10).status == "Succeeded"
    err = client_error(start, client, "w", "e1")
    assert err.code == "ExecutionAlreadyExists"
    assert err.message.startswith("code: 400, Execution e1 for flow w already exists.")
    assert client_error(start, client, "w", "e2", "[1]").code == "InvalidArgument"
    assert client_error(start, client, "w", "e2", "{bad").code == "InvalidArgument"
    assert client_error(start, client, "nope", "e2").code == "FlowNotExists"
    assert client_error(_describe, client, "w", "absent").code == "ExecutionNotExists"


def test_describe_long_poll_is_woken_by_the_end(client: Any, cloud: LocalCloud) -> None:
    create(client, "cb", CALLBACK.format(name="cb"))
    start(client, "cb", "e")  # parked on its callback task: it ends only when reported
    assert _describe(client, "cb", "e", wait=1).status == "Running"  # times out: 1 s
    token = _token(client, "cb", "e")
    polled: list[Any] = []

    async def poll() -> None:
        resp = await client.describe_execution_async(fnf.DescribeExecutionRequest(
            flow_name="cb", execution_name="e", wait_time_seconds=30))
        polled.append(resp.body)

    async def main() -> None:
        task = asyncio.create_task(poll())
        # report only once the poll waits on the engine: then only the execution's end can
        # answer it within 10 s (its own 30 s wait would answer Running)
        await asyncio.to_thread(cloud.wait_for_long_polls, 1)
        await asyncio.to_thread(client.report_task_succeeded, fnf.ReportTaskSucceededRequest(
            task_token=token, output='{"approved": true}'))
        await asyncio.wait_for(task, 10)

    asyncio.run(main())
    assert polled[0].status == "Succeeded"
    assert json.loads(polled[0].output) == {"approved": True}
    assert client_error(_describe, client, "cb", "e", 61).code == "InvalidArgument"


def test_stop_during_wait(client: Any, cloud: LocalCloud) -> None:
    create(client, "w", wait_flow("w", seconds=100))
    with cloud.auto_advance_disabled():
        start(client, "w", "e")
        cloud.wait_for_engine_idle()  # its first step, which enters the Wait, follows the answer
        assert _pending_timers(cloud) == 2  # the Wait and the execution timeout
        body = client.stop_execution(fnf.StopExecutionRequest(
            flow_name="w", execution_name="e", error="Err", cause="because")).body
        assert body.status == "Stopped" and body.stopped_time
        assert _pending_timers(cloud) == 0
        cloud.advance(200)
    events = history(client, "w", "e")
    assert [e.type for e in events].count("ExecutionStopped") == 1
    assert events[-1].type == "ExecutionStopped"
    assert not any(e.type == "ExecutionSucceeded" for e in events)
    err = client_error(client.stop_execution, fnf.StopExecutionRequest(flow_name="w",
                                                                 execution_name="e"))
    assert err.code == "InvalidArgument" and "not running" in err.message


def test_history_pagination(client: Any, cloud: LocalCloud) -> None:
    create(client, "p", pass_flow("p"))
    start(client, "p", "e")
    cloud.wait_for_execution("p", "e")
    all_events = client.get_execution_history(fnf.GetExecutionHistoryRequest(
        flow_name="p", execution_name="e")).body
    assert all_events.next_token is None
    ids, token = [], None
    while True:
        page = client.get_execution_history(fnf.GetExecutionHistoryRequest(
            flow_name="p", execution_name="e", limit=2, next_token=token)).body
        assert len(page.events) <= 2
        ids += [ev.event_id for ev in page.events]
        token = page.next_token
        if not token:
            break
    assert ids == list(range(1, len(all_events.events) + 1))
    assert all_events.events[0].type == "ExecutionStarted"
    assert all_events.events[-1].type == "ExecutionSucceeded"


def test_list_executions_filters_and_pages(client: Any, cloud: LocalCloud) -> None:
    create(client, "w", wait_flow("w", seconds=50))
    with cloud.auto_advance_disabled():
        for i in range(5):
            start(client, "w", f"job-{i}")
            cloud.wait_for_engine_idle()  # its Wait entered before the clock moves on
            cloud.advance(10)
        start(client, "w", "other")
        cloud.wait_for_engine_idle()
        cloud.advance(5)  # job-0 (started at t0) is due at t0+50: it ends
        cloud.wait_for_execution("w", "job-0", timeout=10)
        names, token = [], None
        while True:
            page = client.list_executions(fnf.ListExecutionsRequest(
                flow_name="w", limit=2, next_token=token)).body
            names += [e.name for e in page.executions]
            token = page.next_token
            if not token:
                break
        assert names == ["job-0", "job-1", "job-2", "job-3", "job-4", "other"]
        running = client.list_executions(fnf.ListExecutionsRequest(
            flow_name="w", status="Running", execution_name_prefix="job-",
            metadata_only=True)).body.executions
        assert [e.name for e in running] == ["job-1", "job-2", "job-3", "job-4"]
        assert running[0].input is None and running[0].flow_definition is None
        t2 = _describe(client, "w", "job-2").started_time
        windowed = client.list_executions(fnf.ListExecutionsRequest(
            flow_name="w", started_time_begin=t2, started_time_end=t2)).body.executions
        assert [e.name for e in windowed] == ["job-2"]
    err = client_error(client.list_executions, fnf.ListExecutionsRequest(flow_name="w",
                                                                   status="Bogus"))
    assert err.code == "InvalidArgument"


def test_callback_succeeded_failed_and_already_completed(client: Any) -> None:
    create(client, "cb", CALLBACK.format(name="cb"))
    start(client, "cb", "ok")
    token = _token(client, "cb", "ok")
    reported = client.report_task_succeeded(fnf.ReportTaskSucceededRequest(
        task_token=token, output='{"approved": true}')).body
    assert reported.event_id > 0
    final = _describe(client, "cb", "ok", wait=10)
    assert final.status == "Succeeded" and json.loads(final.output) == {"approved": True}
    err = client_error(client.report_task_succeeded, fnf.ReportTaskSucceededRequest(
        task_token=token, output="{}"))
    assert err.code == "TaskAlreadyCompleted"

    start(client, "cb", "ko")
    token = _token(client, "cb", "ko")
    client.report_task_failed(fnf.ReportTaskFailedRequest(task_token=token, error="Denied",
                                                          cause="no"))
    assert _describe(client, "cb", "ko", wait=10).status == "Failed"
    failed = [e for e in history(client, "cb", "ko") if e.type == "ExecutionFailed"]
    assert json.loads(failed[0].event_detail)["Error"] == "Denied"
    assert client_error(client.report_task_failed, fnf.ReportTaskFailedRequest(
        task_token=token, error="x")).code == "TaskAlreadyCompleted"
    assert client_error(client.report_task_succeeded, fnf.ReportTaskSucceededRequest(
        task_token="tt-unknown", output="{}")).code == "InvalidArgument"


def test_sync_execution_express_only(client: Any) -> None:
    client.create_flow(fnf.CreateFlowRequest(name="ex", definition=pass_flow("ex"),
                                             description="", type="FDL",
                                             execution_mode="Express"))
    body = client.start_sync_execution(fnf.StartSyncExecutionRequest(
        flow_name="ex", execution_name="s", input='{"k": 1}')).body
    assert body.status == "Succeeded" and json.loads(body.output) == {"k": 1}
    assert body.name.startswith("s:") and len(body.name) == 2 + 36
    assert client_error(start, client, "ex", "e").code == "InvalidArgument"
    create(client, "std", pass_flow("std"))
    err = client_error(client.start_sync_execution, fnf.StartSyncExecutionRequest(flow_name="std"))
    assert err.code == "ActionNotSupported" and "Standard execution is not supported" in \
        err.message


def test_delete_flow_forgets_executions(client: Any, cloud: LocalCloud) -> None:
    create(client, "w", wait_flow("w", seconds=100))
    with cloud.auto_advance_disabled():
        start(client, "w", "e")
        client.delete_flow(fnf.DeleteFlowRequest(name="w"))
        create(client, "w", pass_flow("w"))
        assert client_error(_describe, client, "w", "e").code == "ExecutionNotExists"
        assert _pending_timers(cloud) == 0


def test_restart_resumes_executions_parked_in_long_waits(tmp_path: Path) -> None:
    clock = VirtualClock(1_700_000_000)
    with mock_cloud(runtime=EchoRuntime(), intercept=False, state_dir=tmp_path,
                    clock=clock) as cloud:
        client = cloud.fnf_client()
        create(client, "w", wait_flow("w", seconds=300))
        with cloud.auto_advance_disabled():
            for i in range(3):
                start(client, "w", f"e{i}")
            assert _describe(client, "w", "e2").status == "Running"
    restarted = VirtualClock(1_700_000_000)
    with mock_cloud(runtime=EchoRuntime(), intercept=False, state_dir=tmp_path,
                    clock=restarted) as cloud:
        client = cloud.fnf_client()
        for i in range(3):
            final = cloud.wait_for_execution("w", f"e{i}", timeout=10)
            assert final["Status"] == "Succeeded"
        assert cloud.now() == 1_700_000_000 + 300
        assert [e.type for e in history(client, "w", "e1")].count("ExecutionSucceeded") == 1

