"""Parser of the expression language: grammar, precedence, literals, checks and robustness."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.fdl.expressions.parser import (
    MAX_CALL_NESTING,
    ArrayLiteral,
    Binary,
    Call,
    Expression,
    ExpressionSyntaxError,
    Index,
    Literal,
    MapLiteral,
    Member,
    Unary,
    Variable,
    parse_expression,
    variables_used,
)


def node(text: str):
    return parse_expression(text).node


SEED_EXPRESSIONS = [
    '$Input.job_status== "success"',
    "$Input.try_count > 3",
    '$Input.job_status== "running"',
    "jsonMerge($Input, $Output.Body)",
    "$Context.Execution.Input.delay",
    "$Input.Body.job_id",
    "$Input",
]


@pytest.mark.parametrize("text", SEED_EXPRESSIONS)
def test_seed_expressions_parse(text):
    expr = parse_expression(text)
    assert isinstance(expr, Expression)
    assert expr.text == text


def test_comparison_needs_no_whitespace():
    tree = node('$Input.job_status== "success"')
    assert tree == Binary(
        17, "==", Member(6, Variable(0, "$Input"), "job_status"), Literal(20, "success")
    )
    for op in ("==", "!=", "<", "<=", ">", ">="):
        assert node(f"1{op}2").op == op


def test_member_index_and_call_shapes():
    assert node('$Input["a b"]') == Member(6, Variable(0, "$Input"), "a b")
    assert node("$Input.xs[0]") == Index(9, Member(6, Variable(0, "$Input"), "xs"), Literal(10, 0))
    assert node("$Output.output.choices[0].message.content").name == "content"
    assert node("$Input.in.true.nil").name == "nil"  # keywords are fine as member names
    assert node('format("hello {}", "world")') == Call(
        0, "format", (Literal(7, "hello {}"), Literal(19, "world"))
    )


def test_literals():
    assert node("12") == Literal(0, 12)
    assert node("12.5") == Literal(0, 12.5)
    assert node("1e3") == Literal(0, 1000.0)
    assert node("1_000") == Literal(0, 1000)
    assert node("0x1f") == Literal(0, 31)
    assert node("-3") == Literal(0, -3)
    assert node("true").value is True and node("false").value is False
    assert node("null").value is None and node("nil").value is None
    assert node("`raw \\n`").value == "raw \\n"
    assert node("'it\\'s'").value == "it's"
    assert node('"a\\"b\\n\\t\\u00e9\\x41\\101\\U0001F600"').value == 'a"b\n\téAA😀'
    assert node('"\\ud83d\\ude00"').value == "😀"  # JSON-style surrogate pair
    assert node("-9223372036854775808") == Literal(0, -(2**63))
    assert node("9223372036854775807") == Literal(0, 2**63 - 1)
    assert node('[1, "x", ]') == ArrayLiteral(0, (Literal(1, 1), Literal(4, "x")))
    assert node('{"a": 1, b: 2}') == MapLiteral(0, (("a", Literal(6, 1)), ("b", Literal(12, 2))))
    assert node("{}") == MapLiteral(0, ())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 + 2 * 3", ("+", 1, ("*", 2, 3))),
        ("(1 + 2) * 3", ("*", ("+", 1, 2), 3)),
        ("1 - 2 - 3", ("-", ("-", 1, 2), 3)),
        ("a || b && c", ("||", "a", ("&&", "b", "c"))),
        ("a && b || c", ("||", ("&&", "a", "b"), "c")),
        ("1 + 1 == 2 && 3 > 2", ("&&", ("==", ("+", 1, 1), 2), (">", 3, 2))),
        ("x in y && z", ("&&", ("in", "x", "y"), "z")),
        ("1 == 1 in y", ("in", ("==", 1, 1), "y")),
        ("!a && b", ("&&", ("!", "a"), "b")),
        ("not a or b and c", ("||", ("!", "a"), ("&&", "b", "c"))),
        ("-x * 2", ("*", ("-", "x"), 2)),
        ("x not in y", ("not in", "x", "y")),
        ("7 % 3 / 2", ("/", ("%", 7, 3), 2)),
    ],
)
def test_precedence(text, expected):
    text = re.sub(r"\b([a-cx-z])\b", r"$Input.\1", text)

    def shape(tree):
        if isinstance(tree, Binary):
            return (tree.op, shape(tree.left), shape(tree.right))
        if isinstance(tree, Unary):
            return (tree.op, shape(tree.operand))
        if isinstance(tree, Member):
            return tree.name
        return tree.value

    assert shape(node(text)) == expected


def test_variables_used():
    assert variables_used(parse_expression("jsonMerge($Input, $Output.Body)")) == {
        "$Input",
        "$Output",
    }
    assert variables_used(parse_expression('{"a": [$Global.x, -$Item]}["a"]')) == {
        "$Global",
        "$Item",
    }
    assert variables_used(parse_expression("1 + 2")) == frozenset()


def test_parse_is_cached():
    assert parse_expression("$Input.a + 1") is parse_expression("$Input.a + 1")


@pytest.mark.parametrize(
    ("text", "code", "offset"),
    [
        ("", "EXPR_SYNTAX", 0),
        ("   ", "EXPR_SYNTAX", 3),
        ("1 +", "EXPR_SYNTAX", 3),
        ("(1", "EXPR_SYNTAX", 2),
        ("[1, 2", "EXPR_SYNTAX", 5),
        ('{"a" 1}', "EXPR_SYNTAX", 5),
        ("{1: 2}", "EXPR_SYNTAX", 1),
        ("1 2", "EXPR_SYNTAX", 2),
        ("$Input.", "EXPR_SYNTAX", 7),
        ("$Input.a = 1", "EXPR_SYNTAX", 9),
        ("$Input.a & 1", "EXPR_SYNTAX", 9),
        ("$Input.a ? 1 : 2", "EXPR_SYNTAX", 9),
        ('"abc', "EXPR_SYNTAX", 0),
        ("`abc", "EXPR_SYNTAX", 0),
        ('"\\q"', "EXPR_SYNTAX", 1),
        ('"\\uD800"', "EXPR_SYNTAX", 1),
        ('"\\x4"', "EXPR_SYNTAX", 1),
        ("12abc", "EXPR_SYNTAX", 0),
        ("99999999999999999999", "EXPR_SYNTAX", 0),
        ("9223372036854775808", "EXPR_SYNTAX", 0),
        ('"\\ud83d x"', "EXPR_SYNTAX", 1),
        ("1e999", "EXPR_SYNTAX", 0),
        ("$Input.f(1)", "EXPR_SYNTAX", 8),
        ("uuid", "EXPR_SYNTAX", 0),
        ("foo(1)", "EXPR_UNKNOWN_FUNCTION", 0),
        ("1 + len($Input)", "EXPR_UNKNOWN_FUNCTION", 4),
        ("length()", "EXPR_ARITY", 0),
        ("hash(1)", "EXPR_ARITY", 0),
        ("uuid(1)", "EXPR_ARITY", 0),
        ("format()", "EXPR_ARITY", 0),
        ("$input.x", "EXPR_UNKNOWN_VARIABLE", 0),
        ("$", "EXPR_UNKNOWN_VARIABLE", 0),
        ("status == 1", "EXPR_UNKNOWN_VARIABLE", 0),
    ],
)
def test_syntax_errors_carry_code_and_offset(text, code, offset):
    with pytest.raises(ExpressionSyntaxError) as info:
        parse_expression(text)
    assert info.value.code == code
    assert info.value.offset == offset
    assert info.value.message
    assert f"offset {offset}" in str(info.value)


def test_variadic_builtins_accept_many_arguments():
    assert len(node("format(" + ", ".join(['"{}"'] * 30) + ")").args) == 30
    assert node("toArray()").args == ()


def test_call_nesting_limit():
    def nested(depth: int) -> str:
        return "toArray(" * depth + ")" * depth

    assert isinstance(parse_expression(nested(MAX_CALL_NESTING)), Expression)
    with pytest.raises(ExpressionSyntaxError) as info:
        parse_expression(nested(MAX_CALL_NESTING + 1))
    assert info.value.code == "EXPR_NESTING"
    assert info.value.offset == 8 * MAX_CALL_NESTING
    # Siblings do not add up: ten levels twice side by side are fine.
    assert parse_expression(f"toArray({nested(9)}, {nested(9)})")


@pytest.mark.parametrize(
    "text",
    ["(" * 300 + "1" + ")" * 300, "!" * 500 + "true", "1" + "+1" * 300, "[" * 200 + "]" * 200],
)
def test_deep_nesting_is_a_clean_error(text):
    with pytest.raises(ExpressionSyntaxError) as info:
        parse_expression(text)
    assert info.value.code == "EXPR_NESTING"


def test_non_string_input_is_a_syntax_error():
    with pytest.raises(ExpressionSyntaxError):
        parse_expression(42)  # type: ignore[arg-type]


_CHARS = "$Input.Output[]{}()\"'`\\,:!=<>&|+-*/% 0123456789eE_xabintruflsd"
_WORDS = ["$Input", "$Context", " in ", " not ", "nil", "format(", "length(", "toArray("]
_ALPHABET = st.sampled_from([*_CHARS, *_WORDS])


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.text(max_size=60), st.lists(_ALPHABET, max_size=30).map("".join)))
def test_parser_returns_expression_or_syntax_error(text):
    try:
        result = parse_expression(text)
    except ExpressionSyntaxError as exc:
        assert exc.code.startswith("EXPR_")
        assert 0 <= exc.offset <= len(text)
    else:
        assert isinstance(result, Expression)
        assert result.text == text
