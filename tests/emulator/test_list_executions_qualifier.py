"""ListExecutions' Qualifier and MapRunName filters, through the official CloudFlow SDK against
an in-process emulator: an execution is listed under the version it ran (started with that
version or through an alias that picked it), under the alias it was started through, or
under LATEST; the filters combine with the others and with paging, and survive a restart."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from alibabacloud_fnf20190315 import models as fnf

from deployer.testing import mock_cloud
from deployer.testing.environment import LocalCloud
from tests.emulator.cloudflow_support import client_error, create

STARTS = (("e-latest", None), ("e-explicit-latest", "LATEST"), ("e-v1", "1"), ("e-v2", "2"),
          ("e-stable", "stable"), ("e-canary", "canary"))


def _flow(value: str) -> str:
    return ("Type: StateMachine\nSpecVersion: v1\nName: q\nStartAt: p\nStates:\n"
            f"  - Type: Pass\n    Name: p\n    OutputConstructor:\n      v: {value}\n"
            "    End: true\n")


def _route(version: str) -> list[fnf.CreateFlowAliasRequestRoutingConfigurations]:
    return [fnf.CreateFlowAliasRequestRoutingConfigurations(version=version, weight=100)]


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with mock_cloud() as local:
        flows = local.fnf_client()
        create(flows, "q", _flow("one"))
        flows.publish_flow_version(fnf.PublishFlowVersionRequest(flow_name="q"))
        flows.update_flow(fnf.UpdateFlowRequest(name="q", definition=_flow("two")))
        flows.publish_flow_version(fnf.PublishFlowVersionRequest(flow_name="q"))
        flows.update_flow(fnf.UpdateFlowRequest(name="q", definition=_flow("three")))
        for alias, version in (("stable", "1"), ("canary", "2")):
            flows.create_flow_alias(fnf.CreateFlowAliasRequest(
                flow_name="q", name=alias, routing_configurations=_route(version)))
        for name, qualifier in STARTS:
            flows.start_execution(fnf.StartExecutionRequest(
                flow_name="q", execution_name=name, qualifier=qualifier))
            local.wait_for_execution("q", name)
        yield local


def _names(cloud: LocalCloud, **filters) -> list[str]:
    request = fnf.ListExecutionsRequest(flow_name="q", **filters)
    return [e.name for e in cloud.fnf_client().list_executions(request).body.executions]


def test_each_execution_is_listed_under_what_it_was_started_with(cloud):
    assert _names(cloud) == [name for name, _ in STARTS]
    assert _names(cloud, qualifier="LATEST") == ["e-latest", "e-explicit-latest"]
    assert _names(cloud, qualifier="1") == ["e-v1", "e-stable"]  # the alias picked version 1
    assert _names(cloud, qualifier="2") == ["e-v2", "e-canary"]
    assert _names(cloud, qualifier="stable") == ["e-stable"]
    assert _names(cloud, qualifier="canary") == ["e-canary"]


def test_the_qualifier_combines_with_the_other_filters_and_pages(cloud):
    assert _names(cloud, qualifier="2", execution_name_prefix="e-c") == ["e-canary"]
    assert _names(cloud, qualifier="1", status="Running") == []
    assert _names(cloud, qualifier="1", status="Succeeded", metadata_only=True) == [
        "e-v1", "e-stable"]
    flows = cloud.fnf_client()
    first = flows.list_executions(fnf.ListExecutionsRequest(
        flow_name="q", qualifier="1", limit=1)).body
    assert [e.name for e in first.executions] == ["e-v1"] and first.next_token
    rest = flows.list_executions(fnf.ListExecutionsRequest(
        flow_name="q", qualifier="1", limit=1, next_token=first.next_token)).body
    assert [e.name for e in rest.executions] == ["e-stable"] and not rest.next_token


@pytest.mark.parametrize(("filters", "code"), [
    ({"qualifier": "9"}, "FlowVersionNotExists"),
    ({"qualifier": "nope"}, "FlowAliasNotExists"),
    ({"map_run_name": "run-1"}, "InvalidArgument"),
    ({"status": "Done"}, "InvalidArgument"),
    ({"started_time_begin": "yesterday"}, "InvalidArgument"),
    ({"started_time_end": "2020-13-01T00:00:00Z"}, "InvalidArgument"),
    ({"limit": 0}, "InvalidArgument"),
    ({"limit": 100}, "InvalidArgument"),
])
def test_bad_filters_are_refused_with_the_documented_errors(cloud, filters, code):
    err = client_error(cloud.fnf_client().list_executions,
                       fnf.ListExecutionsRequest(flow_name="q", **filters))
    assert (err.code, err.status_code) == (code, 404 if code.endswith("NotExists") else 400)
    field = {"map_run_name": "MapRunName", "started_time_begin": "StartedTimeBegin",
             "started_time_end": "StartedTimeEnd", "status": "Status"}.get(next(iter(filters)))
    if field:
        assert field in err.message


def test_what_an_execution_was_started_with_survives_a_restart(tmp_path):
    with mock_cloud(state_dir=tmp_path) as first:
        flows = first.fnf_client()
        create(flows, "q", _flow("one"))
        flows.publish_flow_version(fnf.PublishFlowVersionRequest(flow_name="q"))
        flows.create_flow_alias(fnf.CreateFlowAliasRequest(
            flow_name="q", name="stable", routing_configurations=_route("1")))
        for name, qualifier in (("plain", None), ("pinned", "stable")):
            flows.start_execution(fnf.StartExecutionRequest(
                flow_name="q", execution_name=name, qualifier=qualifier))
            first.wait_for_execution("q", name)
    with mock_cloud(state_dir=tmp_path) as again:
        assert _names(again, qualifier="stable") == _names(again, qualifier="1") == ["pinned"]
        assert _names(again, qualifier="LATEST") == ["plain"]
