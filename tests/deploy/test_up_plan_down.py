"""`deploy plan`, `deploy up` (idempotency, partial updates) and `deploy down` on the emulator."""

from __future__ import annotations

import json

from deployer.testing import mock_cloud


def _actions(doc):
    return {(r["type"], r["name"]): r["action"] for r in doc["resources"]}


def test_plan_changes_nothing_and_lists_every_resource(deploy):
    with mock_cloud() as cloud:
        plan = deploy.json("plan")
        functions = cloud.fc_client().list_functions(_list_request()).body.functions
    assert plan["changes"] is True
    assert set(_actions(plan).values()) == {"create"}
    assert len(plan["resources"]) == 5
    assert functions == [] or functions is None


def _list_request():
    from alibabacloud_fc20230330 import models

    return models.ListFunctionsRequest()


def test_second_up_makes_no_write_call(deploy):
    with mock_cloud() as cloud:
        first = deploy.json("up")
        fc, fnf = cloud.fc_client(), cloud.fnf_client()
        before = _modified(fc, fnf)
        cloud.advance(120)  # any write now would carry a later timestamp
        second = deploy.json("up")
        text = deploy("up")
        after = _modified(fc, fnf)
    assert first["write_calls"] == 6 and first["changed"] is True
    assert second["write_calls"] == 0 and second["changed"] is False
    assert set(_actions(second).values()) == {"no-change"}
    assert [r["arn"] for r in second["resources"]] == [r["arn"] for r in first["resources"]]
    assert after == before
    assert "No changes: all 5 resources are up to date (0 write calls)." in text.stdout


def _modified(fc, fnf):
    from alibabacloud_fc20230330 import models as fc_models
    from alibabacloud_fnf20190315 import models as fnf_models

    times = {name: fc.get_function(name, fc_models.GetFunctionRequest()).body.last_modified_time
             for name in ("StartJob", "GetJobStatus")}
    flow = fnf.describe_flow(fnf_models.DescribeFlowRequest(name="MyWorkFlow")).body
    times["MyWorkFlow"] = flow.last_modified_time
    return times


def test_changed_handler_updates_only_that_function(deploy, project):
    with mock_cloud() as cloud:
        deploy.json("up")
        before = _modified(cloud.fc_client(), cloud.fnf_client())
        cloud.advance(120)
        handler = project / "functions" / "get_job_status" / "index.py"
        handler.write_text(handler.read_text() + "\n# tuned\n")
        plan = deploy.json("plan")
        up = deploy.json("up")
        after = _modified(cloud.fc_client(), cloud.fnf_client())
    assert _actions(plan)[("function", "GetJobStatus")] == "update"
    assert up["write_calls"] == 1
    changed = {k for k, v in _actions(up).items() if v != "no-change"}
    assert changed == {("function", "GetJobStatus")}
    assert next(r for r in up["resources"] if r["name"] == "GetJobStatus")["changes"] == ["code"]
    assert after["StartJob"] == before["StartJob"]
    assert after["MyWorkFlow"] == before["MyWorkFlow"]
    assert after["GetJobStatus"] != before["GetJobStatus"]


def test_changed_definition_var_updates_the_flow_only(deploy, project):
    manifest = project / "s.yaml"
    with mock_cloud():
        deploy.json("up")
        manifest.write_text(manifest.read_text().replace("wait_seconds: 10", "wait_seconds: 5"))
        up = deploy.json("up")
    changed = {k: v for k, v in _actions(up).items() if v != "no-change"}
    assert changed == {("flow", "MyWorkFlow"): "update"}


def test_down_removes_everything_up_created(deploy, project):
    with mock_cloud() as cloud:
        deploy.json("up")
        down = deploy.json("down", "--yes")
        again = deploy("down", "--yes")
        record = json.loads(next((cloud.workspace(project) / "state").glob("*.json"))
                            .read_text())
        ram = cloud.ram_client()
        left = _leftovers(cloud, ram)
    assert down["write_calls"] == 6
    assert {r["outcome"] for r in down["resources"]} == {"deleted"}
    assert [r["resource"] for r in down["resources"]] == [
        "flow", "policy", "role", "function", "function"]
    assert again.exit_code == 0 and "Nothing to remove" in again.stdout
    assert record["resources"] == []
    assert left == {"functions": [], "flow": None, "role": None, "policy": None}


def _leftovers(cloud, ram):
    from alibabacloud_fnf20190315 import models as fnf_models
    from alibabacloud_ram20150501 import models as ram_models

    from deployer.cloud.errors import CloudNotFoundError, sdk_call

    def missing(fn):
        try:
            with sdk_call("test", "get"):
                return fn()
        except CloudNotFoundError:
            return None

    flows = cloud.fnf_client().list_flows(fnf_models.ListFlowsRequest()).body.flows or []
    return {
        "functions": cloud.fc_client().list_functions(_list_request()).body.functions or [],
        "flow": [f.name for f in flows] or None,
        "role": missing(lambda: ram.get_role(
            ram_models.GetRoleRequest(role_name="job-poller-flow-role"))),
        "policy": missing(lambda: ram.get_policy(ram_models.GetPolicyRequest(
            policy_name="job-poller-flow-role-invoke", policy_type="Custom"))),
    }


def test_down_never_deletes_what_up_did_not_create(deploy):
    from alibabacloud_ram20150501 import models as ram_models

    from deployer.core import roles

    with mock_cloud() as cloud:
        ram = cloud.ram_client()
        ram.create_role(ram_models.CreateRoleRequest(
            role_name="job-poller-flow-role", assume_role_policy_document=roles.trust_policy()))
        up = deploy.json("up")
        down = deploy.json("down", "--yes")
        role = ram.get_role(ram_models.GetRoleRequest(role_name="job-poller-flow-role")).body.role
    assert _actions(up)[("role", "job-poller-flow-role")] == "no-change"
    assert "role" not in [r["resource"] for r in down["resources"]]
    assert role.role_name == "job-poller-flow-role"  # adopted, never deleted


def test_down_of_another_manifest_leaves_this_projects_resources(deploy, project):
    other = (project / "s.yaml").read_text().replace("name: job-poller", "name: other-app", 1)
    (project / "other.yaml").write_text(other)
    with mock_cloud() as cloud:
        deploy.json("up")
        down = deploy.json("-t", "other.yaml", "down", "--yes")
        left = _leftovers(cloud, cloud.ram_client())
    assert down["resources"] == []
    assert len(left["functions"]) == 2 and left["flow"] == ["MyWorkFlow"]
    assert left["role"] is not None and left["policy"] is not None


def test_json_mode_keeps_stdout_one_document(deploy):
    with mock_cloud() as cloud:
        result = deploy("up", "--output", "json")
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    assert doc["target"] == "aliyun" and doc["account_id"] == cloud.account_id
    assert result.stderr.splitlines()[0].startswith("Target: aliyun (Alibaba Cloud), region ")
    assert "creating flow MyWorkFlow" in result.stderr


def test_up_warns_when_the_local_python_differs_from_the_runtime(deploy, project):
    import sys

    host = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    with mock_cloud():
        first = deploy("up", "--yes", target="local")
        again = deploy("up", "--yes", target="local")
    assert first.exit_code == 0, first.stderr
    warned = [line for line in first.stderr.splitlines() if line.startswith("Warning: runtime")]
    if host == "python3.10":  # the seed's runtime: nothing to say
        assert warned == []
    else:  # once for the two python3.10 functions, not once per function
        assert len(warned) == 1 and "python3.10" in warned[0]
    assert "Warning: runtime" not in again.stderr  # said once, when caused
