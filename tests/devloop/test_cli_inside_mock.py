"""`deploy` commands run inside `mock_cloud()` or the pytest fixtures stay in that in-process cloud:
they never reach or start a background emulator, and leave the project directory untouched."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.emulator import daemon
from deployer.testing import ProjectDeployError, mock_cloud
from tests.devloop.support import ROOT


@pytest.fixture
def trap_port(monkeypatch):
    """A listening socket on the port a background emulator would use: any connection to it
    (or a daemon started on it) would show the CLI escaped the mock."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    monkeypatch.setenv("DEPLOY_EMULATOR_PORT", str(sock.getsockname()[1]))
    yield sock
    sock.close()


def _no_connection(sock: socket.socket) -> bool:
    try:
        sock.accept()
    except BlockingIOError:
        return True
    return False


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _deploy(app: Path, *args: str) -> dict:
    result = CliRunner().invoke(cli, ["-C", str(app), *args, "--output", "json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_local_target_inside_mock_cloud_deploys_into_it_and_writes_nothing_in_the_project(
        app, trap_port):
    before = _snapshot(app)
    with mock_cloud() as cloud:
        up = _deploy(app, "up", "--yes")
        names = [f.function_name for f in cloud.fc_client().list_functions(
            _list_functions()).body.functions]
        workspace = cloud.workspace(app)
        recorded = sorted(p.name for p in (workspace / "state").glob("*.json"))
        validate = CliRunner().invoke(cli, ["-C", str(app), "validate"])
        package = _deploy(app, "package")
    assert up["account_id"] == cloud.account_id and up["write_calls"] == 6
    assert sorted(names) == ["GetJobStatus", "StartJob"]
    assert recorded == [f"job-poller-local-{cloud.account_id}-cn-hangzhou.json"]
    assert validate.exit_code == 0, validate.stderr
    assert Path(package["out_dir"]).is_relative_to(workspace)
    assert _snapshot(app) == before and not (app / ".deploy").exists()
    assert _no_connection(trap_port)
    assert not daemon.status(app / ".deploy" / "emulator").running
    assert not workspace.exists()  # the mock's temporary state went with it


def _list_functions():
    from alibabacloud_fc20230330 import models

    return models.ListFunctionsRequest()


def test_aliyun_target_inside_mock_cloud_keeps_its_record_out_of_the_project(app, trap_port):
    with mock_cloud() as cloud:
        up = _deploy(app, "up", "--yes", "--target", "aliyun")
        down = _deploy(app, "down", "--yes", "--target", "aliyun")
        record = Path(up["record"])
        in_workspace = record.is_relative_to(cloud.workspace(app))
    assert up["target"] == "aliyun" and up["account_id"] == cloud.account_id
    assert in_workspace and down["write_calls"] == 6
    assert not (app / ".deploy").exists()
    assert _no_connection(trap_port)


def test_a_mock_without_interception_still_takes_the_aliyun_target(app, trap_port):
    with mock_cloud(intercept=False) as cloud:
        up = _deploy(app, "up", "--yes", "--target", "aliyun")
        names = [f.function_name for f in cloud.fc_client().list_functions(
            _list_functions()).body.functions]
    assert up["account_id"] == cloud.account_id and up["write_calls"] == 6
    assert sorted(names) == ["GetJobStatus", "StartJob"] and not (app / ".deploy").exists()


def test_in_process_cli_main_inside_mock_targets_it(app, trap_port, capsys):
    with mock_cloud() as cloud:
        cli.main(["-C", str(app), "up", "--yes", "--output", "json"], prog_name="deploy",
                 standalone_mode=False)
        doc = json.loads(capsys.readouterr().out)
    assert doc["account_id"] == cloud.account_id and doc["write_calls"] == 6
    assert not (app / ".deploy").exists()


def test_fixtures_cli_runner_targets_local_cloud(app, trap_port, cli_runner, local_cloud):
    result = cli_runner.invoke(cli, ["-C", str(app), "up", "--yes", "--output", "json"])
    invoked = cli_runner.invoke(cli, ["-C", str(app), "invoke", "StartJob", "--event", "{}",
                                      "--output", "json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["account_id"] == local_cloud.account_id
    assert invoked.exit_code == 0, invoked.stderr
    assert [r.function_name for r in local_cloud.invocations("StartJob")] == ["StartJob"]
    assert not (app / ".deploy").exists()
    assert _no_connection(trap_port)


def test_deploy_project_then_an_execution_on_the_virtual_clock(app):
    from alibabacloud_fnf20190315 import models

    with mock_cloud() as cloud:
        deployed = cloud.deploy_project(app)
        cloud.fnf_client().start_execution(models.StartExecutionRequest(
            flow_name="MyWorkFlow", execution_name="e1", input=json.dumps({"delay": 20})))
        started = cloud.now()
        result = cloud.wait_for_execution("MyWorkFlow", "e1")
        elapsed = cloud.now() - started
        again = cloud.deploy_project(app)
    assert deployed.write_calls == 6 and again.write_calls == 0
    assert deployed.arn("StartJob") == f"acs:fc:cn-hangzhou:{cloud.account_id}:functions/StartJob"
    assert result["Status"] == "Succeeded"
    output = json.loads(result["Output"])
    assert output["job_status"] == "success" and output["try_count"] == 4
    assert elapsed >= 40  # four 10 s Waits went by on the virtual clock
    assert not (app / ".deploy").exists()


def test_deploy_project_reports_the_cli_diagnostics(app):
    template = app / "templates" / "flow.yaml.j2"
    template.write_text(template.read_text().replace("Next: GetJobStatus", "Next: Nowhere"))
    with mock_cloud() as cloud, pytest.raises(ProjectDeployError) as failed:
        cloud.deploy_project(app)
    assert failed.value.exit_code == 3
    assert "flow MyWorkFlow is invalid" in str(failed.value) and "Nowhere" in str(failed.value)


def test_deploy_project_outside_its_mock_is_refused(app):
    with mock_cloud() as cloud:
        pass
    with pytest.raises(RuntimeError, match="inside the mock_cloud"):
        cloud.deploy_project(app)


def test_the_readme_in_tests_example_runs_as_written(app, monkeypatch):
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## In tests"):]
    code = section[section.index("```python\n") + len("```python\n"):section.index("```\n", 10)]
    namespace: dict = {}
    monkeypatch.chdir(app)
    exec(compile(code, "README.md", "exec"), namespace)
    namespace["test_the_job_succeeds"]()
    assert not (app / ".deploy").exists()


def test_background_emulator_commands_are_refused_inside_the_mock(app, trap_port):
    with mock_cloud() as cloud:
        started = CliRunner().invoke(cli, ["-C", str(app), "emulator", "start"])
    assert started.exit_code == 1
    assert f"in-process cloud at {cloud.endpoint}" in started.stderr
    assert "Hint: run `deploy emulator` outside the mock_cloud() block" in started.stderr
    assert not (app / ".deploy").exists() and _no_connection(trap_port)
