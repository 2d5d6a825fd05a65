"""The root command: help, version, and how errors become messages and exit codes."""

from __future__ import annotations

import click
from click.testing import CliRunner

from deployer import __version__
from deployer.cli import main as cli_main
from deployer.errors import ExitCode, InvalidInputError


def test_help_lists_commands_and_examples():
    result = CliRunner().invoke(cli_main.cli, ["--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.stdout
    for name in cli_main.COMMANDS:
        assert name in result.stdout


def test_help_summaries_match_the_commands():
    ctx = click.Context(cli_main.cli)
    assert set(cli_main.SUMMARIES) == set(cli_main.COMMANDS)
    for name, summary in cli_main.SUMMARIES.items():
        command = cli_main.cli.get_command(ctx, name)
        assert command is not None
        assert command.get_short_help_str(limit=1000) == summary, name


def test_root_help_imports_no_command_module():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from deployer.cli.main import cli\n"
        "result = CliRunner().invoke(cli, ['--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        "print(sorted(m for m in sys.modules if m.startswith('deployer.cli.commands.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_version():
    result = CliRunner().invoke(cli_main.cli, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.stdout


def test_unknown_command_is_a_usage_error():
    result = CliRunner().invoke(cli_main.cli, ["no-such-command"])
    assert result.exit_code == ExitCode.USAGE


def _register(monkeypatch, name, fn):
    command = click.command(name)(fn)
    monkeypatch.setitem(cli_main.COMMANDS, name, f"{__name__}:{name}_cmd")
    globals()[f"{name}_cmd"] = command


def test_user_error_prints_message_and_hint_without_traceback(monkeypatch):
    def boom():
        raise InvalidInputError("s.yaml:3:1: bad thing", hint="fix the thing")

    _register(monkeypatch, "boom", boom)
    result = CliRunner().invoke(cli_main.cli, ["boom"])
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "Error: s.yaml:3:1: bad thing" in result.stderr
    assert "Hint: fix the thing" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_debug_shows_traceback(monkeypatch):
    def boom():
        raise InvalidInputError("bad")

    _register(monkeypatch, "boom", boom)
    result = CliRunner().invoke(cli_main.cli, ["--debug", "boom"])
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "Traceback" in result.stderr


def test_unexpected_exception_is_reported_as_bug(monkeypatch):
    def crash():
        raise RuntimeError("kaput")

    _register(monkeypatch, "crash", crash)
    result = CliRunner().invoke(cli_main.cli, ["crash"])
    assert result.exit_code == ExitCode.INTERNAL
    assert "bug" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_describes_the_toolkit_not_one_app():
    result = CliRunner().invoke(cli_main.cli, ["--help"])
    assert "Deploy Serverless Devs projects" in result.stdout
    assert "job-polling" not in result.stdout
    assert "--values FILE" in result.stdout and "--var resources.NAME.output.KEY=VALUE" in \
        result.stdout
