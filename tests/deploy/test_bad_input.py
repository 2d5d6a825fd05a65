"""Adversarial input to every command: a clear, specific error with the documented exit code,
never a traceback, and with ``--output json`` nothing on stdout (errors go to stderr only)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.testing import mock_cloud


def _files(project: Path) -> None:
    (project / "bin.json").write_bytes(b'{"delay":\n  \xff\xfe}')
    (project / "empty.json").write_text("  \n")
    (project / "bad.json").write_text('{\n  "delay": 20,\n}\n')
    (project / "array.json").write_text("[1, 2]")
    (project / "adir").mkdir()


def _clean(result, code: int) -> str:
    assert result.exit_code == code, (result.exit_code, result.stderr)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr and "bug" not in result.stderr
    return result.stderr


ARGUMENTS = [
    ("@bin.json", "bin.json:2:3: not UTF-8 text (byte 0xff)"),
    ("@empty.json", "empty.json is empty"),
    ("@bad.json", "bad.json:3:1: invalid JSON"),
    ("@adir", "adir is a directory, not a file"),
    ("@missing.json", "missing.json does not exist"),
    ("@", "no file name after '@'"),
    ("{oops", "--input:1:2: invalid JSON"),
]


@pytest.mark.parametrize(("value", "message"), ARGUMENTS)
def test_execute_input_argument(deploy, project, value, message):
    _files(project)
    err = _clean(deploy("execute", "--input", value, "--output", "json"), 3)
    assert message in err


@pytest.mark.parametrize(("value", "message"), ARGUMENTS)
def test_invoke_event_argument(deploy, project, value, message):
    _files(project)
    err = _clean(deploy("invoke", "StartJob", "--event", value, "--output", "json"), 3)
    assert message.replace("--input", "--event") in err


@pytest.mark.parametrize(("value", "message"), ARGUMENTS[:4])
def test_flow_test_input_argument(project, value, message):
    _files(project)
    result = CliRunner().invoke(cli, ["-C", str(project), "flow", "test", "templates/flow.yaml.j2",
                                      "--input", value, "--output", "json"])
    assert message in _clean(result, 3)


def test_execute_input_must_be_an_object(deploy, project):
    _files(project)
    err = _clean(deploy("execute", "--input", "@array.json"), 3)
    assert "array.json: the execution input must be a JSON object, not an array" in err


@pytest.mark.parametrize("delay", ["-1", "abc"])
def test_execute_rejects_a_bad_delay(deploy, delay):
    result = deploy("execute", "--delay", delay, "--output", "json")
    assert result.exit_code == 2 and result.stdout == ""
    assert "Invalid value for '--delay'" in result.stderr


def test_project_dir_that_does_not_exist_is_a_usage_error(tmp_path):
    result = CliRunner().invoke(cli, ["-C", str(tmp_path / "nope"), "validate"])
    assert result.exit_code == 2
    assert "does not exist" in result.stderr


def test_non_utf8_manifest_names_the_line(deploy, project):
    manifest = project / "s.yaml"
    manifest.write_bytes(manifest.read_bytes() + b"# caf\xe9\n")
    line = manifest.read_bytes().count(b"\n")
    err = _clean(deploy("plan", "--output", "json"), 3)
    assert f"s.yaml:{line}:6: not UTF-8 text (byte 0xe9)" in err


def test_template_errors_point_at_the_template_line(project):
    template = project / "templates" / "flow.yaml.j2"
    lines = template.read_text().splitlines(keepends=True)
    number = next(i for i, text in enumerate(lines, 1) if "{{ start_job_function }}" in text)
    lines[number - 1] = lines[number - 1].replace("{{ start_job_function }}",
                                                  "{{ start_job_function }")
    template.write_text("".join(lines))
    result = CliRunner().invoke(cli, ["-C", str(project), "validate", "--output", "json"])
    assert result.exit_code == 3
    [diagnostic] = json.loads(result.stdout)["flows"][0]["diagnostics"]
    assert (diagnostic["source"], diagnostic["line"], diagnostic["column"]) == \
        ("templates/flow.yaml.j2", number, 1)
    assert diagnostic["message"] == "template syntax error: unexpected '}'"


def test_unknown_names_exit_4_with_a_hint(deploy):
    with mock_cloud():
        assert deploy.json("up")["changed"]
        cases = {
            ("execute", "--flow", "Nope", "--no-wait"): "flow Nope does not exist",
            ("status", "--flow", "Nope"): "flow Nope does not exist",
            ("status", "no-such-run"): "execution no-such-run of flow MyWorkFlow does not exist",
            ("history", "no-such-run"): "execution no-such-run of flow MyWorkFlow does not exist",
            ("history", "x", "--flow", "Nope"): "flow Nope does not exist",
            ("status",): "flow MyWorkFlow has no executions",
            ("logs", "Nope"): "function Nope does not exist",
            ("invoke", "Nope"): "function Nope does not exist",
        }
        results = {args: deploy(*args, "--output", "json") for args in cases}
    for args, message in cases.items():
        err = _clean(results[args], 4)
        assert f"Error: {message}" in err, args
        assert "Hint: " in err, args


def test_down_twice_and_a_stale_record(deploy):
    with mock_cloud() as cloud:
        deploy.json("up")
        cloud.reset()  # the record now points at resources that no longer exist
        first = deploy.json("down", "--yes")
        second = deploy.json("down", "--yes")
    assert {r["outcome"] for r in first["resources"]} == {"already gone"}
    assert second["resources"] == [] and second["write_calls"] == 0


def test_a_huge_input_is_the_clouds_error_not_a_traceback(deploy):
    huge = json.dumps({"delay": 1, "pad": "x" * 70_000})
    with mock_cloud():
        deploy.json("up")
        result = deploy("execute", "--input", huge, "--output", "json")
    assert result.exit_code == 1, result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert "EntityTooLarge" in result.stderr and "64 KiB" in result.stderr
    assert len(result.stderr) < 2000  # the input is not echoed


def test_a_second_deploy_in_the_same_project_fails_clearly(deploy, project):
    from deployer.core.locking import project_lock

    with mock_cloud() as cloud, project_lock(cloud.workspace(project), "up"):
        result = deploy("up", "--output", "json")
        recorded = (cloud.workspace(project) / "state").exists()
    err = _clean(result, 1)
    assert "another deploy is running in this project (`deploy up`, pid " in err
    assert not recorded  # nothing was deployed or recorded


COMMANDS = [
    ["up"], ["plan"], ["down"], ["execute"], ["status"], ["history"], ["invoke"], ["logs"],
    ["validate"], ["render"], ["package"], ["flow"], ["flow", "test"], ["emulator"],
    ["emulator", "start"], ["emulator", "status"], ["emulator", "stop"], ["emulator", "reset"],
    ["emulator", "credentials"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_help_has_examples(command):
    result = CliRunner().invoke(cli, [*command, "--help"])
    assert result.exit_code == 0
    examples = result.stdout.split("Examples:", 1)
    assert len(examples) == 2, f"deploy {' '.join(command)} --help has no Examples"
    assert "deploy " in examples[1]
