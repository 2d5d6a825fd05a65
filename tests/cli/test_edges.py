"""Small edges: bad environment values, -y for every --yes, alias bombs, flow test hints, and
the --step-latency boundary the docs state."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.errors import ExitCode
from deployer.testing import mock_cloud


def _run(project: Path, *args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(cli, ["-C", str(project), *args], env=env)


@pytest.mark.parametrize("value", ["abc", "99999", "-1", "0", "9125x",
                                   "\u00b2", "\u0669\u0661\u0662\u0665"])
def test_a_bad_emulator_port_is_a_clear_usage_error(project: Path, value: str) -> None:
    result = _run(project, "plan", "--target", "local", env={"DEPLOY_EMULATOR_PORT": value})
    assert result.exit_code == ExitCode.USAGE
    assert f"Error: DEPLOY_EMULATOR_PORT='{value}' is not a TCP port" in result.stderr
    assert "Hint: set it to a number from 1 to 65535 (default 9125), or unset it" in \
        result.stderr
    assert "bug" not in result.stderr and result.stdout == ""
    assert not (project / ".deploy" / "emulator").exists()  # nothing was started


def _all_commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(cli)
    found: list[tuple[str, click.Command]] = []

    def walk(group: click.Group, prefix: str) -> None:
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            if command is None:
                continue
            found.append((f"{prefix}{name}", command))
            if isinstance(command, click.Group):
                walk(command, f"{prefix}{name} ")

    walk(cli, "")
    return found


def test_every_yes_option_also_answers_to_y() -> None:
    with_yes = {name: next(p for p in cmd.params if "--yes" in getattr(p, "opts", ()))
                for name, cmd in _all_commands()
                if any("--yes" in getattr(p, "opts", ()) for p in cmd.params)}
    assert {"up", "down", "emulator reset"} <= set(with_yes)
    assert {name: "-y" in option.opts for name, option in with_yes.items()} == \
        dict.fromkeys(with_yes, True)


@pytest.mark.timeout(20)
def test_a_yaml_alias_bomb_is_refused_at_once(project: Path) -> None:
    lines = ["edition: 3.0.0", "name: bomb", "vars:",
             '  a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"  a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    (project / "s.yaml").write_text("\n".join(lines) + "\nresources: {}\n")
    for command in ("validate", "up", "render"):
        result = _run(project, command)
        assert result.exit_code == ExitCode.INVALID_INPUT, command
        output = result.stdout + result.stderr
        assert "s.yaml:3:1: vars: expands its YAML aliases to more than 100,000 values" in output


def test_flow_test_without_mocks_says_how_to_give_them(project: Path) -> None:
    result = _run(project, "flow", "test", "templates/flow.yaml.j2")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "no mocked response for state 'StartJob'" in result.stderr
    assert "Hint: pass --mocks FILE whose test case maps 'StartJob' to a mocked response" in \
        result.stderr
    assert "(no --mocks)" not in result.stderr


def test_flow_test_with_mocks_lacking_a_state_names_case_and_file(project: Path) -> None:
    (project / "mocks.yaml").write_text(
        "TestCases:\n  Only: {StartJob: Started}\n"
        "MockedResponses:\n  Started: {\"0\": {Return: {Body: {job_id: j}}}}\n")
    result = _run(project, "flow", "test", "templates/flow.yaml.j2", "--mocks", "mocks.yaml")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "Hint: map 'GetJobStatus' to a mocked response in test case 'Only' of " in \
        result.stderr


@pytest.mark.parametrize(("latency", "status"), [(0.0, "Failed"), (0.12, "Failed"),
                                                 (0.125, "Succeeded"), (0.3, "Succeeded")])
def test_step_latency_boundary_of_delay_30_on_the_virtual_clock(project: Path, latency: float,
                                                                status: str) -> None:
    """docs/deploy.md: on the virtual clock (exact, deterministic) `--delay 30` succeeds on a
    fresh instance from --step-latency 0.125 on; 0.12 and below fail at poll 4."""
    import json

    with mock_cloud(step_latency=latency):
        assert _run(project, "up", "--target", "aliyun").exit_code == 0
        result = _run(project, "execute", "--delay", "30", "--target", "aliyun", "--output",
                      "json")
    doc = json.loads(result.stdout)
    assert doc["status"] == status
    assert doc["states"].count("GetJobStatus") == 4
