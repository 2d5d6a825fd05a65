"""FC 3.0 and CloudFlow versions and aliases through the official SDKs.

A published version keeps its own code and configuration; an invocation (or a CloudFlow Task
whose resourceArn ends in a version or an alias) runs that snapshot, on instances of its own;
an alias with a canary splits invocations by weight. CloudFlow executions started with a
Qualifier run the version's definition.
"""

from __future__ import annotations

import base64
import io
import json
import zipfile

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_fnf20190315 import models as fnf
from alibabacloud_tea_openapi.exceptions import ClientException

from deployer.testing import mock_cloud

HANDLER = ("import json, os\n"
           "def handler(event, context):\n"
           "    return json.dumps(['{label}', os.environ['FC_QUALIFIER'],"
           " os.environ['FC_VER_ID'], os.environ['FC_INSTANCE_ID']])\n")


def _code(label: str) -> fc.InputCodeLocation:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("index.py", HANDLER.format(label=label))
    return fc.InputCodeLocation(zip_file=base64.b64encode(buf.getvalue()).decode())


def _error(call, *args):
    with pytest.raises(ClientException) as info:
        call(*args)
    return info.value


@pytest.fixture(scope="module")
def cloud():
    with mock_cloud() as local:
        client = local.fc_client()
        client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
            function_name="f", runtime="python3.10", handler="index.handler", timeout=10,
            code=_code("one"), environment_variables={"STAGE": "one"})))
        client.publish_function_version("f", fc.PublishFunctionVersionRequest(
            body=fc.PublishVersionInput(description="first")))
        client.update_function("f", fc.UpdateFunctionRequest(body=fc.UpdateFunctionInput(
            code=_code("two"), environment_variables={"STAGE": "two"})))
        client.publish_function_version("f", fc.PublishFunctionVersionRequest(
            body=fc.PublishVersionInput(description="second")))
        client.update_function("f", fc.UpdateFunctionRequest(body=fc.UpdateFunctionInput(
            code=_code("three"))))
        yield local


def _invoke(client, qualifier: str | None) -> tuple[list[str], str]:
    response = client.invoke_function("f", fc.InvokeFunctionRequest(
        qualifier=qualifier, body=b"{}"))
    return json.loads(response.body.read()), response.headers["x-fc-invocation-service-version"]


def test_each_version_runs_its_own_code_and_config_on_its_own_instances(cloud) -> None:
    client = cloud.fc_client()
    latest, v1, v2, v1_again = (_invoke(client, q) for q in ("LATEST", "1", "2", "1"))
    assert [x[0][:3] for x in (latest, v1, v2)] == [["three", "LATEST", "LATEST"],
                                                    ["one", "1", "1"], ["two", "2", "2"]]
    assert [x[1] for x in (latest, v1, v2)] == ["LATEST", "1", "2"]
    assert v1_again[0][3] == v1[0][3]  # warm: the version-1 instance served it again
    assert len({latest[0][3], v1[0][3], v2[0][3]}) == 3
    frozen = client.get_function("f", fc.GetFunctionRequest(qualifier="1")).body
    assert frozen.environment_variables == {"STAGE": "one"}
    assert client.get_function("f", fc.GetFunctionRequest()).body.environment_variables \
        == {"STAGE": "two"}


def test_versions_are_listed_newest_first_and_pages_follow_the_token(cloud) -> None:
    client = cloud.fc_client()
    page = client.list_function_versions("f", fc.ListFunctionVersionsRequest(limit=1)).body
    assert page.direction == "BACKWARD"
    assert [v.version_id for v in page.versions] == ["2"] and page.next_token == "1"
    rest = client.list_function_versions("f", fc.ListFunctionVersionsRequest(
        limit=1, next_token=page.next_token)).body
    assert [v.version_id for v in rest.versions] == ["1"] and rest.next_token is None
    forward = client.list_function_versions("f", fc.ListFunctionVersionsRequest(
        direction="FORWARD")).body
    assert [(v.version_id, v.description) for v in forward.versions] == [
        ("1", "first"), ("2", "second")]
    assert _error(client.list_function_versions, "f",
                  fc.ListFunctionVersionsRequest(limit=101)).code == "InvalidArgument"


def test_alias_routes_to_its_version_and_splits_by_canary_weight(cloud) -> None:
    client = cloud.fc_client()
    client.create_alias("f", fc.CreateAliasRequest(body=fc.CreateAliasInput(
        alias_name="split", version_id="1", additional_version_weight={"2": 0.5})))
    described = {client.get_function("f", fc.GetFunctionRequest(qualifier="split")).body
                 .environment_variables["STAGE"] for _ in range(5)}
    assert described == {"one"}  # GetFunction of an alias describes its main version
    seen = [_invoke(client, "split")[0] for _ in range(60)]
    by_version = {v: sum(s[2] == v for s in seen) for v in ("1", "2")}
    assert by_version["1"] + by_version["2"] == 60
    assert 10 <= by_version["2"] <= 50  # a 50 % canary, P(outside) < 1e-6
    assert {s[1] for s in seen} == {"split"}  # FC_QUALIFIER names the alias
    client.update_alias("f", "split", fc.UpdateAliasRequest(body=fc.UpdateAliasInput(
        version_id="2", additional_version_weight={})))
    assert {_invoke(client, "split")[0][2] for _ in range(5)} == {"2"}
    alias = client.get_alias("f", "split").body
    assert (alias.version_id, alias.additional_version_weight) == ("2", {})
    names = [a.alias_name for a in client.list_aliases("f", fc.ListAliasesRequest()).body.aliases]
    assert "split" in names


def test_alias_and_version_errors_are_the_clouds(cloud) -> None:
    client = cloud.fc_client()
    client.create_alias("f", fc.CreateAliasRequest(body=fc.CreateAliasInput(
        alias_name="pinned", version_id="1")))
    again = _error(client.create_alias, "f", fc.CreateAliasRequest(body=fc.CreateAliasInput(
        alias_name="pinned", version_id="1")))
    assert (again.code, again.status_code) == ("AliasAlreadyExists", 409)
    assert _error(client.get_alias, "f", "nope").code == "AliasNotFound"
    assert _error(client.invoke_function, "f", fc.InvokeFunctionRequest(
        qualifier="9", body=b"{}")).code == "VersionNotFound"
    assert _error(client.invoke_function, "f", fc.InvokeFunctionRequest(
        qualifier="nope", body=b"{}")).code == "AliasNotFound"
    in_use = _error(client.delete_function_version, "f", "1")
    assert in_use.code == "InvalidArgument" and "pinned" in in_use.message
    for bad in (fc.CreateAliasInput(alias_name="x", version_id="LATEST"),
                fc.CreateAliasInput(alias_name="x", version_id="1",
                                    additional_version_weight={"1": 0.5}),
                fc.CreateAliasInput(alias_name="x", version_id="1",
                                    additional_version_weight={"2": 1.5}),
                fc.CreateAliasInput(alias_name="1bad", version_id="1")):
        assert _error(client.create_alias, "f", fc.CreateAliasRequest(body=bad)).code \
            == "InvalidArgument"
    client.delete_alias("f", "pinned")
    assert _error(client.delete_alias, "f", "pinned").code == "AliasNotFound"


def test_deleted_versions_keep_their_number_and_go_with_the_function(cloud) -> None:
    client = cloud.fc_client()
    client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="g", runtime="python3.10", handler="index.handler", code=_code("g"))))
    for _ in range(2):
        client.publish_function_version("g", fc.PublishFunctionVersionRequest(
            body=fc.PublishVersionInput()))
    client.delete_function_version("g", "2")
    third = client.publish_function_version("g", fc.PublishFunctionVersionRequest(
        body=fc.PublishVersionInput())).body
    assert third.version_id == "3"
    assert _error(client.delete_function_version, "g", "2").code == "VersionNotFound"
    client.delete_function("g")
    client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="g", runtime="python3.10", handler="index.handler", code=_code("g"))))
    assert client.list_function_versions("g", fc.ListFunctionVersionsRequest()).body.versions \
        == []


FLOW = ("Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: call\nStates:\n"
        "  - Type: Task\n    Name: call\n    Action: FC:InvokeFunction\n"
        "    TaskMode: RequestComplete\n    Parameters:\n"
        "      invocationType: Sync\n"
        "      resourceArn: acs:fc:::functions/f/{qualifier}\n      body: {{}}\n"
        "    End: true\n")


@pytest.mark.parametrize(("qualifier", "label"), [("LATEST", "three"), ("1", "one"),
                                                  ("pinned2", "two")])
def test_a_task_arn_ending_in_a_version_or_alias_runs_that_version(cloud, qualifier,
                                                                    label) -> None:
    if qualifier == "pinned2":
        cloud.fc_client().create_alias("f", fc.CreateAliasRequest(body=fc.CreateAliasInput(
            alias_name="pinned2", version_id="2")))
    flows = cloud.fnf_client()
    name = f"task_{qualifier}"
    flows.create_flow(fnf.CreateFlowRequest(name=name, type="FDL", description="",
                                            definition=FLOW.format(name=name,
                                                                   qualifier=qualifier)))
    started = flows.start_execution(fnf.StartExecutionRequest(flow_name=name)).body
    done = cloud.wait_for_execution(name, started.name)
    assert done["Status"] == "Succeeded", done
    body = json.loads(done["Output"])["Body"]  # the function's result, as CloudFlow wraps it
    assert body[:3] == [label, qualifier, {"LATEST": "LATEST", "1": "1"}.get(qualifier, "2")]


def _flow(name: str, value: str) -> str:
    return (f"Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: p\nStates:\n"
            f"  - Type: Pass\n    Name: p\n    OutputConstructor:\n      v: {value}\n"
            "    End: true\n")


def test_flow_versions_aliases_and_qualified_executions(cloud) -> None:
    flows = cloud.fnf_client()
    flows.create_flow(fnf.CreateFlowRequest(name="vf", definition=_flow("vf", "one"),
                                            description="", type="FDL"))
    first = flows.publish_flow_version(fnf.PublishFlowVersionRequest(
        flow_name="vf", description="first")).body
    flows.update_flow(fnf.UpdateFlowRequest(name="vf", definition=_flow("vf", "two")))
    flows.publish_flow_version(fnf.PublishFlowVersionRequest(flow_name="vf"))
    flows.update_flow(fnf.UpdateFlowRequest(name="vf", definition=_flow("vf", "three")))
    assert (first.flow_name, first.version, first.description) == ("vf", "1", "first")
    listed = flows.list_flow_versions(fnf.ListFlowVersionsRequest(flow_name="vf")).body
    assert [v.version for v in listed.flow_versions] == ["2", "1"]
    frozen = flows.describe_flow(fnf.DescribeFlowRequest(name="vf", flow_version="1")).body
    assert "one" in frozen.definition
    routing = [fnf.CreateFlowAliasRequestRoutingConfigurations(version="1", weight=100)]
    created = flows.create_flow_alias(fnf.CreateFlowAliasRequest(
        flow_name="vf", name="prod", description="stable", routing_configurations=routing)).body
    assert (created.name, created.routing_configurations[0].version) == ("prod", "1")

    def output(qualifier):
        started = flows.start_execution(fnf.StartExecutionRequest(
            flow_name="vf", qualifier=qualifier)).body
        return json.loads(cloud.wait_for_execution("vf", started.name)["Output"])["v"]

    assert [output(q) for q in (None, "1", "2", "prod")] == ["three", "one", "two", "one"]
    flows.update_flow_alias(fnf.UpdateFlowAliasRequest(
        flow_name="vf", name="prod", routing_configurations=[
            fnf.UpdateFlowAliasRequestRoutingConfigurations(version="1", weight=50),
            fnf.UpdateFlowAliasRequestRoutingConfigurations(version="2", weight=50)]))
    assert {output("prod") for _ in range(30)} == {"one", "two"}  # P(one value) < 2e-9
    alias = flows.describe_flow_alias(fnf.DescribeFlowAliasRequest(
        flow_name="vf", name="prod")).body.alias
    assert [(r.version, r.weight) for r in alias.routing_configurations] == [("1", 50),
                                                                             ("2", 50)]
    assert [a.name for a in flows.list_flow_aliases(fnf.ListFlowAliasesRequest(
        flow_name="vf")).body.aliases] == ["prod"]


def test_flow_version_errors(cloud) -> None:
    flows = cloud.fnf_client()
    flows.create_flow(fnf.CreateFlowRequest(name="ef", definition=_flow("ef", "x"),
                                            description="", type="FDL"))
    flows.publish_flow_version(fnf.PublishFlowVersionRequest(flow_name="ef"))
    missing = _error(flows.start_execution, fnf.StartExecutionRequest(
        flow_name="ef", qualifier="7"))
    assert missing.code == "FlowVersionNotExists"
    assert _error(flows.start_execution, fnf.StartExecutionRequest(
        flow_name="ef", qualifier="nope")).code == "FlowAliasNotExists"
    flows.create_flow_alias(fnf.CreateFlowAliasRequest(
        flow_name="ef", name="a", routing_configurations=[
            fnf.CreateFlowAliasRequestRoutingConfigurations(version="1", weight=1)]))
    assert _error(flows.create_flow_alias, fnf.CreateFlowAliasRequest(
        flow_name="ef", name="a", routing_configurations=[
            fnf.CreateFlowAliasRequestRoutingConfigurations(version="1", weight=1)])).code \
        == "FlowAliasAlreadyExists"
    for routes in ([], [("1", 1), ("1", 2)], [("1", 1), ("2", 1)], [("1", 101)],
                   [("1", 1)] * 3):
        bad = [fnf.CreateFlowAliasRequestRoutingConfigurations(version=v, weight=w)
               for v, w in routes]
        assert _error(flows.create_flow_alias, fnf.CreateFlowAliasRequest(
            flow_name="ef", name="b", routing_configurations=bad or None)).code in (
            "InvalidArgument", "MissingRequiredParams", "FlowVersionNotExists")
    assert _error(flows.delete_flow_version, fnf.DeleteFlowVersionRequest(
        flow_name="ef", flow_version="1")).code == "InvalidArgument"
    flows.delete_flow_alias(fnf.DeleteFlowAliasRequest(flow_name="ef", name="a"))
    flows.delete_flow_version(fnf.DeleteFlowVersionRequest(flow_name="ef", flow_version="1"))
    assert _error(flows.describe_flow_alias, fnf.DescribeFlowAliasRequest(
        flow_name="ef", name="a")).code == "FlowAliasNotExists"
    assert _error(flows.list_flow_versions, fnf.ListFlowVersionsRequest(
        flow_name="ef", limit="1000")).code == "InvalidArgument"


def test_describe_regions_lists_cloudflow_regions_in_both_languages(cloud) -> None:
    flows = cloud.fnf_client()
    zh = flows.describe_regions(fnf.DescribeRegionsRequest()).body.regions.region
    en = flows.describe_regions(fnf.DescribeRegionsRequest(accept_language="en-US")).body
    by_id = {r.region_id: r for r in en.regions.region}
    assert set(by_id) == {"cn-hangzhou", "cn-shanghai", "cn-beijing", "cn-qingdao",
                          "cn-shenzhen", "ap-southeast-1", "us-west-1"}
    assert by_id["cn-qingdao"].local_name == "China (Qingdao)"
    assert by_id["us-west-1"].region_endpoint == "us-west-1.fnf.aliyuncs.com"
    assert {r.region_id: r.local_name for r in zh}["cn-qingdao"] == "华北1(青岛)"
    assert _error(flows.describe_regions, fnf.DescribeRegionsRequest(
        accept_language="fr-FR")).code == "InvalidArgument"


@pytest.mark.parametrize(("action", "limit", "ok"), [
    ("list_flows", 999, True), ("list_flows", 1000, False), ("list_flows", 0, False),
    ("list_executions", 99, True), ("list_executions", 100, False),
    ("get_execution_history", 999, True), ("get_execution_history", 1000, False),
    ("list_schedules", 1000, True), ("list_schedules", 1001, False),
    ("list_flow_aliases", 999, True), ("list_flow_aliases", 1000, False),
])
def test_list_limits_are_the_documented_ranges(cloud, action, limit, ok) -> None:
    flows = cloud.fnf_client()
    if not any(f.name == "lim" for f in flows.list_flows(fnf.ListFlowsRequest()).body.flows):
        flows.create_flow(fnf.CreateFlowRequest(name="lim", definition=_flow("lim", "x"),
                                                description="", type="FDL"))
        flows.start_execution(fnf.StartExecutionRequest(flow_name="lim", execution_name="e"))
    requests = {
        "list_flows": lambda: fnf.ListFlowsRequest(limit=limit),
        "list_executions": lambda: fnf.ListExecutionsRequest(flow_name="lim", limit=limit),
        "get_execution_history": lambda: fnf.GetExecutionHistoryRequest(
            flow_name="lim", execution_name="e", limit=limit),
        "list_schedules": lambda: fnf.ListSchedulesRequest(flow_name="lim", limit=limit),
        "list_flow_aliases": lambda: fnf.ListFlowAliasesRequest(flow_name="lim", limit=limit),
    }
    call = getattr(flows, action)
    if ok:
        call(requests[action]())
    else:
        err = _error(call, requests[action]())
        assert (err.code, err.status_code) == ("InvalidArgument", 400)
