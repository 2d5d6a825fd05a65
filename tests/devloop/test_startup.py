"""Start-up: what a new `deploy` process imports, the skip of unchanged flows' rendering and
validation, shell completion and --version."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from deployer import __version__
from deployer.cli.main import cli
from deployer.core.validated import ValidatedFlows
from deployer.testing import mock_cloud
from tests.devloop.support import free_port

REPORT = ("import sys, json; from deployer.cli.main import cli\n"
          "try:\n    cli.main(sys.argv[1:], prog_name='deploy')\n"
          "except SystemExit as exc:\n    code = exc.code\n"
          "mods = [m for m in ('rich', 'jinja2', 'deployer.fdl', 'deployer.core.validation',\n"
          "        'alibabacloud_tea_openapi', 'alibabacloud_sts20150401', 'pathspec',\n"
          "        'deployer.emulator.api') if m in sys.modules]\n"
          "print(json.dumps({'code': code, 'imported': mods}), file=sys.stderr)\n")


def _new_process(*args: str, env: dict[str, str] | None = None) -> tuple[dict, str]:
    proc = subprocess.run([sys.executable, "-c", REPORT, *args], capture_output=True,
                          text=True, env=env or dict(os.environ), timeout=120)
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    return report, proc.stdout


def test_help_imports_only_click_and_the_root_group():
    report, stdout = _new_process("--help")
    assert report["code"] == 0 and "Commands:" in stdout
    assert report["imported"] == []  # no rich, no SDK, no flow language


@pytest.mark.slow
def test_a_no_op_up_skips_rendering_and_validation_then_a_broken_edit_is_caught(app):
    env = {**os.environ, "DEPLOY_EMULATOR_PORT": str(free_port())}
    args = ("-C", str(app), "up", "--yes", "--output", "json")
    first, first_out = _new_process(*args, env=env)
    noop, noop_out = _new_process(*args, env=env)
    template = app / "templates" / "flow.yaml.j2"
    template.write_text(template.read_text().replace("Next: Wait\n", "Next: Waitt\n", 1))
    broken, _ = _new_process(*args, env=env)
    assert first["code"] == 0 and json.loads(first_out)["write_calls"] == 6
    assert "deployer.fdl" in first["imported"]  # validated the first time
    assert noop["code"] == 0 and json.loads(noop_out)["write_calls"] == 0
    assert "alibabacloud_tea_openapi" in noop["imported"]  # it did talk to the emulator
    skipped = {"jinja2", "deployer.fdl", "deployer.core.validation", "alibabacloud_sts20150401"}
    assert skipped.isdisjoint(noop["imported"])  # no rendering, validation or STS call
    # JSON needs no Rich, packaging without .fcignore no pattern engine, asking the local
    # emulator whether it runs no emulator API module
    assert {"rich", "pathspec", "deployer.emulator.api"}.isdisjoint(noop["imported"])
    assert broken["code"] == 3 and "deployer.fdl" in broken["imported"]


def test_the_validation_record_is_keyed_by_every_input(app):
    from deployer.config.manifest import load_manifest

    spec = load_manifest(app / "s.yaml").flows[0]
    source = spec.definition.read_text()
    key = ValidatedFlows.key(spec, source, region="cn-hangzhou", account_id="1")
    import dataclasses

    other_vars = dataclasses.replace(spec, definition_vars={**spec.definition_vars,
                                                            "wait_seconds": 5})
    assert key == ValidatedFlows.key(spec, source, region="cn-hangzhou", account_id="1")
    assert len({key,
                ValidatedFlows.key(spec, source, region="cn-shanghai", account_id="1"),
                ValidatedFlows.key(spec, source, region="cn-hangzhou", account_id="2"),
                ValidatedFlows.key(spec, source + "\n", region="cn-hangzhou", account_id="1"),
                ValidatedFlows.key(other_vars, source, region="cn-hangzhou", account_id="1"),
                }) == 5


def test_a_damaged_validation_record_only_costs_a_validation(app):
    with mock_cloud() as cloud:
        first = cloud.deploy_project(app)
        record = cloud.workspace(app) / "rendered" / "validated.json"
        verdicts = json.loads(record.read_text())["flows"]
        record.write_text("{not json")
        again = cloud.deploy_project(app)
        rewritten = json.loads(record.read_text())
    assert first.write_calls == 6 and again.write_calls == 0
    # one clean verdict per check: before connecting (placeholder account) and for the account
    assert len(verdicts) == 2 and rewritten["flows"] == verdicts


def test_version_and_completion():
    version = CliRunner().invoke(cli, ["--version"])
    assert version.exit_code == 0 and version.stdout.strip() == f"deploy, version {__version__}"
    script = CliRunner().invoke(cli, ["completion", "bash"])
    assert script.exit_code == 0 and "_DEPLOY_COMPLETE=bash_complete" in script.stdout
    fish = CliRunner().invoke(cli, ["completion", "fish"])
    assert "complete --no-files --command deploy" in fish.stdout
    bad = CliRunner().invoke(cli, ["completion"], env={"SHELL": "/bin/tcsh"})
    assert bad.exit_code == 2 and "name it: deploy completion bash" in bad.stderr


@pytest.mark.parametrize(("words", "expected"), [
    ("deploy d", {"dev", "down"}),
    ("deploy up --target ", {"local", "aliyun"}),
    ("deploy init --template ", {"seed", "blank"}),
    ("deploy emulator st", {"start", "status", "stop"}),
])
def test_the_shell_asks_deploy_for_completions(words, expected):
    env = {**os.environ, "_DEPLOY_COMPLETE": "bash_complete", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split(" ")) - 1)}
    proc = subprocess.run([sys.executable, "-c", "from deployer.cli.main import main; main()"],
                          capture_output=True, text=True, env=env, timeout=60)
    offered = {line.split(",", 1)[1] for line in proc.stdout.splitlines() if "," in line}
    assert offered == expected, proc.stdout + proc.stderr
