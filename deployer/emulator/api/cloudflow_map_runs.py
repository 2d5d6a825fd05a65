"""CloudFlow's wire shapes and readers for map runs and execution relations (part of the
CloudFlow contract of :mod:`.cloudflow`, whose action table serves them).

* :func:`map_run_to_wire`: DescribeMapRun's answer (``alibabacloud_fnf20190315``'s
  ``DescribeMapRunResponseBody``: ``Status``, ``StartedTime``, ``StoppedTime``,
  ``Concurrency``, ``ToleratedFailedCount``, ``ToleratedFailedPercentage``,
  ``ExecutionName``, ``MapRunName``, ``ItemCounts``);
* :func:`map_run_update_to_wire`: UpdateMapRun's answer (the settings as they now are);
* :func:`read_map_run_changes`: UpdateMapRun's ``Concurrency`` (1-100),
  ``ToleratedFailedCount`` (>= 0) and ``ToleratedFailedPercentage`` (0-100);
* :func:`relations_to_wire`: the parent and children DescribeExecution adds (INFERRED:
  docs/emulator.md, "Sub-flows and map runs on the wire").
"""

from __future__ import annotations

import math

from deployer.emulator.api import errors as e
from deployer.emulator.api.contract import Body, RpcCall
from deployer.emulator.records import MapRunRow
from deployer.emulator.services.execution_relations import Relations
from deployer.emulator.services.map_runs import MapRunChanges, MapRunView
from deployer.fdl.interpreter.history import format_time

__all__ = ["map_run_to_wire", "map_run_update_to_wire", "read_map_run_changes",
           "relations_to_wire"]

#: The highest concurrency of a distributed Map's map run (its quota's default).
MAX_MAP_RUN_CONCURRENCY = 100


def _settings(row: MapRunRow) -> Body:
    return {"MapRunName": row.name, "Concurrency": row.concurrency,
            "ToleratedFailedCount": row.tolerated_count or 0,
            "ToleratedFailedPercentage": row.tolerated_percentage or 0}


def map_run_to_wire(view: MapRunView) -> Body:
    """A map run as DescribeMapRun answers it."""
    row = view.row
    body: Body = {"ExecutionName": view.execution_name, **_settings(row),
                  "Status": row.status, "StartedTime": format_time(row.started_at),
                  "ItemCounts": dict(view.item_counts)}
    if row.stopped_at is not None:
        body["StoppedTime"] = format_time(row.stopped_at)
    return body


def map_run_update_to_wire(flow_name: str, execution_name: str, row: MapRunRow) -> Body:
    """UpdateMapRun's answer: the map run's settings after the change."""
    return {"FlowName": flow_name, "ExecutionName": execution_name, **_settings(row)}


def read_map_run_changes(call: RpcCall) -> MapRunChanges:
    """UpdateMapRun's settings; absent ones stay as they are."""
    concurrency = call.integer("Concurrency", 0, 1, MAX_MAP_RUN_CONCURRENCY) \
        if call.text("Concurrency") else None
    count = call.integer("ToleratedFailedCount", 0, 0, 10 ** 9) \
        if call.text("ToleratedFailedCount") else None
    raw = call.text("ToleratedFailedPercentage")
    percentage = None
    if raw:
        try:
            percentage = float(raw)
        except ValueError:
            percentage = math.nan
        if not 0 <= percentage <= 100:  # NaN fails too
            raise e.InvalidArgument("ToleratedFailedPercentage must be a number between 0 "
                                    f"and 100, got {raw!r}.")
    return MapRunChanges(concurrency, count, percentage)


def relations_to_wire(rel: Relations) -> Body:
    """The parent and children DescribeExecution adds (only the ones the execution has)."""
    body: Body = {}
    if rel.parent is not None:
        parent: Body = {"FlowName": rel.parent.flow_name, "ExecutionName": rel.parent.name}
        if rel.map_run:
            parent["MapRunName"] = rel.map_run
        body["ParentExecution"] = parent
    if rel.children:
        body["ChildExecutions"] = [{"FlowName": c.flow_name, "ExecutionName": c.name}
                                   for c in rel.children]
    if rel.map_runs:
        body["MapRunNames"] = list(rel.map_runs)
    return body
