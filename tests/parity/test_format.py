"""The recording format and the comparison rules, without a cloud: variables, paths, every
compare mode, the shape checks of the loader, and the committed recordings' own consistency."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.parity.compare import Comparison, compare_answer, path_matches
from tests.parity.recording import (
    FormatError,
    Rule,
    UnknownVariable,
    escape,
    expand,
    expand_all,
    lookup,
    templatize,
)
from tests.parity.schema import (
    label,
    load_recording,
    load_shared_rules,
    recording_paths,
    to_document,
    write_recording,
)

SHARED = load_shared_rules()
RECORDINGS = recording_paths()
TEXT = st.text(alphabet=st.sampled_from(list("ab$${}_x1 \n")), max_size=30)
NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,6}", fullmatch=True)


# --- variables ---------------------------------------------------------------------------

@given(TEXT)
def test_escape_then_expand_gives_the_text_back(text: str) -> None:
    assert expand(escape(text), {}) == text


@given(TEXT, st.dictionaries(NAMES, st.text(min_size=1, max_size=8), max_size=4))
def test_templatize_then_expand_gives_the_value_back(text: str,
                                                     variables: dict[str, str]) -> None:
    document = {"a": [text, {"b": text + "!"}], "n": 3}
    assert expand_all(templatize(document, variables), variables) == document


def test_templatize_prefers_the_longest_value() -> None:
    out = templatize("acs:fc:cn-hangzhou:123:functions/fn-1-abc",
                     {"fn": "fn-1-abc", "region": "cn-hangzhou", "account_id": "123"})
    assert out == "acs:fc:${region}:${account_id}:functions/${fn}"


def test_an_unknown_variable_is_an_error_not_a_literal() -> None:
    with pytest.raises(UnknownVariable):
        expand("Name: ${flw}", {"flow": "f"})
    assert expand("$Input.a and $$ and ${flow}", {"flow": "f"}) == "$Input.a and $ and f"


def test_lookup_follows_keys_and_indexes() -> None:
    doc = {"body": {"versions": [{"versionId": "1"}]}}
    assert lookup(doc, "body.versions.0.versionId") == "1"
    with pytest.raises(KeyError):
        lookup(doc, "body.versions.1.versionId")


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("body.**.createdTime", "body.createdTime", True),
    ("body.**.createdTime", "body.functions.3.createdTime", True),
    ("body.Events.*.Time", "body.Events.0.Time", True),
    ("body.Events.*.Time", "body.Events.0.Detail.Time", False),
    ("headers.x-fc-*", "headers.x-fc-request-id", True),
    ("status", "body.status", False),
])
def test_rule_paths(pattern: str, path: str, matches: bool) -> None:
    assert path_matches(pattern.split("."), path.split(".")) is matches


# --- compare modes -------------------------------------------------------------------------

def _diff(recorded: dict[str, Any], actual: dict[str, Any], *rules: Rule,
          exact: bool = False) -> list[str]:
    how = Comparison(rules=list(rules), exact_keys=exact, regex=SHARED.regex)
    base = {"status": 200, "headers": {}}
    return [str(m) for m in compare_answer({**base, **recorded}, {**base, **actual}, how)]


def test_equal_is_the_default_and_names_the_path() -> None:
    assert _diff({"body": {"a": [1, {"b": "x"}]}}, {"body": {"a": [1, {"b": "y"}]}}) == [
        "body.a.1.b: got 'y', recorded 'x'"]
    assert _diff({"body": {"n": 1}}, {"body": {"n": True}}) != []
    assert _diff({"body": {"a": [1]}}, {"body": {"a": [1, 2]}})[0].startswith("body.a: 2 items")


def test_keys_exact_or_subset() -> None:
    assert _diff({"body": {"a": 1}}, {"body": {"a": 1, "extra": 2}}) == []
    assert _diff({"body": {"a": 1}}, {"body": {"a": 1, "extra": 2}}, exact=True) == [
        "body.extra: not in the recording (got 2)"]
    assert _diff({"body": {"a": 1, "gone": 2}}, {"body": {"a": 1}}) == [
        "body.gone: missing (recorded 2)"]


def test_headers_are_a_subset_unless_a_rule_says_absent() -> None:
    absent = Rule("headers.x-fc-error-type", "absent", why="success")
    assert _diff({"headers": {"x-a": "1"}}, {"headers": {"x-a": "1", "x-b": "2"}}) == []
    assert _diff({}, {"headers": {"x-fc-error-type": "Unhandled"}}, absent) != []
    assert _diff({}, {"headers": {}}, absent) == []


@pytest.mark.parametrize(("rule", "actual", "ok"), [
    (Rule("body.v", "pattern", pattern="fc-time"), "2024-01-01T00:00:00Z", True),
    (Rule("body.v", "pattern", pattern="fc-time"), "2024-01-01T00:00:00.000Z", False),
    (Rule("body.v", "pattern", pattern="20[04]"), 204, True),
    (Rule("body.v", "type"), "other text", True),
    (Rule("body.v", "type"), 7, False),
    (Rule("body.v", "present"), None, True),
    (Rule("body.v", "ignore"), [1, 2], True),
])
def test_value_rules(rule: Rule, actual: Any, ok: bool) -> None:
    assert (_diff({"body": {"v": "recorded"}}, {"body": {"v": actual}}, rule) == []) is ok


def test_present_and_pattern_fail_on_a_missing_field() -> None:
    for rule in (Rule("body.v", "present"), Rule("body.v", "pattern", pattern="uuid")):
        assert _diff({"body": {"v": "x"}}, {"body": {}}, rule) != []


def test_contains_matches_items_by_key_and_compares_them() -> None:
    rule = Rule("body.Flows", "contains", key="Name")
    recorded = {"body": {"Flows": [{"Name": "mine", "Type": "FDL"}]}}
    others = {"Name": "someone-elses", "Type": "FDL"}
    assert _diff(recorded, {"body": {"Flows": [others, {"Name": "mine", "Type": "FDL"}]}},
                 rule) == []
    assert _diff(recorded, {"body": {"Flows": [{"Name": "mine", "Type": "X"}]}}, rule) == [
        "body.Flows.0.Type: got 'X', recorded 'FDL'"]
    assert _diff(recorded, {"body": {"Flows": [others]}}, rule) == [
        "body.Flows.0: no item with Name = 'mine'"]


def test_prefix_compares_the_first_items_only() -> None:
    rule = Rule("body.Events", "prefix")
    recorded = {"body": {"Events": [{"Type": "ExecutionStarted"}]}}
    assert _diff(recorded, {"body": {"Events": [{"Type": "ExecutionStarted"},
                                                {"Type": "StepEntered"}]}}, rule) == []
    assert _diff(recorded, {"body": {"Events": [{"Type": "StepEntered"}]}}, rule) != []
    assert _diff(recorded, {"body": {"Events": []}}, rule) != []


def test_the_first_matching_rule_wins() -> None:
    loose = Rule("body.Status", "pattern", pattern="Running|Stopped")
    strict = Rule("body.*", "pattern", pattern="Stopped")
    assert _diff({"body": {"Status": "x"}}, {"body": {"Status": "Running"}}, loose, strict) == []
    assert _diff({"body": {"Status": "x"}}, {"body": {"Status": "Running"}}, strict, loose) != []


# --- the loader --------------------------------------------------------------------------

def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    return path


MINIMAL = """format: 1
scenario: s
product: cloudflow
source: documented
documented: {note: n}
steps:
  - name: one
    request: {action: DescribeFlow, method: GET, query: {Name: x}}
    response: {status: 404}
"""


@pytest.mark.parametrize(("change", "message"), [
    (("product: cloudflow", "product: lambda"), "product must be one of"),
    (("source: documented", "source: guessed"), "source must be one of"),
    (("method: GET", "method: PATCH"), "steps[0] (one): request: method must be"),
    (("status: 404", "status: '404'"), "steps[0] (one): response.status must be"),
    (("scenario: s", "scenario: s\nsurprise: 1"), "unknown field(s) ['surprise']"),
    (("response: {status: 404}", "response: {status: 404}\n    rules: [{path: x, compare: "
      "matches}]"), "steps[0] (one): rules[0]: compare must be one of"),
    (("response: {status: 404}", "response: {status: 404}\n    rules: [{path: x, compare: "
      "equal, redact: true}]"), "redact needs a compare"),
    (("response: {status: 404}", "response: {status: 404}\n    save: {region: body.x}"),
     "'region' cannot name a variable"),
    (("format: 1", "format: 2"), "format must be 1"),
    (("query: {Name: x}", "query: {Limit: 10}"), "query.Limit: must be a string"),
    (("method: GET,", "method: GET, path: functions,"), "path must be a string starting"),
    (("response: {status: 404}", "response: {status: 404}\n    rules: [{path: x, compare: "
      "pattern, pattern: '(unclosed'}]"), "not a regular expression"),
])
def test_a_malformed_recording_is_refused_by_place(tmp_path: Path, change: tuple[str, str],
                                                   message: str) -> None:
    path = _write(tmp_path, MINIMAL.replace(*change))
    with pytest.raises(FormatError) as info:
        load_recording(path)
    assert str(path) in str(info.value) and message in str(info.value)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=3),
    max_leaves=12)
FIELDS = st.sampled_from(["format", "scenario", "product", "source", "documented", "names",
                          "files", "rules", "steps", "cleanup", "keys"])


@settings(max_examples=60)
@given(st.dictionaries(FIELDS, JSONISH, max_size=6), st.data())
def test_any_document_loads_or_is_refused_by_place(document: dict[str, Any],
                                                   data: st.DataObject) -> None:
    """Whatever a file holds, loading it succeeds or raises FormatError naming the file."""
    import json
    import tempfile

    base: dict[str, Any] = {
        "format": 1, "scenario": "s", "product": "fc", "source": "documented",
        "documented": {}, "steps": [{"name": "a", "request": {
            "action": "GetFunction", "method": "GET"}, "response": {"status": 200}}]}
    step = data.draw(st.dictionaries(st.sampled_from(
        ["name", "request", "response", "save", "rules", "decode_body"]), JSONISH, max_size=3))
    base["steps"][0].update(step)
    base.update(document)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.yaml"
        path.write_text(json.dumps(base))  # JSON is YAML
        try:
            load_recording(path)
        except FormatError as exc:
            assert str(path) in str(exc)


def test_plain_scalars_with_colons_are_reported_with_their_line(tmp_path: Path) -> None:
    path = _write(tmp_path, MINIMAL.replace("documented: {note: n}",
                                            "documented:\n  note: a: b"))
    with pytest.raises(FormatError, match=r"(?s)not valid YAML: .*line 6"):
        load_recording(path)


# --- the committed recordings ------------------------------------------------------------

@pytest.mark.parametrize("path", RECORDINGS, ids=label)
def test_a_recording_says_where_it_came_from(path: Path) -> None:
    rec = load_recording(path)
    if rec.source == "documented":
        assert rec.provenance.get("note") and rec.provenance.get("references"), label(path)
    else:
        assert {"date", "against", "region", "sdk", "python"} <= set(rec.provenance)
        assert rec.provenance["against"] == "cloud", "recordings of the emulator are not parity"
        assert not any(r.scope == "documented" for s in rec.steps for r in s.rules)


@pytest.mark.parametrize("path", RECORDINGS, ids=label)
def test_a_recording_satisfies_its_own_rules(path: Path) -> None:
    """Every recorded answer passes its own comparison (the documented values fit the
    patterns, every variable is defined), and the file survives a write/read round trip."""
    rec = load_recording(path)
    variables = {**rec.files, "region": "cn-hangzhou", "account_id": "1234567890123456",
                 **{k: f"{v}-0f0f0f0f" for k, v in rec.names.items()}}
    for step in rec.steps:
        expanded = expand_all(dict(step.response), variables)
        for name, where in step.save.items():
            variables[name] = str(lookup(expanded, where))
        how = Comparison([*step.rules, *rec.rules, *SHARED.rules[rec.product]],
                         rec.keys == "exact", SHARED.regex)
        assert compare_answer(expanded, expanded, how) == [], f"{label(path)}: {step.name}"
        expand_all([step.request.path, dict(step.request.query), step.request.body,
                    step.request.body_text, dict(step.request.headers)], variables)
    copy = path.parent / "copy.yaml"
    try:
        write_recording(rec, copy)
        assert to_document(load_recording(copy)) == to_document(rec)
    finally:
        copy.unlink(missing_ok=True)


def test_the_recordings_cover_the_core_actions_and_errors() -> None:
    actions, codes = set(), set()
    for path in RECORDINGS:
        rec = load_recording(path)
        for step in rec.steps:
            actions.add((rec.product, step.request.action))
            body = step.response.get("body")
            if isinstance(body, dict) and "Code" in body:
                codes.add((rec.product, body["Code"]))
    fc = {"CreateFunction", "GetFunction", "ListFunctions", "InvokeFunction", "UpdateFunction",
          "DeleteFunction", "PublishFunctionVersion", "ListFunctionVersions", "CreateAlias",
          "GetAlias", "ListAliases", "DeleteAlias", "DeleteFunctionVersion"}
    flow = {"CreateFlow", "DescribeFlow", "ListFlows", "UpdateFlow", "DeleteFlow",
            "StartExecution", "DescribeExecution", "GetExecutionHistory", "StopExecution",
            "ListExecutions"}
    assert {("fc", a) for a in fc} | {("cloudflow", a) for a in flow} <= actions
    assert {("fc", "FunctionNotFound"), ("fc", "InvalidArgument"),
            ("fc", "FunctionAlreadyExists"), ("fc", "AliasNotFound"),
            ("fc", "VersionNotFound"), ("cloudflow", "FlowNotExists"),
            ("cloudflow", "ExecutionNotExists"), ("cloudflow", "ExecutionAlreadyExists"),
            ("cloudflow", "FlowAlreadyExists"), ("cloudflow", "MissingRequiredParams"),
            ("cloudflow", "InvalidArgument"), ("cloudflow", "ActionNotSupported")} <= codes
