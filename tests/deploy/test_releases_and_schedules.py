"""`deploy plan` / `deploy up` / `deploy down` with versions, aliases and schedules in s.yaml.

fc3 resources publish versions and move aliases with the component's own
``actions.success-deploy`` steps (``fc3 version publish``, ``fc3 alias publish``); flows use
the ``publishVersion``, ``aliases`` and ``schedules`` props (docs/manifest.md).
"""

from __future__ import annotations

from alibabacloud_fc20230330 import models as fc
from alibabacloud_fnf20190315 import models as fnf

from deployer.testing import mock_cloud

START_JOB_ACTIONS = """\
    actions:
      success-deploy:
        - component: fc3 version publish --description "release"
        - component: >-
            fc3 alias publish --alias-name prod --version-id latest
"""
FLOW_PROPS = """\
      publishVersion:
        description: flow release
      aliases:
        - aliasName: prod
          versionId: latest
      schedules:
        - scheduleName: nightly
          cronExpression: "0 0 2 * * *"
          payload: {source: schedule}
"""


def _with_releases(project) -> None:
    path = project / "s.yaml"
    text = path.read_text()
    text = text.replace("  start_job:\n    component: fc3\n",
                        "  start_job:\n    component: fc3\n" + START_JOB_ACTIONS)
    text = text.replace("      role: ${vars.flowRole}\n", "      role: ${vars.flowRole}\n"
                        + FLOW_PROPS)
    path.write_text(text)


def _actions(doc):
    return {(r["type"], r["name"]): (r["action"], r["changes"]) for r in doc["resources"]}


def test_up_publishes_versions_moves_aliases_and_creates_schedules_once(deploy, project):
    _with_releases(project)
    with mock_cloud() as cloud:
        plan = deploy.json("plan")
        planned = _actions(plan)
        first = deploy.json("up")
        second = deploy.json("up")
        fcc, flows = cloud.fc_client(), cloud.fnf_client()
        alias = fcc.get_alias("StartJob", "prod").body
        flow_alias = flows.describe_flow_alias(fnf.DescribeFlowAliasRequest(
            flow_name="MyWorkFlow", name="prod")).body.alias
        schedule = flows.describe_schedule(fnf.DescribeScheduleRequest(
            flow_name="MyWorkFlow", schedule_name="nightly")).body
    assert planned[("function-version", "StartJob")][0] == "create"
    assert planned[("function-alias", "StartJob:prod")] == ("create", ["-> version (new)"])
    assert planned[("flow-version", "MyWorkFlow")][0] == "create"
    assert planned[("schedule", "MyWorkFlow/nightly")][0] == "create"
    assert first["write_calls"] == 6 + 5
    assert second["write_calls"] == 0
    assert {a for a, _ in _actions(second).values()} == {"no-change"}
    assert alias.version_id == "1"
    assert [(r.version, r.weight) for r in flow_alias.routing_configurations] == [("1", 100)]
    assert schedule.enable is True and schedule.cron_expression == "0 0 2 * * *"
    assert schedule.payload == '{"source":"schedule"}'


def test_changed_code_publishes_a_new_version_and_moves_the_alias(deploy, project):
    _with_releases(project)
    with mock_cloud() as cloud:
        deploy.json("up")
        handler = project / "functions" / "start_job" / "index.py"
        handler.write_text(handler.read_text() + "\n# changed\n")
        plan = _actions(deploy.json("plan"))
        deploy.json("up")
        fcc = cloud.fc_client()
        alias = fcc.get_alias("StartJob", "prod").body
        versions = fcc.list_function_versions("StartJob", fc.ListFunctionVersionsRequest()).body
        by_alias = fcc.invoke_function("StartJob", fc.InvokeFunctionRequest(
            qualifier="prod", body=b"{}"))
    assert plan[("function-version", "StartJob")][0] == "create"
    assert plan[("function-alias", "StartJob:prod")] == ("update", ["version: 1 -> (new)"])
    assert plan[("flow-version", "MyWorkFlow")][0] == "no-change"
    assert alias.version_id == "2"
    assert [v.version_id for v in versions.versions] == ["2", "1"]
    assert by_alias.headers["x-fc-invocation-service-version"] == "2"


def test_schedules_listed_in_s_yaml_are_the_flows_schedules(deploy, project):
    _with_releases(project)
    with mock_cloud() as cloud:
        deploy.json("up")
        flows = cloud.fnf_client()
        flows.create_schedule(fnf.CreateScheduleRequest(
            flow_name="MyWorkFlow", schedule_name="manual", cron_expression="@every 5m",
            enable=True))
        path = project / "s.yaml"
        path.write_text(path.read_text().replace('"0 0 2 * * *"', '"0 30 2 * * *"'))
        plan = _actions(deploy.json("plan"))
        deploy.json("up")
        names = {s.schedule_name: s.cron_expression for s in flows.list_schedules(
            fnf.ListSchedulesRequest(flow_name="MyWorkFlow")).body.schedules}
    assert plan[("schedule", "MyWorkFlow/nightly")] == (
        "update", ["cron: '0 0 2 * * *' -> '0 30 2 * * *'"])
    assert plan[("schedule", "MyWorkFlow/manual")][0] == "delete"
    assert names == {"nightly": "0 30 2 * * *"}


def test_down_removes_aliases_versions_and_schedules_with_their_resources(deploy, project):
    _with_releases(project)
    with mock_cloud() as cloud:
        deploy.json("up")
        down = deploy.json("down")
        deploy.json("up")  # everything can be created again from scratch
        versions = cloud.fc_client().list_function_versions(
            "StartJob", fc.ListFunctionVersionsRequest()).body.versions
    assert {r["outcome"] for r in down["resources"]} == {"deleted"}
    assert [v.version_id for v in versions] == ["1"]
