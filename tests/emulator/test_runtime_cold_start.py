"""ProcessRuntime's cold start (docs/runtime.md "Latency model"): a new instance spends it
between importing its module and its first call; warm calls do not; it is neither part of the
invocation's duration nor of the function's timeout."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from runtime_support import call, make_spec, payload_json

from deployer.emulator.clock import SystemClock, VirtualClock
from deployer.emulator.runtime import ProcessRuntime

T0 = 1_000_000_000

TIMES = """
import time
imported_at = time.time()
def handler(event, context):
    return {"imported_at": imported_at, "called_at": time.time()}
"""

WITH_INITIALIZER = """
import time
imported_at = time.time()
initialized_at = None
def initialize(context):
    global initialized_at
    initialized_at = time.time()
def handler(event, context):
    return {"imported_at": imported_at, "initialized_at": initialized_at,
            "called_at": time.time()}
"""


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(start=T0)


@pytest.fixture
def runtime(tmp_path: Path, clock: VirtualClock) -> Iterator[ProcessRuntime]:
    rt = ProcessRuntime(tmp_path / "work", clock, cold_start=2.5)
    yield rt
    rt.close()


def test_a_new_instance_spends_the_cold_start_between_import_and_first_call(runtime, clock,
                                                                            tmp_path):
    spec = make_spec(tmp_path, {"index.py": TIMES})
    first = call(runtime, spec)
    seen = payload_json(first)
    assert first.cold_start is True
    assert T0 <= seen["imported_at"] < T0 + 0.5
    assert seen["called_at"] - seen["imported_at"] == pytest.approx(2.5, abs=0.5)
    assert seen["called_at"] >= T0 + 2.5
    assert clock.now() == T0 + 2.5  # virtual time passed: the caller's clock agrees
    assert first.duration_ms < 1000  # the cold start is not the invocation's duration

    warm = call(runtime, spec, rid="req-2")
    again = payload_json(warm)
    assert warm.cold_start is False
    assert again["imported_at"] == seen["imported_at"]  # same instance, imported once
    assert T0 + 2.5 <= again["called_at"] < T0 + 3  # nothing added to a warm call
    assert clock.now() == T0 + 2.5


def test_with_an_initializer_the_cold_start_comes_before_it(runtime, clock, tmp_path):
    spec = make_spec(tmp_path, {"index.py": WITH_INITIALIZER},
                     initializer_handler="index.initialize", initializer_timeout=3)
    seen = payload_json(call(runtime, spec))
    assert seen["initialized_at"] - seen["imported_at"] == pytest.approx(2.5, abs=0.5)
    assert seen["called_at"] >= seen["initialized_at"] >= T0 + 2.5
    assert clock.now() == T0 + 2.5  # paid once, by the instance's first request


def test_the_cold_start_can_be_changed_and_turned_off(runtime, clock, tmp_path):
    runtime.cold_start = 0.0
    seen = payload_json(call(runtime, make_spec(tmp_path, {"index.py": TIMES})))
    assert seen["called_at"] - seen["imported_at"] < 0.5
    assert clock.now() == T0


def test_on_the_real_clock_the_worker_waits_and_the_timeout_excludes_it(tmp_path):
    """A 1 s function that works for 0.6 s on an instance with a 0.8 s cold start: the
    request takes 1.4 s, but the function did not time out and its duration is 0.6 s."""
    rt = ProcessRuntime(tmp_path / "work", SystemClock(), cold_start=0.8)
    busy = """
    import time
    imported_at = time.time()
    def handler(event, context):
        called_at = time.time()
        time.sleep(0.6)
        return {"imported_at": imported_at, "called_at": called_at}
    """
    try:
        result = call(rt, make_spec(tmp_path, {"index.py": busy}, timeout=1))
        warm = call(rt, make_spec(tmp_path, {"index.py": busy}, timeout=1), rid="req-2")
    finally:
        rt.close()
    assert result.error_type is None, result.payload
    seen = payload_json(result)
    assert seen["called_at"] - seen["imported_at"] >= 0.8
    assert 600 <= result.duration_ms < 600 + 800  # the 0.8 s are not in it
    assert warm.error_type is None and warm.cold_start is False
    assert payload_json(warm)["imported_at"] == seen["imported_at"]
