"""OSS, DashScope and other integrations answered from mocked responses on the emulator,
through the official SDK: both mock layouts, the ``#<case>`` execution-name suffix, Retry over
mocked failures, and the catchable error of a task no mock answers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from alibabacloud_fnf20190315 import models as fnf_models
from Tea.exceptions import TeaException

from deployer.testing import LocalCloud

FLOW = """\
Type: StateMachine
SpecVersion: v1
Name: {name}
StartAt: Fetch
States:
  - Type: Task
    Name: Fetch
    Action: OSS:GetObject
    Parameters:
      bucket: media
      key.$: $Input.key
    OutputConstructor:
      text.$: $Output.Body
    Retry:
      - Errors: [OSS.ServiceUnavailable]
        MaxAttempts: 2
        IntervalSeconds: 1
    Next: Summarise
  - Type: Task
    Name: Summarise
    Action: DashScope:QwenTextGeneration
    Parameters:
      model: qwen-max
      messages.$: '[{{"role": "user", "content": $Input.text}}]'
    OutputConstructor:
      summary.$: $Output.output.choices[0].message.content
    End: true
"""

RESPONSES = {
    "Object": {"0": {"Return": {"Body": "a long text"}}},
    "FlakyObject": {"0-1": {"Throw": {"Error": "OSS.ServiceUnavailable", "Cause": "busy"}},
                    "2": {"Return": {"Body": "late text"}}},
    "Summary": {"0": {"Return": {"output": {"choices": [{"message": {"content": "short"}}]}}}},
}


def _create(fnf: Any, name: str) -> None:
    fnf.create_flow(fnf_models.CreateFlowRequest(name=name, definition=FLOW.format(name=name),
                                                 description="", type="FDL"))


def _run(cloud: LocalCloud, fnf: Any, flow: str, name: str, payload: dict[str, Any]
         ) -> dict[str, Any]:
    started = fnf.start_execution(fnf_models.StartExecutionRequest(
        flow_name=flow, execution_name=name, input=json.dumps(payload))).body
    return cloud.wait_for_execution(flow, started.name)


def test_localstack_layout_picked_by_execution_name_suffix(cloud: LocalCloud, fnf: Any) -> None:
    _create(fnf, "oss-summary")
    cloud.load_mocks({
        "StateMachines": {"oss-summary": {"TestCases": {
            "Happy": {"Fetch": "Object", "Summarise": "Summary"},
            "Flaky": {"Fetch": "FlakyObject", "Summarise": "Summary"}}}},
        "MockedResponses": RESPONSES,
    })
    happy = _run(cloud, fnf, "oss-summary", "run-1#Happy", {"key": "a.txt"})
    assert happy["Name"] == "run-1"
    assert happy["Status"] == "Succeeded", happy
    assert json.loads(happy["Output"]) == {"summary": "short"}
    flaky = _run(cloud, fnf, "oss-summary", "run-2#Flaky", {"key": "a.txt"})
    assert flaky["Status"] == "Succeeded", flaky  # two mocked failures, then the object


def test_flat_layout_from_a_file(cloud: LocalCloud, fnf: Any, tmp_path: Any) -> None:
    _create(fnf, "oss-flat")
    mocks = tmp_path / "mocks.yaml"
    mocks.write_text(
        "TestCases:\n  Happy:\n    Fetch: Object\n    Summarise: Summary\n"
        "MockedResponses:\n  Object:\n    '0': {Return: {Body: from file}}\n"
        "  Summary:\n    '0':\n      Return:\n        output:\n          choices:\n"
        "            - message: {content: filed}\n")
    cloud.load_mocks(mocks)
    done = _run(cloud, fnf, "oss-flat", "flat#Happy", {"key": "b.txt"})
    assert json.loads(done["Output"]) == {"summary": "filed"}


def test_a_task_without_a_mock_fails_with_a_catchable_error_naming_the_mock(
        cloud: LocalCloud, fnf: Any) -> None:
    _create(fnf, "oss-unmocked")
    done = _run(cloud, fnf, "oss-unmocked", "bare", {"key": "c.txt"})
    assert done["Status"] == "Failed"
    history = fnf.get_execution_history(fnf_models.GetExecutionHistoryRequest(
        flow_name="oss-unmocked", execution_name="bare")).body.events
    failed = [json.loads(e.event_detail) for e in history if e.type == "TaskFailed"]
    assert failed[0]["Error"] == "FnF.MockedResponseMissing"
    assert "OSS:GetObject" in failed[0]["Cause"]
    assert "StateMachines.oss-unmocked.TestCases.<case>.Fetch" in failed[0]["Cause"]


def test_an_unknown_case_is_refused_at_start(cloud: LocalCloud, fnf: Any) -> None:
    _create(fnf, "oss-nocase")
    cloud.load_mocks({"TestCases": {"Happy": {"Fetch": "Object"}},
                      "MockedResponses": RESPONSES})
    with pytest.raises(TeaException) as caught:
        fnf.start_execution(fnf_models.StartExecutionRequest(
            flow_name="oss-nocase", execution_name="x#Nope", input="{}"))
    assert "Nope" in str(caught.value.message)


def test_a_bad_mock_document_is_refused_by_line(cloud: LocalCloud, tmp_path: Any) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("MockedResponses:\n  R:\n    first: {Return: 1}\n")
    with pytest.raises(ValueError, match=r"bad.yaml:3: .*invocation indexes"):
        cloud.load_mocks(bad)
