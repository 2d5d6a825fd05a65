"""Plans that tell the truth: old -> new settings, definition diffs, deletions and pruning."""

from __future__ import annotations

import json

from deployer.testing import mock_cloud


def _by_name(doc):
    return {(r["type"], r["name"]): r for r in doc["resources"]}


def _settings(row):
    return {s["name"]: (s["old"], s["new"]) for s in row["settings"]}


def _function_names(cloud):
    from alibabacloud_fc20230330 import models

    body = cloud.fc_client().list_functions(models.ListFunctionsRequest()).body
    return sorted(f.function_name for f in body.functions or [])


def test_plan_shows_each_setting_old_and_new_and_code_by_checksum(deploy, project):
    manifest = project / "s.yaml"
    with mock_cloud():
        first = deploy.json("up")
        manifest.write_text(manifest.read_text().replace("memorySize: 512\n      timeout: 30",
                                                         "memorySize: 1024\n      timeout: 60",
                                                         1))
        handler = project / "functions" / "start_job" / "index.py"
        handler.write_text(handler.read_text() + "\n# tuned\n")
        plan = deploy.json("plan")
        text = deploy("plan")
    old_code = next(s for s in _by_name(first)[("function", "StartJob")]["settings"])["new"]
    row = _by_name(plan)[("function", "StartJob")]
    settings = _settings(row)
    assert row["action"] == "update"
    assert settings["memorySize"] == (512, 1024) and settings["timeout"] == (30, 60)
    assert settings["code"][0] == old_code and settings["code"][1] != old_code
    assert settings["code"][1].isdigit()  # CRC-64 as FC's decimal codeChecksum
    assert row["changes"][:1] == ["code"]
    assert _by_name(plan)[("function", "GetJobStatus")]["action"] == "no-change"
    assert "      memorySize: 512 -> 1024" in text.stdout
    assert "      timeout: 30 -> 60" in text.stdout
    assert f"      code: {old_code} -> {settings['code'][1]}" in text.stdout
    assert "Plan: 0 to create, 1 to update, 4 unchanged." in text.stdout


def test_environment_values_are_fingerprinted_never_shown(deploy, project):
    manifest = project / "s.yaml"
    base = manifest.read_text()
    manifest.write_text(base.replace("      timeout: 30\n", "      timeout: 30\n"
                                     "      environmentVariables:\n        DB_PASS: hunter2\n", 1))
    with mock_cloud():
        deploy.json("up")
        manifest.write_text(base.replace("      timeout: 30\n", "      timeout: 30\n"
                                         "      environmentVariables:\n"
                                         "        DB_PASS: swordfish\n        MODE: fast\n", 1))
        plan = deploy.json("plan")
        text = deploy("plan")
    settings = _settings(_by_name(plan)[("function", "StartJob")])
    old, new = settings["environmentVariables.DB_PASS"]
    assert old.startswith("sha256:") and new.startswith("sha256:") and old != new
    assert settings["environmentVariables.MODE"][0] is None
    for secret in ("hunter2", "swordfish"):
        assert secret not in json.dumps(plan) and secret not in text.stdout


def test_flow_change_is_a_unified_diff_of_the_definition(deploy, project):
    manifest = project / "s.yaml"
    with mock_cloud():
        deploy.json("up")
        manifest.write_text(manifest.read_text().replace("wait_seconds: 10", "wait_seconds: 5"))
        plan = deploy.json("plan")
        text = deploy("plan")
        up = deploy.json("up")
    row = _by_name(plan)[("flow", "MyWorkFlow")]
    assert row["action"] == "update" and row["changes"] == ["definition"]
    diff = row["diff"].splitlines()
    assert diff[0] == "--- MyWorkFlow (deployed)"
    assert diff[1] == "+++ MyWorkFlow (templates/flow.yaml.j2)"
    assert "-    Seconds: 10" in diff and "+    Seconds: 5" in diff
    assert sum(line.startswith(("-", "+")) for line in diff[2:]) == 2  # only that line
    assert "      -    Seconds: 10\n      +    Seconds: 5" in text.stdout
    assert _by_name(up)[("flow", "MyWorkFlow")]["diff"] == row["diff"]  # up carries it too


def _drop_get_job_status(project):
    manifest = project / "s.yaml"
    text = manifest.read_text()
    start = text.index("  get_job_status:")
    end = text.index("  job_flow:")
    text = text[:start] + text[end:]
    text = text.replace("get_job_status_function: ${resources.get_job_status.props."
                        "functionName}", "get_job_status_function: StartJob")
    manifest.write_text(text)


def test_a_function_removed_from_s_yaml_is_planned_as_a_deletion(deploy, project):
    with mock_cloud() as cloud:
        deploy.json("up")
        _drop_get_job_status(project)
        plan = deploy.json("plan")
        text = deploy("plan")
        kept = deploy("up", "--output", "json")
        still = _function_names(cloud)
        pruned = deploy.json("up", "-y")
        left = _function_names(cloud)
        record = json.loads(next((cloud.workspace(project) / "state").glob("*.json")).read_text())
        again = deploy.json("plan")
    row = _by_name(plan)[("function", "GetJobStatus")]
    assert row["action"] == "delete" and row["changes"] == ["s.yaml no longer declares it"]
    assert _by_name(plan)[("policy", "job-poller-flow-role-invoke")]["action"] == "update"
    assert "  - delete    function GetJobStatus" in text.stdout
    assert "1 to delete" in text.stdout
    # without --yes (no terminal to ask on) the deletion is kept, and said so
    assert kept.exit_code == 0
    kept_doc = json.loads(kept.stdout)
    assert [(r["type"], r["name"]) for r in kept_doc["kept"]] == [("function", "GetJobStatus")]
    assert "s.yaml no longer declares function GetJobStatus; keeping it" in kept.stderr
    assert still == ["GetJobStatus", "StartJob"]
    # with -y it is deleted and forgotten from the record
    deleted = _by_name(pruned)[("function", "GetJobStatus")]
    assert deleted["action"] == "delete" and deleted["outcome"] == "deleted"
    assert pruned["kept"] == []
    assert left == ["StartJob"]
    assert "GetJobStatus" not in [r["name"] for r in record["resources"]]
    assert again["changes"] is False


def test_pruning_never_touches_what_up_did_not_create(deploy, project):
    from alibabacloud_fc20230330 import models

    with mock_cloud() as cloud:
        fc = cloud.fc_client()
        deploy.json("up")
        fc.delete_function("GetJobStatus")  # gone behind the record's back
        _drop_get_job_status(project)
        plan = deploy.json("plan")
        up = deploy.json("up", "--yes")
        record = json.loads(next((cloud.workspace(project) / "state").glob("*.json")).read_text())
        body = fc.list_functions(models.ListFunctionsRequest()).body
    assert ("function", "GetJobStatus") not in _by_name(plan)  # nothing left to delete
    assert up["kept"] == []
    assert "GetJobStatus" not in [r["name"] for r in record["resources"]]  # forgotten
    assert [f.function_name for f in body.functions] == ["StartJob"]


def test_removing_the_flow_prunes_flow_role_and_policy_and_down_still_removes_all(deploy,
                                                                                  project):
    manifest = project / "s.yaml"
    with mock_cloud():
        deploy.json("up")
        text = manifest.read_text()
        manifest.write_text(text[:text.index("  job_flow:")])
        up = deploy.json("up", "--yes")
        down = deploy.json("down", "--yes")
    deleted = [(r["type"], r["name"]) for r in up["resources"] if r["action"] == "delete"]
    assert deleted == [("flow", "MyWorkFlow"), ("policy", "job-poller-flow-role-invoke"),
                       ("role", "job-poller-flow-role")]
    assert {r["outcome"] for r in up["resources"] if r["action"] == "delete"} == {"deleted"}
    assert [(r["resource"], r["name"]) for r in down["resources"]] == [
        ("function", "StartJob"), ("function", "GetJobStatus")]
