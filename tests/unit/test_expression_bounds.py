"""Bounded expressions (docs/fdl-semantics.md, "Bounds"): regexMatchString on RE2, every
evaluation counted in steps, built strings capped; failures are state errors Retry/Catch match,
the same at every run."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.fdl.expressions.budget import Meter, charge_size
from deployer.fdl.expressions.constructors import build_value
from deployer.fdl.expressions.evaluator import EvaluationError, ExpressionScope, evaluate
from deployer.fdl.expressions.parser import parse_expression
from deployer.fdl.limits import EVALUATION_STEPS, MAX_STRING_CHARS


def ev(text: str, scope: ExpressionScope | None = None, meter: Meter | None = None):
    scope = scope or ExpressionScope(input={})
    if meter is not None:
        scope = scope._replace(meter=meter)
    return evaluate(parse_expression(text), scope)


def failure(
    text: str, scope: ExpressionScope | None = None, meter: Meter | None = None
) -> EvaluationError:
    with pytest.raises(EvaluationError) as info:
        ev(text, scope, meter)
    return info.value


# -- regexMatchString on RE2 -------------------------------------------------------------


def test_the_pathological_regex_on_10000_characters_finishes_in_milliseconds():
    scope = ExpressionScope(input={"s": "a" * 10_000 + "!"})
    started = time.process_time()
    assert ev("regexMatchString('(a+)+$', $Input.s)", scope) is False
    assert ev("regexMatchString('(a+)+!$', $Input.s)", scope) is True
    # a backtracking engine needs about 2^10000 steps for the first; RE2 a few milliseconds
    assert time.process_time() - started < 2.0  # CPU, not wall; generous for loaded CI


def test_regex_follows_go_regexp_syntax():
    assert ev(r'regexMatchString("\\pL+", "héllo")') is True  # Unicode classes (RE2)
    assert ev(r'regexMatchString("(?i)JOB-\\d+", "job-42")') is True
    assert ev(r'regexMatchString("[[:alpha:]]", "1a")') is True
    assert ev('regexMatchString("a{2,3}", "caab")') is True
    for pattern in (r"(a)\\1", "(?=a)", "(?<!a)b", "a{1001}", "[", r"\\Z"):
        error = failure(f'regexMatchString("{pattern}", "a")')
        assert error.reason.value == "EXPR_FUNCTION"
        assert error.code == "FnF.RuntimeError"
        assert "invalid pattern" in error.detail


def test_a_subject_that_is_not_unicode_is_a_function_error():
    error = failure("regexMatchString('a', $Input.s)", ExpressionScope(input={"s": "a\ud800"}))
    assert error.reason.value == "EXPR_FUNCTION"


def test_a_huge_regex_program_on_a_long_subject_runs_out_of_steps_before_it_runs():
    # RE2's automaton falls back to time subject x program here: charged before matching
    scope = ExpressionScope(input={"s": "ab" * 100_000})
    started = time.process_time()
    error = failure("regexMatchString('[ab]*a[ab]{1000}c', $Input.s)", scope)
    assert error.reason.value == "EXPR_BUDGET"
    assert time.process_time() - started < 2.0  # CPU, not wall; generous for loaded CI


_SIMPLE_PATTERN = st.text(alphabet="ab.*+?|^$", min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(pattern=_SIMPLE_PATTERN, subject=st.text(alphabet="abc", max_size=12))
def test_re2_and_python_agree_on_the_syntax_they_share(pattern, subject):
    try:
        expected = re.search(pattern, subject) is not None
    except re.error:
        return
    scope = ExpressionScope(input={"p": pattern, "s": subject})
    try:
        got = ev("regexMatchString($Input.p, $Input.s)", scope)
    except EvaluationError as exc:  # e.g. "a**": Python accepts some repeats RE2 refuses
        assert exc.reason.value == "EXPR_FUNCTION"
        return
    assert got is expected


# -- the step budget -----------------------------------------------------------------------


def test_every_evaluation_gets_the_documented_budget():
    meter = Meter()
    ev("1 + 2", meter=meter)
    assert meter.left == meter.floor + EVALUATION_STEPS - 3  # three nodes


def test_an_evaluation_over_its_budget_fails_with_a_runtime_error():
    error = failure("length(split($Input.s, \"\"))", ExpressionScope(input={"s": "x" * 1000}),
                    Meter(500))
    assert error.code == "FnF.RuntimeError"
    assert error.reason.value == "EXPR_BUDGET"
    assert "budget of 500 steps" in error.detail
    assert "`length(split($Input.s, \"\"))`" in error.detail


def test_the_step_budget_spans_evaluations():
    meter = Meter(1000, step=2500)
    scope = ExpressionScope(input={"s": "x" * 600})
    for _ in range(4):  # 600 + 37 + 3 steps each: the fourth runs out of the step's budget
        try:
            ev('split($Input.s, "")', scope, meter)
        except EvaluationError as exc:
            assert "left of the budget of this step" in exc.detail
            break
    else:
        pytest.fail("the step budget did not stop the evaluations")


def test_values_put_twice_into_an_array_count_twice():
    big = {"k": "v" * 60_000}
    scope = ExpressionScope(input=big)
    refs = ", ".join(["$Input"] * 300)  # logically 18 MB of JSON, a few hundred bytes of memory
    started = time.process_time()
    error = failure(f"jsonToString([{refs}])", scope)
    assert error.reason.value == "EXPR_BUDGET"
    assert time.process_time() - started < 2.0  # CPU, not wall; generous for loaded CI


def test_a_template_putting_a_value_into_many_keys_is_bounded():
    template = {f"k{i}.$": "$Input" for i in range(2_000)}
    scope = ExpressionScope(input={"s": "x" * 60_000})
    with pytest.raises(EvaluationError) as info:
        build_value(template, scope)
    assert info.value.reason.value == "EXPR_BUDGET"


def test_a_root_dollar_template_is_not_charged_for_its_own_value():
    scope = ExpressionScope(input={"s": "x" * 60_000})
    meter = Meter(100)
    assert build_value({"$": "$Input"}, scope._replace(meter=meter)) is scope.input


# -- the string cap ------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    "$Input.s + $Input.s",
    'format("{}{}", $Input.s, $Input.s)',
    "toBase64($Input.s)",
    "jsonToString([$Input.s, $Input.s])",
])
def test_a_built_string_over_the_cap_is_a_data_limit_error(text):
    scope = ExpressionScope(input={"s": "é" * (MAX_STRING_CHARS // 2 + 1)})
    error = failure(text, scope)
    assert error.code == "FnF.DataLimitExceeded"
    assert error.reason.value == "EXPR_SIZE"
    assert f"{MAX_STRING_CHARS}-character limit" in error.detail


def test_strings_at_the_cap_are_fine():
    scope = ExpressionScope(input={"s": "x" * (MAX_STRING_CHARS // 2)})
    assert len(ev("$Input.s + $Input.s", scope)) == MAX_STRING_CHARS


# -- properties ----------------------------------------------------------------------------

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=6),
    max_leaves=40,
)

_BOUNDED_CALLS = [
    "arrayUnique($Input.a)", "arrayContains($Input.a, $Input.v)", "jsonToString($Input.v)",
    "format(\"{} {}\", $Input.v, $Input.a)", "split(jsonToString($Input.a), \",\")",
    "$Input.v == $Input.a", "$Input.v in $Input.a", "toArray($Input.v, $Input.v, $Input.a)",
    "mapKeys({\"x\": $Input.v, \"y\": $Input.a})", "hash(jsonToString($Input.v), \"MD5\")",
    "regexMatchString(\"[a-c]+x\", jsonToString($Input.a))",
]


@settings(max_examples=100, deadline=None)
@given(a=st.lists(_JSON, max_size=8), v=_JSON, call=st.sampled_from(_BOUNDED_CALLS),
       budget=st.integers(1, 400))
def test_bounded_builtins_either_answer_or_run_out_the_same_way_every_time(a, v, call, budget):
    outcomes = []
    for _ in range(2):
        meter = Meter(budget)
        try:
            result = ev(call, ExpressionScope(input={"a": a, "v": v}), meter)
            outcomes.append(("ok", result, meter.left))
        except EvaluationError as exc:
            assert exc.reason.value in ("EXPR_BUDGET", "EXPR_TYPE")
            outcomes.append((exc.reason.value, exc.detail, meter.left))
    assert outcomes[0] == outcomes[1]  # deterministic: steps, not time


@settings(max_examples=100, deadline=None)
@given(value=_JSON)
def test_charge_size_counts_elements_and_characters(value):
    meter = Meter(10**9)
    meter.begin(0)
    before = meter.left
    charge_size(meter, value)
    assert before - meter.left >= _containers_and_elements(value)
    small = Meter(3)
    small.begin(0)
    try:
        charge_size(small, value)
    except EvaluationError:
        assert before - meter.left > 3  # it stops as soon as the steps run out
    else:
        assert before - meter.left <= 3


def _containers_and_elements(value) -> int:
    if isinstance(value, dict):
        return 1 + len(value) + sum(_containers_and_elements(v) for v in value.values())
    if isinstance(value, list):
        return 1 + len(value) + sum(_containers_and_elements(v) for v in value)
    return 0
