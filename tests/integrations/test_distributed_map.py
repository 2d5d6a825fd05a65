"""Distributed Map on the emulator through the official SDK: child executions in a map run
(Express and Standard), ItemsPath or an ItemReader answered from mocks (JSON list, CSV),
ItemConstructor with $Item, ItemBatcher, MaxItems, tolerated failures, ResultWriter, and
ListExecutions with MapRunName."""

from __future__ import annotations

import json
from typing import Any

import pytest
from alibabacloud_fnf20190315 import models as fnf_models

from deployer.testing import LocalCloud

FLOW = """\
Type: StateMachine
SpecVersion: v1
Name: {name}
StartAt: Fan
States:
  - Type: Map
    Name: Fan
    ProcessorConfig:
      ExecutionMode: {mode}
{source}
{extra}
    Processor:
      StartAt: Check
      States:
        - Type: Choice
          Name: Check
          Branches:
            - Condition: $Input.n == 13
              Next: Unlucky
          Default: Square
        - Type: Pass
          Name: Square
          OutputConstructor:
            sq.$: $Input.n * $Input.n
          End: true
        - Type: Fail
          Name: Unlucky
          Code: Unlucky
    Catch:
      - Errors: [FnF.MapRunFailed]
        Next: Caught
        OutputConstructor:
          cause.$: $Context.Current.Error.Detail
    End: true
  - Type: Pass
    Name: Caught
    End: true
"""


def _run(cloud: LocalCloud, fnf: Any, name: str, payload: dict[str, Any], *, mode: str =
         "Express", source: str = "    ItemsPath: $Input.items", extra: str = "",
         execution: str = "e1") -> dict[str, Any]:
    fnf.create_flow(fnf_models.CreateFlowRequest(
        name=name, definition=FLOW.format(name=name, mode=mode, source=source, extra=extra),
        description="", type="FDL"))
    fnf.start_execution(fnf_models.StartExecutionRequest(
        flow_name=name, execution_name=execution, input=json.dumps(payload)))
    done = cloud.wait_for_execution(name, execution.partition("#")[0], timeout=60)
    assert done["Status"] == "Succeeded", done
    return dict(json.loads(done["Output"]))


@pytest.mark.parametrize("mode", ["Express", "Standard"])
def test_items_run_as_child_executions_of_a_map_run(cloud: LocalCloud, fnf: Any,
                                                     mode: str) -> None:
    name = f"dmap-{mode.lower()}"
    out = _run(cloud, fnf, name, {"items": [{"n": 1}, {"n": 2}, {"n": 3}]}, mode=mode,
               extra="    MaxConcurrency: 2")
    assert out["Items"] == [{"sq": 1}, {"sq": 4}, {"sq": 9}]
    assert out["ItemCounts"] == {"Total": 3, "Succeeded": 3, "Failed": 0}
    children = fnf.list_executions(fnf_models.ListExecutionsRequest(
        flow_name=name, map_run_name=out["MapRunName"])).body.executions
    assert sorted(c.name for c in children) == [f"{out['MapRunName']}:{i}" for i in range(3)]
    own = fnf.list_executions(fnf_models.ListExecutionsRequest(flow_name=name)).body.executions
    assert [e.name for e in own] == ["e1"]  # the children are the map run's, not the flow's


def test_a_failed_child_fails_the_map_unless_tolerated(cloud: LocalCloud, fnf: Any) -> None:
    items = {"items": [{"n": n} for n in (1, 13, 3)]}
    caught = _run(cloud, fnf, "dmap-strict", items)
    assert "1 of 3 child executions failed" in caught["cause"]
    tolerated = _run(cloud, fnf, "dmap-tolerant", items, extra="    ToleratedFailureCount: 1")
    assert tolerated["ItemCounts"] == {"Total": 3, "Succeeded": 2, "Failed": 1}
    assert tolerated["Items"][0] == {"sq": 1} and tolerated["Items"][1] is None


def test_an_item_reader_from_mocks_constructor_batcher_and_writer(cloud: LocalCloud,
                                                                  fnf: Any) -> None:
    cloud.load_mocks({"StateMachines": {
        "dmap-json": {"TestCases": {"Read": {"Fan": "List"}}},
        "dmap-csv": {"TestCases": {"Read": {"Fan": "Csv"}}}},
        "MockedResponses": {
            "List": {"0": {"Return": {"Body": json.dumps([{"v": i} for i in range(5)])}}},
            "Csv": {"0": {"Return": {"Body": "n,label\n2,a\n3,b\n"}}}}})
    reader = ("    ItemReader:\n      SourceType: {kind}\n      SourceParameters:\n"
              "        Bucket: data\n        ObjectName: items")
    out = _run(cloud, fnf, "dmap-json", {"offset": 20},
               source=reader.format(kind="OSS_JSON_LIST"), execution="e1#Read",
               extra="    MaxItems: 4\n    ItemConstructor:\n      n.$: $Item.v + $Input.offset")
    assert out["Items"] == [{"sq": n * n} for n in (20, 21, 22, 23)]  # MaxItems: 4 of 5
    csv_out = _run(cloud, fnf, "dmap-csv", {}, source=reader.format(kind="OSS_CSV"),
                   execution="e1#Read",
                   extra="    ItemConstructor:\n      n.$: stringToJson($Item.n)\n"
                         "    ResultWriter:\n      Parameters:\n        Bucket: out\n"
                         "        Prefix: results/")
    assert csv_out["ResultWriterDetails"] == {"Bucket": "out", "Prefix": "results/"}
    assert csv_out["ItemCounts"]["Succeeded"] == 2


def test_batches_are_child_inputs(cloud: LocalCloud, fnf: Any) -> None:
    flow = FLOW.replace("sq.$: $Input.n * $Input.n", "first.$: $Input.Items[0]").replace(
        "$Input.n == 13", "$Input.BatchInput.stop == true")
    fnf.create_flow(fnf_models.CreateFlowRequest(
        name="dmap-batch", description="", type="FDL", definition=flow.format(
            name="dmap-batch", mode="Express", source="    ItemsPath: $Input.items",
            extra="    ItemBatcher:\n      MaxItemsPerBatch: 2\n      BatchInput:\n"
                  "        stop: false")))
    fnf.start_execution(fnf_models.StartExecutionRequest(
        flow_name="dmap-batch", execution_name="e1",
        input=json.dumps({"items": [1, 2, 3, 4, 5]})))
    done = cloud.wait_for_execution("dmap-batch", "e1", timeout=60)
    assert json.loads(done["Output"])["Items"] == [{"first": 1}, {"first": 3}, {"first": 5}]



def test_the_console_shows_the_map_run_with_its_counts() -> None:
    import urllib.request

    from deployer.testing import mock_cloud

    with mock_cloud(console=True) as local:
        _run(local, local.fnf_client(), "dmap-console",
             {"items": [{"n": 1}, {"n": 13}, {"n": 2}]},
             extra="    ToleratedFailurePercentage: 50")
        url = (f"{local.url}/_console/api/r/{local.region}/flows/dmap-console/executions/e1"
               "?state=Fan")
        request = urllib.request.Request(url, headers={"X-Emulator-Token": local.admin_token})
        with urllib.request.urlopen(request, timeout=30) as response:
            model = json.loads(response.read())
    run = model["panel"]["attempts"][0]["map_run"]
    assert (run["total"], run["succeeded"], run["failed"], run["running"]) == (3, 2, 1, 0)
