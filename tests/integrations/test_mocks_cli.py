"""An OSS + DashScope flow deployed and run through the CLI with `deploy execute
--mock-case`, from mock files in both layouts; FC tasks mocked when a case asks for it; a bad
mock file refused by `deploy emulator start --mocks` with its line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.errors import ExitCode
from deployer.testing import mock_cloud

OSS_FLOW = """\
Type: StateMachine
SpecVersion: v1
Name: {{ flow_name | default("MyWorkFlow") }}
StartAt: Fetch
States:
  - Type: Task
    Name: Fetch
    Action: OSS:GetObject
    Parameters:
      bucket: media
      key.$: $Input.key
    Next: Summarise
  - Type: Task
    Name: Summarise
    Action: DashScope:QwenTextGeneration
    Parameters:
      model: qwen-max
      prompt.$: $Input.Body
    OutputConstructor:
      summary.$: $Output.output.text
    End: true
"""

FLAT = """\
TestCases:
  Happy:
    Fetch: Object
    Summarise: Summary
MockedResponses:
  Object:
    "0": {Return: {Body: the text}}
  Summary:
    "0": {Return: {output: {text: flat summary}}}
"""

LOCALSTACK = """\
{"StateMachines": {"MyWorkFlow": {"TestCases": {"Happy": {"Fetch": "Obj", "Summarise": "Sum"}}}},
 "MockedResponses": {
   "Obj": {"0": {"Return": {"Body": "other text"}}},
   "Sum": {"0": {"Return": {"output": {"text": "localstack summary"}}}}}}
"""


def _run(project: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["-C", str(project), *args])


def test_an_oss_dashscope_flow_runs_from_both_mock_layouts(project: Path) -> None:
    (project / "templates" / "flow.yaml.j2").write_text(OSS_FLOW)
    flat = project / "flat.yaml"
    flat.write_text(FLAT)
    localstack = project / "localstack.json"
    localstack.write_text(LOCALSTACK)
    with mock_cloud(mocks=flat) as cloud:
        assert _run(project, "up", "--target", "aliyun", "--yes").exit_code == 0
        first = _run(project, "execute", "--target", "aliyun", "--input", '{"key": "a"}',
                     "--mock-case", "Happy", "--output", "json")
        cloud.clear_mocks()
        cloud.load_mocks(localstack)
        second = _run(project, "execute", "--target", "aliyun", "--input", '{"key": "a"}',
                      "--mock-case", "Happy", "--output", "json")
    assert first.exit_code == 0, first.stderr
    assert json.loads(first.stdout)["output"] == {"summary": "flat summary"}
    assert second.exit_code == 0, second.stderr
    assert json.loads(second.stdout)["output"] == {"summary": "localstack summary"}


def test_fc_tasks_are_mocked_when_a_case_asks(project: Path) -> None:
    mocks = project / "fc.yaml"
    mocks.write_text(
        "StateMachines:\n  MyWorkFlow:\n    TestCases:\n      Quick:\n"
        "        StartJob: Started\n        GetJobStatus: Done\n"
        "MockedResponses:\n  Started:\n    '0': {Return: {Body: {job_id: mocked}}}\n"
        "  Done:\n    '0': {Return: {Body: {job_status: success, try_count: 1}}}\n")
    with mock_cloud(mocks=mocks) as cloud:
        assert _run(project, "up", "--target", "aliyun", "--yes").exit_code == 0
        result = _run(project, "execute", "--target", "aliyun", "--delay", "3",
                      "--mock-case", "Quick", "--output", "json")
        invoked = cloud.invocations("StartJob")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "Succeeded"
    assert invoked == []  # the mocked function was not called


def test_a_bad_mock_file_is_refused_before_anything_starts(project: Path) -> None:
    bad = project / "bad.yaml"
    bad.write_text("MockedResponses:\n  R:\n    '0': {Return: 1, Throw: {Error: E}}\n")
    result = _run(project, "emulator", "start", "--mocks", str(bad),
                  "--state-dir", str(project / "emu"))
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert f"{bad}:3: response 'R', key '0': give exactly one of Return or Throw" in \
        result.stderr
    assert not (project / "emu").exists()


def test_validate_lists_the_integrations_that_need_mocks(project: Path) -> None:
    (project / "templates" / "flow.yaml.j2").write_text(OSS_FLOW)
    text = _run(project, "validate")
    doc = json.loads(_run(project, "validate", "--output", "json").stdout)
    assert text.exit_code == 0, text.stderr
    assert ("MyWorkFlow: on the emulator, mocked responses needed for Fetch (OSS:GetObject), "
            "Summarise (DashScope:QwenTextGeneration)") in text.stdout
    assert doc["flows"][0]["needs_mocks"] == [
        {"state": "Fetch", "action": "OSS:GetObject"},
        {"state": "Summarise", "action": "DashScope:QwenTextGeneration"}]
