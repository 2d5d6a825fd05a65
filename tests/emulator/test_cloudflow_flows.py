"""CloudFlow flow CRUD through the official fnf SDK (sync and async)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from alibabacloud_fnf20190315 import models as fnf
from alibabacloud_tea_openapi import utils_models as open_api_models
from darabonba.runtime import RuntimeOptions

from deployer.testing.environment import LocalCloud
from tests.emulator.cloudflow_support import client_error, create, pass_flow, wait_flow

TRUST_FNF = json.dumps({"Version": "1", "Statement": [{
    "Effect": "Allow", "Action": "sts:AssumeRole",
    "Principal": {"Service": ["fnf.aliyuncs.com"]}}]})
TRUST_FC = TRUST_FNF.replace("fnf.aliyuncs.com", "fc.aliyuncs.com")


@pytest.fixture
def client(cloud: LocalCloud) -> Any:
    return cloud.fnf_client()


def test_create_describe_update_delete(client: Any, cloud: LocalCloud) -> None:
    env = fnf.CreateFlowRequestEnvironment(variables=[
        fnf.CreateFlowRequestEnvironmentVariables(name="K", value="V w/ space&*")])
    body = client.create_flow(fnf.CreateFlowRequest(
        name="my_flow", definition=pass_flow("my_flow"), description="demo flow", type="FDL",
        environment=env)).body
    assert body.name == "my_flow" and body.type == "FDL" and body.execution_mode == "Standard"
    assert body.created_time == body.last_modified_time
    assert body.created_time.endswith("Z") and len(body.created_time) == 24
    assert body.environment.variables[0].value == "V w/ space&*"

    got = client.describe_flow(fnf.DescribeFlowRequest(name="my_flow")).body
    assert got.id == body.id and got.definition == pass_flow("my_flow")
    assert got.description == "demo flow"

    cloud.advance(5)
    updated = client.update_flow(fnf.UpdateFlowRequest(name="my_flow",
                                                       description="new desc")).body
    assert updated.description == "new desc" and updated.definition == pass_flow("my_flow")
    assert updated.last_modified_time > updated.created_time

    client.delete_flow(fnf.DeleteFlowRequest(name="my_flow"))
    err = client_error(client.describe_flow, fnf.DescribeFlowRequest(name="my_flow"))
    assert err.code == "FlowNotExists" and err.status_code == 404


def test_create_twice_and_missing_names(client: Any) -> None:
    create(client, "f1", pass_flow("f1"))
    assert client_error(create, client, "f1", pass_flow("f1")).code == "FlowAlreadyExists"
    err = client_error(client.create_flow, fnf.CreateFlowRequest(definition=pass_flow("x"),
                                                          description="", type="FDL"))
    assert err.code == "MissingRequiredParams" and "Name" in err.message
    assert client_error(create, client, "9bad", pass_flow("9bad")).code == "InvalidArgument"
    err = client_error(client.delete_flow, fnf.DeleteFlowRequest(name="absent"))
    assert err.code == "FlowNotExists"
    err = client_error(client.update_flow, fnf.UpdateFlowRequest(name="absent", description="x"))
    assert err.code == "FlowNotExists"


def test_invalid_definition_lists_diagnostics(client: Any) -> None:
    bad = ("Type: StateMachine\nSpecVersion: v1\nName: bad\nStartAt: a\nStates:\n"
           "  - Type: Pass\n    Name: a\n    Next: nowhere\n")
    err = client_error(create, client, "bad", bad)
    assert err.code == "InvalidArgument"
    assert "Definition:8:" in err.message and "nowhere" in err.message
    assert "States[0].Next" in err.message or "Next" in err.message
    err = client_error(create, client, "other", pass_flow("mismatch"))
    assert "'mismatch' must equal the flow name 'other'" in err.message


def test_update_revalidates_definition(client: Any) -> None:
    create(client, "f", pass_flow("f"))
    err = client_error(client.update_flow, fnf.UpdateFlowRequest(name="f", definition="[1, 2]"))
    assert err.code == "InvalidArgument" and "Definition" in err.message
    described = client.describe_flow(fnf.DescribeFlowRequest(name="f")).body
    assert described.definition == pass_flow("f")


def test_express_wait_limit(client: Any) -> None:
    create(client, "std", wait_flow("std", seconds=100))
    err = client_error(client.create_flow, fnf.CreateFlowRequest(
        name="ex", definition=wait_flow("ex", seconds=100), description="", type="FDL",
        execution_mode="Express"))
    assert err.code == "InvalidArgument" and "Definition:" in err.message


def test_role_must_trust_fnf(client: Any, cloud: LocalCloud) -> None:
    from alibabacloud_ram20150501 import models as ram

    ram_client = cloud.ram_client()
    ram_client.create_role(ram.CreateRoleRequest(role_name="FlowRole",
                                                 assume_role_policy_document=TRUST_FNF))
    ram_client.create_role(ram.CreateRoleRequest(role_name="FcRole",
                                                 assume_role_policy_document=TRUST_FC))
    good = f"acs:ram::{cloud.account_id}:role/flowrole"
    assert create(client, "f", pass_flow("f"), role_arn=good).role_arn == good
    for arn in (f"acs:ram::{cloud.account_id}:role/fcrole",
                f"acs:ram::{cloud.account_id}:role/missing", "not-an-arn"):
        err = client_error(create, client, "g", pass_flow("g"), role_arn=arn)
        assert err.code == "InvalidArgument" and "fnf.aliyuncs.com" in err.message
    err = client_error(client.update_flow, fnf.UpdateFlowRequest(
        name="f", role_arn=f"acs:ram::{cloud.account_id}:role/fcrole"))
    assert err.code == "InvalidArgument"


def test_list_flows_pages_in_name_order(client: Any) -> None:
    for name in ("c", "a", "e", "b", "d"):
        create(client, name, pass_flow(name))
    seen, token = [], None
    while True:
        page = client.list_flows(fnf.ListFlowsRequest(limit=2, next_token=token)).body
        seen += [f.name for f in page.flows]
        token = page.next_token
        if not token:
            break
    assert seen == ["a", "b", "c", "d", "e"]
    err = client_error(client.list_flows, fnf.ListFlowsRequest(limit=0))
    assert err.code == "InvalidArgument"


def test_unknown_action_and_bad_signature(cloud: LocalCloud) -> None:
    bad = cloud.fnf_client(access_key_secret="wrong")
    err = client_error(bad.describe_flow, fnf.DescribeFlowRequest(name="x"))
    assert err.code == "SignatureNotMatch" and err.status_code == 403
    other = cloud.fnf_client(access_key_id="LTAIunknown")
    assert client_error(other.describe_flow,
                  fnf.DescribeFlowRequest(name="x")).code == "InvalidAccessKeyID"
    params = open_api_models.Params(  # an action CloudFlow does not have, sent the SDK's way
        action="ListMapRuns", version="2019-03-15", protocol="HTTPS", pathname="/",
        method="GET", auth_type="AK", style="RPC", req_body_type="formData", body_type="json")
    err = client_error(cloud.fnf_client().call_api, params,
                       open_api_models.OpenApiRequest(query={"FlowName": "f"}),
                       RuntimeOptions())
    assert err.code == "ActionNotSupported" and err.status_code == 400
    for client, version in ((cloud.sts_client(), "2015-04-01"),
                            (cloud.ram_client(), "2015-05-01")):
        params = open_api_models.Params(  # RAM and STS answer theirs, not a 500
            action="NoSuchAction", version=version, protocol="HTTPS", pathname="/",
            method="POST", auth_type="AK", style="RPC", req_body_type="formData",
            body_type="json")
        err = client_error(client.call_api, params, open_api_models.OpenApiRequest(),
                           RuntimeOptions())
        assert err.code == "InvalidAction.NotFound" and err.status_code == 404, err


def test_async_client_crud(client: Any) -> None:
    async def run() -> list[str]:
        await client.create_flow_async(fnf.CreateFlowRequest(
            name="af", definition=pass_flow("af"), description="", type="FDL"))
        got = await client.describe_flow_async(fnf.DescribeFlowRequest(name="af"))
        listed = await client.list_flows_async(fnf.ListFlowsRequest())
        await client.delete_flow_async(fnf.DeleteFlowRequest(name="af"))
        return [got.body.name] + [f.name for f in listed.body.flows]

    assert asyncio.run(run()) == ["af", "af"]
