"""Constructors and Parameters: the `.$` rule, the root `$` key, key paths in errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.fdl.expressions.builtins import SeededEntropy
from deployer.fdl.expressions.constructors import build_value, compile_template, iter_expressions
from deployer.fdl.expressions.evaluator import EvaluationError, ExpressionScope


def test_seed_constructors():
    scope = ExpressionScope(
        input={"job_id": "j-1", "try_count": 0},
        output={"Body": {"job_status": "running", "try_count": 1}},
        context={"Execution": {"Input": {"delay": 30}}},
    )
    assert build_value({"$": "$Input"}, scope) == {"job_id": "j-1", "try_count": 0}
    assert build_value({"$": "jsonMerge($Input, $Output.Body)"}, scope) == {
        "job_id": "j-1",
        "try_count": 1,
        "job_status": "running",
    }
    parameters = {
        "resourceArn": "acs:fc:cn-hangzhou:123:functions/GetJobStatus",
        "invocationType": "Sync",
        "body": {
            "job_id.$": "$Input.job_id",
            "try_count.$": "$Input.try_count",
            "delay.$": "$Context.Execution.Input.delay",
        },
    }
    assert build_value(parameters, scope) == {
        "resourceArn": "acs:fc:cn-hangzhou:123:functions/GetJobStatus",
        "invocationType": "Sync",
        "body": {"job_id": "j-1", "try_count": 0, "delay": 30},
    }
    no_delay = ExpressionScope(input=scope.input, context={"Execution": {"Input": {}}})
    assert build_value(parameters, no_delay)["body"]["delay"] is None


def test_reference_example_10_1():
    shape = {
        "user.$": "$Input.name",
        "greeting.$": 'format("hello {}", $Input.name)',
        "fixed": "$Input.name",
    }
    shaped = build_value(shape, ExpressionScope(input={"name": "Ann"}))
    assert shaped == {"user": "Ann", "greeting": "hello Ann", "fixed": "$Input.name"}
    done = build_value(
        {"msg.$": "$Input.greeting", "n.$": "length($Input.user)"}, ExpressionScope(input=shaped)
    )
    assert done == {"msg": "hello Ann", "n": 3}


def test_reference_examples_10_2_and_4_2():
    scope = ExpressionScope(
        input={"id": 7},
        output={"Body": {"value": 49, "videoContent": "abc"}},
        context={"Current": {"Name": "Call"}},
        entropy=SeededEntropy(1),
    )
    out = build_value({"result.$": "$Output.Body.value", "trace.$": "$Context.Current.Name"}, scope)
    assert out == {"result": 49, "trace": "Call"}
    out = build_value(
        {"returnID.$": "uuid()", "videoContent.$": "$Output.Body.videoContent"}, scope
    )
    assert out["videoContent"] == "abc" and len(out["returnID"]) == 36


def test_literals_arrays_and_nesting():
    template = {
        "n": 1,
        "f": 2.5,
        "b": True,
        "z": None,
        "s": "$Input.x",
        "list": ["$Input.x", 1, {"inner.$": "$Input.x"}, [{"deep.$": "$Input.x + 1"}]],
        "map": {"a": {"b.$": "$Input.x"}},
    }
    assert build_value(template, ExpressionScope(input={"x": 1})) == {
        "n": 1,
        "f": 2.5,
        "b": True,
        "z": None,
        "s": "$Input.x",
        "list": ["$Input.x", 1, {"inner": 1}, [{"deep": 2}]],
        "map": {"a": {"b": 1}},
    }
    assert build_value("plain", ExpressionScope()) == "plain"
    assert build_value({}, ExpressionScope()) == {}


def test_result_never_shares_literal_parts_with_the_template():
    template = {"a": [1, {"b": [2]}]}
    result = build_value(template, ExpressionScope())
    result["a"][1]["b"].append(3)
    assert template == {"a": [1, {"b": [2]}]}


def test_root_key_nested():
    scope = ExpressionScope(input={"x": [1]})
    assert build_value({"body": {"$": "$Input.x"}}, scope) == {"body": [1]}


@pytest.mark.parametrize(
    ("template", "path", "reason"),
    [
        ({"body": {"delay.$": "$Input.a.b"}}, "body.delay.$", "EXPR_NULL"),
        ({"body": {"delay.$": 5}}, "body.delay.$", "EXPR_CONSTRUCTOR"),
        ({"body": {"delay.$": "$Input.+"}}, "body.delay.$", "EXPR_SYNTAX"),
        ({"list": [{"x.$": "$Output"}]}, "list[0].x.$", "EXPR_UNAVAILABLE"),
        ({"$": "$Input", "other": 1}, "$", "EXPR_CONSTRUCTOR"),
        ({"a": 1, "a.$": "$Input"}, "a.$", "EXPR_CONSTRUCTOR"),
    ],
)
def test_errors_name_the_key_path(template, path, reason):
    with pytest.raises(EvaluationError) as info:
        build_value(template, ExpressionScope(input={}))
    assert info.value.detail.startswith(f"{path}: ")
    assert info.value.reason.value == reason
    assert info.value.code == "FnF.RuntimeError"


def test_iter_expressions_lists_every_expression_key_by_path():
    template = {
        "a.$": "$Input",
        "b": {"c.$": "uuid()", "d": "literal"},
        "e": [{"f.$": "1"}, "x", [{"$": "$Global"}]],
    }
    assert list(iter_expressions(template)) == [
        ("a.$", "$Input"),
        ("b.c.$", "uuid()"),
        ("e[0].f.$", "1"),
        ("e[2][0].$", "$Global"),
    ]
    assert list(iter_expressions("x")) == []


plain_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.text(max_size=4).filter(lambda k: not k.endswith("$")), children)
    ),
    max_leaves=10,
)


@settings(max_examples=200, deadline=None)
@given(plain_values)
def test_templates_without_expressions_are_copied_unchanged(template):
    assert build_value(template, ExpressionScope()) == template


def test_compiled_template_is_reusable_and_reports_errors_at_build_time():
    template = compile_template({"n.$": "$Input.n + 1", "tag": "t", "bad": {"x.$": "$Input.("}})
    assert template.source["tag"] == "t"
    with pytest.raises(EvaluationError) as info:
        template.build(ExpressionScope(input={"n": 1}))
    assert info.value.detail.startswith("bad.x.$: invalid expression `$Input.(`")
    assert info.value.offset == 7
    good = compile_template({"n.$": "$Input.n + 1", "tag": ["t"]})
    first = good.build(ExpressionScope(input={"n": 1}))
    second = good.build(ExpressionScope(input={"n": 2}))
    assert first == {"n": 2, "tag": ["t"]} and second == {"n": 3, "tag": ["t"]}
    assert first["tag"] is not second["tag"]
