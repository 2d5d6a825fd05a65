"""The CLI treats a legacy flow like a v1 one: `deploy validate` (diagnostics on the template's
own lines), `deploy flow test` (mocks keyed by step names), and `deploy flow migrate`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from deployer.cli.main import cli
from deployer.errors import ExitCode
from deployer.fdl import check_flow
from tests.legacy.corpus import FIXTURES

LEGACY_TEMPLATE = FIXTURES / "poll_job.yaml.j2"


def run(project: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(project), *args], catch_exceptions=False)


@pytest.fixture
def legacy_project(tmp_path: Path, project_root: Path) -> Path:
    """The seed project with its flow written in the legacy dialect."""
    root = tmp_path / "proj"
    root.mkdir()
    shutil.copytree(project_root / "functions", root / "functions")
    (root / "templates").mkdir()
    shutil.copy(LEGACY_TEMPLATE, root / "templates" / "flow.yaml.j2")
    shutil.copy(project_root / "s.yaml", root / "s.yaml")
    return root


def test_validate_checks_a_legacy_flow_and_its_functions(legacy_project: Path) -> None:
    result = run(legacy_project, "validate", "--output", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    (flow,) = json.loads(result.stdout)["flows"]
    assert flow["ok"] and flow["diagnostics"] == []


def test_validate_names_the_template_line_of_a_legacy_mistake(legacy_project: Path) -> None:
    template = legacy_project / "templates" / "flow.yaml.j2"
    text = template.read_text().replace("goto: Wait", "goto: Wiat")
    text = text.replace("services/job-poller/functions/{{ start_job_function }}",
                        "services/job-poller/functions/Missing")
    template.write_text(text)
    result = run(legacy_project, "validate", "--output", "json")
    assert result.exit_code == ExitCode.INVALID_INPUT
    (flow,) = json.loads(result.stdout)["flows"]
    found = {(d["code"], d["line"], d["path"]): d for d in flow["diagnostics"]}
    line = text.splitlines().index("        goto: Wiat") + 1
    typo = found[("FDL203", line, "steps[4](CheckJobComplete).choices[2].goto")]
    assert typo["source"] == "templates/flow.yaml.j2" and typo["hint"] == "did you mean 'Wait'?"
    assert typo["rendered"]["source"].endswith(".yaml") and typo["rendered"]["line"] != line
    missing = [d for d in flow["diagnostics"] if d["code"] == "PRJ002"]
    assert [d["message"] for d in missing] == [
        "invokes function 'Missing', which s.yaml does not define in cn-hangzhou"]


def test_flow_test_runs_a_legacy_flow_on_mocks_keyed_by_step_names(legacy_project: Path
                                                                   ) -> None:
    template = "templates/flow.yaml.j2"  # rendered with s.yaml's definitionVars
    result = run(legacy_project, "flow", "test", template, "--mocks",
                 str(FIXTURES / "poll_job-mocks.yaml"), "--case", "Quick", "--input",
                 '{"delay": 9}', "--output", "json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["status"] == "Succeeded"
    assert doc["output"] == {"job_id": "j-1", "try_count": 2, "job_status": "success"}
    assert doc["states"] == ["StartJob", "Pass", "Wait", "GetJobStatus", "CheckJobComplete",
                             "Wait", "GetJobStatus", "CheckJobComplete", "JobSucceeded"]
    assert doc["duration_seconds"] == 20
    never = run(legacy_project, "flow", "test", template, "--mocks",
                str(FIXTURES / "poll_job-mocks.yaml"), "--case", "Never")
    assert never.exit_code == ExitCode.EXECUTION_FAILED
    assert "Error:    timeout" in never.stdout


def test_flow_test_names_a_step_without_a_mock(project_root: Path) -> None:
    result = run(project_root, "flow", "test", str(FIXTURES / "review.yaml"), "--mocks",
                 str(FIXTURES / "review-mocks.yaml"), "--case", "High", "--input", "{}")
    assert result.exit_code == 0
    missing = run(project_root, "flow", "test", str(FIXTURES / "review.yaml"), "--mocks",
                  str(FIXTURES / "orders-mocks.yaml"))
    assert missing.exit_code == ExitCode.INVALID_INPUT
    assert "no mocked response for state 'Score'" in missing.stderr


def test_migrate_writes_v1_that_validates_and_lists_notes(tmp_path: Path,
                                                          project_root: Path) -> None:
    out = tmp_path / "out" / "approval.yaml"
    result = run(project_root, "flow", "migrate", str(FIXTURES / "approval.yaml"), "-o",
                 str(out))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith(f"Migrated {FIXTURES / 'approval.yaml'} -> {out} "
                                    "(Name: approval; 2 notes)")
    assert check_flow(out.read_text()).ok
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning:")]
    assert warnings[1].startswith(f"Warning: {FIXTURES / 'approval.yaml'}:11:5: "
                                  "steps[2](NotBefore): a wait until a timestamp")


def test_migrate_prints_the_text_or_one_json_document(project_root: Path) -> None:
    text = run(project_root, "flow", "migrate", str(FIXTURES / "orders.yaml"), "--name",
               "Orders")
    assert text.exit_code == 0 and text.stderr == ""
    assert "Name: Orders" in text.stdout and check_flow(text.stdout).ok
    doc = json.loads(run(project_root, "flow", "migrate", str(FIXTURES / "approval.yaml"),
                         "--output", "json").stdout)
    assert set(doc) == {"source", "name", "written", "text", "notes", "warnings"}
    assert doc["name"] == "approval" and doc["written"] is None
    assert [n["line"] for n in doc["notes"]] == [8, 11]


def test_migrate_a_template_renders_it_first(legacy_project: Path) -> None:
    result = run(legacy_project, "flow", "migrate", "templates/flow.yaml.j2", "--output",
                 "json")
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["name"] == "flow"
    assert doc["notes"][0]["message"].startswith("the template was rendered before migrating")
    assert "acs:fc:cn-hangzhou:1234567890123456:functions/StartJob" in doc["text"]


@pytest.mark.parametrize(("content", "code", "message"), [
    ("Type: StateMachine\nName: x\nSpecVersion: v1\nStartAt: a\nStates:\n"
     "  - {Type: Pass, Name: a, End: true}\n", ExitCode.INVALID_INPUT,
     "is already written in SpecVersion v1"),
    ("version: v1\ntype: flow\nsteps:\n  - {type: pas, name: a}\n", ExitCode.INVALID_INPUT,
     "the legacy flow definition is invalid"),
    ("[1, 2]\n", ExitCode.INVALID_INPUT, "the legacy flow definition is invalid"),
])
def test_migrate_refuses_what_it_cannot_migrate(tmp_path: Path, content: str, code: int,
                                                message: str) -> None:
    source = tmp_path / "flow.yaml"
    source.write_text(content)
    result = run(tmp_path, "flow", "migrate", str(source))
    assert result.exit_code == code
    assert message in result.stderr and "Traceback" not in result.stderr
    missing = run(tmp_path, "flow", "migrate", str(tmp_path / "none.yaml"))
    assert missing.exit_code == ExitCode.INVALID_INPUT and "cannot read flow file" in \
        missing.stderr
