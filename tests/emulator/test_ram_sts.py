"""RAM roles/policies and STS GetCallerIdentity through the official SDKs."""

from __future__ import annotations

import asyncio
import json

import pytest
from alibabacloud_ram20150501 import models as ram
from alibabacloud_tea_openapi.exceptions import ClientException

from tests.emulator.cloudflow_support import client_error, create, pass_flow

TRUST = json.dumps({"Version": "1", "Statement": [{
    "Effect": "Allow", "Action": "sts:AssumeRole",
    "Principal": {"Service": ["fnf.aliyuncs.com"]}}]})
POLICY = json.dumps({"Version": "1", "Statement": [{"Effect": "Allow",
                                                    "Action": "fc:InvokeFunction",
                                                    "Resource": ["acs:fc:*:*:functions/a"]}]})


def test_role_and_policy_lifecycle(cloud) -> None:
    client = cloud.ram_client()
    role = client.create_role(ram.CreateRoleRequest(
        role_name="FlowRole", assume_role_policy_document=TRUST, description="d")).body.role
    assert role.arn == f"acs:ram::{cloud.account_id}:role/flowrole"
    assert role.role_name == "FlowRole" and role.max_session_duration == 3600
    fetched = client.get_role(ram.GetRoleRequest(role_name="flowrole")).body.role
    assert fetched.role_id == role.role_id
    with pytest.raises(ClientException) as info:
        client.create_role(ram.CreateRoleRequest(role_name="FLOWROLE",
                                                 assume_role_policy_document=TRUST))
    assert (info.value.code, info.value.status_code) == ("EntityAlreadyExists.Role", 409)

    # CloudFlow accepts the role (trusted by fnf.aliyuncs.com), not one trusting FC only
    flows = cloud.fnf_client()
    create(flows, "trusted", pass_flow("trusted"), role_arn=role.arn)
    fc_only = client.create_role(ram.CreateRoleRequest(
        role_name="FcRole", assume_role_policy_document=TRUST.replace(
            "fnf.aliyuncs.com", "fc.aliyuncs.com"))).body.role
    err = client_error(create, flows, "untrusted", pass_flow("untrusted"),
                       role_arn=fc_only.arn)
    assert err.code == "InvalidArgument" and "fnf.aliyuncs.com" in err.message
    client.delete_role(ram.DeleteRoleRequest(role_name="FcRole"))

    created = client.create_policy(ram.CreatePolicyRequest(
        policy_name="invoke-two", policy_document=POLICY)).body.policy
    assert created.policy_type == "Custom"
    with pytest.raises(ClientException) as info:
        client.create_policy(ram.CreatePolicyRequest(policy_name="invoke-two",
                                                     policy_document=POLICY))
    assert info.value.code == "EntityAlreadyExists.Policy"
    got = client.get_policy(ram.GetPolicyRequest(policy_name="invoke-two",
                                                 policy_type="Custom")).body
    assert json.loads(got.default_policy_version.policy_document) == json.loads(POLICY)

    for ptype, name in (("Custom", "invoke-two"), ("System", "AliyunFCInvocationAccess")):
        client.attach_policy_to_role(ram.AttachPolicyToRoleRequest(
            role_name="FlowRole", policy_type=ptype, policy_name=name))
    with pytest.raises(ClientException) as info:
        client.attach_policy_to_role(ram.AttachPolicyToRoleRequest(
            role_name="FlowRole", policy_type="Custom", policy_name="invoke-two"))
    assert info.value.code == "EntityAlreadyExists.Role.Policy"
    listed = client.list_policies_for_role(ram.ListPoliciesForRoleRequest(role_name="FlowRole"))
    assert sorted(p.policy_name for p in listed.body.policies.policy) == [
        "AliyunFCInvocationAccess", "invoke-two"]
    with pytest.raises(ClientException) as info:
        client.delete_role(ram.DeleteRoleRequest(role_name="FlowRole"))
    assert info.value.code == "DeleteConflict.Role.Policy"
    with pytest.raises(ClientException) as info:
        client.delete_policy(ram.DeletePolicyRequest(policy_name="invoke-two"))
    assert info.value.code == "DeleteConflict.Policy.Role"

    for ptype, name in (("Custom", "invoke-two"), ("System", "AliyunFCInvocationAccess")):
        client.detach_policy_from_role(ram.DetachPolicyFromRoleRequest(
            role_name="FlowRole", policy_type=ptype, policy_name=name))
    with pytest.raises(ClientException) as info:
        client.detach_policy_from_role(ram.DetachPolicyFromRoleRequest(
            role_name="FlowRole", policy_type="Custom", policy_name="invoke-two"))
    assert (info.value.code, info.value.status_code) == ("EntityNotExist.Role.Policy", 404)
    client.delete_policy(ram.DeletePolicyRequest(policy_name="invoke-two"))
    client.delete_role(ram.DeleteRoleRequest(role_name="FlowRole"))
    with pytest.raises(ClientException) as info:
        client.get_role(ram.GetRoleRequest(role_name="FlowRole"))
    assert (info.value.code, info.value.status_code) == ("EntityNotExist.Role", 404)


@pytest.mark.parametrize(("request_kwargs", "code"), [
    ({"role_name": "bad name!", "assume_role_policy_document": TRUST}, "InvalidParameter"),
    ({"role_name": "r", "assume_role_policy_document": "{not json"}, "MalformedPolicyDocument"),
    ({"role_name": "r", "assume_role_policy_document": json.dumps(
        {"Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole"}]})},
     "MalformedPolicyDocument"),
    ({"assume_role_policy_document": TRUST}, "MissingParameter"),
])
def test_role_validation(cloud, request_kwargs, code) -> None:
    with pytest.raises(ClientException) as info:
        cloud.ram_client().create_role(ram.CreateRoleRequest(**request_kwargs))
    assert info.value.code == code and 400 <= info.value.status_code < 500


def test_get_caller_identity_sync_and_async(cloud) -> None:
    body = cloud.sts_client().get_caller_identity().body
    assert (body.account_id, body.identity_type) == (cloud.account_id, "Account")
    assert body.arn == f"acs:ram::{cloud.account_id}:root" and body.request_id

    async def scenario() -> str:
        return (await cloud.sts_client().get_caller_identity_async()).body.account_id

    assert asyncio.run(scenario()) == cloud.account_id


def test_rpc_auth_errors(cloud) -> None:
    with pytest.raises(ClientException) as info:
        cloud.sts_client(access_key_secret="nope").get_caller_identity()
    assert (info.value.code, info.value.status_code) == ("SignatureDoesNotMatch", 403)
    with pytest.raises(ClientException) as info:
        cloud.ram_client(access_key_id="LTAIother").get_role(ram.GetRoleRequest(role_name="x"))
    assert (info.value.code, info.value.status_code) == ("InvalidAccessKeyId.NotFound", 403)
