"""Idle instances: expired after their idle time on the runtime's clock, reaped (preStop first,
worker gone), never handed out once expired; the reaper thread calls reap_idle."""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path

import pytest
from runtime_support import ACCOUNT, REGION, call, make_spec, payload_json

from deployer.emulator.clock import VirtualClock
from deployer.emulator.runtime import DEFAULT_IDLE_TTL, HookRun, ProcessRuntime
from deployer.emulator.runtime.reaper import IdleReaper

HOOKED = """
import os
def handler(event, context):
    return os.getpid()
def pre_stop(context):
    print("stopping", context.request_id)
    if os.environ.get("STOP") == "fail":
        raise RuntimeError("cannot flush")
"""


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(1_700_000_000)


@pytest.fixture
def runtime(tmp_path: Path, clock: VirtualClock):
    rt = ProcessRuntime(tmp_path / "work", clock, sandbox=False)
    runs: list[HookRun] = []
    rt.hook_sink = runs.append
    yield rt, runs
    rt.close()


def test_idle_instances_are_reaped_after_the_default_idle_time_pre_stop_first(runtime, clock,
                                                                            tmp_path):
    rt, runs = runtime
    assert DEFAULT_IDLE_TTL == 300.0
    spec = make_spec(tmp_path, {"index.py": HOOKED}, pre_stop_handler="index.pre_stop",
                     pre_stop_timeout=5)
    pid = int(call(rt, spec).payload)
    clock.advance(DEFAULT_IDLE_TTL)
    assert rt.reap_idle() == 0  # exactly the idle time: not yet
    clock.advance(1)
    assert rt.reap_idle() == 1
    assert _gone(pid) and rt.instance_count(ACCOUNT, REGION, "fn") == 0
    (run,) = runs
    assert (run.hook, run.ok, run.function_name) == ("PreStop", True, "fn")
    lines = run.log_text.splitlines()
    assert lines[0] == f"FC PreStop Start RequestId: {run.request_id}"
    assert lines[1] == f"stopping {run.request_id}"
    assert lines[-1] == f"FC PreStop End RequestId: {run.request_id}"
    assert run.started_at == clock.now()


def test_a_failing_pre_stop_is_logged_and_the_instance_still_stops(runtime, clock, tmp_path):
    rt, runs = runtime
    spec = make_spec(tmp_path, {"index.py": HOOKED}, pre_stop_handler="index.pre_stop",
                     environment={"STOP": "fail"})
    pid = int(call(rt, spec).payload)
    clock.advance(301)
    assert rt.reap_idle() == 1 and _gone(pid)
    assert not runs[0].ok and runs[0].error_type == "UnhandledInvocationError"
    assert '"errorMessage": "cannot flush"' in runs[0].log_text
    assert runs[0].log_text.rstrip().endswith(", Error: Unhandled function error")


def test_idle_timeout_of_the_function_wins(runtime, clock, tmp_path):
    rt, _ = runtime
    spec = make_spec(tmp_path, {"index.py": HOOKED}, idle_timeout=900.0)
    call(rt, spec)
    clock.advance(600)
    assert rt.reap_idle() == 0
    clock.advance(301)
    assert rt.reap_idle() == 1


def test_an_expired_instance_is_never_handed_out(runtime, clock, tmp_path):
    rt, runs = runtime
    spec = make_spec(tmp_path, {"index.py": HOOKED}, pre_stop_handler="index.pre_stop")
    first = int(call(rt, spec).payload)
    clock.advance(400)  # nobody reaped: the next call must not get the expired instance
    second = call(rt, spec)
    assert second.cold_start and int(second.payload) != first
    _wait(lambda: runs and _gone(first))  # it stopped in the background, preStop first
    assert runs[0].instance_id != second.instance_id


def test_pre_stop_runs_when_a_function_is_updated_and_only_after_it_served(runtime, clock,
                                                                           tmp_path):
    rt, runs = runtime
    spec = make_spec(tmp_path, {"index.py": HOOKED}, pre_stop_handler="index.pre_stop")
    call(rt, spec)
    rt.retire(ACCOUNT, REGION, "fn")
    _wait(lambda: runs)
    failing = dataclasses.replace(spec, initializer_handler="index.missing")
    assert call(rt, failing).error_type == "InitializationError"  # never served
    assert len(runs) == 1


def test_close_runs_the_pre_stop_hooks_of_idle_instances(tmp_path, clock):
    rt = ProcessRuntime(tmp_path / "work", clock, sandbox=False)
    runs: list[HookRun] = []
    rt.hook_sink = runs.append
    spec = make_spec(tmp_path, {"index.py": HOOKED}, pre_stop_handler="index.pre_stop")
    pid = int(call(rt, spec).payload)
    rt.close()
    assert len(runs) == 1 and runs[0].ok and _gone(pid)


def test_the_reaper_thread_calls_reap_idle(tmp_path, clock):
    rt = ProcessRuntime(tmp_path / "work", clock, sandbox=False)
    reaped = threading.Event()
    rt.hook_sink = lambda run: reaped.set()
    reaper = IdleReaper(rt.reap_idle, interval=0.05)
    spec = make_spec(tmp_path, {"index.py": HOOKED}, pre_stop_handler="index.pre_stop")
    try:
        pid = int(call(rt, spec).payload)
        reaper.start()
        clock.advance(301)
        assert reaped.wait(30)
        _wait(lambda: rt.instance_count(ACCOUNT, REGION, "fn") == 0 and _gone(pid))
    finally:
        reaper.stop()
        rt.close()


def test_warm_reuse_within_the_idle_time(runtime, clock, tmp_path):
    rt, _ = runtime
    spec = make_spec(tmp_path, {"index.py": "n = 0\ndef handler(e, c):\n"
                                            "    global n\n    n += 1\n    return n\n"})
    call(rt, spec)
    clock.advance(299)
    assert payload_json(call(rt, spec)) == 2


def _wait(condition, timeout: float = 20.0) -> None:
    pause = threading.Event()
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        pause.wait(0.02)
    raise AssertionError("condition not met in time")
