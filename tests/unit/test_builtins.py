"""Built-in functions through the public surface: parse + evaluate, documented results."""

from __future__ import annotations

import re
import uuid

import pytest

from deployer.fdl.expressions.builtins import BUILTINS, Entropy, SeededEntropy, SystemEntropy
from deployer.fdl.expressions.evaluator import EvaluationError, ExpressionScope, evaluate
from deployer.fdl.expressions.parser import ExpressionSyntaxError, parse_expression

SCOPE = ExpressionScope(input={"tags": ["vip", "x"], "name": "Ann", "n": 3.0, "v": 5})


def ev(text: str, scope: ExpressionScope = SCOPE):
    return evaluate(parse_expression(text), scope)


def fails(text: str, function: str, reason: str = "EXPR_TYPE") -> EvaluationError:
    with pytest.raises(EvaluationError) as info:
        ev(text)
    assert f"{function}()" in info.value.detail
    assert f"`{text}`" in info.value.detail
    assert info.value.reason.value == reason
    return info.value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # reference §10.9
        ('format("{}-{}", "a", 1)', "a-1"),
        ('length({"k":1,"j":2})', 2),
        ("arrayUnique([1,1,2])", [1, 2]),
        ('toArray(1, "x")', [1, "x"]),
        ('fromBase64("Rm5G")', "FnF"),
        ('hash("abc","MD5")', "900150983cd24fb0d6963f7d28e17f72"),
        ('jsonMerge({"a":1},{"b":2})', {"a": 1, "b": 2}),
        ('stringToJson("{\\"a\\":1}").a', 1),
        ('arrayContains($Input.tags, "vip")', True),
        # reference §4.5
        ('format("hello {}","world")', "hello world"),
        ("length([1, 2, 3])", 3),
        ('length({"name": "Tom", "age": 10})', 2),
        ('length("name")', 4),
        ('arrayContains(["Tom",10],10)', True),
        ('arrayContains(["Tom",10],"Jack")', False),
        ("arrayUnique([1,2,3,1])", [1, 2, 3]),
        ('stringToJson(\'{"name": "Tom", "age": 10}\')', {"name": "Tom", "age": 10}),
        (
            'jsonMerge({"name":"Tom","age":10},{"name":"Tom","address":"beijing"})',
            {"name": "Tom", "age": 10, "address": "beijing"},
        ),
        # §10.1, §10.5
        ('format("hello {}", $Input.name)', "hello Ann"),
        ("length($Input.name)", 3),
        ("intAdd(1, 2)", 3),
    ],
)
def test_documented_results(text, expected):
    result = ev(text)
    assert result == expected
    assert type(result) is type(expected)


def test_format_rendering_and_placeholder_count():
    assert ev('format("{} {} {} {} {}", true, null, 2.5, 3.0, [1, {"b": 1, "a": "x"}])') == (
        'true null 2.5 3 [1,{"a":"x","b":1}]'
    )
    assert ev('format("{} and {}", "a")') == "a and {}"  # missing arguments leave {}
    assert ev('format("only {}", 1, 2, 3)') == "only 1"  # extra arguments are ignored
    assert ev('format("no placeholders")') == "no placeholders"
    assert ev('format("{}", "{}")') == "{}"  # arguments are not rescanned
    fails("format(1)", "format")


def test_length_counts_runes_and_rejects_other_kinds():
    assert ev('length("héllo😀")') == 6
    assert ev("length([])") == 0
    fails("length(1)", "length")
    fails("length(null)", "length")


def test_regex_match_string_is_an_unanchored_search_pattern_first():
    assert ev('regexMatchString("^a.c$", "abc")') is True
    assert ev('regexMatchString("b", "abc")') is True
    assert ev('regexMatchString("^b", "abc")') is False
    assert ev('regexMatchString("[0-9]+", "job-42")') is True
    fails('regexMatchString("(", "x")', "regexMatchString", "EXPR_FUNCTION")
    fails('regexMatchString(1, "x")', "regexMatchString")
    fails('regexMatchString("x", 1)', "regexMatchString")


def test_split_follows_go_strings_split():
    assert ev('split("a,b,,c,", ",")') == ["a", "b", "", "c", ""]
    assert ev('split("abc", "")') == ["a", "b", "c"]
    assert ev('split("", ",")') == [""]
    assert ev('split("a--b", "--")') == ["a", "b"]
    fails('split(1, ",")', "split")


def test_get_fetches_by_index_or_key_and_gives_null_when_absent():
    assert ev("get([1, 2, 3], 0)") == 1
    assert ev("get([1, 2, 3], -1)") == 3
    assert ev("get([1, 2, 3], 3)") is None
    assert ev('get({"a": 1}, "a")') == 1
    assert ev('get({"a": 1}, "b")') is None
    assert ev('get(null, "b")') is None
    fails('get("abc", 0)', "get")
    fails('get([1], "a")', "get")
    fails('get({"a": 1}, 1)', "get")


def test_int_add():
    assert ev("intAdd($Input.v, $Input.v)") == 10
    assert ev("intAdd($Input.n, 1)") == 4  # an integral float from JSON counts as an integer
    assert type(ev("intAdd($Input.n, 1)")) is int
    fails("intAdd(1.5, 1)", "intAdd")
    fails('intAdd("1", 1)', "intAdd")
    fails("intAdd(true, 1)", "intAdd")
    fails("intAdd(9223372036854775807, 1)", "intAdd", "EXPR_ARITHMETIC")


def test_random_int_is_half_open_and_injectable():
    seeded = ExpressionScope(entropy=SeededEntropy(7))
    values = [evaluate(parse_expression("randomInt(0, 3)"), seeded) for _ in range(200)]
    assert set(values) == {0, 1, 2}
    again = ExpressionScope(entropy=SeededEntropy(7))
    assert values == [evaluate(parse_expression("randomInt(0, 3)"), again) for _ in range(200)]
    assert ev("randomInt(5, 6)") == 5
    fails("randomInt(3, 3)", "randomInt", "EXPR_FUNCTION")
    fails('randomInt("a", 3)', "randomInt")


def test_uuid_is_v4_and_injectable():
    value = ev("uuid()")
    assert uuid.UUID(value).version == 4
    assert value == value.lower()
    assert re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", value
    )
    first = evaluate(parse_expression("uuid()"), ExpressionScope(entropy=SeededEntropy("exec-1")))
    second = evaluate(parse_expression("uuid()"), ExpressionScope(entropy=SeededEntropy("exec-1")))
    assert first == second
    assert uuid.UUID(first).version == 4

    class Fixed:
        def random_int(self, low: int, high: int) -> int:
            return high - 1

        def uuid4(self) -> str:
            return "00000000-0000-4000-8000-000000000000"

    assert isinstance(Fixed(), Entropy) and isinstance(SystemEntropy(), Entropy)
    fixed = ExpressionScope(entropy=Fixed())
    assert evaluate(parse_expression("uuid()"), fixed) == "00000000-0000-4000-8000-000000000000"
    assert evaluate(parse_expression("randomInt(1, 10)"), fixed) == 9


def test_array_functions():
    assert ev('arrayContains([[1], {"a": 1}], {"a": 1.0})') is True
    assert ev("arrayContains([true], 1)") is False
    assert ev('arrayUnique([1, 1.0, true, "1", [1], [1.0], {"a": 1}, {"a": 1}])') == [
        1,
        True,
        "1",
        [1],
        {"a": 1},
    ]
    assert ev("toArray()") == []
    fails("arrayContains(1, 1)", "arrayContains")
    fails('arrayUnique("ab")', "arrayUnique")


def test_map_functions_are_sorted_by_key():
    assert ev('mapKeys({"b": 1, "a": 2, "c": 3})') == ["a", "b", "c"]
    assert ev('mapValues({"b": 1, "a": 2, "c": 3})') == [2, 1, 3]
    assert ev("mapKeys({})") == []
    fails("mapKeys([1])", "mapKeys")
    fails("mapValues(null)", "mapValues")


def test_base64():
    assert ev('toBase64("FnF")') == "Rm5G"
    assert ev('toBase64("héllo")') == "aMOpbGxv"
    assert ev('fromBase64(toBase64("héllo 😀"))') == "héllo 😀"
    assert ev('toBase64("")') == ""
    fails('fromBase64("***")', "fromBase64", "EXPR_FUNCTION")
    fails('fromBase64("Rm5")', "fromBase64", "EXPR_FUNCTION")
    fails('fromBase64("/w==")', "fromBase64", "EXPR_FUNCTION")  # not UTF-8
    fails("toBase64(1)", "toBase64")


@pytest.mark.parametrize(
    ("algorithm", "digest"),
    [
        ("MD5", "900150983cd24fb0d6963f7d28e17f72"),
        ("SHA-1", "a9993e364706816aba3e25717850c26c9cd0d89d"),
        ("SHA-256", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "SHA-512",
            "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
            "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
        ),
        ("sha256", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    ],
)
def test_hash(algorithm, digest):
    assert ev(f'hash("abc", "{algorithm}")') == digest


def test_hash_errors():
    fails('hash("abc", "CRC32")', "hash", "EXPR_FUNCTION")
    fails('hash(1, "MD5")', "hash")


def test_json_functions_and_aliases():
    assert ev("fromJSON('[1, 2.5, null]')") == [1, 2.5, None]
    assert ev('stringToJson("\\"s\\"")') == "s"
    assert ev('jsonToString({"b": [1, 2.0], "a": "é"})') == '{"a":"é","b":[1,2]}'
    assert ev('toJSON("x")') == '"x"'
    assert ev("toJSON(null)") == "null"
    assert ev('stringToJson(jsonToString({"k": [1, {"z": null}]}))') == {"k": [1, {"z": None}]}
    fails('stringToJson("{nope")', "stringToJson", "EXPR_FUNCTION")
    fails('fromJSON("NaN")', "fromJSON", "EXPR_FUNCTION")
    fails("stringToJson(1)", "stringToJson")


def test_json_merge_is_shallow_and_right_wins():
    assert ev('jsonMerge({"a": {"x": 1}, "b": 1}, {"a": {"y": 2}})') == {"a": {"y": 2}, "b": 1}
    fails('jsonMerge({"a": 1}, null)', "jsonMerge")
    fails('jsonMerge([], {"a": 1})', "jsonMerge")


def test_registry_drives_the_parser_arity_check():
    assert {"format", "toArray"} == {n for n, b in BUILTINS.items() if b.max_args is None}
    for name, builtin in BUILTINS.items():
        if builtin.max_args is None:
            continue
        with pytest.raises(ExpressionSyntaxError) as info:
            parse_expression(f"{name}({', '.join(['1'] * (builtin.max_args + 1))})")
        assert info.value.code == "EXPR_ARITY"
        assert builtin.arity_text() in info.value.message


def test_values_too_large_to_render_fail_cleanly():
    huge = ExpressionScope(input={"n": 10**5000})
    for text, function in [('format("{}", $Input.n)', "format"), ("toJSON($Input)", "toJSON")]:
        with pytest.raises(EvaluationError) as info:
            evaluate(parse_expression(text), huge)
        assert f"{function}()" in info.value.detail
        assert info.value.reason.value == "EXPR_FUNCTION"
