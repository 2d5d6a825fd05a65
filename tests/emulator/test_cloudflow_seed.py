"""The seed's polling flow end to end: real local functions, virtual clock (the knife edge)."""

from __future__ import annotations

import json

import pytest

from tests.emulator.cloudflow_support import run_seed


def _run(delay: int, *, step_latency: float = 0.0) -> tuple[dict, list]:
    # a fresh emulator: GetJobStatus's start_time is set when its instance imports the module
    final, events, _ = run_seed(delay, step_latency=step_latency)
    return final, events


@pytest.mark.parametrize(("delay", "try_count", "elapsed"), [(9, 2, 20), (29, 4, 40)])
def test_seed_succeeds_on_the_exact_clock(delay: int, try_count: int, elapsed: int) -> None:
    final, events = _run(delay)
    assert final["Status"] == "Succeeded"
    output = json.loads(final["Output"])
    assert output["job_status"] == "success" and output["try_count"] == try_count
    assert final["virtual_seconds"] == elapsed  # Waits of 10 s each, nothing else takes time
    assert [e.type for e in events].count("ExecutionSucceeded") == 1
    # every Wait was skipped in virtual time: each event carries the instant it happened at
    instants = sorted({e.time for e in events})
    assert len(instants) == elapsed // 10 + 1


@pytest.mark.parametrize("delay", [30, 100])
def test_seed_times_out_on_the_exact_clock(delay: int) -> None:
    final, events = _run(delay)
    assert final["Status"] == "Failed" and "Output" not in final
    failed = [e for e in events if e.type == "ExecutionFailed"]
    assert len(failed) == 1
    assert json.loads(failed[0].event_detail)["Error"] == "timeout"
    polls = [e for e in events if e.type == "TaskSucceeded" and e.step_name == "GetJobStatus"]
    assert len(polls) == 4


def test_step_latency_models_cloud_overhead() -> None:
    final, _ = _run(30, step_latency=0.3)
    assert final["Status"] == "Succeeded"
    assert json.loads(final["Output"])["try_count"] == 4
