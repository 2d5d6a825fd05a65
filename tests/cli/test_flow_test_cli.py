"""``deploy flow test``: exit codes, JSON shape, mock errors, invalid flows."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from deployer.cli import main as cli_main
from deployer.errors import ExitCode

ROOT = Path(__file__).resolve().parents[2]
MOCKS = ROOT / "tests" / "fixtures" / "flows" / "seed-mocks.yaml"
TEMPLATE = "templates/flow.yaml.j2"


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(cli_main.cli, ["-C", str(ROOT), "flow", "test", *args])


def test_seed_flow_happy_path_json() -> None:
    result = invoke(
        TEMPLATE,
        "--mocks",
        str(MOCKS),
        "--case",
        "HappyPath",
        "--input",
        '{"delay": 15}',
        "--output",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) == {"status", "output", "error", "states", "events", "duration_seconds"}
    assert doc["status"] == "Succeeded" and doc["error"] is None
    assert doc["output"] == {"job_id": "j-1", "job_status": "success", "try_count": 2}
    assert doc["states"][:3] == ["StartJob", "Pass", "Wait"]
    assert doc["states"][-1] == "JobSucceeded"
    assert doc["duration_seconds"] == 20
    assert doc["events"][0]["Type"] == "ExecutionStarted"
    assert doc["events"][-1]["Type"] == "ExecutionSucceeded"


def test_seed_flow_timeout_exits_5_with_human_output() -> None:
    result = invoke(TEMPLATE, "--mocks", str(MOCKS), "--case", "NeverFinishes")
    assert result.exit_code == ExitCode.EXECUTION_FAILED
    assert "Status:   Failed" in result.stdout and "Error:    timeout" in result.stdout
    assert "FailJobFailed" in result.stdout and "40s (virtual)" in result.stdout


def test_throw_fails_the_task() -> None:
    result = invoke(TEMPLATE, "--mocks", str(MOCKS), "--case", "Throttled", "--output", "json")
    assert result.exit_code == ExitCode.EXECUTION_FAILED
    assert json.loads(result.stdout)["error"] == {
        "code": "FC.ResourceThrottled",
        "detail": "too many requests",
    }


def test_missing_mock_names_state_case_and_index(tmp_path: Path) -> None:
    mocks = tmp_path / "m.yaml"
    mocks.write_text(
        MOCKS.read_text().replace(
            '    "1": {Return: {Body: {job_id: j-1, job_status: success, try_count: 2}}}\n', ""
        )
    )
    result = invoke(TEMPLATE, "--mocks", str(mocks), "--case", "HappyPath")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "'GetJobStatus'" in result.stderr and "'HappyPath'" in result.stderr
    assert "invocation index 1" in result.stderr and result.stdout == ""


def test_several_cases_need_case() -> None:
    result = invoke(TEMPLATE, "--mocks", str(MOCKS))
    assert result.exit_code == ExitCode.INVALID_INPUT and "--case" in result.stderr


def test_invalid_mock_file_reports_file_and_line(tmp_path: Path) -> None:
    mocks = tmp_path / "bad.yaml"
    mocks.write_text(
        "TestCases:\n  A: {StartJob: R}\nMockedResponses:\n  R:\n    zero: {Return: {}}\n"
    )
    result = invoke(TEMPLATE, "--mocks", str(mocks))
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert f"{mocks}:5" in result.stderr


def test_invalid_flow_exits_3_with_diagnostics(tmp_path: Path) -> None:
    flow = tmp_path / "f.yaml"
    flow.write_text(
        "Type: StateMachine\nName: x\nSpecVersion: v1\nStartAt: Nope\nStates:\n"
        "  - {Type: Pass, Name: A, End: true}\n"
    )
    result = invoke(str(flow))
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "invalid" in result.stderr and "Nope" in result.stderr


def test_plain_flow_without_tasks_and_input_file(tmp_path: Path) -> None:
    flow = tmp_path / "f.yaml"
    flow.write_text(
        "Type: StateMachine\nName: x\nSpecVersion: v1\nStartAt: A\nStates:\n"
        "  - Type: Wait\n    Name: A\n    Seconds: 300\n    Next: B\n"
        "  - {Type: Pass, Name: B, End: true}\n"
    )
    data = tmp_path / "in.json"
    data.write_text('{"k": [1, 2]}')
    result = invoke(str(flow), "--input", f"@{data}", "--output", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["output"] == {"k": [1, 2]} and doc["duration_seconds"] == 300
    bad = invoke(str(flow), "--input", "{nope")
    assert bad.exit_code == ExitCode.INVALID_INPUT and "invalid JSON" in bad.stderr


def test_template_takes_the_definition_vars_of_its_s_yaml_flow(tmp_path: Path) -> None:
    import shutil

    for name in ("functions", "templates"):
        shutil.copytree(ROOT / name, tmp_path / name)
    manifest = (ROOT / "s.yaml").read_text().replace("wait_seconds: 10", "wait_seconds: 60")
    (tmp_path / "s.yaml").write_text(manifest)
    result = CliRunner().invoke(cli_main.cli, [
        "-C", str(tmp_path), "flow", "test", TEMPLATE, "--mocks", str(MOCKS),
        "--case", "HappyPath", "--output", "json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["duration_seconds"] == 120  # two Waits of 60 s
