"""The legacy dialect loads: every construct parses and validates, and mistakes get the same
quality of diagnostics as SpecVersion v1 (code, line:column, step path, "did you mean")."""

from __future__ import annotations

import pytest

from deployer.fdl import LegacyFlow, Severity, check_flow, read_flow
from deployer.fdl.legacy import (
    ChoiceStep,
    ForeachStep,
    ParallelStep,
    TaskStep,
    WaitStep,
    walk_steps,
)
from deployer.fdl.legacy.resources import Integration, resolve_task
from deployer.fdl.syntax.ast import TaskMode
from tests.legacy.corpus import CASES, flow_text


def errors(text: str) -> list[tuple[str, int, int, str]]:
    return [(d.code, d.line, d.column, d.path) for d in check_flow(text).errors]


def diagnostics(text: str) -> list[tuple[str, str, int, int, str, str | None]]:
    return [(d.code, d.severity.value, d.line, d.column, d.path, d.hint)
            for d in check_flow(text).diagnostics]


@pytest.mark.parametrize("name", sorted({case.flow for case in CASES}))
def test_every_corpus_flow_loads_in_the_legacy_dialect(name: str) -> None:
    check = check_flow(flow_text(name), source=f"{name}.yaml")
    assert check.ok, [d.format() for d in check.errors]
    assert isinstance(check.flow, LegacyFlow)
    assert read_flow(flow_text(name)).flow == check.flow


def test_the_ast_keeps_every_construct() -> None:
    flow = read_flow(flow_text("review")).flow
    assert isinstance(flow, LegacyFlow) and flow.version == "v1"
    names = [(outer, step.name) for outer, step in walk_steps(flow.steps)]
    assert names[:4] == [((), "Score"), ((), "Route"), (("Route",), "Approve"),
                         (("Route",), "HumanReview")]
    route = flow.steps.by_name["Route"]
    assert isinstance(route, ChoiceStep)
    assert route.choices[0].goto == "Notify" and route.choices[1].steps is None
    assert route.default is not None and route.default.goto is None
    assert [s.name for s in route.default.steps.steps] == ["HumanReview", "Escalate"]
    batch = read_flow(flow_text("batch")).flow
    assert isinstance(batch, LegacyFlow)
    resize = batch.steps.by_name["ResizeAll"]
    assert isinstance(resize, ForeachStep) and resize.iteration is not None
    assert (resize.iteration.collection.text, resize.iteration.item) == ("$.files", "file")
    assert isinstance(batch.steps.by_name["Summaries"], ParallelStep)
    approval = read_flow(flow_text("approval")).flow
    assert isinstance(approval, LegacyFlow)
    waits = [s for s in approval.steps.steps if isinstance(s, WaitStep)]
    assert [w.duration if isinstance(w.duration, int) or w.duration is None
            else w.duration.text for w in waits] == [5, "$.pause", None, 0]


@pytest.mark.parametrize(("arn", "ref", "action", "kind", "target", "resource"), [
    ("acs:fc:cn-hangzhou:123:services/s/functions/f", False, "FC:InvokeFunction", "function",
     "f", "acs:fc:cn-hangzhou:123:services/s/functions/f"),
    ("acs:fc:::services/s.LATEST/functions/f", False, "FC:InvokeFunction", "function", "f",
     "acs:fc:::services/s.LATEST/functions/f"),
    ("acs:fc:::functions/f/prod", False, "FC:InvokeFunction", "function", "f",
     "acs:fc:::functions/f/prod"),
    ("svc/fn", True, "FC:InvokeFunction", "function", "fn", "acs:fc:::services/svc/functions/fn"),
    ("acs:fnf:::flow/child", False, "FNF:StartExecution", "flow", "child",
     "acs:fnf:::flow/child"),
    ("acs:fnf:::flows/child", False, "FNF:StartExecution", "flow", "child",
     "acs:fnf:::flow/child"),
    ("acs:mns:::/topics/t/messages", False, "MNS:PublishMessage", "topic", "t", ""),
    ("acs:mns:::/queues/q/messages", False, "MNS:SendMessage", "queue", "q", ""),
])
def test_a_resource_is_the_integration_a_v1_task_names(arn: str, ref: bool, action: str,
                                                       kind: str, target: str,
                                                       resource: str) -> None:
    written = f"!Ref {arn}" if ref else arn
    flow = read_flow(f"version: v1\ntype: flow\nsteps:\n  - type: task\n    name: t\n"
                     f"    resourceArn: {written}\n").flow
    assert isinstance(flow, LegacyFlow)
    step = flow.steps.steps[0]
    assert isinstance(step, TaskStep) and step.ref is ref
    found = resolve_task(step)
    assert found == Integration(action, TaskMode.REQUEST_COMPLETE, kind, resource, target)


def test_patterns_are_task_modes_and_sync_is_for_sub_flows() -> None:
    base = "version: v1\ntype: flow\nsteps:\n  - type: task\n    name: t\n"
    callback = check_flow(base + "    resourceArn: acs:fc:::functions/f\n"
                          "    pattern: waitForCallback\n")
    assert callback.ok
    step = callback.flow.steps.steps[0]  # type: ignore[union-attr]
    assert resolve_task(step).task_mode is TaskMode.WAIT_FOR_CUSTOM_CALLBACK  # type: ignore
    assert errors(base + "    resourceArn: acs:fc:::functions/f\n    pattern: sync\n") == [
        ("FDL106", 7, 14, "steps[0](t).pattern")]
    assert errors(base + "    resourceArn: acs:fc:::functions/f\n    pattern: synch\n") == [
        ("FDL106", 7, 14, "steps[0](t).pattern")]
    express = check_flow(base + "    resourceArn: acs:fnf:::flow/c\n    pattern: sync\n",
                         execution_mode="Express")
    assert [d.code for d in express.errors] == ["FDL506"]


BROKEN = """version: v1beta2
type: flow
steps:
  - type: tsak
    name: a
  - type: task
    name: b
    resourceArn: acs:fc:::services/s/functions/f
    inputMapings:
      - target: x
        source: $.x
    outputMappings:
      - target: y
        source: $local.[
    retry:
      - errors: []
        multiplier: 0.5
  - type: choice
    name: c
    choices:
      - condition: $.x ==
        goto: bb
      - condition: $.y == 1
        goto: d
    default:
      goto: b
      stesp: []
  - type: wait
    name: w
    duration: 200000
    goto: b
  - type: pass
    name: d
  - type: pass
    name: d
"""


def test_mistakes_get_positioned_diagnostics_with_advice() -> None:
    found = diagnostics(BROKEN)
    assert found == [
        ("FDL106", "error", 1, 10, "version", "did you mean 'v1beta1'?"),
        ("FDL106", "error", 4, 11, "steps[0](a).type", "did you mean 'task'?"),
        ("FDL103", "error", 9, 5, "steps[1](b).inputMapings", "did you mean 'inputMappings'?"),
        ("FDL301", "error", 14, 17, "steps[1](b).outputMappings[0].source",
         "e.g. $input.key, $local.key or $context.task.token"),
        ("FDL108", "error", 16, 17, "steps[1](b).retry[0].errors", "FnF.ALL matches every error"),
        ("FDL406", "error", 17, 21, "steps[1](b).retry[0].multiplier", None),
        ("FDL301", "error", 21, 20, "steps[2](c).choices[0].condition",
         'e.g. $.status == "ready" && $.count > 1'),
        ("FDL203", "error", 22, 15, "steps[2](c).choices[0].goto", "did you mean 'b'?"),
        ("FDL103", "error", 27, 7, "steps[2](c).default.stesp", "did you mean 'steps'?"),
        ("FDL206", "warning", 28, 5, "steps[3](w)", None),
        ("FDL402", "error", 30, 15, "steps[3](w).duration", None),
        ("FDL104", "error", 31, 5, "steps[3](w).goto",
         "steps run in the order written; jump with a choice's goto or a catch's goto"),
        ("FDL204", "error", 35, 11, "steps[5](d).name", "goto and history tell steps by name"),
    ]
    messages = [d.message for d in check_flow(BROKEN).diagnostics if d.code == "FDL301"]
    assert messages == [
        "invalid path `$local.[`: a name must follow '.' (at offset 7)",
        "invalid condition `$.x ==`: the condition ends where a value is expected (at offset 6)",
    ]


@pytest.mark.parametrize(("text", "expected"), [
    # a goto into another list: named as such
    ("  - type: choice\n    name: c\n    choices:\n      - condition: $.a\n"
     "        steps:\n          - type: pass\n            name: inner\n"
     "  - type: choice\n    name: d\n    choices:\n      - condition: $.b\n"
     "        goto: inner\n",
     [("FDL203", "steps[1](d).choices[0].goto",
       "'inner' is in another steps list; goto jumps to a step of the same list")]),
    # v1 keys in a legacy step
    ("  - type: pass\n    name: p\n    Next: q\n",
     [("FDL103", "steps[0](p).Next",
       "legacy steps run in the order written; jump with a choice's goto")]),
    # a key of another step type
    ("  - type: pass\n    name: p\n    resourceArn: acs:fc:::functions/f\n",
     [("FDL104", "steps[0](p).resourceArn", "'resourceArn' belongs to task steps")]),
    # both duration and timestamp; a timestamp that is not RFC 3339
    ("  - type: wait\n    name: w\n    duration: 1\n    timestamp: 2019-05-02T15:04:05Z\n",
     [("FDL107", "steps[0](w).timestamp", None)]),
    ("  - type: wait\n    name: w\n    timestamp: tomorrow\n",
     [("FDL106", "steps[0](w).timestamp", "e.g. 2019-05-02T15:04:05Z")]),
    # errorMappings read the error or the cause
    ("  - type: task\n    name: t\n    resourceArn: acs:fc:::functions/f\n"
     "    errorMappings:\n      - target: e\n        source: $local.code\n",
     [("FDL106", "steps[0](t).errorMappings[0].source", None)]),
    # an unknown resource
    ("  - type: task\n    name: t\n    resourceArn: acs:oss:::bucket/x\n",
     [("FDL106", "steps[0](t).resourceArn", "use one of: acs:fc:<region>:<account>:services/"
       "<service>/functions/<function>, acs:fc:<region>:<account>:functions/<function>, !Ref "
       "<service>/<function>, acs:fnf:<region>:<account>:flow/<flow>, acs:mns:<region>:"
       "<account>:/topics|queues/<name>/messages")]),
    # an empty steps list
    ("  - type: foreach\n    name: f\n    iterationMapping: {collection: $.a, item: x}\n"
     "    steps: []\n",
     [("FDL108", "steps[0](f).steps", None)]),
])
def test_more_mistakes(text: str, expected: list[tuple[str, str, str | None]]) -> None:
    check = check_flow("version: v1\ntype: flow\nsteps:\n" + text)
    assert [(d.code, d.path, d.hint) for d in check.errors] == expected


def test_warnings_leave_the_flow_valid() -> None:
    text = ("version: v1\ntype: flow\nsteps:\n  - type: pass\n    name: p\n"
            "    outputMappings:\n      - target: x\n        source: $.x\n"
            "  - type: task\n    name: t\n    action: ecs:DescribeInstances\n")
    check = check_flow(text)
    assert check.ok
    assert [(d.code, d.severity, d.hint) for d in check.diagnostics] == [
        ("FDL109", Severity.WARNING, "write $input.x"),
        ("FDL504", Severity.WARNING, "valid for the cloud; mock it in `deploy flow test`"),
    ]


def test_the_legacy_keys_beside_v1_ones_are_v1_advice() -> None:
    text = "Type: StateMachine\nName: t\nSpecVersion: v1\nsteps: []\nStartAt: A\nStates: []\n"
    assert not isinstance(read_flow(text).flow, LegacyFlow)


def test_a_flow_level_name_is_refused_by_name() -> None:
    check = check_flow("version: v1\ntype: flow\nname: x\nsteps:\n  - type: pass\n    name: p\n")
    assert [(d.code, d.path, d.message) for d in check.errors] == [
        ("FDL103", "name", "unknown field 'name' in the flow")]


def test_the_v1_validator_alone_names_the_dialect_it_does_not_read() -> None:
    from deployer.fdl import parse_flow, validate_flow

    text = "version: v1beta1\ntype: flow\nsteps:\n  - {type: pass, name: p}\n"
    (error,) = validate_flow(parse_flow(text).flow)  # type: ignore[arg-type]
    assert (error.code, error.line, error.path) == ("FDL105", 1, "")
    assert "legacy CloudFlow dialect (version: v1beta1, type: flow, steps)" in error.message
    assert "check_flow" in (error.hint or "") and check_flow(text).ok
