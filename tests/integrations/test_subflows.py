"""Sub-flows (FNF:StartExecution) on the emulator through the official SDK: the documented
RequestComplete answer, WaitForSystemCallback taking the child's output or error (the
parent's Catch sees the child's error), and a stopped parent stopping its waiting child."""

from __future__ import annotations

import json
from typing import Any

from alibabacloud_fnf20190315 import models as fnf_models

from deployer.testing import LocalCloud

CHILD = """\
Type: StateMachine
SpecVersion: v1
Name: child
StartAt: Check
States:
  - Type: Choice
    Name: Check
    Branches:
      - Condition: $Input.fail == true
        Next: Boom
      - Condition: $Input.slow == true
        Next: Slow
    Default: Double
  - Type: Pass
    Name: Double
    OutputConstructor:
      doubled.$: $Input.n * 2
    End: true
  - Type: Wait
    Name: Slow
    Seconds: 200
    End: true
  - Type: Fail
    Name: Boom
    Code: Child.Broken
    Detail: the child could not
"""

PARENT = """\
Type: StateMachine
SpecVersion: v1
Name: {name}
StartAt: Call
States:
  - Type: Task
    Name: Call
    Action: FNF:StartExecution
    TaskMode: {mode}
    Parameters:
      resourceArn: acs:fnf:::flow/child
      input.$: $Input
    Catch:
      - Errors: [Child.Broken]
        Next: Caught
        OutputConstructor:
          code.$: $Context.Current.Error.Code
    End: true
  - Type: Pass
    Name: Caught
    End: true
"""


def _flows(fnf: Any) -> None:
    try:
        fnf.describe_flow(fnf_models.DescribeFlowRequest(name="child"))
    except Exception:
        fnf.create_flow(fnf_models.CreateFlowRequest(name="child", definition=CHILD,
                                                     description="", type="FDL"))


def _parent(fnf: Any, name: str, mode: str) -> None:
    _flows(fnf)
    fnf.create_flow(fnf_models.CreateFlowRequest(
        name=name, definition=PARENT.format(name=name, mode=mode), description="",
        type="FDL"))


def _start(fnf: Any, flow: str, name: str, payload: dict[str, Any]) -> None:
    fnf.start_execution(fnf_models.StartExecutionRequest(
        flow_name=flow, execution_name=name, input=json.dumps(payload)))


def test_request_complete_answers_with_the_child_started(cloud: LocalCloud, fnf: Any) -> None:
    _parent(fnf, "parent-rc", "RequestComplete")
    _start(fnf, "parent-rc", "p1", {"n": 4})
    done = cloud.wait_for_execution("parent-rc", "p1")
    out = json.loads(done["Output"])
    assert out["FlowName"] == "child" and set(out) == {"FlowName", "ExecutionName", "RequestID"}
    child = cloud.wait_for_execution("child", out["ExecutionName"])
    assert json.loads(child["Output"]) == {"doubled": 8}


def test_wait_for_system_callback_takes_the_child_output(cloud: LocalCloud, fnf: Any) -> None:
    _parent(fnf, "parent-wait", "WaitForSystemCallback")
    _start(fnf, "parent-wait", "p1", {"n": 21})
    done = cloud.wait_for_execution("parent-wait", "p1")
    assert done["Status"] == "Succeeded", done
    assert json.loads(done["Output"]) == {"doubled": 42}


def test_the_parent_catches_the_child_error(cloud: LocalCloud, fnf: Any) -> None:
    _parent(fnf, "parent-catch", "WaitForSystemCallback")
    _start(fnf, "parent-catch", "p1", {"fail": True})
    done = cloud.wait_for_execution("parent-catch", "p1")
    assert json.loads(done["Output"]) == {"code": "Child.Broken"}


def test_stopping_the_parent_stops_its_waiting_child(cloud: LocalCloud, fnf: Any) -> None:
    _parent(fnf, "parent-stop", "WaitForSystemCallback")
    with cloud.auto_advance_disabled():
        _start(fnf, "parent-stop", "p1", {"slow": True})
        children = _running_children(cloud, fnf)
        fnf.stop_execution(fnf_models.StopExecutionRequest(
            flow_name="parent-stop", execution_name="p1", error="Halt", cause="test"))
        child = cloud.wait_for_execution("child", children[0])
    assert child["Status"] == "Stopped"


def _running_children(cloud: LocalCloud, fnf: Any) -> list[str]:
    """The running executions of the child flow, once there is one (the parent's task starts
    it on the engine's time, not the test's)."""
    engine = cloud.server.emulator.flow_engine
    found: list[str] = []

    def started() -> bool:
        found[:] = [e.name for e in fnf.list_executions(fnf_models.ListExecutionsRequest(
            flow_name="child", status="Running")).body.executions]
        return bool(found)

    assert engine.wait_ended(started, 10.0)
    return found


def test_wait_for_custom_callback_waits_for_the_token_the_child_was_given(
        cloud: LocalCloud, fnf: Any) -> None:
    flow = PARENT.format(name="parent-token", mode="WaitForCustomCallback").replace(
        "      input.$: $Input\n",
        "      input:\n        token.$: $Context.Current.TaskToken\n        slow: true\n")
    _flows(fnf)
    fnf.create_flow(fnf_models.CreateFlowRequest(name="parent-token", definition=flow,
                                                 description="", type="FDL"))
    with cloud.auto_advance_disabled():
        _start(fnf, "parent-token", "p1", {})
        child = _running_children(cloud, fnf)[-1]
        token = json.loads(fnf.describe_execution(fnf_models.DescribeExecutionRequest(
            flow_name="child", execution_name=child)).body.input)["token"]
        fnf.report_task_succeeded(fnf_models.ReportTaskSucceededRequest(
            task_token=token, output=json.dumps({"done": "by hand"})))
        done = cloud.wait_for_execution("parent-token", "p1")
    assert json.loads(done["Output"]) == {"done": "by hand"}


def test_an_execution_started_with_a_callback_token_reports_to_the_waiting_task(
        cloud: LocalCloud, fnf: Any) -> None:
    """StartExecution's ``CallbackFnFTaskToken``: the execution started with a waiting task's
    token completes that task with its output when it ends (the flow-calls-flow pattern)."""
    flow = PARENT.format(name="parent-param", mode="WaitForCustomCallback").replace(
        "      input.$: $Input\n",
        "      input:\n        token.$: $Context.Current.TaskToken\n        slow: true\n")
    _flows(fnf)
    fnf.create_flow(fnf_models.CreateFlowRequest(name="parent-param", definition=flow,
                                                 description="", type="FDL"))
    with cloud.auto_advance_disabled():
        _start(fnf, "parent-param", "p1", {})
        child = _running_children(cloud, fnf)[-1]
        token = json.loads(fnf.describe_execution(fnf_models.DescribeExecutionRequest(
            flow_name="child", execution_name=child)).body.input)["token"]
        fnf.start_execution(fnf_models.StartExecutionRequest(
            flow_name="child", execution_name="by-token", input=json.dumps({"n": 5}),
            callback_fn_ftask_token=token))
        done = cloud.wait_for_execution("parent-param", "p1")
    assert done["Status"] == "Succeeded", done
    assert json.loads(done["Output"]) == {"doubled": 10}
