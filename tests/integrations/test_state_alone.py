"""`deploy flow test --state`: one state run alone (AWS TestState-like): a Choice's routing, a
Task's Retry over mocked failures then its OutputConstructor, a Catch taking a mocked error,
an uncaught error (exit 5), a nested state, and an unknown state name (exit 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.errors import ExitCode

FLOW = """\
Type: StateMachine
SpecVersion: v1
Name: orders
StartAt: Route
States:
  - Type: Choice
    Name: Route
    Branches:
      - Condition: $Input.total > 100
        Next: Charge
    Default: Done
  - Type: Task
    Name: Charge
    Action: HTTP:Request
    Parameters:
      method: POST
      url: http://payments.internal/charge
      body.$: $Input
    Retry:
      - Errors: [HTTP.503]
        MaxAttempts: 3
        IntervalSeconds: 5
    Catch:
      - Errors: [HTTP.402]
        Next: Declined
        OutputConstructor:
          reason.$: $Context.Current.Error.Code
    OutputConstructor:
      receipt.$: stringToJson($Output.Body).id
    Next: Items
  - Type: Map
    Name: Items
    ItemsPath: $Input.items
    Processor:
      StartAt: Price
      States:
        - Type: Pass
          Name: Price
          OutputConstructor:
            cents.$: $Input.euros * 100
          End: true
    Next: Done
  - Type: Pass
    Name: Declined
    End: true
  - Type: Pass
    Name: Done
    End: true
"""

MOCKS = """\
TestCases:
  Flaky:
    Charge: Unavailable
  Broke:
    Charge: PaymentRequired
  Broken:
    Charge: Teapot
MockedResponses:
  Unavailable:
    "0-1": {Throw: {Error: HTTP.503, Cause: try later}}
    "2": {Return: {Code: 200, Header: {}, Body: '{"id": "r-9"}'}}
  PaymentRequired:
    "0": {Throw: {Error: HTTP.402, Cause: no funds}}
  Teapot:
    "0": {Throw: {Error: HTTP.418, Cause: short and stout}}
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    flow, mocks = tmp_path / "flow.yaml", tmp_path / "mocks.yaml"
    flow.write_text(FLOW)
    mocks.write_text(MOCKS)
    return flow, mocks


def _state(files: tuple[Path, Path], state: str, data: dict[str, object], *extra: str):  # type: ignore[no-untyped-def]
    flow, mocks = files
    return CliRunner().invoke(cli, ["flow", "test", str(flow), "--state", state, "--input",
                                    json.dumps(data), "--mocks", str(mocks), *extra,
                                    "--output", "json"])


def test_a_choice_routes(files: tuple[Path, Path]) -> None:
    big = json.loads(_state(files, "Route", {"total": 150}).stdout)
    small = json.loads(_state(files, "Route", {"total": 5}).stdout)
    assert (big["next_state"], big["output"]) == ("Charge", {"total": 150})
    assert small["next_state"] == "Done"


def test_retry_over_mocked_failures_then_the_output_constructor(files: tuple[Path, Path]) -> None:
    result = _state(files, "Charge", {"total": 150}, "--case", "Flaky")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["status"] == "Succeeded" and doc["retries"] == 2
    assert (doc["output"], doc["next_state"]) == ({"receipt": "r-9"}, "Items")


def test_a_catch_takes_the_mocked_error(files: tuple[Path, Path]) -> None:
    doc = json.loads(_state(files, "Charge", {"total": 150}, "--case", "Broke").stdout)
    assert doc["status"] == "Caught" and doc["next_state"] == "Declined"
    assert doc["output"] == {"reason": "HTTP.402"}


def test_an_uncaught_error_exits_5_and_says_so(files: tuple[Path, Path]) -> None:
    flow, mocks = files
    result = CliRunner().invoke(cli, ["flow", "test", str(flow), "--state", "Charge", "--input",
                                      "{}", "--mocks", str(mocks), "--case", "Broken"])
    assert result.exit_code == ExitCode.EXECUTION_FAILED
    assert "Status:   Failed" in result.stdout and "HTTP.418 (short and stout)" in result.stdout


def test_a_map_runs_its_iterations_and_a_nested_state_runs_alone(
        files: tuple[Path, Path]) -> None:
    doc = json.loads(_state(files, "Items", {"items": [{"euros": 1}, {"euros": 2}]}).stdout)
    assert doc["output"] == {"Items": [{"cents": 100}, {"cents": 200}]}
    assert doc["next_state"] == "Done"
    inner = json.loads(_state(files, "Price", {"euros": 3}).stdout)
    assert (inner["output"], inner["next_state"]) == ({"cents": 300}, None)


def test_an_unknown_state_is_named(files: tuple[Path, Path]) -> None:
    flow, _ = files
    result = CliRunner().invoke(cli, ["flow", "test", str(flow), "--state", "Nope"])
    assert result.exit_code == ExitCode.NOT_FOUND
    assert "the flow has no state 'Nope'" in result.stderr
    assert "Charge" in result.stderr


DISTRIBUTED = """\
Type: StateMachine
SpecVersion: v1
Name: fan
StartAt: Fan
States:
  - Type: Map
    Name: Fan
    ProcessorConfig:
      ExecutionMode: Express
    ItemReader:
      SourceType: OSS_CSV
      SourceParameters:
        Bucket: data
        ObjectName: rows.csv
    ItemBatcher:
      MaxItemsPerBatch: 2
    Processor:
      StartAt: Price
      States:
        - Type: Task
          Name: Price
          Action: DashScope:Price
          Parameters:
            rows.$: $Input.Items
          End: true
    End: true
"""


def test_a_distributed_map_runs_in_flow_test_with_its_children_mocked(tmp_path: Path) -> None:
    flow, mocks = tmp_path / "fan.yaml", tmp_path / "mocks.yaml"
    flow.write_text(DISTRIBUTED)
    mocks.write_text('TestCases:\n  C:\n    Fan: Rows\n    Price: Priced\nMockedResponses:\n'
                     '  Rows:\n    "0": {Return: {Body: "sku,qty\\na,1\\nb,2\\nc,3\\n"}}\n'
                     '  Priced:\n    "0-1": {Return: {total: 9}}\n')
    whole = CliRunner().invoke(cli, ["flow", "test", str(flow), "--mocks", str(mocks),
                                     "--output", "json"])
    alone = CliRunner().invoke(cli, ["flow", "test", str(flow), "--state", "Fan", "--mocks",
                                     str(mocks), "--output", "json"])
    assert whole.exit_code == 0, whole.stderr
    output = json.loads(whole.stdout)["output"]
    assert output["Items"] == [{"total": 9}, {"total": 9}]  # 3 rows in batches of 2
    assert output["ItemCounts"] == {"Total": 2, "Succeeded": 2, "Failed": 0}
    assert json.loads(alone.stdout)["output"]["ItemCounts"]["Succeeded"] == 2
