"""The legacy paths ($input.a[0], $local[*].x) and choice conditions ($.a == "b" && !$.c), with
hypothesis: text written from a random tree parses back to it, evaluation agrees with a
reference written from the documented rules, and no text makes the parsers raise anything but
their syntax error."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.fdl.legacy.conditions import condition_holds, parse_condition
from deployer.fdl.legacy.errors import LegacyEvaluationError, PathSyntaxError
from deployer.fdl.legacy.paths import MAPPING_ROOTS, evaluate_path, is_path_text, parse_path

KEYS = st.sampled_from(["a", "b", "status", "count", "x_1", "with space", "dash-key", "名字"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5),
                    st.sampled_from(["", "ready", "a", "b", "x y"]),
                    st.floats(-5, 5, allow_nan=False).map(lambda f: round(f, 1)))
JSON = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)), max_leaves=12)
SEGMENT = st.one_of(KEYS, st.integers(-3, 3), st.just(None))  # None: [*]


def render_path(root: str, segments: list[str | int | None]) -> str:
    text = "$" + root
    for segment in segments:
        if segment is None:
            text += "[*]"
        elif isinstance(segment, int):
            text += f"[{segment}]"
        elif segment.replace("_", "a").replace("-", "a").isalnum() and " " not in segment:
            text += f".{segment}"
        else:
            text += f'["{segment}"]'
    return text


def reference(value: Any, segments: list[str | int | None]) -> Any:
    """The documented path semantics, written plainly: a definite path gives what it reaches
    (null when missing); a wildcard path the flattened list of everything it reaches."""
    found = [value]
    for segment in segments:
        following = []
        for item in found:
            if segment is None:
                following += list(item.values()) if isinstance(item, dict) else \
                    item if isinstance(item, list) else []
            elif isinstance(segment, str):
                if isinstance(item, dict) and segment in item:
                    following.append(item[segment])
            elif isinstance(item, list) and -len(item) <= segment < len(item):
                following.append(item[segment])
        found = following
    if None in segments:
        return found
    return found[0] if found else None


@given(st.sampled_from(["", "input", "local", "context"]), st.lists(SEGMENT, max_size=5), JSON)
@settings(max_examples=120, deadline=None)
def test_a_path_parses_back_and_reads_as_documented(root: str, segments: list[Any],
                                                    value: Any) -> None:
    text = render_path(root, segments)
    path = parse_path(text, roots=("", *MAPPING_ROOTS))
    assert path.root == root and list(path.keys()) == segments
    assert path.definite is (None not in segments)
    assert evaluate_path(path, {root: value}) == reference(value, segments)
    assert is_path_text(text, ("", *MAPPING_ROOTS))


@given(st.text(max_size=40))
@settings(max_examples=150, deadline=None)
def test_no_text_breaks_the_path_parser(text: str) -> None:
    try:
        parse_path(text, roots=("", *MAPPING_ROOTS))
    except PathSyntaxError as error:
        assert 0 <= error.offset <= len(text)


# -- conditions ------------------------------------------------------------------------------

LITERALS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3),
                     st.sampled_from(["ready", "", "it's", 'say "hi"']))
PATHS = st.lists(st.sampled_from(["status", "count", "ok", "name"]), min_size=1, max_size=2)


@st.composite
def trees(draw: Any, depth: int = 0) -> tuple[Any, ...]:
    """A condition tree: ("lit", v) | ("path", keys) | ("not", t) | (op, left, right)."""
    if depth >= 3 or draw(st.booleans()):
        return ("path", draw(PATHS)) if draw(st.booleans()) else ("lit", draw(LITERALS))
    kind = draw(st.sampled_from(["not", "&&", "||", "==", "!=", "<", "<=", ">", ">="]))
    if kind == "not":
        return ("not", draw(trees(depth + 1)))
    return (kind, draw(trees(depth + 1)), draw(trees(depth + 1)))


def text_of(tree: tuple[Any, ...], space: str) -> str:
    kind = tree[0]
    if kind == "lit":
        value = tree[1]
        if isinstance(value, str) and "'" not in value and space == " ":
            return "'" + value.replace('"', '"') + "'"  # single quotes work too
        return json.dumps(value)
    if kind == "path":
        return "$." + ".".join(tree[1])
    if kind == "not":
        return f"!({text_of(tree[1], space)})"
    return f"({text_of(tree[1], space)}{space}{kind}{space}{text_of(tree[2], space)})"


class Refused(Exception):
    pass


def truth(value: Any) -> bool:
    if value is None or value is False:
        return False
    if value is True:
        return True
    raise Refused


def number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same(left: Any, right: Any) -> bool:
    if number(left) and number(right):
        return bool(left == right)
    return type(left) is type(right) and left == right


def evaluate(tree: tuple[Any, ...], data: dict[str, Any]) -> Any:
    kind = tree[0]
    if kind == "lit":
        return tree[1]
    if kind == "path":
        value: Any = data
        for key in tree[1]:
            value = value.get(key) if isinstance(value, dict) else None
        return value
    if kind == "not":
        return not truth(evaluate(tree[1], data))
    if kind == "&&":
        return truth(evaluate(tree[1], data)) and truth(evaluate(tree[2], data))
    if kind == "||":
        return truth(evaluate(tree[1], data)) or truth(evaluate(tree[2], data))
    left, right = evaluate(tree[1], data), evaluate(tree[2], data)
    if kind in ("==", "!="):
        return same(left, right) is (kind == "==")
    if not ((number(left) and number(right)) or
            (isinstance(left, str) and isinstance(right, str))):
        raise Refused
    return {"<": left < right, "<=": left <= right, ">": left > right,
            ">=": left >= right}[kind]


DATA = st.fixed_dictionaries({}, optional={
    "status": st.sampled_from(["ready", "", "failed"]), "count": st.integers(-3, 3),
    "ok": st.booleans(), "name": st.one_of(st.none(), st.just({"status": "ready"}))})


@given(trees(), DATA, st.sampled_from([" ", "", "  "]))
@settings(max_examples=200, deadline=None)
def test_a_condition_holds_as_documented(tree: tuple[Any, ...], data: dict[str, Any],
                                         space: str) -> None:
    condition = parse_condition(text_of(tree, space))
    try:
        expected: Any = truth(evaluate(tree, data))
    except Refused:
        expected = Refused
    if expected is Refused:
        with pytest.raises(LegacyEvaluationError):
            condition_holds(condition, data)
    else:
        assert condition_holds(condition, data) is expected


@given(st.text(alphabet=st.sampled_from(list("$.ab()!=<>&|'\" 0123456789[]*truefalsn")),
               max_size=30), DATA)
@settings(max_examples=200, deadline=None)
def test_no_text_breaks_the_condition_language(text: str, data: dict[str, Any]) -> None:
    try:
        condition = parse_condition(text)
    except PathSyntaxError as error:
        assert 0 <= error.offset <= len(text)
        return
    with contextlib.suppress(LegacyEvaluationError):
        assert condition_holds(condition, data) in (True, False)


@pytest.mark.parametrize(("text", "data", "holds"), [
    ('$.status == "ready"', {"status": "ready"}, True),
    ("$.hasMore", {}, False),  # a missing flag is false
    ("$.hasMore", {"hasMore": True}, True),
    ('$.end == "true"', {"end": True}, False),  # a string is not a boolean
    ("$.faceIndex < $.faceCount", {"faceIndex": 0, "faceCount": 2}, True),
    ("$.count == 1.0", {"count": 1}, True),
    ('$.has_more && ($.event_id >= 4000 || $.total >= $.threshold)',
     {"has_more": True, "event_id": 1, "total": 5, "threshold": 5}, True),
    ("!$.a == false", {"a": True}, True),  # ! binds tighter than ==
])
def test_documented_examples(text: str, data: dict[str, Any], holds: bool) -> None:
    assert condition_holds(parse_condition(text), data) is holds


@pytest.mark.parametrize(("text", "message"), [
    ("$.a > \"1\"", "'>' compares two numbers or two strings, got a number and a string"),
    ("$.a && $.b", "'&&' takes booleans, got a number"),
    ("$.a", "condition `$.a` gave a number, not a boolean"),
])
def test_what_cannot_be_decided_fails(text: str, message: str) -> None:
    with pytest.raises(LegacyEvaluationError) as info:
        condition_holds(parse_condition(text), {"a": 1, "b": True})
    assert info.value.message == message
