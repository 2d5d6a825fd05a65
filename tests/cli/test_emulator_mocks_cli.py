"""``deploy emulator mocks load|list|clear`` against a real background daemon: the loaded test
case answers a flow's tasks through the SDK, a bad file is refused with its line, clearing
forgets them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from alibabacloud_fnf20190315 import models as fnf_models
from alibabacloud_fnf20190315.client import Client as Fnf
from alibabacloud_tea_openapi import models as open_api
from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.errors import ExitCode

FLOW = """\
Type: StateMachine
SpecVersion: v1
Name: mocked
StartAt: Fetch
States:
  - Type: Task
    Name: Fetch
    Action: OSS:GetObject
    Parameters:
      bucket: media
      key.$: $Input.key
    OutputConstructor:
      body.$: $Output.Body
    End: true
"""

MOCKS = """\
TestCases:
  Happy:
    Fetch: Object
MockedResponses:
  Object:
    "0": {Return: {Body: the text}}
"""


def _run(state: Path, *args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli, ["emulator", *args, "--state-dir", str(state)])


def _json(state: Path, *args: str) -> dict:
    result = _run(state, *args, "--output", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def state(tmp_path_factory) -> Iterator[Path]:
    directory = tmp_path_factory.mktemp("mocks") / "state"
    started = _run(directory, "start", "--port", "0", "--clock", "virtual")
    assert started.exit_code == 0, started.stderr
    yield directory
    _run(directory, "stop")


def _fnf(state: Path) -> Fnf:
    creds = _json(state, "credentials")
    return Fnf(open_api.Config(access_key_id=creds["access_key_id"],
                               access_key_secret=creds["access_key_secret"],
                               endpoint=creds["endpoint"], protocol="http",
                               region_id=creds["region"]))


def test_loaded_mocks_answer_a_flow_task_until_cleared(state: Path, tmp_path: Path) -> None:
    mocks = tmp_path / "mocks.yaml"
    mocks.write_text(MOCKS)
    loaded = _json(state, "mocks", "load", str(mocks))
    assert loaded["cases"] == {"": ["Happy"]} and loaded["responses"] == ["Object"]
    assert loaded["sources"] == [str(mocks.resolve())]
    assert _json(state, "mocks", "list")["cases"] == {"": ["Happy"]}
    assert "Happy" in _run(state, "mocks", "list").stdout

    fnf = _fnf(state)
    fnf.create_flow(fnf_models.CreateFlowRequest(name="mocked", definition=FLOW,
                                                 description="", type="FDL"))
    fnf.start_execution(fnf_models.StartExecutionRequest(
        flow_name="mocked", execution_name="e1#Happy", input=json.dumps({"key": "a"})))
    done = fnf.describe_execution(fnf_models.DescribeExecutionRequest(
        flow_name="mocked", execution_name="e1", wait_time_seconds=10)).body
    assert (done.status, json.loads(done.output)) == ("Succeeded", {"body": "the text"})

    cleared = _json(state, "mocks", "clear")
    assert (cleared["changed"], cleared["cases"], cleared["responses"]) == (
        "cleared the mocks", {}, [])
    refused = _run(state, "mocks", "list")
    assert refused.exit_code == 0 and "No mocks loaded." in refused.stdout


def test_a_bad_mock_file_is_refused_with_its_line(state: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("MockedResponses:\n  R:\n    '0': {Return: 1, Throw: {Error: E}}\n")
    result = _run(state, "mocks", "load", str(bad))
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert f"{bad}:3: response 'R', key '0': give exactly one of Return or Throw" in \
        result.stderr
    assert _json(state, "mocks", "list")["responses"] == []
