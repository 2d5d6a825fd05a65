"""The deployment record: atomic saves, reload, and a clear error for a damaged file."""

from __future__ import annotations

import pytest

from deployer.core.deploy import DeploymentRecord
from deployer.core.plan import ResourceType
from deployer.errors import OperationError


def test_created_resources_survive_a_reload(tmp_path):
    record = DeploymentRecord.load(tmp_path, "app", "local", "123", "cn-hangzhou")
    assert record.path == tmp_path / "app-local-123-cn-hangzhou.json" and record.resources == []
    record.created(ResourceType.FUNCTION, "StartJob", "acs:fc:cn-hangzhou:123:functions/StartJob")
    record.created(ResourceType.FUNCTION, "StartJob", "acs:fc:cn-hangzhou:123:functions/StartJob")
    record.created(ResourceType.ROLE, "r", "acs:ram::123:role/r")
    again = DeploymentRecord.load(tmp_path, "app", "local", "123", "cn-hangzhou")
    assert [(r.resource, r.name) for r in again.resources] == [
        (ResourceType.FUNCTION, "StartJob"), (ResourceType.ROLE, "r")]
    again.forget(ResourceType.ROLE, "r")
    assert not DeploymentRecord.load(tmp_path, "app", "local", "123", "cn-hangzhou").has(
        ResourceType.ROLE, "r")
    assert [p.name for p in tmp_path.iterdir()] == ["app-local-123-cn-hangzhou.json"]  # no temp


def test_records_are_per_project_target_account_and_region(tmp_path):
    DeploymentRecord.load(tmp_path, "app", "local", "1", "cn-hangzhou").created(
        ResourceType.FLOW, "F", "arn")
    assert DeploymentRecord.load(tmp_path, "other", "local", "1", "cn-hangzhou").resources == []
    assert DeploymentRecord.load(tmp_path, "app", "aliyun", "1", "cn-hangzhou").resources == []
    assert DeploymentRecord.load(tmp_path, "app", "local", "1", "cn-shanghai").resources == []


def test_a_damaged_record_is_a_clear_error(tmp_path):
    (tmp_path / "app-local-1-cn-hangzhou.json").write_text("{not json")
    with pytest.raises(OperationError) as info:
        DeploymentRecord.load(tmp_path, "app", "local", "1", "cn-hangzhou")
    assert "cannot read the deployment record" in info.value.message
    assert "removes nothing" in (info.value.hint or "")
