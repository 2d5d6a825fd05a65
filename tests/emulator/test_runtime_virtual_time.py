"""ProcessRuntime under a VirtualClock: handlers see the clock's time, from module import on."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from runtime_support import call, make_spec, payload_json

from deployer.emulator.clock import SystemClock, VirtualClock
from deployer.emulator.runtime import ProcessRuntime

T0 = 1_000_000_000  # 2001-09-09T01:46:40Z, far from the real now

CLOCKS = """
import datetime, time
imported_at = time.time()
def handler(event, context):
    return {
        "imported_at": imported_at,
        "time": time.time(),
        "time_ns": time.time_ns(),
        "now": datetime.datetime.now(datetime.timezone.utc).timestamp(),
        "utcnow": datetime.datetime.utcnow().replace(tzinfo=datetime.timezone.utc).timestamp(),
        "today": datetime.date.today().isoformat(),
    }
"""


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(start=T0)


@pytest.fixture
def runtime(tmp_path: Path, clock: VirtualClock) -> Iterator[ProcessRuntime]:
    rt = ProcessRuntime(tmp_path / "work", clock)
    yield rt
    rt.close()


def test_handler_sees_the_virtual_instant(runtime, clock, tmp_path):
    spec = make_spec(tmp_path, {"index.py": CLOCKS})
    clock.advance(10)
    first = payload_json(call(runtime, spec))
    clock.advance(290)  # within the idle time: the same instance
    second = payload_json(call(runtime, spec))
    clock.advance(3600)  # past it: a new instance imports the module again
    third = payload_json(call(runtime, spec))
    for seen, instant in ((first, T0 + 10), (second, T0 + 300), (third, T0 + 3900)):
        for key in ("time", "now", "utcnow"):
            assert instant <= seen[key] < instant + 2, key
        assert instant <= seen["time_ns"] / 1e9 < instant + 2
        assert seen["today"] == "2001-09-09"
    assert T0 + 10 <= second["imported_at"] < T0 + 12  # module imported once, at first request
    assert T0 + 3900 <= third["imported_at"] < T0 + 3902


def test_log_timestamps_use_virtual_time(runtime, tmp_path):
    spec = make_spec(
        tmp_path,
        {
            "index.py": """
        import logging
        def handler(event, context):
            logging.getLogger().info("hello")
        """
        },
    )
    log = call(runtime, spec).log_text
    assert "2001-09-09T01:46:40." in log


def test_system_clock_patches_nothing(tmp_path):
    rt = ProcessRuntime(tmp_path / "work", SystemClock())
    try:
        before = time.time()
        seen = payload_json(call(rt, make_spec(tmp_path, {"index.py": CLOCKS})))
        after = time.time()
    finally:
        rt.close()
    assert before - 1 <= seen["time"] <= after + 1


def test_get_job_status_from_the_seed_follows_virtual_time(runtime, clock, tmp_path, project_root):
    source = (project_root / "functions" / "get_job_status" / "index.py").read_text()
    spec = make_spec(tmp_path, {"index.py": source}, function_name="GetJobStatus")

    def poll(try_count: int) -> dict:
        event = json.dumps({"job_id": "job-1", "delay": 30, "try_count": try_count}).encode()
        result = call(runtime, spec, event)
        assert result.error_type is None, result.payload
        return payload_json(result)

    clock.advance(10)  # module imported now: start_time = T0 + 10
    assert poll(0)["job_status"] == "running"
    clock.advance_to(T0 + 40)  # elapsed exactly 30: not > delay
    assert poll(1) == {"job_id": "job-1", "job_status": "running", "try_count": 2}
    clock.advance_to(T0 + 41)
    assert poll(2) == {"job_id": "job-1", "job_status": "success", "try_count": 3}


def test_timeouts_run_on_real_time_not_virtual_time(runtime, clock, tmp_path):
    spec = make_spec(
        tmp_path,
        {
            "index.py": """
        def handler(event, context):
            return "fine"
        """
        },
        timeout=1,
    )
    clock.advance(86_400)  # a day of virtual time passing does not time anything out
    result = call(runtime, spec)
    assert (result.error_type, result.payload) == (None, b"fine")
