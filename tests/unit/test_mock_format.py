"""The shared mock format (fdl/interpreter/mocks.py): any document reads back the same from its
LocalStack-layout JSON, flat and per-flow cases mix, and no input makes the parser raise
anything but MockFormatError."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.fdl.interpreter.mocks import ANY_FLOW, MockFormatError, parse_mocks

names = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7e), min_size=1, max_size=8)
json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                           lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(names, inner, max_size=3), max_leaves=8)


@st.composite
def documents(draw: Any) -> dict[str, Any]:
    responses = draw(st.dictionaries(names, st.lists(
        st.one_of(json_values.map(lambda v: {"Return": v}),
                  st.tuples(names, st.text(max_size=5)).map(
                      lambda t: {"Throw": {"Error": t[0], "Cause": t[1]}})),
        min_size=1, max_size=3), min_size=1, max_size=3))
    response_names = sorted(responses)
    cases = st.dictionaries(names, st.dictionaries(names, st.sampled_from(response_names),
                                                   max_size=3), max_size=2)
    data: dict[str, Any] = {"MockedResponses": {
        name: {str(i): entry for i, entry in enumerate(entries)}
        for name, entries in responses.items()}}
    flat = draw(cases)
    if flat:
        data["TestCases"] = flat
    machines = draw(st.dictionaries(names, cases.map(lambda c: {"TestCases": c}), max_size=2))
    if machines:
        data["StateMachines"] = machines
    return data


@settings(max_examples=40)
@given(documents())
def test_a_document_reads_back_the_same_from_its_json(data: dict[str, Any]) -> None:
    document = parse_mocks(data, "mocks")
    again = parse_mocks(json.loads(json.dumps(document.to_json())), "again")
    assert (again.cases, again.responses) == (document.cases, document.responses)
    for (flow, case), mapping in document.cases.items():
        assert document.case(flow, case) == mapping or flow == ANY_FLOW
        for response in mapping.values():
            assert document.entry(response, 0) is not None


@settings(max_examples=60)
@given(json_values)
def test_any_input_is_read_or_refused_by_name(data: Any) -> None:
    try:
        parse_mocks(data, "x.yaml")
    except MockFormatError as exc:
        assert str(exc).startswith("x.yaml")


def test_a_flow_case_wins_over_a_flat_one_of_the_same_name() -> None:
    document = parse_mocks({"TestCases": {"C": {"S": "A"}},
                            "StateMachines": {"f": {"TestCases": {"C": {"S": "B"}}}},
                            "MockedResponses": {"A": {"0": {"Return": 1}},
                                                "B": {"0": {"Return": 2}}}})
    assert document.case("f", "C") == {"S": "B"}
    assert document.case("g", "C") == {"S": "A"}
    assert document.case_names("f") == ["C"]
