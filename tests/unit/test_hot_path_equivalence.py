"""The request hot path's fast paths give what the general code gives, for any input.

Each fast path (memoised encodings, one-shot HMAC, memoised host and timestamp parsing, the
first-character JSON test, the request id) is checked against a plain reference written the
obvious way, with hypothesis choosing the inputs.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import uuid
from urllib.parse import quote

from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.emulator.api import freshness, router, signing, strict
from deployer.emulator.api.http import Headers, HttpRequest

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
# names and values a client sends, with repeats (so memoised encodings are hit) and long ones
# (never memoised)
PIECES = st.sampled_from(["Action", "Timestamp", "2026-12-01T12:00:00Z", "a b", "é", "~-_.",
                          "x" * 70, "%", "=&", "+", ""])
VALUES = st.one_of(TEXT, PIECES, st.text(min_size=60, max_size=90))


def _reference_signature(method: str, params: dict[str, str], secret: str) -> str:
    def enc(text: str) -> str:
        return quote(text, safe="-_.~", encoding="utf-8")

    canon = "&".join(f"{enc(k)}={enc(params[k])}" for k in sorted(params))
    to_sign = f"{method.upper()}&{enc('/')}&{enc(canon)}"
    digest = hmac.new(f"{secret}&".encode(), to_sign.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


SECRETS = st.one_of(TEXT, st.sampled_from(["k" * 63, "k" * 64, "é" * 40]),
                    st.text(st.characters(blacklist_categories=("Cs",)), max_size=120))


@settings(max_examples=150)
@given(st.dictionaries(VALUES.filter(bool), VALUES, max_size=10), SECRETS,
       st.sampled_from(["GET", "POST", "post"]))
def test_rpc_signature_matches_the_reference(params: dict[str, str], secret: str,
                                             method: str) -> None:
    for _ in range(2):  # the second time from the memoised encodings
        assert signing.rpc_v1_signature(method, params, secret)[0] == _reference_signature(
            method, params, secret)


@settings(max_examples=200)
@given(st.dictionaries(VALUES.filter(bool), VALUES, max_size=8), SECRETS, st.booleans())
def test_verify_rpc_v1_accepts_exactly_the_reference_signature(
        extra: dict[str, str], secret: str, tamper: bool) -> None:
    params = {**extra, "AccessKeyId": "AK", "SignatureMethod": "HMAC-SHA1",
              "SignatureVersion": "1.0"}
    params.pop("Signature", None)
    signature = _reference_signature("GET", params, secret)
    if tamper:
        signature = ("A" if signature[0] != "A" else "B") + signature[1:]
    query = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}"
                     for k, v in {**params, "Signature": signature}.items())
    request = HttpRequest("GET", f"/?{query}", Headers((("Host", "h"),)))
    try:
        got = signing.verify_rpc_v1(request, {"AK": secret}.get)
    except signing.SignatureError as exc:
        assert tamper and exc.reason is signing.SignatureFailure.MISMATCH
    else:
        assert not tamper and got == "AK"


HOSTS = st.one_of(
    st.sampled_from(["127.0.0.1:9125", "localhost:1", "[::1]:80", "fnf.cn-beijing.aliyuncs.com",
                     "cn-shanghai.fnf.aliyuncs.com", "1234.cn-hangzhou-internal.fc.aliyuncs.com",
                     "FCV3.AP-SOUTHEAST-1.ALIYUNCS.COM", "fcv3.us-west-1.aliyuncs.com:443", ""]),
    st.text(max_size=30))


@given(HOSTS, st.sampled_from(["", "cn-hangzhou"]))
def test_region_from_host_is_the_uncached_answer(host: str, default: str) -> None:
    expected = router._region_of_host(host) or default
    assert router.region_from_host(host, default) == expected
    assert router.region_from_host(host, default) == expected


def test_rpc_request_ids_are_version_4_uuids_in_capitals() -> None:
    seen = set()
    for _ in range(200):
        rid = router.rpc_request_id()
        parsed = uuid.UUID(rid)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        assert rid == str(parsed).upper()
        seen.add(rid)
    assert len(seen) == 200


STAMPS = st.one_of(st.sampled_from(["2026-12-01T12:00:00Z", "2026-02-30T00:00:00Z",
                                    "2026-12-01T12:00:00.123Z", " 2026-12-01T12:00:00Z",
                                    "nope", ""]), st.text(max_size=45))


@given(STAMPS)
def test_memoised_timestamps_parse_as_parse_iso_utc(text: str) -> None:
    assert freshness._parse_stamp(text) == freshness.parse_iso_utc(text)
    assert freshness._parse_stamp(text) == freshness.parse_iso_utc(text)


JSONISH = st.one_of(st.sampled_from(["{}", "[1]", " {", "\t[", "\n", " ", "{" * 200 + "}" * 200,
                                     "[" * 200, '{"a": NaN}', "x{", ""]),
                    st.text(max_size=10))


@given(st.dictionaries(st.sampled_from(["Input", "Definition", "Name"]), JSONISH))
def test_check_json_params_refuses_what_the_plain_test_refuses(params: dict[str, str]) -> None:
    def plain() -> str | None:
        for name, value in params.items():
            if not value or value.lstrip()[:1] not in ("{", "["):
                continue
            try:
                strict.loads(value)
            except strict.JsonLimitError as exc:
                return f"{name}: {exc}"
            except ValueError:
                continue
        return None

    expected = plain()
    try:
        strict.check_json_params(params, params)
    except Exception as exc:
        assert expected is not None and str(exc.args[0]) == expected
    else:
        assert expected is None


@given(st.lists(st.tuples(st.text(max_size=6), st.text(max_size=6)), max_size=5))
def test_header_check_refuses_exactly_the_headers_with_surrogates(
        items: list[tuple[str, str]]) -> None:
    surrogate = re.compile("[\ud800-\udfff]")
    bad = any(surrogate.search(n) or surrogate.search(v) for n, v in items)
    request = HttpRequest("GET", "/", Headers(tuple(items)))
    try:
        strict.check_request(request)
    except Exception:
        assert bad
    else:
        assert not bad


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | TEXT, lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(TEXT, inner, max_size=3), max_leaves=10))
def test_json_responses_are_what_json_dumps_gives(value: object) -> None:
    import json

    from deployer.emulator.api.http import json_response

    body = json_response(200, {"RequestId": "r", "Value": value}, {}).body
    assert body == json.dumps({"RequestId": "r", "Value": value}, ensure_ascii=False,
                              separators=(",", ":")).encode()


@given(st.integers(min_value=0, max_value=120), st.integers(min_value=1, max_value=5))
def test_history_rows_in_multi_row_inserts_are_the_rows_one_by_one(count: int,
                                                                   first: int) -> None:
    import sqlite3
    from types import SimpleNamespace

    from deployer.emulator.store import steps

    schema = ("CREATE TABLE history (exec_seq INTEGER NOT NULL, event_id INTEGER NOT NULL, "
              "schedule_event_id INTEGER NOT NULL, type TEXT NOT NULL, step_name TEXT NOT "
              "NULL, time TEXT NOT NULL, detail TEXT NOT NULL, PRIMARY KEY (exec_seq, "
              "event_id)) WITHOUT ROWID")
    events = [SimpleNamespace(event_id=first + i, schedule_event_id=i // 2,
                              type=SimpleNamespace(value=f"Type{i % 3}"), step_name=f"s{i}",
                              time=f"t{i}", detail="{}" if i % 2 else '{"a": 1}')
              for i in range(count)]
    fast, plain = sqlite3.connect(":memory:"), sqlite3.connect(":memory:")
    for conn in (fast, plain):
        conn.execute(schema)
    steps._insert_history(fast, 7, SimpleNamespace(new_events=events))  # type: ignore[arg-type]
    plain.executemany("INSERT INTO history VALUES (?,?,?,?,?,?,?)",
                      [(7, h.event_id, h.schedule_event_id, h.type.value, h.step_name, h.time,
                        h.detail) for h in events])
    query = "SELECT * FROM history ORDER BY exec_seq, event_id"
    assert fast.execute(query).fetchall() == plain.execute(query).fetchall()
