"""Golden traces: every step of the recorded scenarios gives the same execution JSON text, the
same history ``EventDetail`` text (what the emulator serves as is) and the same commands as the
implementation the fixture was recorded from; resuming from a stored (JSON) execution and
stepping never changes the execution given to ``step``."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deployer.fdl.interpreter import Execution, event_from_json, new_execution, runtime, step
from deployer.fdl.interpreter.history import format_time
from tests.unit.golden_scenarios import FIXTURE, SCENARIOS, dump, events_of, trace

GOLDEN: dict[str, list[dict[str, Any]]] = json.loads(FIXTURE.read_text(encoding="utf-8"))


def test_the_fixture_covers_every_scenario() -> None:
    assert sorted(GOLDEN) == sorted(SCENARIOS)
    kinds = {
        event["Type"]
        for steps in GOLDEN.values()
        for recorded in steps
        for event in json.loads(recorded["execution"])["new_events"]
    }
    assert {"BranchEntered", "IterationExited", "TaskTimedOut", "ExecutionStopped",
            "ExecutionTimedOut", "StepFailed"} <= kinds


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_step_matches_the_recorded_text(name: str) -> None:
    recorded = GOLDEN[name]
    actual = trace(SCENARIOS[name])
    assert [s["event"] for s in actual] == [s["event"] for s in recorded]
    for index, (now, then) in enumerate(zip(actual, recorded, strict=True)):
        now_events = json.loads(now["execution"])["new_events"]
        then_events = json.loads(then["execution"])["new_events"]
        assert [e["EventDetail"] for e in now_events] == [e["EventDetail"] for e in then_events], (
            f"step {index}"
        )
        assert now["execution"] == then["execution"], f"step {index}"
        assert now["commands"] == then["commands"], f"step {index}"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_history_event_objects_serve_the_recorded_text(name: str) -> None:
    scenario = SCENARIOS[name]
    flow = scenario.flow()
    options = {k: v for k, v in scenario.options.items() if k != "start_time"}
    execution = new_execution(flow, input=scenario.input, execution_name="golden",
                              now=scenario.options.get("start_time", 0.0), **options)
    for index, event in enumerate(events_of(scenario)):
        execution, _ = step(flow, execution, event)
        expected = json.loads(GOLDEN[name][index]["execution"])["new_events"]
        assert [e.detail for e in execution.new_events] == [e["EventDetail"] for e in expected]
        assert [e.to_json() for e in execution.new_events] == expected


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_resuming_from_stored_json_matches_and_never_mutates_the_input(name: str) -> None:
    scenario = SCENARIOS[name]
    flow = scenario.flow()
    recorded = GOLDEN[name]
    for index, saved in enumerate(recorded[:-1]):
        stored = Execution.from_json(json.loads(saved["execution"]))
        stored.new_events = []
        before = dump(stored.to_json())
        event = event_from_json(recorded[index + 1]["event"])
        resumed, commands = step(flow, stored, event)
        assert dump(resumed.to_json()) == recorded[index + 1]["execution"], f"step {index + 1}"
        assert dump([c.to_json() for c in commands]) == recorded[index + 1]["commands"]
        assert dump(stored.to_json()) == before, "step changed the execution it was given"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_the_fast_encoder_writes_what_json_dumps_writes(value: Any) -> None:
    assert runtime.dump(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@given(st.floats(min_value=-1e11, max_value=3e11, allow_nan=False))
def test_history_time_matches_the_datetime_formatting(epoch: float) -> None:
    millis = round(epoch * 1000)
    try:
        moment = datetime.fromtimestamp(millis // 1000, tz=timezone.utc)
    except (ValueError, OverflowError) as exc:
        with pytest.raises(type(exc)):
            format_time(epoch)
        return
    expected = moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{millis % 1000:03d}Z"
    if moment.year < 1000:  # strftime does not pad years below 1000 on every platform
        expected = f"{moment.year:04d}" + expected[expected.index("-"):]
    assert format_time(epoch) == expected
    assert format_time(epoch) == expected  # the remembered last result too
