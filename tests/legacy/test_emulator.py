"""Legacy flows on the emulator through the official SDK: CreateFlow/UpdateFlow take them,
DescribeFlow gives the text back unchanged, the scenario's polling loop written in the legacy
dialect runs with the real StartJob/GetJobStatus on the virtual clock and ends as its v1 twin
ends, and the console draws the execution (steps, fall-through edges, inline branches)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from alibabacloud_fnf20190315 import models as fnf

from deployer.testing.environment import mock_cloud
from tests.console.support import get_json
from tests.emulator.cloudflow_support import (
    client_error,
    create,
    deploy_seed_functions,
    history,
    run_seed,
    start,
)
from tests.legacy.corpus import flow_text

NESTED = """\
# passes only: runs on the emulator without functions
version: v1
type: flow
steps:
  - type: foreach
    name: Each
    iterationMapping: {collection: $.xs, item: x}
    steps:
      - type: pass
        name: Double
        outputMappings: [{target: y, source: $input.x}]
    outputMappings: [{target: ys, source: '$local[*].y'}]
  - type: choice
    name: Route
    choices:
      - condition: $.go
        steps:
          - {type: pass, name: Approve, outputMappings: [{target: ok, source: true}]}
        goto: Done
    default:
      steps:
        - {type: pass, name: Hold}
  - type: parallel
    name: Fan
    branches:
      - steps: [{type: wait, name: Pause, duration: 30}]
      - steps: [{type: pass, name: Right}]
  - type: succeed
    name: Done
"""


def run_legacy(delay: int, **options: Any) -> tuple[dict[str, Any], list[Any], Any]:
    """The legacy polling flow with ``{"delay": delay}`` on a fresh in-process emulator."""
    with mock_cloud(intercept=False, **options) as cloud:
        deploy_seed_functions(cloud)
        client = cloud.fnf_client()
        text = flow_text("poll_job", account_id=cloud.account_id)
        create(client, "LegacyPoll", text)
        described = client.describe_flow(fnf.DescribeFlowRequest(name="LegacyPoll")).body
        assert described.definition == text  # unchanged, comments and all
        started = cloud.now()
        start(client, "LegacyPoll", "run", json.dumps({"delay": delay}))
        final = cloud.wait_for_execution("LegacyPoll", "run", timeout=30)
        final["virtual_seconds"] = cloud.now() - started
        model = None
        if options.get("console"):
            model = get_json(cloud, f"/_console/api/r/{cloud.region}/flows/LegacyPoll/"
                                    "executions/run")
        return final, history(client, "LegacyPoll", "run"), model


def test_the_polling_loop_ends_as_its_v1_twin_and_is_drawn() -> None:
    final, events, model = run_legacy(29, console=True)
    twin, _, _ = run_seed(29)
    assert (final["Status"], final["virtual_seconds"]) == (twin["Status"],
                                                           twin["virtual_seconds"]) \
        == ("Succeeded", 40)
    output, expected = json.loads(final["Output"]), json.loads(twin["Output"])
    assert {k: v for k, v in output.items() if k != "job_id"} == \
        {k: v for k, v in expected.items() if k != "job_id"} == \
        {"job_status": "success", "try_count": 4}
    polls = [e for e in events if e.type == "TaskSucceeded" and e.step_name == "GetJobStatus"]
    assert len(polls) == 4
    assert model is not None and model["summary"]["status"] == "Succeeded"
    nodes = {n["name"]: n for n in model["graph"]["nodes"]}
    assert [nodes[n]["type"] for n in ("StartJob", "Pass", "Wait", "CheckJobComplete")] == \
        ["task", "pass", "wait", "choice"]
    assert [nodes[n]["visits"] for n in ("Wait", "GetJobStatus", "CheckJobComplete")] == \
        [4, 4, 4]
    assert nodes["FailJobFailed"]["status"] == "not-reached"
    assert nodes["GetJobStatus"]["detail"] == "GetJobStatus"
    edges = {e["key"]: e for e in model["graph"]["edges"]}
    assert edges["StartJob->Pass"]["kind"] == "next"  # a fall-through edge
    assert edges["CheckJobComplete->Wait"]["count"] == 3 and edges["CheckJobComplete->Wait"][
        "back"]
    assert edges["CheckJobComplete->JobSucceeded"]["label"] == '$.job_status == "succes…'


def test_the_polling_loop_times_out_like_its_twin() -> None:
    final, events, _ = run_legacy(30)
    assert final["Status"] == "Failed" and final["virtual_seconds"] == 40
    failed = [e for e in events if e.type == "ExecutionFailed"]
    assert json.loads(failed[0].event_detail)["Error"] == "timeout"
    assert sum(e.type == "StepEntered" and e.step_name == "GetJobStatus" for e in events) == 4


def test_create_update_and_refuse_legacy_definitions() -> None:
    with mock_cloud(intercept=False, console=True) as cloud:
        client = cloud.fnf_client()
        create(client, "Nested", NESTED)
        changed = NESTED.replace("duration: 30", "duration: 20")
        client.update_flow(fnf.UpdateFlowRequest(name="Nested", definition=changed))
        assert client.describe_flow(
            fnf.DescribeFlowRequest(name="Nested")).body.definition == changed
        error = client_error(create, client, "Broken",
                             "version: v1\ntype: flow\nsteps:\n  - {type: pas, name: a}\n")
        assert error.statusCode == 400
        assert "FDL106" in error.message and "steps[0](a).type" in error.message
        start(client, "Nested", "go", json.dumps({"xs": [1, 2], "go": True}))
        start(client, "Nested", "hold", json.dumps({"xs": [], "go": False}))
        assert cloud.wait_for_execution("Nested", "go")["Status"] == "Succeeded"
        held = cloud.wait_for_execution("Nested", "hold")
        assert held["Status"] == "Succeeded" and cloud.now() >= 20  # the branch's wait
        assert json.loads(held["Output"]) == {"ys": []}
        go = json.loads(cloud.wait_for_execution("Nested", "go")["Output"])
        assert go == {"ys": [1, 2], "ok": True}
        model = get_json(cloud, f"/_console/api/r/{cloud.region}/flows/Nested/executions/go")
        nodes = {n["key"]: n for n in model["graph"]["nodes"]}
        assert nodes["Route/0/Approve"]["status"] == "succeeded"  # an inline branch
        assert nodes["Route/1/Hold"]["status"] == "not-reached"
        assert nodes["Each/*/Double"]["visits"] == 2
        assert nodes["Fan"]["status"] == "not-reached"  # the goto skipped it
        frames = {f["key"]: f["label"] for f in model["graph"]["frames"]}
        assert frames == {"Each/*": "For each x", "Route/0": "$.go", "Route/1": "Default",
                          "Fan/0": "Branch 1", "Fan/1": "Branch 2"}
        page = get_json(cloud, f"/_console/api/r/{cloud.region}/flows/Nested")
        drawn = {n["key"]: n["type"] for n in page["graph"]["nodes"]}
        assert drawn["Route"] == "choice" and drawn["Route/1/Hold"] == "pass"
        assert {e["key"] for e in page["graph"]["edges"]} >= {"Each->Route", "Route->Done",
                                                             "Route->Fan", "Fan->Done"}


@pytest.mark.parametrize("name", ["orders", "integrations"])
def test_tasks_without_a_function_fail_with_a_clear_error(name: str) -> None:
    with mock_cloud(intercept=False) as cloud:
        client = cloud.fnf_client()
        create(client, "F", flow_text(name))
        start(client, "F", "run", json.dumps({"order": {}, "customer": {}}))
        final = cloud.wait_for_execution("F", "run")
        failed = [e for e in history(client, "F", "run") if e.type == "ExecutionFailed"]
    assert final["Status"] == "Failed"
    detail = json.loads(failed[0].event_detail)
    if name == "orders":
        assert detail["Error"] == "FC.FunctionNotFound"
    else:  # the sub-flow step starts its child, a flow this test never created
        assert detail["Error"] == "FnF.FlowNotExists"
        assert "child-flow" in detail["Cause"]
