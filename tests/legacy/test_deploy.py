"""A legacy flow in s.yaml is deployed and run like a v1 one: `deploy up` creates it,
`deploy execute` runs the polling loop to JobSucceeded with its live view, and the execution's
status and history read back (in-process emulator, virtual clock)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from deployer.testing import mock_cloud
from tests.deploy.conftest import Deploy
from tests.legacy.corpus import FIXTURES


@pytest.fixture
def legacy_deploy(tmp_path: Path, project_root: Path) -> Deploy:
    from click.testing import CliRunner

    root = tmp_path / "app"
    root.mkdir()
    shutil.copy(project_root / "s.yaml", root / "s.yaml")
    shutil.copytree(project_root / "functions", root / "functions")
    (root / "templates").mkdir()
    shutil.copy(FIXTURES / "poll_job.yaml.j2", root / "templates" / "flow.yaml.j2")
    return Deploy(root, CliRunner())


def test_deploy_up_then_execute_a_legacy_polling_flow(legacy_deploy: Deploy) -> None:
    with mock_cloud():
        up = legacy_deploy("up")
        assert up.exit_code == 0, up.stderr
        assert "Deployed: 5 created" in up.stdout
        result = legacy_deploy.json("execute", "--delay", "9")
        live = legacy_deploy("execute", "--delay", "9", "--name", "watched")
        status = legacy_deploy.json("status", "watched")
        history = legacy_deploy.json("history", "watched")
    assert result["status"] == "Succeeded" and result["duration_seconds"] == 20
    assert result["output"]["job_status"] == "success" and result["output"]["try_count"] == 2
    assert result["states"] == ["StartJob", "Pass", "Wait", "GetJobStatus", "CheckJobComplete",
                                "Wait", "GetJobStatus", "CheckJobComplete", "JobSucceeded"]
    assert live.exit_code == 0, live.stderr
    # the second run meets GetJobStatus's warm instance, whose job is long done: one poll
    polls = [line for line in live.stdout.splitlines()
             if "GetJobStatus" in line and "succeeded" in line]
    assert len(polls) == 1 and "job_status=success try_count=1" in polls[0]
    assert "CheckJobComplete" in live.stdout and "JobSucceeded" in live.stdout
    assert "+ 10.0s  ExecutionSucceeded" in live.stdout
    assert status["status"] == "Succeeded"
    types = [e["Type"] for e in history["events"]]
    assert types[0] == "ExecutionStarted" and types[-1] == "ExecutionSucceeded"
