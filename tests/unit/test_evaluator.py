"""Evaluator: operator semantics, null handling, errors and robustness on generated input."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.fdl.expressions.evaluator import (
    UNAVAILABLE,
    EvaluationError,
    ExpressionScope,
    NullMode,
    evaluate,
)
from deployer.fdl.expressions.parser import parse_expression

SEED_INPUT = {"job_id": "j-1", "job_status": "running", "try_count": 3, "Body": {"job_id": "j-1"}}
SCOPE = ExpressionScope(
    input=SEED_INPUT,
    output={"Body": {"job_status": "success", "try_count": 4}},
    context={"Execution": {"Name": "e1", "Input": {"delay": 30}}, "Current": {"Name": "Poll"}},
    global_vars={"orderId": "o-1"},
)
LENIENT = ExpressionScope(input={"size": 2048, "tags": []}, null_mode=NullMode.LENIENT)


def ev(text: str, scope: ExpressionScope = SCOPE):
    return evaluate(parse_expression(text), scope)


def fails(text: str, scope: ExpressionScope = SCOPE) -> EvaluationError:
    with pytest.raises(EvaluationError) as info:
        ev(text, scope)
    error = info.value
    assert error.code == "FnF.RuntimeError"
    assert f"`{text}`" in error.detail
    assert error.expression == text
    return error


def test_seed_expressions():
    assert ev('$Input.job_status== "success"') is False
    assert ev('$Input.job_status== "running"') is True
    assert ev("$Input.try_count > 3") is False
    assert ev("$Input.Body.job_id") == "j-1"
    assert ev("$Context.Execution.Input.delay") == 30
    assert ev("jsonMerge($Input, $Output.Body)") == {
        "job_id": "j-1",
        "job_status": "success",
        "try_count": 4,
        "Body": {"job_id": "j-1"},
    }
    assert ev("$Input") is SEED_INPUT
    no_delay = ExpressionScope(context={"Execution": {"Input": {}}})
    assert ev("$Context.Execution.Input.delay", no_delay) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 + 2", 3),
        ("$Input.try_count + 1", 4),
        ("1.5 + 1.5", 3.0),
        ("1 + 0.5", 1.5),
        ("10 - 4 - 3", 3),
        ("6 * 7", 42),
        ("7 / 2", 3.5),
        ("4 / 2", 2.0),
        ("7 % 3", 1),
        ("-7 % 3", -1),
        ("7 % -3", 1),
        ("7.0 % 2", 1),
        ("-(2 + 3)", -5),
        ("+4", 4),
        ('"ab" + "cd"', "abcd"),
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("1 == 1.0", True),
        ("3.0 == 3", True),
        ('1 == "1"', False),
        ("true == 1", False),
        ("null == null", True),
        ("nil == $Input.missing", True),
        ('[1, {"a": [2]}] == [1.0, {"a": [2.0]}]', True),
        ('{"a": 1} == {"a": 1, "b": null}', False),
        ("[1, 2] != [2, 1]", True),
        ("1 < 2", True),
        ("2 <= 2.0", True),
        ("3 > 2.5", True),
        ("2 >= 3", False),
        ('"abc" < "abd"', True),
        ('"Z" < "a"', True),
        ("true && false", False),
        ("true || false", True),
        ("!true", False),
        ("not false", True),
        ("true and not false or false", True),
        ('"vip" in ["a", "vip"]', True),
        ("1 in [1.0]", True),
        ('"job_id" in $Input', True),
        ('"nope" in $Input', False),
        ('"nope" not in $Input', True),
        ("3 not in [1, 2]", True),
        ("$Input.xs == null", True),
        ('$Input["job_id"]', "j-1"),
        ('$Input["Bo" + "dy"].job_id', "j-1"),
        ("[10, 20, 30][1]", 20),
        ("[10, 20, 30][-1]", 30),
        ("[10, 20, 30][1.0]", 20),
        ('"héllo"[1]', "é"),
        ('{"a": {"b": [1, 2]}}.a.b[0]', 1),
        ("[1, $Input.try_count, [true]]", [1, 3, [True]]),
        ('{"n": $Input.try_count}', {"n": 3}),
        ("$Global.orderId", "o-1"),
        ("$Output.Body.try_count >= 4", True),
    ],
)
def test_operators(text, expected):
    result = ev(text)
    assert result == expected
    assert type(result) is type(expected)


def test_int_results_stay_ints_and_floats_stay_floats():
    assert type(ev("$Input.try_count + 1")) is int
    assert type(ev("2 * 2")) is int
    assert type(ev("2 * 2.0")) is float
    assert type(ev("4 / 2")) is float


def test_short_circuit_never_evaluates_the_right_side():
    assert ev("false && $Input.missing.deeper") is False
    assert ev("true || $Input.missing.deeper") is True
    assert ev("false && 1") is False  # the right side's kind is never looked at


def test_reference_example_10_3_routing():
    cond_big = "$Input.size >= 1024 && !$Input.dryRun"
    cond_vip = '"vip" in $Input.tags'
    assert ev(cond_big, ExpressionScope(input={"size": 2048, "dryRun": False, "tags": []})) is True
    vip = ExpressionScope(input={"size": 10, "tags": ["vip"]})
    assert ev(cond_big, vip) is False
    assert ev(cond_vip, vip) is True
    error = fails(cond_big, ExpressionScope(input={"size": 2048, "tags": []}))
    assert error.reason.value == "EXPR_NULL"
    assert ev(cond_big, LENIENT) is True


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("$Input.missing.deeper", "EXPR_NULL"),
        ("$Input.missing[0]", "EXPR_NULL"),
        ("!$Input.missing", "EXPR_NULL"),
        ("$Input.missing && true", "EXPR_NULL"),
        ("$Input.missing > 1", "EXPR_NULL"),
        ('"x" in $Input.missing', "EXPR_NULL"),
        ("$Input.missing + 1", "EXPR_NULL"),
        ("-$Input.missing", "EXPR_NULL"),
        ("$Input.job_id.x", "EXPR_TYPE"),
        ("[1].x", "EXPR_TYPE"),
        ("$Input[0]", "EXPR_TYPE"),
        ('[1, 2]["a" + "b"]', "EXPR_TYPE"),
        ("[1, 2][0.5]", "EXPR_TYPE"),
        ("(1)[0]", "EXPR_TYPE"),
        ("[1, 2][2]", "EXPR_INDEX"),
        ("[1, 2][-3]", "EXPR_INDEX"),
        ('""[0]', "EXPR_INDEX"),
        ("1 && true", "EXPR_TYPE"),
        ("false || 1", "EXPR_TYPE"),
        ("!1", "EXPR_TYPE"),
        ('1 < "2"', "EXPR_TYPE"),
        ("true < false", "EXPR_TYPE"),
        ("[1] < [2]", "EXPR_TYPE"),
        ('"a" in "abc"', "EXPR_TYPE"),
        ('1 in {"a": 1}', "EXPR_TYPE"),
        ("1 in 1", "EXPR_TYPE"),
        ('1 + "a"', "EXPR_TYPE"),
        ("true + 1", "EXPR_TYPE"),
        ('-"a"', "EXPR_TYPE"),
        ("[1] + [2]", "EXPR_TYPE"),
        ("1.5 % 2", "EXPR_TYPE"),
        ("1 / 0", "EXPR_ARITHMETIC"),
        ("1 / 0.0", "EXPR_ARITHMETIC"),
        ("1 % 0", "EXPR_ARITHMETIC"),
        ("9223372036854775807 + 1", "EXPR_ARITHMETIC"),
        ("-9223372036854775807 - 2", "EXPR_ARITHMETIC"),
        ("4294967296 * 4294967296", "EXPR_ARITHMETIC"),
        ("1e308 * 10", "EXPR_ARITHMETIC"),
        ("$Item", "EXPR_UNAVAILABLE"),
    ],
)
def test_evaluation_errors(text, reason):
    assert fails(text).reason.value == reason


def test_error_detail_names_expression_and_offset():
    error = fails("$Input.missing.deeper")
    assert error.detail == (
        "cannot read member 'deeper' of null (in expression `$Input.missing.deeper` at offset 14)"
    )
    assert error.offset == 14


def test_unavailable_variables():
    empty = ExpressionScope()
    for name in ("$Input", "$Output", "$Context", "$Global", "$Item"):
        error = fails(name, empty)
        assert f"{name} is not available here" in error.detail
    assert ExpressionScope().output is UNAVAILABLE
    assert ev("$Item.id", ExpressionScope(item={"id": 5})) == 5


def test_lenient_null_mode():
    assert ev("$Input.missing.deeper", LENIENT) is None
    assert ev("$Input.missing[0]", LENIENT) is None
    assert ev("!$Input.missing", LENIENT) is True
    assert ev("$Input.missing || true", LENIENT) is True
    assert ev("$Input.missing && true", LENIENT) is False
    assert ev("$Input.missing > 1", LENIENT) is False
    assert ev("1 <= $Input.missing", LENIENT) is False
    assert ev('"x" in $Input.missing', LENIENT) is False
    assert fails("$Input.missing + 1", LENIENT).reason.value == "EXPR_NULL"
    assert fails("$Input.size.x", LENIENT).reason.value == "EXPR_TYPE"


def test_values_with_huge_ints_from_input_fail_cleanly():
    huge = ExpressionScope(input={"n": 10**400})
    assert ev("$Input.n > 1", huge) is True
    assert fails("$Input.n + 0.5", huge).reason.value == "EXPR_ARITHMETIC"
    assert fails("$Input.n / 3", huge).reason.value == "EXPR_ARITHMETIC"
    assert fails("-$Input.n", huge).reason.value == "EXPR_ARITHMETIC"


def test_deeply_nested_values_fail_cleanly():
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    error = fails("$Input == $Input", ExpressionScope(input=deep))
    assert error.reason.value == "EXPR_LIMIT"


# -- generated expressions over generated scopes -----------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(["a", "b", "c", "x"]), children, max_size=4)
    ),
    max_leaves=12,
)


def _literal(value) -> str:
    return json.dumps(value)


leaf_exprs = st.one_of(
    json_values.map(_literal),
    st.sampled_from(["$Input", "$Global", "$Context", "$Input.a", "$Input.b.c", "$Input.x[0]"]),
    st.sampled_from(["true", "false", "null", "0", "1", "-1", "2.5", '""', '"a"', "[]", "{}"]),
)


FMT = '"{}-{}"'


def _combine(children):
    binary = st.tuples(
        children,
        st.sampled_from(
            ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "in", "not in"]
        ),
        children,
    ).map(lambda t: f"({t[0]} {t[1]} {t[2]})")
    unary = st.tuples(st.sampled_from(["!", "-", "+"]), children).map(lambda t: f"{t[0]}({t[1]})")
    member = st.tuples(children, st.sampled_from([".a", ".b", '["x"]', "[0]", "[-1]", "[5]"])).map(
        lambda t: f"({t[0]}){t[1]}"
    )
    one_arg = st.sampled_from(
        [
            "length",
            "arrayUnique",
            "mapKeys",
            "mapValues",
            "toBase64",
            "fromBase64",
            "stringToJson",
            "jsonToString",
            "toJSON",
            "fromJSON",
        ]
    )
    two_args = st.sampled_from(
        [
            "regexMatchString",
            "split",
            "get",
            "intAdd",
            "arrayContains",
            "hash",
            "jsonMerge",
            "randomInt",
        ]
    )
    calls = st.one_of(
        st.tuples(one_arg, children).map(lambda t: f"{t[0]}({t[1]})"),
        st.tuples(two_args, children, children).map(lambda t: f"{t[0]}({t[1]}, {t[2]})"),
        st.lists(children, max_size=3).map(lambda xs: "format(" + ", ".join([FMT, *xs]) + ")"),
        st.lists(children, max_size=3).map(lambda xs: f"toArray({', '.join(xs)})"),
        st.lists(children, max_size=3).map(lambda xs: f"[{', '.join(xs)}]"),
    )
    return st.one_of(binary, unary, member, calls)


expressions = st.recursive(leaf_exprs, _combine, max_leaves=10)


def _is_json(value) -> bool:
    if value is None or type(value) in (bool, int, str):
        return True
    if type(value) is float:
        return math.isfinite(value)
    if type(value) is list:
        return all(_is_json(item) for item in value)
    if type(value) is dict:
        return all(type(k) is str and _is_json(v) for k, v in value.items())
    return False


@settings(max_examples=250, deadline=None)
@given(expressions, json_values, json_values, st.sampled_from(list(NullMode)))
def test_generated_expressions_return_json_or_raise_evaluation_error(text, data, glob, mode):
    expr = parse_expression(text)
    scope = ExpressionScope(
        input=data, global_vars=glob, context={"Execution": {"Input": data}}, null_mode=mode
    )
    try:
        result = evaluate(expr, scope)
    except EvaluationError as exc:
        assert exc.code == "FnF.RuntimeError"
        assert text in exc.detail
    else:
        assert _is_json(result)


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_literal_round_trip(value):
    """A JSON value rendered as an expression literal evaluates to itself."""
    assert evaluate(parse_expression(json.dumps(value)), ExpressionScope()) == value
    unescaped = json.dumps(value, ensure_ascii=False)
    assert evaluate(parse_expression(unescaped), ExpressionScope()) == value
