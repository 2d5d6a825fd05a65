"""`provisionConfig` in s.yaml: `deploy up` puts it after the function (a `provision-config`
action, the cloud target's code path answered by the emulator's wire), the emulator keeps the
target started with its initializer run, so the first call is warm; a changed target is an
update, and dropping the prop deletes the configuration."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from alibabacloud_fc20230330 import models as fc
from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.testing import mock_cloud

HANDLER = """\
READY = []

def init(context):
    READY.append(1)

def handler(event, context):
    return "warm" if READY else "cold"
"""


def _project(root: Path, extra: str) -> Path:
    (root / "code").mkdir(parents=True, exist_ok=True)
    (root / "code" / "index.py").write_text(HANDLER)
    (root / "s.yaml").write_text(textwrap.dedent("""\
        edition: 3.0.0
        name: warm
        resources:
          quotes:
            component: fc3
            props:
              region: cn-hangzhou
              functionName: quotes
              runtime: python3.10
              code: ./code
              handler: index.handler
              instanceLifecycleConfig: {initializer: {handler: index.init, timeout: 5}}
        """) + "".join(f"      {line}\n" for line in extra.splitlines()))
    return root


def _deploy(root: Path, *args: str) -> Any:
    extra = ["--yes"] if args[0] == "up" else []
    result = CliRunner().invoke(cli, ["-C", str(root), *args, "--target", "aliyun", "--output",
                                      "json", *extra], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr + result.stdout
    return json.loads(result.stdout)


def _actions(out: Any, kind: str) -> list[tuple[str, str]]:
    return [(r["name"], r["action"]) for r in out["resources"] if r["type"] == kind]


def test_provision_config_is_deployed_kept_warm_updated_and_deleted(tmp_path: Path) -> None:
    with mock_cloud(cold_start=1.0) as cloud:
        root = _project(tmp_path, "provisionConfig: {defaultTarget: 1}")
        first = _deploy(root, "up")
        client = cloud.fc_client()
        got = client.get_provision_config("quotes", fc.GetProvisionConfigRequest()).body
        answer = client.invoke_function("quotes", fc.InvokeFunctionRequest(body=b"{}")).body
        (call,) = [r for r in cloud.invocations("quotes") if r.invocation_type == "Sync"]
        again = _deploy(root, "plan")
        _project(root, "provisionConfig: {defaultTarget: 2, alwaysAllocateCPU: false}")
        changed = _deploy(root, "up")
        bigger = client.get_provision_config("quotes", fc.GetProvisionConfigRequest()).body
        _project(root, "")
        dropped = _deploy(root, "up")
        listed = client.list_provision_configs(
            fc.ListProvisionConfigsRequest()).body.provision_configs
    assert _actions(first, "provision-config") == [("quotes", "create")]
    assert (got.default_target, got.current, got.always_allocate_cpu) == (1, 1, True)
    assert answer.read() == b"warm" and call.cold_start is False
    assert again["changes"] is False
    (update,) = [r for r in changed["resources"] if r["type"] == "provision-config"]
    assert update["action"] == "update" and update["changes"]
    assert (bigger.default_target, bigger.current, bigger.always_allocate_cpu) == (2, 2, False)
    assert _actions(dropped, "provision-config") == [("quotes", "delete")]
    assert listed == []


def test_a_bad_provision_config_is_refused_by_validate_with_its_place(tmp_path: Path) -> None:
    root = _project(tmp_path, "provisionConfig: {defaultTarget: 500, qualifier: 'v 1'}")
    result = CliRunner().invoke(cli, ["-C", str(root), "validate"])
    assert result.exit_code == 3
    assert "provisionConfig.defaultTarget" in result.stderr + result.stdout
    assert "must be between 0 and 100" in result.stderr + result.stdout
    assert "must be LATEST or an alias name" in result.stderr + result.stdout


def test_a_provision_config_for_an_alias_moves_with_its_qualifier(tmp_path: Path) -> None:
    with mock_cloud(cold_start=1.0) as cloud:
        root = _project(tmp_path, "")
        _deploy(root, "up")
        client = cloud.fc_client()
        version = client.publish_function_version("quotes", fc.PublishFunctionVersionRequest(
            body=fc.PublishVersionInput())).body.version_id
        client.create_alias("quotes", fc.CreateAliasRequest(body=fc.CreateAliasInput(
            alias_name="prod", version_id=version)))
        _project(root, "provisionConfig: {defaultTarget: 1, qualifier: prod}")
        on_alias = _deploy(root, "up")
        got = client.get_provision_config("quotes", fc.GetProvisionConfigRequest(
            qualifier="prod")).body
        client.invoke_function("quotes", fc.InvokeFunctionRequest(body=b"{}", qualifier="prod"))
        (call,) = [r for r in cloud.invocations("quotes") if r.invocation_type == "Sync"]
        _project(root, "provisionConfig: {defaultTarget: 1}")
        moved = _deploy(root, "up")
        listed = client.list_provision_configs(fc.ListProvisionConfigsRequest(
            function_name="quotes")).body.provision_configs
    assert _actions(on_alias, "provision-config") == [("quotes/prod", "create")]
    assert got.function_arn.endswith(":functions/quotes/prod") and got.current == 1
    assert call.cold_start is False
    assert sorted(_actions(moved, "provision-config")) == [("quotes", "create"),
                                                           ("quotes/prod", "delete")]
    assert [c.function_arn.rsplit(":", 1)[1] for c in listed] == ["functions/quotes"]
