"""What the console and the live views read of a legacy flow: its outline (steps, fall-through
edges, jumps, inline branches), laid out like a v1 flow, and the progress fold over it."""

from __future__ import annotations

from deployer.console.layout import layout_flow
from deployer.fdl import read_flow
from deployer.fdl.interpreter.simulate import simulate
from deployer.fdl.legacy.outline import flow_outline
from deployer.fdl.progress import fold
from tests.legacy.corpus import flow_text


def test_the_outline_has_fall_through_edges_jumps_and_inline_branches() -> None:
    flow = read_flow(flow_text("review")).flow
    assert flow is not None
    outline = flow_outline(flow)
    assert outline.start_at == "Score"
    edges = {node.name: [(e.target, e.kind, e.label) for e in node.edges]
             for node in outline.nodes}
    assert edges["Score"] == [("Route", "next", "")]
    assert edges["Route"] == [
        ("Notify", "choice", '$.score >= 80 || ($.author …'),
        ("Reject", "choice", "$.score < 20"),
        ("Archive", "default", "Default")]
    assert edges["Notify"] == [] and edges["Reject"] == []  # succeed and fail end the list
    route = outline.by_name["Route"]
    assert [(n.kind, n.index, n.label) for n in route.nested] == [
        ("branch", 0, "$.score >= 80 || ($.aut…"), ("branch", 2, "Default")]
    default = route.child("branch", 2)
    assert default is not None and [n.name for n in default.nodes] == ["HumanReview",
                                                                       "Escalate"]
    escalate = default.by_name["Escalate"]
    assert [(e.target, e.kind, e.label) for e in escalate.edges] == []  # last: falls off


def test_the_polling_loop_is_laid_out_like_its_v1_twin() -> None:
    flow = read_flow(flow_text("poll_job")).flow
    assert flow is not None
    layout = layout_flow(flow)
    assert layout == layout_flow(flow)  # deterministic
    layers = {n.name: n.layer for n in layout.nodes}
    assert [layers[n] for n in ("StartJob", "Pass", "Wait", "GetJobStatus",
                                "CheckJobComplete")] == [0, 1, 2, 3, 4]
    assert [(e.source, e.target) for e in layout.edges if e.back] == [
        ("CheckJobComplete", "Wait")]
    assert {n.name: n.detail for n in layout.nodes}["Wait"] == "10 s"


def test_the_fold_knows_legacy_steps_and_their_waits() -> None:
    flow = read_flow(flow_text("approval")).flow
    assert flow is not None
    sim = simulate(flow, lambda command, now: None, input={"pause": 3,
                                                           "not_before": "1970-01-01T00:00:09Z"})
    assert sim.history[-1].type.value == "ExecutionTimedOut"  # nobody reported: a year passed
    progress = fold(sim.history[:-1], flow)  # as it stood while it waited
    states = progress.root.states
    assert [states[n].type for n in ("Settle", "AskApprover", "Approved", "Refused")] == [
        "wait", "task", "choice", "fail"]
    assert states["Refused"].status.value == "not-reached"
    assert states["AskApprover"].status.value == "running"  # waits for its callback
    waiting = fold(sim.history[:3], flow).root.states["Settle"].visits[0]
    assert (waiting.status.value, waiting.fires_at) == ("waiting", 5.0)
