"""Request values and strict parsing: form decoding, headers, JSON limits, SSE encoding."""

from __future__ import annotations

import json
from urllib.parse import parse_qsl

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.emulator.api import strict
from deployer.emulator.api.http import Headers, ServerSentEvent, _parse_form
from deployer.emulator.api.signing import _enc, rpc_v1_signature

FORM_PIECES = st.sampled_from([*"ab=&+ é;%", "%2F", "%zz", "%E4%B8%96", "%ED%A0%80"])


@settings(max_examples=500)
@given(st.lists(FORM_PIECES, max_size=40).map("".join))
def test_form_parsing_matches_parse_qsl(text: str) -> None:
    assert _parse_form(text) == dict(parse_qsl(text, keep_blank_values=True))


@given(st.dictionaries(st.text(min_size=1, max_size=8), st.text(max_size=12), max_size=8))
def test_rpc_canonical_string_encodes_like_quote(params: dict[str, str]) -> None:
    _, to_sign = rpc_v1_signature("POST", params, "secret")
    canon = "&".join(f"{_enc(k)}={_enc(params[k])}" for k in sorted(params))
    assert to_sign == f"POST&%2F&{_enc(canon)}"


def test_headers_are_case_insensitive_and_multi_valued() -> None:
    headers = Headers((("Host", "a"), ("X-A", "1"), ("x-a", "2")))
    assert headers.get("HOST") == "a" and headers.get_all("X-a") == ["1", "2"]
    assert "x-A" in headers and "nope" not in headers and headers.get("nope", "d") == "d"


TEXT = st.text(st.characters(blacklist_categories=("Cs",)))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False,
                                                          allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=20)


@given(JSON, st.booleans())
def test_strict_loads_agrees_with_json_within_the_limits(value, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert strict.loads(text) == json.loads(text)


@given(st.integers(min_value=strict.MAX_JSON_DEPTH + 1, max_value=3000))
def test_strict_loads_refuses_deep_nesting(depth: int) -> None:
    with pytest.raises(strict.JsonLimitError, match="nested deeper"):
        strict.loads("[" * depth + "]" * depth)


def test_strict_loads_accepts_the_deepest_allowed() -> None:
    depth = strict.MAX_JSON_DEPTH
    assert strict.loads("[" * depth + "]" * depth) is not None


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "1e400",
                                  "1" * (strict.MAX_NUMBER_LENGTH + 1), '"\\ud800"',
                                  '{"\\udfff": 1}'])
def test_strict_loads_refuses(text: str) -> None:
    with pytest.raises(strict.JsonLimitError):
        strict.loads(text)


def test_server_sent_event_encoding() -> None:
    event = ServerSentEvent("line 1\nline 2", event="step\nx", id="7", retry_ms=500)
    assert event.encode() == (b"event: step x\nid: 7\nretry: 500\ndata: line 1\n"
                              b"data: line 2\n\n")
    assert ServerSentEvent("").encode() == b"data: \n\n"


@given(st.text())
def test_form_values_decode_as_the_standard_library_does(text: str) -> None:
    from urllib.parse import quote_plus, unquote_plus

    from deployer.emulator.api.http import _unquote_plus

    assert _unquote_plus(text) == unquote_plus(text)
    assert _unquote_plus(quote_plus(text)) == text
