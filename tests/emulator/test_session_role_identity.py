"""An STS session is bound to its role's identity (RoleId), as RAM binds it: after the role is
deleted and a role of the same name is created (another RoleId), the old session's keys get
none of the new role's permissions, while the function whose role it is gets keys of the new
role with its next request (docs/runtime.md "RAM authorization and STS")."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from collections.abc import Iterator

import pytest
from alibabacloud_fc20230330 import models as fc_models
from alibabacloud_ram20150501 import models as ram_models
from alibabacloud_tea_openapi.exceptions import ClientException

from deployer.testing.environment import LocalCloud, mock_cloud

IDENTITY = """
import os
def handler(event, context):
    return "\\n".join(os.environ.get(k, "") for k in ("ALIBABA_CLOUD_ACCESS_KEY_ID",
                      "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ALIBABA_CLOUD_SECURITY_TOKEN"))
"""
TRUST = json.dumps({"Version": "1", "Statement": [{
    "Effect": "Allow", "Action": "sts:AssumeRole",
    "Principal": {"Service": ["fc.aliyuncs.com"]}}]})


@pytest.fixture
def cloud(tmp_path) -> Iterator[LocalCloud]:
    with mock_cloud(intercept=False, state_dir=tmp_path / "state") as c:
        yield c


def _role(cloud: LocalCloud, policy: str | None) -> str:
    ram = cloud.ram_client()
    role = ram.create_role(ram_models.CreateRoleRequest(
        role_name="worker", assume_role_policy_document=TRUST)).body.role
    if policy is not None:
        ram.attach_policy_to_role(ram_models.AttachPolicyToRoleRequest(
            role_name="worker", policy_type="System", policy_name=policy))
    return str(role.role_id)


def _keys(cloud: LocalCloud) -> dict[str, str]:
    body = cloud.fc_client().invoke_function("whoami", fc_models.InvokeFunctionRequest())
    key_id, secret, token = body.body.read().decode().split("\n")
    assert key_id.startswith("STS.") and token
    return {"access_key_id": key_id, "access_key_secret": secret, "security_token": token}


def _list_functions(cloud: LocalCloud, keys: dict[str, str]) -> int | str:
    try:
        return cloud.fc_client(**keys).list_functions(
            fc_models.ListFunctionsRequest()).status_code
    except ClientException as exc:
        return f"{exc.code}: {exc.message}"


def test_a_session_of_a_deleted_role_gets_nothing_from_its_namesake(cloud) -> None:
    first_id = _role(cloud, None)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("index.py", IDENTITY)
    cloud.fc_client().create_function(fc_models.CreateFunctionRequest(
        body=fc_models.CreateFunctionInput(
            function_name="whoami", runtime="python3.10", handler="index.handler",
            code=fc_models.InputCodeLocation(
                zip_file=base64.b64encode(buffer.getvalue()).decode()),
            role=f"acs:ram::{cloud.account_id}:role/worker")))
    old = _keys(cloud)
    assert str(_list_functions(cloud, old)).startswith("AccessDenied")  # no policy yet

    cloud.ram_client().delete_role(ram_models.DeleteRoleRequest(role_name="worker"))
    second_id = _role(cloud, "AliyunFCReadOnlyAccess")  # same name, new role, more rights
    assert second_id != first_id

    refused = _list_functions(cloud, old)
    assert str(refused).startswith("AccessDenied"), refused
    assert "no longer exists" in str(refused) and "another RoleId" in str(refused)
    # the function's next request runs with keys of the new role, which are allowed
    new = _keys(cloud)
    assert new["access_key_id"] != old["access_key_id"]
    assert _list_functions(cloud, new) == 200
    assert str(_list_functions(cloud, old)).startswith("AccessDenied")

