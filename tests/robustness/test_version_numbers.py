"""Version numbers and numeric page tokens that are not plain ASCII decimals of a size the
store holds (40 digits, '²', full-width '１', '01') name nothing: a 404 or 400 in the cloud's
error body, never a 500, and never another version than the one written."""

from __future__ import annotations

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_fnf20190315 import models as fnf
from Tea.exceptions import TeaException

from tests.emulator.cloudflow_support import create, pass_flow

ODD_NUMBERS = ["9" * 40, "²", "\uff11", "01", "1 ", "+1"]


def _error(call) -> TeaException:
    with pytest.raises(TeaException) as info:
        call()
    assert info.value.status_code < 500, info.value
    return info.value


@pytest.fixture
def versioned_function(cloud, zip_b64):
    client = cloud.fc_client()
    client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="f", runtime="python3.10", handler="index.handler",
        code=fc.InputCodeLocation(zip_file=zip_b64))))
    client.publish_function_version("f", fc.PublishFunctionVersionRequest(
        body=fc.PublishVersionInput()))
    return client


@pytest.mark.parametrize("number", ODD_NUMBERS)
def test_function_qualifiers_that_are_not_version_numbers(versioned_function, number) -> None:
    client = versioned_function
    got = _error(lambda: client.get_function("f", fc.GetFunctionRequest(qualifier=number)))
    assert got.code in ("VersionNotFound", "AliasNotFound") and got.status_code == 404
    got = _error(lambda: client.invoke_function(
        "f", fc.InvokeFunctionRequest(qualifier=number, body=b"{}")))
    assert got.status_code == 404
    got = _error(lambda: client.delete_function_version("f", number))
    assert got.code == "VersionNotFound"
    got = _error(lambda: client.create_alias("f", fc.CreateAliasRequest(body=fc.CreateAliasInput(
        alias_name="a", version_id=number))))
    assert got.code in ("VersionNotFound", "InvalidArgument")
    got = _error(lambda: client.list_function_versions(
        "f", fc.ListFunctionVersionsRequest(next_token=number)))
    assert got.code == "InvalidArgument"
    versions = client.list_function_versions("f", fc.ListFunctionVersionsRequest()).body
    assert [v.version_id for v in versions.versions] == ["1"]


@pytest.mark.parametrize("number", ODD_NUMBERS)
def test_flow_versions_and_tokens_that_are_not_numbers(cloud, number) -> None:
    client = cloud.fnf_client()
    create(client, "f", pass_flow("f"))
    client.publish_flow_version(fnf.PublishFlowVersionRequest(flow_name="f"))
    run = client.start_execution(fnf.StartExecutionRequest(flow_name="f", execution_name="e"))
    assert run.body.name == "e"
    got = _error(lambda: client.describe_flow(fnf.DescribeFlowRequest(name="f",
                                                                      flow_version=number)))
    assert got.code == "FlowVersionNotExists"
    got = _error(lambda: client.start_execution(fnf.StartExecutionRequest(
        flow_name="f", qualifier=number)))
    assert got.status_code == 404
    got = _error(lambda: client.delete_flow_version(fnf.DeleteFlowVersionRequest(
        flow_name="f", flow_version=number)))
    assert got.code == "FlowVersionNotExists"
    for call in (lambda: client.list_flow_versions(fnf.ListFlowVersionsRequest(
                     flow_name="f", next_token=number)),
                 lambda: client.get_execution_history(fnf.GetExecutionHistoryRequest(
                     flow_name="f", execution_name="e", next_token=number))):
        assert _error(call).code == "InvalidArgument"
    listed = client.list_flow_versions(fnf.ListFlowVersionsRequest(flow_name="f")).body
    assert [v.version for v in listed.flow_versions] == ["1"]


@pytest.mark.parametrize("weight", ["\u00b2", "\uff15\uff10", "01"])
def test_alias_weights_spelled_oddly_are_refused(cloud, weight) -> None:
    client = cloud.fnf_client()
    create(client, "f", pass_flow("f"))
    client.publish_flow_version(fnf.PublishFlowVersionRequest(flow_name="f"))
    got = _error(lambda: client.create_flow_alias(fnf.CreateFlowAliasRequest(
        flow_name="f", name="a",
        routing_configurations=[fnf.CreateFlowAliasRequestRoutingConfigurations(
            version="1", weight=weight)])))
    assert got.code == "InvalidArgument" and "Weight" in got.message
