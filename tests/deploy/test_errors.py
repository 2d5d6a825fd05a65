"""Error paths of the deploy commands: clear messages, right exit codes, no tracebacks."""

from __future__ import annotations

import os

import pytest

from deployer.testing import mock_cloud


@pytest.fixture
def no_credentials(tmp_path, monkeypatch):
    """An environment where the credentials chain finds nothing (and asks no server)."""
    from alibabacloud_credentials.utils import auth_constant, auth_util

    for name in list(os.environ):
        if name.startswith("ALIBABA_CLOUD_") and name != "ALIBABA_CLOUD_ECS_METADATA_DISABLED":
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(auth_constant, "HOME", str(tmp_path))
    for attr in ("environment_access_key_id", "environment_access_key_secret",
                 "environment_security_token", "environment_credentials_file",
                 "environment_role_arn", "environment_oidc_provider_arn",
                 "environment_oidc_token_file", "environment_credentials_uri",
                 "environment_profile_name"):
        monkeypatch.setattr(auth_util, attr, None)
    monkeypatch.setattr(auth_util, "enable_oidc_credential", False)
    monkeypatch.setattr(auth_util, "environment_ecs_metadata_disabled", "true")


def test_aliyun_without_credentials_says_where_they_are_looked_for(deploy, no_credentials):
    result = deploy("up")
    assert result.exit_code == 1
    assert "Error: no Alibaba Cloud credentials found" in result.stderr
    assert "ALIBABA_CLOUD_ACCESS_KEY_ID" in result.stderr
    assert "~/.aliyun/config.json" in result.stderr
    assert "Traceback" not in result.stderr


def test_region_without_cloudflow_is_refused_up_front(deploy):
    result = deploy("up", "--region", "cn-chengdu")
    assert result.exit_code == 3
    assert "region 'cn-chengdu' does not offer CloudFlow" in result.stderr
    assert "cn-hangzhou" in result.stderr


def test_broken_manifest_exits_3(deploy, project):
    (project / "s.yaml").write_text((project / "s.yaml").read_text()
                                    .replace("memorySize: 512", "memorySize: 500", 1))
    with mock_cloud():
        result = deploy("up")
    assert result.exit_code == 3
    assert "s.yaml:" in result.stderr and "multiple of 64" in result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_flow_exits_3_with_diagnostics_and_deploys_nothing(deploy, project):
    template = project / "templates" / "flow.yaml.j2"
    template.write_text(template.read_text().replace("Next: GetJobStatus", "Next: GetJobStatuz"))
    with mock_cloud() as cloud:
        result = deploy("up")
        functions = cloud.invocations("StartJob")
    assert result.exit_code == 3
    assert "flow MyWorkFlow is invalid; nothing was deployed" in result.stderr
    assert "GetJobStatuz" in result.stderr
    assert ".deploy/rendered/" in result.stderr  # diagnostics point into the rendered file
    assert functions == []


def test_execute_rejects_bad_input_before_connecting(deploy):
    result = deploy("execute", "--input", "[1, 2]")
    assert result.exit_code == 3
    assert "must be a JSON object" in result.stderr


def test_invoke_and_logs(deploy):
    with mock_cloud():
        deploy("up")
        ok = deploy.json("invoke", "StartJob")
        missing = deploy("invoke", "NoSuchFunction")
        logs = deploy("logs", "StartJob")
    assert ok["error"] is None and len(ok["response"]["job_id"]) == 36
    assert "Started job with ID" in ok["log"]
    assert missing.exit_code == 4 and "function NoSuchFunction does not exist" in missing.stderr
    assert logs.exit_code == 4
    assert "function StartJob has no logConfig" in logs.stderr
    assert "Hint: add logConfig: {project: <SLS project>, logstore: <logstore>}" in logs.stderr
