"""``deploy render``, ``deploy validate`` and ``deploy package`` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.errors import ExitCode

ACCOUNT = "1234567890123456"


@pytest.fixture
def run(project: Path, monkeypatch: pytest.MonkeyPatch):
    for name in ("ALIBABA_CLOUD_ACCOUNT_ID", "ALIBABA_CLOUD_REGION", "DEPLOY_OUTPUT"):
        monkeypatch.delenv(name, raising=False)

    def invoke(*args: str, env: dict[str, str] | None = None):
        return CliRunner().invoke(cli, ["-C", str(project), *args], env=env)

    return invoke


def test_render_targets_the_functions(run) -> None:
    result = run("render", "--region", "cn-hangzhou", "--account-id", ACCOUNT)
    assert result.exit_code == 0, result.stderr
    for name in ("StartJob", "GetJobStatus"):
        arn = f"acs:fc:cn-hangzhou:{ACCOUNT}:functions/{name}/LATEST"
        assert f"resourceArn: {arn}\n" in result.stdout
    assert result.stdout.startswith("Type: StateMachine\nName: MyWorkFlow\n")
    assert result.stderr == ""


def test_render_json_and_out_file(run, project: Path) -> None:
    result = run("render", "--account-id", ACCOUNT, "--output", "json")
    document = json.loads(result.stdout)
    assert document["flow"] == "MyWorkFlow"
    assert f"acs:fc:cn-hangzhou:{ACCOUNT}:functions/StartJob/LATEST" in document["definition"]
    result = run("render", "--account-id", ACCOUNT, "--region", "cn-shanghai",
                 "-o", "build/flow.yaml")
    assert result.exit_code == 0
    written = (project / "build" / "flow.yaml").read_text()
    assert f"acs:fc:cn-shanghai:{ACCOUNT}:functions/GetJobStatus/LATEST" in written


def test_render_account_from_env_or_the_local_emulator(run, project: Path) -> None:
    result = run("render", env={"ALIBABA_CLOUD_ACCOUNT_ID": "42"})
    assert "acs:fc:cn-hangzhou:42:functions/StartJob/LATEST" in result.stdout
    result = run("render")  # the local target's account, as `deploy up` would deploy it
    assert result.exit_code == 0, result.stderr
    credentials = json.loads(run("emulator", "credentials", "--output", "json").stdout)
    account = credentials["account_id"]
    assert f"acs:fc:cn-hangzhou:{account}:functions/StartJob/LATEST" in result.stdout
    assert sorted(p.name for p in (project / ".deploy" / "emulator").iterdir()) == [
        "identity.json"]  # the emulator was not started
    again = run("render")
    assert again.stdout == result.stdout


def test_render_validate_and_flow_test_apply_the_region_rule_of_up(run) -> None:
    for command in (["render"], ["validate"], ["flow", "test", "templates/flow.yaml.j2"],
                    ["plan"], ["up"]):
        result = run(*command, "--region", "xx")
        assert result.exit_code == ExitCode.INVALID_INPUT, command
        assert "Error: region 'xx' does not offer CloudFlow" in result.stderr
        assert "Hint: use one of: cn-hangzhou" in result.stderr and result.stdout == ""


def test_render_unknown_flow(run) -> None:
    result = run("render", "--account-id", ACCOUNT, "--flow", "Nope")
    assert result.exit_code == ExitCode.NOT_FOUND
    assert "no flow named 'Nope' in s.yaml" in result.stderr and "MyWorkFlow" in result.stderr


def test_validate_accepts_the_project(run, project: Path) -> None:
    result = run("validate", "--account-id", ACCOUNT)
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "OK"
    rendered = project / ".deploy" / "rendered" / "MyWorkFlow.yaml"
    text = rendered.read_text()
    assert f"acs:fc:cn-hangzhou:{ACCOUNT}:functions/StartJob/LATEST" in text


def test_validate_json(run) -> None:
    result = run("validate", "--output", "json")
    document = json.loads(result.stdout)
    assert document["ok"] is True
    assert document["manifest"]["functions"] == ["StartJob", "GetJobStatus"]
    assert [f["name"] for f in document["flows"]] == ["MyWorkFlow"]
    assert document["flows"][0]["diagnostics"] == []


def test_validate_broken_manifest_lists_every_problem(run, project: Path) -> None:
    text = (project / "s.yaml").read_text()
    text = text.replace("memorySize: 512\n      timeout: 30",
                        "memorySize: 500\n      timeout: 0", 1)
    (project / "s.yaml").write_text(text)
    result = run("validate")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "s.yaml:20:7: resources.start_job.props.memorySize: must be a multiple of 64 " \
           "(got 500)" in result.stdout
    assert "s.yaml:21:7: resources.start_job.props.timeout: must be between 1 and 86400" \
           in result.stdout
    assert result.stdout.splitlines()[-1] == "INVALID"
    document = json.loads(run("validate", "--output", "json").stdout)
    assert document["ok"] is False
    assert [(p["line"], p["column"]) for p in document["manifest"]["problems"]] == \
        [(20, 7), (21, 7)]


def test_other_commands_report_manifest_errors_on_stderr(run, project: Path) -> None:
    (project / "s.yaml").write_text((project / "s.yaml").read_text().replace(
        "memorySize: 512", "memorySize: 500", 1))
    result = run("package")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "Error: s.yaml:20:7: resources.start_job.props.memorySize: must be a multiple of 64" \
        in result.stderr
    assert result.stdout == "" and "Traceback" not in result.stderr


def test_validate_flow_errors_and_cross_references(run, project: Path) -> None:
    template = project / "templates" / "flow.yaml.j2"
    text = template.read_text().replace("{{ get_job_status_function }}", "GetJobStatsu")
    text = text.replace("Seconds: {{ wait_seconds | default(10) }}", "Seconds: 0")
    template.write_text(text)
    result = run("validate", "--account-id", ACCOUNT)
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "warning PRJ002: States[3](GetJobStatus).Parameters.resourceArn: invokes function " \
           "'GetJobStatsu', which s.yaml does not define in cn-hangzhou" in result.stdout
    assert "templates/flow.yaml.j2:44:20: warning PRJ002" in result.stdout
    assert "[rendered .deploy/rendered/MyWorkFlow.yaml:32:20]" in result.stdout
    assert "templates/flow.yaml.j2:36:14: error FDL402" in result.stdout


def test_validate_region_mismatch_is_an_error(run, project: Path) -> None:
    template = project / "templates" / "flow.yaml.j2"
    template.write_text(template.read_text().replace(
        "acs:fc:{{ region }}:{{ account_id }}:functions/{{ start_job_function }}",
        "acs:fc:cn-beijing:{{ account_id }}:functions/{{ start_job_function }}"))
    document = json.loads(run("validate", "--output", "json").stdout)
    (diag,) = document["flows"][0]["diagnostics"]
    # on the template line the user edits, the rendered position as secondary information
    assert (diag["code"], diag["severity"], diag["source"], diag["line"], diag["column"]) == \
        ("PRJ003", "error", "templates/flow.yaml.j2", 24, 20)
    assert diag["rendered"] == {"source": ".deploy/rendered/MyWorkFlow.yaml", "line": 12,
                                "column": 20}
    assert diag["path"] == "States[0](StartJob).Parameters.resourceArn"


def test_validate_undefined_template_variable(run, project: Path) -> None:
    s_yaml = project / "s.yaml"
    s_yaml.write_text(s_yaml.read_text().replace("        max_polls: 3\n", "")
                      .replace("start_job_function:", "start_function:"))
    result = run("validate")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "templates/flow.yaml.j2:24:1: error PRJ001: template variable 'start_job_function' " \
           "is undefined" in result.stdout


def test_package_twice_is_identical(run, project: Path) -> None:
    first = run("package", "--output", "json")
    assert first.exit_code == 0, first.stderr
    assert "Packaging StartJob" in first.stderr
    report = json.loads(first.stdout)
    zips = {p["function_name"]: Path(p["zip_path"]) for p in report["packages"]}
    assert zips == {"StartJob": project / ".deploy/build/StartJob.zip",
                    "GetJobStatus": project / ".deploy/build/GetJobStatus.zip"}
    before = {name: path.read_bytes() for name, path in zips.items()}
    second = run("package", "--out", "other")
    assert second.exit_code == 0
    for name, data in before.items():
        assert (project / "other" / f"{name}.zip").read_bytes() == data
    crc = report["packages"][0]["crc64"]
    assert f"crc64  {crc}" in second.stdout


@pytest.mark.parametrize("command", ["render", "validate", "package"])
def test_help_has_examples(run, command: str) -> None:
    result = run(command, "--help")
    assert result.exit_code == 0 and "Examples:" in result.stdout
