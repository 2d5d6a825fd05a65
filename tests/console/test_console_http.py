"""The console over plain HTTP: view-models as JSON, escaping, the layout and a long history. No
browser here (tests/browser adds what a browser adds); the live channel is
test_console_live.py, the guard test_local_guard.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deployer.console import execution as ex
from deployer.console.layout import layout_scope
from deployer.fdl import parse_flow
from tests.console.support import (
    COUNTER,
    FLOW,
    NESTED,
    create_flow,
    execution_path,
    get,
    get_json,
    good_headers,
    post,
    seed_cloud,
    start_seed,
)
from tests.emulator.cloudflow_support import history, start

SEED = json.loads((Path(__file__).parents[1] / "fixtures" / "console" / "seed-history.json")
                  .read_text())


def test_layout_is_deterministic_with_the_loop_as_a_back_edge() -> None:
    scope = parse_flow(SEED["definition"]).flow.scope
    first, second = layout_scope(scope), layout_scope(scope)
    assert first == second
    by_name = {n.name: n for n in first.nodes}
    assert [by_name[n].layer for n in ("StartJob", "Pass", "Wait", "GetJobStatus",
                                       "CheckJobComplete")] == [0, 1, 2, 3, 4]
    assert by_name["JobSucceeded"].layer == by_name["FailJobFailed"].layer == 5
    back = [e for e in first.edges if e.back]
    assert [(e.source, e.target) for e in back] == [("CheckJobComplete", "Wait")]
    assert all(not (a.x < b.x + b.w and b.x < a.x + a.w and a.y == b.y)
               for a in first.nodes for b in first.nodes if a is not b)  # no overlap


def _overlap(a: Any, b: Any) -> bool:
    return a.x < b.x + b.w and b.x < a.x + a.w and a.y < b.y + b.h and b.y < a.y + a.h


def test_parallel_and_map_scopes_are_laid_out_inside_their_node_deterministically() -> None:
    scope = parse_flow(NESTED).flow.scope
    first, second = layout_scope(scope), layout_scope(scope)
    assert first == second  # same flow, same coordinates, nested scopes included
    nodes = {n.name: n for n in first.nodes}
    assert [n.name for n in first.nodes] == ["Prepare", "Each", "Fan", "Done"]
    fan, each = nodes["Fan"], nodes["Each"]
    assert [(i.owner, i.kind, i.index, i.label) for i in first.inner] == [
        ("Each", "iteration", 0, "For each item"), ("Fan", "branch", 0, "Branch 1"),
        ("Fan", "branch", 1, "Branch 2")]
    for inner in first.inner:
        owner = nodes[inner.owner]
        assert owner.x <= inner.x and inner.x + inner.layout.width <= owner.x + owner.w
        assert owner.y + 40 <= inner.y  # under the state's own name and type
        assert inner.y + inner.layout.height <= owner.y + owner.h
    left, right = first.inner[1], first.inner[2]
    assert left.x + left.layout.width <= right.x  # branches side by side
    assert fan.h > nodes["Done"].h and each.w >= nodes["Prepare"].w
    assert not any(_overlap(a, b) for a in first.nodes for b in first.nodes if a is not b)
    assert nodes["Done"].y >= fan.y + fan.h  # the next layer starts below the tallest node


def test_nested_nodes_have_keys_statuses_and_accessible_names() -> None:
    from deployer.console.graph import graph_model, node_key
    from deployer.fdl.progress import fold

    with seed_cloud() as cloud:
        create_flow(cloud, "Nested", NESTED)
        start(cloud.fnf_client(), "Nested", "n1", "{}")
        cloud.wait_for_execution("Nested", "n1")
        model = get_json(cloud, "/_console/api" + execution_path(cloud, "n1", "Nested")[9:])
    nodes = {n["key"]: n for n in model["graph"]["nodes"]}
    assert set(nodes) == {"Prepare", "Each", "Fan", "Done", "Each/*/Double", "Fan/0/Left",
                          "Fan/0/Pause", "Fan/1/Right"}
    assert all(n["status"] == "succeeded" for n in nodes.values())
    assert nodes["Each/*/Double"]["visits"] == 3
    assert nodes["Each/*/Double"]["aria"] == \
        "Double, Pass, succeeded, 3 visits over 3 iterations of Each"
    assert nodes["Fan/1/Right"]["aria"] == "Right, Pass, succeeded, visit 1 of 1, branch 2 of Fan"
    assert nodes["Fan"]["aria"] == "Fan, Parallel, succeeded, visit 1 of 1"
    assert {e["key"]: e["count"] for e in model["graph"]["edges"]}["Fan/0/Left->Pause"] == 1
    assert [f["key"] for f in model["graph"]["frames"]] == ["Each/*", "Fan/0", "Fan/1"]
    assert node_key("", "a/b%") == "a%2Fb%25" and node_key("X/0", "a/b") == "X/0/a%2Fb"
    empty = graph_model(layout_scope(parse_flow(NESTED).flow.scope), fold([]))
    assert {n["status"] for n in empty["nodes"]} == {"not-reached"}


def test_seed_execution_view_model_and_pages() -> None:
    with seed_cloud() as cloud:
        start_seed(cloud, "seed-run-1")
        cloud.wait_for_execution(FLOW, "seed-run-1")
        model = get_json(cloud, "/_console/api" + execution_path(cloud, "seed-run-1")[9:])
        nodes = {n["name"]: n for n in model["graph"]["nodes"]}
        assert model["summary"]["status"] == "Succeeded" and model["summary"]["finished"]
        assert nodes["FailJobFailed"]["status"] == "not-reached"
        assert [nodes[n]["visits"] for n in ("Wait", "GetJobStatus", "CheckJobComplete")] \
            == [4, 4, 4]
        assert nodes["GetJobStatus"]["aria"] == "GetJobStatus, Task, succeeded, visit 4 of 4"
        edges = {e["key"]: e for e in model["graph"]["edges"]}
        assert edges["CheckJobComplete->Wait"]["count"] == 3
        assert not edges["CheckJobComplete->FailJobFailed"]["taken"]
        panel = get_json(cloud, "/_console/api" + execution_path(cloud, "seed-run-1")[9:]
                         + "?state=GetJobStatus")
        attempt = panel["panel"]["attempts"][0]
        assert dict(attempt["body_rows"])["job_status"] == "success"
        assert dict(attempt["body_rows"])["try_count"] == "4"
        invocation = attempt["invocation"]
        assert invocation["found"] and invocation["status"] == "Succeeded"
        assert invocation["instance_id"] and not invocation["cold_start"]
        for page in ("/_console/r/cn-hangzhou/flows", f"/_console/r/cn-hangzhou/flows/{FLOW}",
                     f"/_console/r/cn-hangzhou/flows/{FLOW}/executions?status=Succeeded",
                     "/_console/r/cn-hangzhou/functions",
                     "/_console/r/cn-hangzhou/functions/GetJobStatus"
                     f"?request={invocation['request_id']}",
                     execution_path(cloud, "seed-run-1") + "?view=events"):
            status, headers, body = get(cloud, page)
            assert status == 200, page
            assert "script-src 'self'" in headers["Content-Security-Policy"]
            assert b'src="http' not in body and b'href="http' not in body  # nothing external
        status, headers, body = get(cloud, execution_path(cloud, "seed-run-1") + "/history.json")
        ids = [e["EventId"] for e in json.loads(body)["Events"]]
        assert status == 200 and ids == sorted(ids) and len(ids) == 77
        assert get(cloud, "/_console/r/cn-hangzhou/flows/Nope")[0] == 404
        counts = get_json(cloud, f"/_console/api/r/cn-hangzhou/flows/{FLOW}/executions")
        assert {c["status"]: c["count"] for c in counts["counts"]}["Succeeded"] == 1


def test_start_from_the_console_api() -> None:
    with seed_cloud() as cloud:
        path = f"/_console/api/r/cn-hangzhou/flows/{FLOW}/executions"
        good = good_headers(cloud)
        status, body = post(cloud, path, {"name": "from-console", "input": '{"delay": 1}'}, good)
        assert status == 200 and body["url"].endswith("/executions/from-console")
        status, body = post(cloud, path, {"name": "bad", "input": "[1]"}, good)
        assert status == 400 and "JSON object" in body["Message"]


def test_user_data_is_escaped_everywhere() -> None:
    attack = "</script><img src=x onerror=alert(1)>"
    with seed_cloud() as cloud:
        start_seed(cloud, "xss", note=attack)
        cloud.wait_for_execution(FLOW, "xss")
        for page in (execution_path(cloud, "xss"), execution_path(cloud, "xss") + "?view=events",
                     f"/_console/r/cn-hangzhou/flows/{FLOW}/executions"):
            status, _, body = get(cloud, page)
            assert status == 200
            assert b"<img src=x" not in body and b"</script><img" not in body


def test_an_execution_of_about_5000_events_renders_whole() -> None:
    """A 400-turn loop (about 4,800 events, near the history cap): the page over HTTP draws
    every visit and pages the events (how fast: ``python benchmarks/console.py``)."""
    with seed_cloud() as cloud:
        create_flow(cloud, "Counter", COUNTER.replace("$Input.i < 25", "$Input.i < 400"))
        start(cloud.fnf_client(), "Counter", "big", "{}")
        final = cloud.wait_for_execution("Counter", "big", timeout=120)
        assert final["Status"] == "Succeeded"
        status, _, body = get(cloud, execution_path(cloud, "big", "Counter"))
        assert status == 200
        assert b'id="n-Tick"' in body and b'data-visits="400"' in body
        model = ex.execution_model(cloud.server.console._src,  # type: ignore[union-attr]
                                   cloud.region, "Counter", "big")
        events = len(history(cloud.fnf_client(), "Counter", "big"))
        assert events > 4500
        assert model["events"]["total"] == events
