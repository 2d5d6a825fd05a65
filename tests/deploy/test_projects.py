"""Projects as people write them, deployed on the in-process emulator: shared roles, roles
that name exactly what their flows invoke, `auto` roles and logs, default roles, other
components, actions, ownership between projects, safe deletions, the `Next:` line."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from deployer.cli.main import cli
from deployer.testing import mock_cloud

HANDLER = "def handler(event, context):\n    return {'ok': True, 'echo': event.decode()}\n"


def flow_text(*functions: str, reads: str = "") -> str:
    states = []
    for index, name in enumerate(functions):
        nxt = "End: true" if index == len(functions) - 1 else f"Next: S{index + 1}"
        states.append(f"""\
  - Type: Task
    Name: S{index}
    Action: FC:InvokeFunction
    TaskMode: RequestComplete
    Parameters:
      invocationType: Sync
      resourceArn: acs:fc:::functions/{name}/LATEST
      body:
        value.$: $Input.{reads or 'x'}
    {nxt}""")
    return "Type: StateMachine\nName: ${this.props.name}\nSpecVersion: v1\nStartAt: S0\n" \
           "States:\n" + "\n".join(states) + "\n"


def make_project(root: Path, name: str, resources: str, *, functions: tuple[str, ...] = ("a",),
                 flows: dict[str, str] | None = None, extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for fn in functions:
        (root / "code" / fn).mkdir(parents=True, exist_ok=True)
        (root / "code" / fn / "index.py").write_text(HANDLER)
    for file, text in (flows or {}).items():
        (root / file).write_text(text)
    (root / "s.yaml").write_text(f"edition: 3.0.0\nname: {name}\n{extra}resources:\n" +
                                 resources)
    return root


def fn(key: str, name: str, extra: str = "") -> str:
    return f"""\
  {key}:
    component: fc3
    props:
      region: cn-hangzhou
      functionName: {name}
      runtime: python3.10
      code: ./code/{key}
      handler: index.handler
""" + textwrap.indent(textwrap.dedent(extra), "      ")


def flow(key: str, name: str, file: str, extra: str = "") -> str:
    return f"""\
  {key}:
    component: flow
    props:
      region: cn-hangzhou
      name: {name}
      definition: ${{yaml(file('{file}'))}}
""" + textwrap.indent(textwrap.dedent(extra), "      ")


def run(project: Path, *args: str, target: str = "local", code: int | None = 0,
        input: str | None = None) -> Result:
    result = CliRunner().invoke(cli, ["-C", str(project), *args, "--target", target],
                                catch_exceptions=False, input=input)
    if code is not None:
        assert result.exit_code == code, (result.exit_code, result.stderr)
    return result


def out(project: Path, *args: str, code: int = 0) -> Any:
    return json.loads(run(project, *args, "--output", "json", code=code).stdout)


def policy(cloud: Any, name: str) -> list[str]:
    from alibabacloud_ram20150501 import models

    body = cloud.ram_client().get_policy(models.GetPolicyRequest(
        policy_name=name, policy_type="Custom")).body
    document = json.loads(body.default_policy_version.policy_document)
    return list(document["Statement"][0]["Resource"])


# --- roles -------------------------------------------------------------------------------------


def test_two_flows_share_one_role_created_once_with_what_both_invoke(tmp_path: Path) -> None:
    resources = fn("a", "fa") + fn("b", "fb") + fn("c", "fc") + \
        flow("one", "one", "one.yaml", "role: ${vars.flowRole}\n") + \
        flow("two", "two", "two.yaml", "role: ${vars.flowRole}\n")
    project = make_project(tmp_path / "p", "shared", resources, functions=("a", "b", "c"),
                           flows={"one.yaml": flow_text("fa"), "two.yaml": flow_text("fb")},
                           extra="vars:\n  flowRole: shared-flow-role\n")
    with mock_cloud() as cloud:
        up = out(project, "up", "--yes")
        roles = [r for r in up["resources"] if r["type"] == "role"]
        assert [r["action"] for r in roles] == ["create"]  # once, not once per flow
        arn = f"acs:fc:cn-hangzhou:{cloud.account_id}:functions"
        assert sorted(policy(cloud, "shared-flow-role-invoke")) == sorted([
            f"{arn}/fa", f"{arn}/fa/LATEST", f"{arn}/fb", f"{arn}/fb/LATEST"])  # not fc
        # the second flow goes away: the role stays for the first, its policy shrinks
        text = (project / "s.yaml").read_text()
        (project / "s.yaml").write_text(text[:text.index("  two:")])
        pruned = out(project, "up", "--yes")
        kinds = {(r["type"], r["name"]): r.get("outcome") or r["action"]
                 for r in pruned["resources"]}
        assert kinds[("flow", "two")] == "deleted"
        assert ("role", "shared-flow-role") in kinds and kinds[("role", "shared-flow-role")] \
            != "deleted"
        assert sorted(policy(cloud, "shared-flow-role-invoke")) == [f"{arn}/fa",
                                                                    f"{arn}/fa/LATEST"]
        again = out(project, "up", "--yes")
    assert again["write_calls"] == 0


def test_role_auto_and_log_config_auto_create_what_fc3_creates(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", "autos", fn("a", "fa", "role: auto\nlogConfig: auto\n"))
    with mock_cloud() as cloud:
        first = out(project, "up", "--yes")
        second = out(project, "up", "--yes")
        invoked = run(project, "invoke", "fa", "--event", '{"hi": 1}', "--output", "json")
        logs = out(project, "logs", "fa")
        from alibabacloud_fc20230330 import models
        config = cloud.fc_client().get_function("fa", models.GetFunctionRequest()).body
    types = [(r["type"], r["action"]) for r in first["resources"]]
    assert types[:3] == [("service-role", "create"), ("logstore", "create"),
                         ("function", "create")]
    assert second["write_calls"] == 0
    assert config.role == f"acs:ram::{cloud.account_id}:role/aliyunfcdefaultrole"
    assert config.log_config.logstore == "default-logs"
    assert config.log_config.project.startswith("serverless-cn-hangzhou-")
    assert json.loads(invoked.stdout)["response"]["ok"] is True
    assert logs["invocations"] and logs["invocations"][0]["status"] == "Succeeded"


def test_a_missing_role_fails_before_any_write_and_says_how_to_create_it(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", "roles", fn(
        "a", "fa", "role: acs:ram::${config('AccountID')}:role/aliyunfcdefaultrole\n"))
    with mock_cloud() as cloud:
        refused = run(project, "up", "--yes", code=1)
        validate = run(project, "validate", code=3)
        from alibabacloud_fc20230330 import models
        functions = cloud.fc_client().list_functions(models.ListFunctionsRequest()).body
        made = out(project, "roles", "init")
        up = run(project, "up", "--yes")
    assert "role aliyunfcdefaultrole does not exist in account" in refused.stderr
    assert "deploy roles init aliyunfcdefaultrole" in refused.stderr
    assert "role aliyunfcdefaultrole does not exist" in validate.stdout  # validate says it too
    assert not functions.functions
    assert made["roles"][0]["outcome"] == "created"
    assert "created" in up.stdout


# --- what s.yaml holds but this toolkit does not deploy -----------------------------------------

OTHERS = """\
  db:
    component: rds
    props:
      engine: PostgreSQL
""" + fn("a", "fa", """\
    environmentVariables:
      DB_HOST: ${resources.db.output.host}
    """) + fn("b", "fb", "gpuConfig: {gpuType: fc.gpu.tesla.1}\n")


def test_other_components_are_listed_and_their_outputs_come_from_values(tmp_path: Path) -> None:
    project = make_project(tmp_path / "p", "others", OTHERS, functions=("a", "b"))
    (project / "values.yaml").write_text("resources:\n  db:\n    output:\n      host: 10.1.1.1\n")
    with mock_cloud() as cloud:
        missing = run(project, "plan", code=3)
        plan = json.loads(CliRunner().invoke(cli, ["-C", str(project), "--values", "values.yaml",
                                                   "plan", "--output", "json"]).stdout)
        strict = CliRunner().invoke(cli, ["-C", str(project), "--values", "values.yaml", "up",
                                          "--strict", "--yes"])
        up = CliRunner().invoke(cli, ["-C", str(project), "--var",
                                      "resources.db.output.host=10.2.2.2", "up", "--yes"])
        from alibabacloud_fc20230330 import models
        env = cloud.fc_client().get_function("fa", models.GetFunctionRequest()).body \
            .environment_variables
    assert "${resources.db.output.host} needs a value" in missing.stderr
    assert "--values FILE" in missing.stderr
    listed = {u["resource"]: u["reasons"] for u in plan["not_deployed"]}
    assert listed == {"db": ["component rds is not deployed by this toolkit (it deploys fc3, "
                             "fnf and flow)"], "b": [
                          "not deployed by this toolkit: gpuConfig (GPU functions run container "
                          "images, which this toolkit does not deploy)"]}
    assert [r["name"] for r in plan["resources"]] == ["fa"]
    assert strict.exit_code == 3 and "--strict: db is not deployed" in strict.stderr
    assert up.exit_code == 0, up.stderr
    assert "Not deployed by this toolkit (2):" in up.stdout and "! b (fc3)" in up.stdout
    assert env == {"DB_HOST": "10.2.2.2"}


# --- actions ----------------------------------------------------------------------------------


def test_actions_run_around_the_deploy_in_order(tmp_path: Path) -> None:
    log = tmp_path / "order.txt"
    resources = fn("a", "fa") + f"""\
    actions:
      pre-deploy:
        - run: echo pre-a >> {log} && echo 'generated = 1' > gen.py
          path: ./code/a
      success-deploy:
        - run: echo success-a ${{this.output.functionArn}} >> {log}
      complete-deploy:
        - run: echo complete-a >> {log}
"""
    extra = (f"actions:\n  pre-deploy:\n    - run: echo pre-global >> {log}\n"
             f"  success-deploy:\n    - run: echo success-global >> {log}\n")
    project = make_project(tmp_path / "p", "acts", resources, extra=extra)
    with mock_cloud() as cloud:
        up = run(project, "up", "--yes")
        from alibabacloud_fc20230330 import models
        invoked = cloud.fc_client().get_function("fa", models.GetFunctionRequest()).body
    lines = log.read_text().split("\n")
    assert lines[:3] == ["pre-global", "pre-a",
                         f"success-a acs:fc:cn-hangzhou:{invoked.function_arn.split(':')[3]}"
                         ":functions/fa"]
    assert lines[3:5] == ["complete-a", "success-global"]
    assert "running `echo pre-global" in up.stderr  # streamed, with the step
    assert (project / "code" / "a" / "gen.py").exists()  # pre ran before packaging


def test_a_failing_pre_deploy_step_stops_the_deploy(tmp_path: Path) -> None:
    log = tmp_path / "fail.txt"
    resources = fn("a", "fa") + f"""\
    actions:
      pre-deploy:
        - run: echo about to fail; exit 7
      fail-deploy:
        - run: echo fail-a >> {log}
"""
    extra = f"actions:\n  fail-deploy:\n    - run: echo fail-global >> {log}\n"
    project = make_project(tmp_path / "p", "failing", resources, extra=extra)
    with mock_cloud() as cloud:
        result = run(project, "up", "--yes", code=1)
        from alibabacloud_fc20230330 import models
        listed = cloud.fc_client().list_functions(models.ListFunctionsRequest()).body.functions
    assert "pre-deploy action of resource a (s.yaml:" in result.stderr
    assert "`echo about to fail; exit 7` exited with 7" in result.stderr
    assert "  | about to fail" in result.stderr
    assert log.read_text() == "fail-global\n"  # the deploy never reached resource a
    assert not listed


# --- safe plans and ownership -----------------------------------------------------------------


def test_deleting_a_function_a_flow_still_invokes_needs_force(tmp_path: Path) -> None:
    resources = fn("a", "fa") + fn("b", "fb") + flow("f", "f", "f.yaml", "role: f-role\n")
    project = make_project(tmp_path / "p", "safe", resources, functions=("a", "b"),
                           flows={"f.yaml": flow_text("fa", "fb")})
    with mock_cloud():
        run(project, "up", "--yes")
        text = (project / "s.yaml").read_text()
        start, end = text.index("  b:"), text.index("  f:")
        (project / "s.yaml").write_text(text[:start] + text[end:])
        plan = out(project, "plan")
        refused = run(project, "up", "--yes", code=1)
        kept = out(project, "up")  # not confirmed: kept like any deletion
        forced = out(project, "up", "--yes", "--force")
    deletion = next(r for r in plan["resources"] if r["action"] == "delete")
    assert deletion["name"] == "fb" and deletion["invoked_by"] == ["f"]
    assert "still invoked by flow f" in deletion["changes"]
    assert "refusing to delete functions a flow still invokes: fb (invoked by flow f)" in \
        refused.stderr
    assert [r["name"] for r in kept["kept"]] == ["fb"]
    assert any(r["name"] == "fb" and r["outcome"] == "deleted" for r in forced["resources"])


def test_a_project_does_not_take_over_another_projects_resources(tmp_path: Path) -> None:
    resources = fn("a", "shared-fn") + flow("f", "shared-flow", "f.yaml", "role: shared-role\n")
    first = make_project(tmp_path / "first", "first", resources,
                         flows={"f.yaml": flow_text("shared-fn")})
    second = make_project(tmp_path / "second", "second", resources,
                          flows={"f.yaml": flow_text("shared-fn")})
    (second / "code" / "a" / "index.py").write_text(HANDLER + "# the second project's\n")
    with mock_cloud():
        run(first, "up", "--yes")
        refused = run(second, "up", "--yes", code=1)
        plan = out(second, "plan")
        taken = out(second, "up", "--yes", "--force")
        again = out(second, "up", "--yes")  # taken over: no second confirmation
        down_second = out(second, "down", "--yes")
        down_first = out(first, "down", "--yes")
    assert "belong to another project: function shared-fn (project first)" in refused.stderr
    assert "pass --force to take them over" in refused.stderr
    assert {r["name"]: r["owner"] for r in plan["resources"] if r["owner"]} == {
        "shared-fn": "first", "shared-role": "first", "shared-flow": "first"}
    assert taken["changed"] and again["write_calls"] == 0
    assert all(r["outcome"].startswith("kept: taken over from project first")
               for r in down_second["resources"])
    assert {r["outcome"] for r in down_first["resources"]} == {"deleted"}


# --- a general tool ---------------------------------------------------------------------------


def test_next_is_derived_from_the_project(tmp_path: Path) -> None:
    reads = flow_text("fa").replace("value.$: $Input.x",
                                    "order.$: $Input.order\n        items.$: $Input.items")
    project = make_project(tmp_path / "p", "orders", fn("a", "fa") + flow(
        "f", "orders", "f.yaml", "role: orders-role\n"), flows={"f.yaml": reads})
    with mock_cloud():
        up = run(project, "up", "--yes")
        started = out(project, "execute", "--input", '{"order": "A-1", "items": [1, 2]}')
    assert "Next: deploy execute --input '{\"order\": ..., \"items\": ...}'" in up.stdout
    assert "--delay" not in up.stdout
    assert started["status"] == "Succeeded"


def test_the_scenario_keeps_delay_30_and_execute_uses_execution_input(deploy) -> None:
    with mock_cloud() as cloud:
        up = deploy("up", "--yes", target="local")
        started = json.loads(deploy("execute", "--no-wait", "--output", "json",
                                    target="local").stdout)
        cloud.wait_for_execution("MyWorkFlow", started["name"])
    assert "Next: deploy execute --delay 30" in up.stdout
    assert started["input"] == {"delay": 30}


def test_an_account_exported_from_another_emulator_is_refused(deploy, monkeypatch) -> None:
    monkeypatch.setenv("ALIBABA_CLOUD_ACCOUNT_ID", "1111222233334444")
    with mock_cloud() as cloud:
        result = deploy("up", "--yes", target="local")
        from alibabacloud_fc20230330 import models
        listed = cloud.fc_client().list_functions(models.ListFunctionsRequest()).body.functions
    assert result.exit_code == 3
    assert "ALIBABA_CLOUD_ACCOUNT_ID is 1111222233334444, but this project's emulator is " \
           f"account {cloud.account_id}" in result.stderr
    assert "unset ALIBABA_CLOUD_ACCOUNT_ID" in result.stderr
    assert not listed


@pytest.mark.parametrize("key", ["endpoint"])
def test_endpoint_is_refused_with_a_hint_that_exists(tmp_path: Path, key: str) -> None:
    project = make_project(tmp_path / "p", "ep", fn("a", "fa", f"{key}: http://x\n"))
    result = run(project, "validate", code=3)
    assert "endpoints come from --target" in result.stdout
    assert "--endpoint" not in result.stdout


def test_ctrl_c_during_up_says_what_was_happening_and_how_to_finish(deploy, monkeypatch) -> None:
    from deployer.cloud import cloudflow

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cloudflow.CloudFlowClient, "create_flow", interrupted)
    with mock_cloud():
        result = deploy("up", "--yes", target="local")
    assert result.exit_code == 130
    assert "Error: interrupted while creating flow MyWorkFlow; what was created so far is " \
           "recorded in" in result.stderr
    assert "Hint: run `deploy up` again: it plans from what is deployed" in result.stderr
    assert "Traceback" not in result.stderr
