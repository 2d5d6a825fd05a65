"""The legacy parser and validator under hypothesis: a flow written from a random tree of steps
reads back as that tree and validates; any value in any field gives diagnostics that point
inside the document, never an exception; and every valid flow runs to an end."""

from __future__ import annotations

import io
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from deployer.fdl import LegacyFlow, check_flow
from deployer.fdl.interpreter.simulate import TaskAnswer, simulate
from deployer.fdl.legacy import walk_steps

NAMES = st.text(alphabet="abcdefghij", min_size=1, max_size=6)


def dump(document: Any) -> str:
    out = io.StringIO()
    YAML(typ="safe", pure=True).dump(document, out)
    return out.getvalue()


@st.composite
def steps(draw: Any, depth: int = 0, names: set[str] | None = None) -> list[dict[str, Any]]:
    """A steps list of unique names (in the whole flow) using every step type."""
    used = names if names is not None else set()
    found: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(NAMES.filter(lambda n: n not in used))
        used.add(name)
        kinds = ["task", "pass", "wait", "succeed", "fail"]
        if depth < 2:
            kinds += ["choice", "parallel", "foreach"]
        kind = draw(st.sampled_from(kinds))
        step: dict[str, Any] = {"type": kind, "name": name}
        if kind == "task":
            step["resourceArn"] = "acs:fc:::services/s/functions/f"
            if draw(st.booleans()):
                step["outputMappings"] = [{"target": "r", "source": "$local.r"}]
        elif kind == "wait":
            step["duration"] = draw(st.integers(0, 100))
        elif kind == "pass":
            step["outputMappings"] = [{"target": "k", "source": draw(st.integers())}]
        elif kind == "fail":
            step["error"] = "E"
        elif kind == "choice":
            step["choices"] = [{"condition": "$.k > 0", "steps": draw(steps(depth + 1, used))}]
            if draw(st.booleans()):
                step["default"] = {"steps": draw(steps(depth + 1, used))}
        elif kind == "parallel":
            step["branches"] = [{"steps": draw(steps(depth + 1, used))}
                                for _ in range(draw(st.integers(1, 2)))]
        elif kind == "foreach":
            step["iterationMapping"] = {"collection": "$.items", "item": "it"}
            step["steps"] = draw(steps(depth + 1, used))
        found.append(step)
    return found


def flatten(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    found = []
    for step in items:
        found.append((step["name"], step["type"]))
        nested = [c.get("steps", []) for c in step.get("choices", [])]
        nested += [step.get("default", {}).get("steps", [])] if "default" in step else []
        nested += [b["steps"] for b in step.get("branches", [])]
        nested += [step["steps"]] if step["type"] == "foreach" else []
        for child in nested:
            found += flatten(child)
    return found


@given(steps(), st.sampled_from(["v1", "v1beta1"]))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_written_flow_reads_back_validates_and_runs(tree: list[dict[str, Any]],
                                                      version: str) -> None:
    text = dump({"version": version, "type": "flow", "steps": tree})
    check = check_flow(text)
    assert [d for d in check.errors] == [], text
    flow = check.flow
    assert isinstance(flow, LegacyFlow)
    assert [(step.name, step.type.value) for _, step in walk_steps(flow.steps)] == \
        flatten(tree)
    ran = simulate(flow, lambda command, now: TaskAnswer('{"r": 1}'),
                   input={"items": [1, 2], "k": 1})
    assert ran.execution.status.value in ("Succeeded", "Failed")
    if ran.execution.status.value == "Failed":
        assert ran.execution.error_code == "E"  # only a fail step fails these flows


VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8),
              st.sampled_from(["$.x", "$input.", "$local[*]", "acs:fnf:::flow/x", "task",
                               "2019-05-02T15:04:05Z", "$.a ==", "!Ref"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(
                                ["type", "name", "steps", "goto", "condition", "source",
                                 "target", "errors", "duration", "timestamp", "choices",
                                 "default", "branches", "iterationMapping", "collection",
                                 "item", "resourceArn", "pattern", "retry", "catch",
                                 "serviceParams", "end", "inputMappings"]), inner,
                                max_size=4)),
    max_leaves=15)


@given(st.dictionaries(st.sampled_from(["version", "type", "steps", "inputMappings",
                                        "outputMappings", "name"]), VALUES, max_size=4),
       st.lists(VALUES, max_size=3))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_value_in_any_field_gives_diagnostics_not_exceptions(top: dict[str, Any],
                                                                 items: list[Any]) -> None:
    document = {"version": "v1", "type": "flow", **top}
    if "steps" not in top:
        document["steps"] = items
    text = dump(document)
    lines = text.count("\n") + 1
    check = check_flow(text)
    for diagnostic in check.diagnostics:
        assert 0 <= diagnostic.line <= lines and diagnostic.code.startswith("FDL")
    if check.ok:
        assert isinstance(check.flow, LegacyFlow)
