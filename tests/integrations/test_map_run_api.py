"""DescribeMapRun, UpdateMapRun and the parent/child fields of DescribeExecution through the
official SDK against mock_cloud(): a map run's settings, status, times and item counts while
it runs and after it ended (stored: a restarted emulator still answers), a concurrency raised
and a tolerance lowered on a running run, the errors of unknown runs and bad settings, and a
sub-flow or map-run child naming its parent (and the parent its children)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from alibabacloud_fnf20190315 import models as fnf_models
from alibabacloud_tea_openapi import utils_models as open_api_models
from darabonba.runtime import RuntimeOptions
from Tea.exceptions import TeaException

from deployer.testing import LocalCloud, mock_cloud

FLOW = """\
Type: StateMachine
SpecVersion: v1
Name: {name}
StartAt: Fan
States:
  - Type: Map
    Name: Fan
    ProcessorConfig:
      ExecutionMode: Express
    ItemsPath: $Input.items
    MaxConcurrency: {concurrency}
{extra}
    Processor:
      StartAt: Check
      States:
        - Type: Choice
          Name: Check
          Branches:
            - Condition: $Input.n == 13
              Next: Unlucky
            - Condition: $Input.slow == true
              Next: Slow
          Default: Square
        - Type: Wait
          Name: Slow
          Seconds: 20
          Next: Square
        - Type: Pass
          Name: Square
          OutputConstructor:
            sq.$: $Input.n * $Input.n
          End: true
        - Type: Fail
          Name: Unlucky
          Code: Unlucky
    Catch:
      - Errors: [FnF.MapRunFailed]
        Next: Caught
    End: true
  - Type: Pass
    Name: Caught
    End: true
"""


def _flow(fnf: Any, name: str, *, concurrency: int = 1, extra: str = "") -> None:
    fnf.create_flow(fnf_models.CreateFlowRequest(
        name=name, description="", type="FDL",
        definition=FLOW.format(name=name, concurrency=concurrency, extra=extra)))


def _start(fnf: Any, flow: str, items: list[dict[str, Any]], name: str = "e1") -> None:
    fnf.start_execution(fnf_models.StartExecutionRequest(
        flow_name=flow, execution_name=name, input=json.dumps({"items": items})))


def _describe_run(fnf: Any, flow: str, run: str, execution: str = "e1") -> Any:
    return fnf.describe_map_run(fnf_models.DescribeMapRunRequest(
        flow_name=flow, execution_name=execution, map_run_name=run)).body


def _raw_describe(fnf: Any, flow: str, execution: str) -> dict[str, Any]:
    """DescribeExecution's JSON as sent (the SDK's model keeps only the fields it knows)."""
    params = open_api_models.Params(
        action="DescribeExecution", version="2019-03-15", protocol="HTTPS", pathname="/",
        method="GET", auth_type="AK", style="RPC", req_body_type="formData", body_type="json")
    request = open_api_models.OpenApiRequest(
        query={"FlowName": flow, "ExecutionName": execution})
    return dict(fnf.call_api(params, request, RuntimeOptions())["body"])


def _map_run_name(fnf: Any, flow: str, execution: str = "e1") -> str:
    names = _raw_describe(fnf, flow, execution).get("MapRunNames", [])
    assert len(names) == 1, names
    return str(names[0])


def _until(cloud: LocalCloud, check: Any) -> None:
    assert cloud.server.emulator.flow_engine.wait_ended(check, 10.0)


def _running_run(cloud: LocalCloud, fnf: Any, flow: str) -> str:
    """The name of execution e1's map run, once a child of it runs."""
    def running() -> bool:
        names = _raw_describe(fnf, flow, "e1").get("MapRunNames")
        return bool(names) and _describe_run(fnf, flow, names[0]).item_counts.running > 0

    _until(cloud, running)
    return _map_run_name(fnf, flow)


def test_an_ended_map_run_is_described_with_its_counts_and_times(cloud: LocalCloud,
                                                                 fnf: Any) -> None:
    _flow(fnf, "mr-ended", concurrency=2, extra="    ToleratedFailureCount: 1")
    _start(fnf, "mr-ended", [{"n": 1}, {"n": 13}, {"n": 3}])
    done = cloud.wait_for_execution("mr-ended", "e1")
    run_name = json.loads(done["Output"])["MapRunName"]
    assert _map_run_name(fnf, "mr-ended") == run_name
    body = _describe_run(fnf, "mr-ended", run_name)
    assert (body.map_run_name, body.execution_name, body.status) == (run_name, "e1",
                                                                     "Succeeded")
    assert (body.concurrency, body.tolerated_failed_count,
            body.tolerated_failed_percentage) == (2, 1, 0)
    counts = body.item_counts
    assert (counts.total, counts.succeed, counts.failed, counts.running, counts.pending,
            counts.aborted) == (3, 2, 1, 0, 0, 0)
    assert body.started_time and body.stopped_time and body.started_time <= body.stopped_time


def test_a_running_map_run_takes_a_higher_concurrency(cloud: LocalCloud, fnf: Any) -> None:
    _flow(fnf, "mr-update")
    with cloud.auto_advance_disabled():
        _start(fnf, "mr-update", [{"n": i, "slow": True} for i in range(4)])
        run_name = _running_run(cloud, fnf, "mr-update")
        body = _describe_run(fnf, "mr-update", run_name)
        assert body.status == "Running" and body.stopped_time is None
        assert (body.item_counts.running, body.item_counts.pending) == (1, 3)
        answer = fnf.update_map_run(fnf_models.UpdateMapRunRequest(
            flow_name="mr-update", execution_name="e1", map_run_name=run_name,
            concurrency=3)).body
        assert (answer.flow_name, answer.execution_name, answer.map_run_name,
                answer.concurrency) == ("mr-update", "e1", run_name, 3)
        _until(cloud, lambda: _describe_run(fnf, "mr-update", run_name)
               .item_counts.running == 3)
        assert _describe_run(fnf, "mr-update", run_name).concurrency == 3
        cloud.advance(20)
        _until(cloud, lambda: _describe_run(fnf, "mr-update", run_name).item_counts.running
               == 1)
        cloud.advance(20)
        done = cloud.wait_for_execution("mr-update", "e1")
    assert json.loads(done["Output"])["Items"] == [{"sq": i * i} for i in range(4)]
    assert _describe_run(fnf, "mr-update", run_name).status == "Succeeded"


def test_a_lowered_tolerance_fails_the_running_map_run(cloud: LocalCloud, fnf: Any) -> None:
    _flow(fnf, "mr-strict", concurrency=3, extra="    ToleratedFailureCount: 2")
    with cloud.auto_advance_disabled():
        _start(fnf, "mr-strict", [{"n": 13}, {"n": 1, "slow": True}, {"n": 2, "slow": True}])
        run_name = _running_run(cloud, fnf, "mr-strict")
        _until(cloud, lambda: _describe_run(fnf, "mr-strict", run_name).item_counts.failed)
        assert _describe_run(fnf, "mr-strict", run_name).status == "Running"
        fnf.update_map_run(fnf_models.UpdateMapRunRequest(
            flow_name="mr-strict", execution_name="e1", map_run_name=run_name,
            tolerated_failed_count=0))
        done = cloud.wait_for_execution("mr-strict", "e1")
        # the items still running are aborted by engine work after the parent's end, which
        # wakes no execution waiter: wait for the engine to have done it
        cloud.wait_for_engine_idle()
        _until(cloud, lambda: _describe_run(fnf, "mr-strict", run_name).item_counts.aborted
               == 2)
    assert done["Status"] == "Succeeded"  # the Map's Catch took FnF.MapRunFailed
    body = _describe_run(fnf, "mr-strict", run_name)
    assert (body.status, body.tolerated_failed_count) == ("Failed", 0)
    assert (body.item_counts.failed, body.item_counts.aborted) == (1, 2)


def _code(call: Any) -> tuple[str, int]:
    with pytest.raises(TeaException) as info:
        call()
    return str(info.value.code), int(info.value.data.get("statusCode", 0))


def test_unknown_runs_and_bad_settings_are_refused(cloud: LocalCloud, fnf: Any) -> None:
    _flow(fnf, "mr-errors")
    _start(fnf, "mr-errors", [{"n": 2}])
    run_name = json.loads(cloud.wait_for_execution("mr-errors", "e1")["Output"])["MapRunName"]

    def update(**settings: Any) -> Any:
        return lambda: fnf.update_map_run(fnf_models.UpdateMapRunRequest(
            flow_name="mr-errors", execution_name="e1", map_run_name=run_name, **settings))

    assert _code(lambda: _describe_run(fnf, "mr-errors", "nope")) == ("InvalidArgument", 400)
    assert _code(lambda: _describe_run(fnf, "mr-errors", run_name, execution="e9")) == (
        "ExecutionNotExists", 404)
    assert _code(lambda: _describe_run(fnf, "no-flow", run_name)) == ("FlowNotExists", 404)
    assert _code(update(concurrency=0)) == ("InvalidArgument", 400)
    assert _code(update(tolerated_failed_percentage=120.0)) == ("InvalidArgument", 400)
    assert _code(update(concurrency=5)) == ("InvalidArgument", 400)  # it has ended
    assert _describe_run(fnf, "mr-errors", run_name).concurrency == 1  # unchanged


def test_a_stored_map_run_is_described_after_a_restart(tmp_path: Path) -> None:
    with mock_cloud(state_dir=tmp_path) as local:
        fnf = local.fnf_client()
        _flow(fnf, "mr-kept", concurrency=4)
        _start(fnf, "mr-kept", [{"n": 1}, {"n": 2}])
        run_name = json.loads(local.wait_for_execution("mr-kept", "e1")["Output"])[
            "MapRunName"]
    with mock_cloud(state_dir=tmp_path) as local:
        body = _describe_run(local.fnf_client(), "mr-kept", run_name)
    assert (body.status, body.concurrency, body.item_counts.succeed) == ("Succeeded", 4, 2)


CHILD = """\
Type: StateMachine
SpecVersion: v1
Name: rel-child
StartAt: Done
States:
  - Type: Pass
    Name: Done
    End: true
"""

PARENT = """\
Type: StateMachine
SpecVersion: v1
Name: rel-parent
StartAt: Call
States:
  - Type: Task
    Name: Call
    Action: FNF:StartExecution
    TaskMode: WaitForSystemCallback
    Parameters:
      resourceArn: acs:fnf:::flow/rel-child
      executionName: kid
      input: {}
    End: true
"""


def test_parent_and_children_name_each_other(cloud: LocalCloud, fnf: Any) -> None:
    for definition, name in ((CHILD, "rel-child"), (PARENT, "rel-parent")):
        fnf.create_flow(fnf_models.CreateFlowRequest(name=name, definition=definition,
                                                     description="", type="FDL"))
    fnf.start_execution(fnf_models.StartExecutionRequest(flow_name="rel-parent",
                                                         execution_name="p1"))
    assert cloud.wait_for_execution("rel-parent", "p1")["Status"] == "Succeeded"
    parent = _raw_describe(fnf, "rel-parent", "p1")
    assert parent["ChildExecutions"] == [{"FlowName": "rel-child", "ExecutionName": "kid"}]
    assert "ParentExecution" not in parent and "MapRunNames" not in parent
    child = _raw_describe(fnf, "rel-child", "kid")
    assert child["ParentExecution"] == {"FlowName": "rel-parent", "ExecutionName": "p1"}
    assert "ChildExecutions" not in child
    _flow(fnf, "rel-map")
    _start(fnf, "rel-map", [{"n": 3}])
    run_name = json.loads(cloud.wait_for_execution("rel-map", "e1")["Output"])["MapRunName"]
    iteration = _raw_describe(fnf, "rel-map", f"{run_name}:0")
    assert iteration["ParentExecution"] == {"FlowName": "rel-map", "ExecutionName": "e1",
                                            "MapRunName": run_name}
    assert "ChildExecutions" not in _raw_describe(fnf, "rel-map", "e1")  # runs' are apart
