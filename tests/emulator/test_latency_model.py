"""The latency model on the virtual clock, where its arithmetic is exact (docs/runtime.md
"Latency model"): the seed's `{"delay": 30}` on a fresh instance, through the official SDK.

With a cold start of C seconds and no step latency, StartJob's instance starts C late too,
so GetJobStatus imports its module at 10 + C (its `start_time` is the whole second below) and
poll k runs at 10 + 2C + 10(k-1): poll 4 sees int(40 + 2C) - int(10 + C), which is 31 (> 30,
JobSucceeded with try_count 4) from C = 0.5 on, and 30 (FailJobFailed) below.
"""

from __future__ import annotations

import json

import pytest

from deployer.emulator.latency import CLOUD
from tests.emulator.cloudflow_support import run_seed


def _run(delay: int, *, cold_start: float = 0.0, step_latency: float = 0.0
         ) -> tuple[dict, list, dict]:
    return run_seed(delay, cold_start=cold_start, step_latency=step_latency)


def _polls(events: list) -> list:
    return [e for e in events if e.type == "TaskSucceeded" and e.step_name == "GetJobStatus"]


def test_a_one_second_cold_start_makes_delay_30_succeed_at_poll_4() -> None:
    final, events, health = _run(30, cold_start=1.0)
    assert health["latency"] == {"model": "custom", "coldStart": 1.0, "stepLatency": 0.0}
    assert final["Status"] == "Succeeded"
    output = json.loads(final["Output"])
    assert output["job_status"] == "success" and output["try_count"] == 4
    assert len(_polls(events)) == 4
    assert final["virtual_seconds"] == 42  # four Waits and two cold starts, nothing else


@pytest.mark.parametrize(("cold_start", "status"), [(0.0, "Failed"), (0.25, "Failed"),
                                                    (0.5, "Succeeded"), (3.0, "Succeeded")])
def test_the_boundary_of_delay_30_is_half_a_second_of_cold_start(cold_start: float,
                                                                  status: str) -> None:
    final, events, _ = _run(30, cold_start=cold_start)
    assert final["Status"] == status
    assert len(_polls(events)) == 4  # never earlier: poll 3 sees at most 21 + ...
    assert final["virtual_seconds"] == pytest.approx(40 + 2 * cold_start)


def test_only_the_first_call_of_an_instance_pays_the_cold_start() -> None:
    _, events, _ = _run(30, cold_start=1.0)
    by_id = {e.event_id: e for e in events}
    waits = []
    for poll in _polls(events):
        scheduled = by_id[poll.schedule_event_id]
        waits.append(_seconds(poll.time) - _seconds(scheduled.time))
    assert waits == [1.0, 0.0, 0.0, 0.0]


def test_the_cloud_like_defaults_on_the_virtual_clock() -> None:
    final, _, health = _run(30, cold_start=CLOUD.cold_start, step_latency=CLOUD.step_latency)
    assert health["latency"]["model"] == "cloud"
    assert final["Status"] == "Succeeded"
    assert json.loads(final["Output"])["try_count"] == 4
    # 40 s of Waits, 2 cold starts, 9 delivered steps (4 timers, 5 task results) of 0.1 s
    assert final["virtual_seconds"] == pytest.approx(40 + 2 * 1.0 + 9 * 0.1)


def test_the_virtual_clock_is_exact_by_default() -> None:
    final, _, health = _run(30)
    assert health["latency"] == {"model": "exact", "coldStart": 0.0, "stepLatency": 0.0}
    assert final["Status"] == "Failed" and final["virtual_seconds"] == 40


def _seconds(wire_time: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(wire_time.replace("Z", "+00:00")).timestamp()
