"""Parser: the seed flow becomes the expected frozen AST; bad YAML becomes diagnostics; no input
makes check_flow raise (hypothesis)."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import jinja2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from deployer.fdl import (
    ChoiceState,
    Expr,
    FailState,
    MapState,
    ParallelState,
    PassState,
    Position,
    SucceedState,
    TaskMode,
    TaskState,
    Template,
    WaitState,
    check_flow,
    parse_flow,
    walk_states,
)

FLOWS = Path(__file__).parent.parent / "fixtures" / "flows" / "valid"
SEED = (FLOWS / "seed_poll_job.yaml").read_text()


def test_seed_flow_parses_into_the_expected_ast() -> None:
    result = parse_flow(SEED, source="seed.yaml")
    assert result.diagnostics == ()
    flow = result.flow
    assert flow is not None
    assert (flow.type, flow.name, flow.spec_version, flow.start_at) == (
        "StateMachine",
        "MyWorkFlow",
        "v1",
        "StartJob",
    )
    kinds = [type(state) for state in flow.states]
    assert kinds == [
        TaskState,
        PassState,
        WaitState,
        TaskState,
        ChoiceState,
        FailState,
        SucceedState,
    ]
    start, pass_, wait, poll, check, fail, succeed = flow.states
    assert isinstance(start, TaskState) and start.action == "FC:InvokeFunction"
    assert start.task_mode is TaskMode.REQUEST_COMPLETE and start.next == "Pass"
    assert start.position == Position(6, 5)
    assert isinstance(pass_, PassState)
    assert pass_.output_constructor is not None
    assert pass_.output_constructor.root_expression == Expr("$Input", Position(18, 10))
    assert pass_.input_constructor is not None
    assert pass_.input_constructor["try_count"] == 0
    assert pass_.input_constructor["job_id.$"] == Expr("$Input.Body.job_id", Position(21, 17))
    assert isinstance(wait, WaitState) and wait.seconds == 10 and wait.seconds_expr is None
    assert isinstance(poll, TaskState) and poll.parameters is not None
    body = poll.parameters["body"]
    assert isinstance(body, Template)
    assert list(body) == ["job_id.$", "try_count.$", "delay.$"]
    assert body.fields[2].output_key == "delay"
    assert body["delay.$"] == Expr("$Context.Execution.Input.delay", Position(36, 18))
    assert isinstance(check, ChoiceState) and check.default == "FailJobFailed"
    assert [(b.condition.text if b.condition else None, b.next) for b in check.branches] == [
        ('$Input.job_status== "success"', "JobSucceeded"),
        ("$Input.try_count > 3", "FailJobFailed"),
        ('$Input.job_status== "running"', "Wait"),
    ]
    assert isinstance(fail, FailState) and (fail.code, fail.detail, fail.end) == (
        "timeout",
        "",
        True,
    )
    assert isinstance(succeed, SucceedState) and succeed.end
    assert flow.by_name["Wait"] is wait
    assert poll.parameters.to_plain()["body"] == {
        "job_id.$": "$Input.job_id",
        "try_count.$": "$Input.try_count",
        "delay.$": "$Context.Execution.Input.delay",
    }


def test_rendered_template_checks_clean(project_root: Path) -> None:
    environment = jinja2.Environment(undefined=jinja2.StrictUndefined)
    template = environment.from_string((project_root / "templates" / "flow.yaml.j2").read_text())
    text = template.render(
        region="cn-hangzhou",
        account_id="1234567890",
        start_job_function="StartJob",
        get_job_status_function="GetJobStatus",
    )
    for mode in ("Standard", "Express"):
        result = check_flow(text, source="flow.yaml", execution_mode=mode)
        assert result.ok and result.diagnostics == ()


def test_nodes_are_frozen_and_collections_immutable() -> None:
    flow = parse_flow(SEED).flow
    assert flow is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        flow.name = "other"  # type: ignore[misc]
    assert isinstance(flow.states, tuple)
    with pytest.raises(TypeError):
        flow.by_name["X"] = flow.states[0]  # type: ignore[index]
    hash(flow)


def test_nested_scopes_timeout_and_concurrency_spellings() -> None:
    text = """\
Type: StateMachine
Name: n
SpecVersion: v1
StartAt: P
States:
  - Type: Parallel
    Name: P
    Next: M
    Branches:
      - StartAt: T
        States:
          - {Type: Task, Name: T, Action: "FC:InvokeFunction", Timeout: "30", End: true}
      - StartAt: U
        States:
          - {Type: Task, Name: U, Action: "FC:InvokeFunction", Timeout.$: $Input.t, End: true}
  - Type: Map
    Name: M
    ItemsPath: $Input.xs
    MaxConcurrency: 5
    Processor:
      StartAt: Q
      States: [{Type: Pass, Name: Q, End: true}]
    End: true
"""
    flow = parse_flow(text).flow
    assert flow is not None
    parallel, map_state = flow.states
    assert isinstance(parallel, ParallelState) and isinstance(map_state, MapState)
    first, second = (branch.states[0] for branch in parallel.branches)
    assert isinstance(first, TaskState) and first.timeout == 30
    assert isinstance(second, TaskState) and second.timeout == Expr("$Input.t", Position(15, 75))
    assert map_state.max_concurrency == 5 and map_state.processor is not None
    assert map_state.items_path == Expr("$Input.xs", Position(18, 16))
    assert [(outer, state.name) for outer, state in walk_states(flow.scope)] == [
        ((), "P"),
        (("P",), "T"),
        (("P",), "U"),
        ((), "M"),
        (("M",), "Q"),
    ]


@pytest.mark.parametrize(
    ("text", "code", "line", "column", "path"),
    [
        ("Type: [\n", "FDL001", 2, 1, ""),
        ("a: b: c\n", "FDL001", 1, 5, ""),
        ("Type: x\n---\nType: y\n", "FDL001", 2, 1, ""),
        ("", "FDL003", 1, 1, ""),
        ("- Type: Pass\n", "FDL003", 1, 1, ""),
        ("just text\n", "FDL003", 1, 1, ""),
        ("a: &x [1, *x]\n", "FDL006", 1, 8, ""),
    ],
)
def test_unreadable_documents_give_one_diagnostic_and_no_flow(
    text: str, code: str, line: int, column: int, path: str
) -> None:
    result = parse_flow(text, source="f.yaml")
    assert result.flow is None
    (diagnostic,) = result.diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.column, diagnostic.path) == (
        code,
        line,
        column,
        path,
    )
    assert diagnostic.format().startswith(f"f.yaml:{line}:{column}: error {code}: ")


@pytest.mark.parametrize(
    ("text", "code", "line", "column", "path"),
    [
        ("Name: a\nName: b\n", "FDL002", 2, 1, "Name"),
        (
            "States:\n  - Name: A\n    End: true\n    End: false\n",
            "FDL002",
            4,
            5,
            "States[0](A).End",
        ),
        (
            "States:\n  - {Name: A, Parameters: {body: {k: 1, k: 2}}}\n",
            "FDL002",
            2,
            41,
            "States[0](A).Parameters.body.k",
        ),
        ("States:\n  - Name: A\n  - just a string\n", "FDL004", 3, 5, "States[1]"),
        (
            "States:\n  - {Type: Parallel, Name: P, Branches: [7]}\n",
            "FDL004",
            2,
            42,
            "States[0](P).Branches[0]",
        ),
        (
            "States:\n  - {Type: Task, Name: T, Retry: [x]}\n",
            "FDL004",
            2,
            35,
            "States[0](T).Retry[0]",
        ),
        ("? [a, b]\n: c\n", "FDL005", 1, 3, ""),
    ],
)
def test_document_level_problems_are_diagnostics_with_paths(
    text: str, code: str, line: int, column: int, path: str
) -> None:
    result = parse_flow(text)
    assert result.flow is not None
    found = [(d.code, d.line, d.column, d.path) for d in result.diagnostics]
    assert (code, line, column, path) in found


def test_non_mapping_state_is_skipped_but_indexes_stay_yaml_indexes() -> None:
    text = SEED.replace("States:\n", "States:\n  - 42\n", 1)
    result = check_flow(text)
    assert [(d.code, d.path) for d in result.errors] == [("FDL004", "States[0]")]
    assert result.flow is not None and len(result.flow.states) == 7
    broken = text.replace("Seconds: 10", "Seconds: ten")
    paths = [d.path for d in check_flow(broken).errors]
    assert "States[3](Wait).Seconds" in paths


def test_merge_keys_are_expanded() -> None:
    text = """\
Type: StateMachine
Name: m
SpecVersion: v1
StartAt: A
defaults: &fc
  Action: FC:InvokeFunction
States:
  - <<: *fc
    Type: Task
    Name: A
    Parameters: {resourceArn: arn, invocationType: Sync}
    End: true
"""
    flow = parse_flow(text).flow
    assert flow is not None
    state = flow.states[0]
    assert isinstance(state, TaskState) and state.action == "FC:InvokeFunction"


def test_diagnostic_json_has_stable_keys() -> None:
    (diagnostic,) = parse_flow("Name: a\nName: b\n", source="f.yaml").diagnostics
    assert diagnostic.to_json() == {
        "code": "FDL002",
        "severity": "error",
        "message": diagnostic.message,
        "line": 2,
        "column": 1,
        "path": "Name",
        "hint": None,
        "source": "f.yaml",
    }
    json.dumps(diagnostic.to_json())


# -- fuzzing: nothing makes check_flow raise ------------------------------------------------

_yaml = YAML(typ="safe", pure=True)
SEED_DATA = _yaml.load(SEED)
KEYS = st.sampled_from(
    [
        "Type",
        "Name",
        "Next",
        "End",
        "States",
        "StartAt",
        "Branches",
        "Seconds",
        "Seconds.$",
        "Parameters",
        "body",
        "x.$",
        "$",
        "Retry",
        "Catch",
        "Errors",
        "Processor",
        "ItemsPath",
        "Condition",
        "Default",
        "MaxConcurrency",
        "Timeout",
        "TaskMode",
        "Action",
        "Code",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(
        [
            "Task",
            "Pass",
            "Wait",
            "Choice",
            "Succeed",
            "Fail",
            "Parallel",
            "Map",
            "$Input.x",
            "$Output.(",
            "FC:InvokeFunction",
            "Sync",
            "v1",
            "StateMachine",
        ]
    ),
)
DOCUMENTS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.dictionaries(st.one_of(KEYS, st.text(max_size=8)), inner, max_size=6),
    ),
    max_leaves=40,
)


def _dump(data: Any) -> str:
    stream = io.StringIO()
    _yaml.dump(data, stream)
    return stream.getvalue()


def _check_never_raises(text: str) -> None:
    result = check_flow(text, source="fuzz.yaml")
    for diagnostic in result.diagnostics:
        assert diagnostic.code.startswith("FDL") and diagnostic.message
        assert diagnostic.line >= 1 and diagnostic.column >= 1
    assert result.ok == (result.flow is not None and not result.errors)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_arbitrary_text_never_raises(text: str) -> None:
    _check_never_raises(text)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCUMENTS)
def test_arbitrary_documents_never_raise(data: Any) -> None:
    _check_never_raises(_dump(data))
    _check_never_raises(json.dumps(data))


@st.composite
def seed_mutations(draw: st.DrawFn) -> Any:
    data = json.loads(json.dumps(SEED_DATA))
    for _ in range(draw(st.integers(1, 4))):
        node = data
        while True:
            children = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
            containers = [(k, v) for k, v in children if isinstance(v, (dict, list)) and v]
            if not containers or draw(st.booleans()):
                break
            node = draw(st.sampled_from(containers))[1]
        keys = list(node.keys()) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            continue
        key = draw(st.sampled_from(keys))
        action = draw(st.sampled_from(["delete", "rename", "swap"]))
        if action == "delete":
            del node[key]
        elif action == "rename" and isinstance(node, dict):
            node[draw(KEYS) + draw(st.sampled_from(["", "x"]))] = node.pop(key)
        else:
            node[key] = draw(DOCUMENTS)
    return data


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed_mutations())
def test_seed_mutations_never_raise(data: Any) -> None:
    _check_never_raises(_dump(data))
