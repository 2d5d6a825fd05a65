"""ProcessRuntime: logs, timeouts, crashes, warm reuse, concurrency, reaping, retiring."""

from __future__ import annotations

import os
import re
import socket
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from runtime_support import ACCOUNT, REGION, call, make_spec, payload_json

from deployer.emulator.clock import SystemClock, VirtualClock
from deployer.emulator.runtime import ProcessRuntime, RuntimeUnavailableError


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[ProcessRuntime]:
    # no sandbox: these handlers meet each other and the test through files under tmp_path
    rt = ProcessRuntime(tmp_path / "work", SystemClock(), sandbox=False)
    yield rt
    rt.close()


def assert_reaped(pid: int) -> None:
    """The process is gone and no zombie of ours is left."""
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


COUNTER = """
import os
count = 0
def handler(event, context):
    global count
    count += 1
    return {"count": count, "pid": os.getpid()}
"""

LOGGING = """
import logging, sys
def handler(event, context):
    print("to stdout")
    print("to stderr", file=sys.stderr)
    logging.getLogger().info("info %s", "line")
    logging.getLogger("child").warning("warned")
    logging.getLogger().debug("hidden")
    if event == b"fail":
        raise RuntimeError("bad")
    return "ok"
"""

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (\S+) \[(\w+)\] (.*)$")


def test_log_markers_and_format(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.py": LOGGING})
    first = call(runtime, spec, rid="rid-1")
    lines = first.log_text.splitlines()
    assert lines[0] == "FunctionCompute python3 runtime inited."
    assert lines[1] == "FC Invoke Start RequestId: rid-1"
    assert lines[2:4] == ["to stdout", "to stderr"]
    parsed = [LOG_LINE.match(line).groups() for line in lines[4:6]]
    assert parsed == [("rid-1", "INFO", "info line"), ("rid-1", "WARNING", "warned")]
    assert lines[6:] == ["FC Invoke End RequestId: rid-1"]
    assert first.log_tail == first.log_text.encode()

    second = call(runtime, spec, b"fail", rid="rid-2")
    lines = second.log_text.splitlines()
    assert lines[0] == "FC Invoke Start RequestId: rid-2"
    assert "FunctionCompute python3 runtime inited." not in second.log_text
    assert lines[-1] == "FC Invoke End RequestId: rid-2, Error: Unhandled function error"
    assert '"errorType": "RuntimeError"' in second.log_text  # the error JSON is logged


def test_log_tail_is_last_4096_bytes_and_only_when_asked(runtime, tmp_path):
    spec = make_spec(
        tmp_path,
        {
            "index.py": """
        def handler(event, context):
            for i in range(500):
                print(f"line {i:04d} " + "x" * 20)
            return "done"
        """
        },
    )
    result = call(runtime, spec)
    assert len(result.log_text.encode()) > 4096
    assert result.log_tail == result.log_text.encode()[-4096:]
    assert result.log_tail.endswith(b"FC Invoke End RequestId: req-1\n")
    quiet = call(runtime, spec, tail=False)
    assert quiet.log_tail == b""
    assert "line 0499" in quiet.log_text


def test_warm_reuse_keeps_module_state(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.py": COUNTER})
    results = [call(runtime, spec, rid=f"r{i}") for i in range(3)]
    assert [payload_json(r)["count"] for r in results] == [1, 2, 3]
    assert [r.cold_start for r in results] == [True, False, False]
    assert len({r.instance_id for r in results}) == 1


def test_timeout_kills_instance_and_next_call_is_cold(runtime, tmp_path):
    spec = make_spec(
        tmp_path,
        {
            "index.py": """
        import os, time
        def handler(event, context):
            if event == b"slow":
                time.sleep(30)
            return os.getpid()
        """
        },
        timeout=1,
    )
    pid = int(call(runtime, spec).payload)
    timed_out = call(runtime, spec, b"slow", rid="slow-1")
    assert timed_out.error_type == "UnhandledInvocationError"
    assert timed_out.payload == b'{"errorMessage": "Function timed out after 1 seconds"}'
    assert "Dumping stack trace after function timeout" in timed_out.log_text
    assert timed_out.log_text.endswith(
        "FC Invoke End RequestId: slow-1, Error: Unhandled function error\n"
    )
    assert_reaped(pid)
    after = call(runtime, spec)
    assert after.cold_start and after.instance_id != timed_out.instance_id
    assert int(after.payload) != pid


CRASH = re.compile(
    rb'^\{"errorMessage": "Process exited unexpectedly before completing request '
    rb'\(duration: \d+ms, maxMemoryUsage: \d+\.\d\dMB\)"\}$'
)


@pytest.mark.parametrize(
    "statement",
    ["sys.exit(3)", "os._exit(1)", "ctypes.string_at(0)", "os.kill(os.getpid(), 9)"],
)
def test_crashing_worker_is_discarded(runtime, tmp_path, statement):
    spec = make_spec(
        tmp_path,
        {
            "index.py": f"""
        import ctypes, os, sys
        def handler(event, context):
            if event == b"crash":
                {statement}
            return os.getpid()
        """
        },
    )
    pid = int(call(runtime, spec).payload)
    crashed = call(runtime, spec, b"crash", rid="c-1")
    assert crashed.error_type == "UnhandledInvocationError"
    assert CRASH.match(crashed.payload), crashed.payload
    assert crashed.log_text.endswith(
        "FC Invoke End RequestId: c-1, Error: Unhandled function error\n"
    )
    assert_reaped(pid)
    assert call(runtime, spec).cold_start


RENDEZVOUS = """
import os, socket
def handler(event, context):
    # returns only once the test's barrier has seen every invocation connect
    with socket.create_connection(("127.0.0.1", int(event)), timeout=20) as conn:
        assert conn.makefile("rb").read(2) == b"go"
    return os.getpid()
"""


def _barrier(parties: int) -> tuple[int, threading.Thread]:
    """A loopback barrier: answers ``go`` to its connections once ``parties`` are connected."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(30)

    def serve() -> None:
        with server:
            connections = [server.accept()[0] for _ in range(parties)]
            for conn in connections:
                with conn:
                    conn.sendall(b"go")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return int(server.getsockname()[1]), thread


def test_concurrent_invocations_get_separate_instances(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.py": RENDEZVOUS}, timeout=30)
    port, barrier = _barrier(2)
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(call, runtime, spec, str(port).encode(), f"r{i}") for i in (1, 2)]
        results = [f.result() for f in futures]
    barrier.join(5)
    assert [r.error_type for r in results] == [None, None], [r.payload for r in results]
    assert len({r.instance_id for r in results}) == 2
    assert all(r.cold_start for r in results)
    assert runtime.instance_count(ACCOUNT, REGION, "fn") == 2


def test_instance_cap_makes_callers_wait(tmp_path):
    rt = ProcessRuntime(tmp_path / "work", SystemClock(), max_instances=1, sandbox=False)
    spec = make_spec(
        tmp_path,
        {
            "index.py": """
        import os
        def handler(event, context):
            marker = os.path.join(event.decode(), "busy")
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)  # fails on overlap
            os.close(fd)
            os.remove(marker)
            return os.getpid()
        """
        },
    )
    try:
        with ThreadPoolExecutor(4) as pool:
            futures = [
                pool.submit(call, rt, spec, str(tmp_path).encode(), f"r{i}") for i in range(8)
            ]
            results = [f.result() for f in futures]
    finally:
        rt.close()
    assert [r.error_type for r in results] == [None] * 8
    assert len({r.instance_id for r in results}) == 1
    assert sum(r.cold_start for r in results) == 1


def test_idle_instances_are_reaped_after_ttl(tmp_path):
    clock = VirtualClock(start=1_700_000_000)
    rt = ProcessRuntime(tmp_path / "work", clock, idle_ttl=600)
    spec = make_spec(tmp_path, {"index.py": COUNTER})
    try:
        pid = payload_json(call(rt, spec))["pid"]
        clock.advance(600)
        assert rt.reap_idle() == 0
        assert payload_json(call(rt, spec))["count"] == 2  # still warm; idle age restarts
        clock.advance(601)
        assert rt.reap_idle() == 1
        assert_reaped(pid)
        assert rt.instance_count(ACCOUNT, REGION, "fn") == 0
        again = call(rt, spec)
        assert again.cold_start and payload_json(again)["count"] == 1
    finally:
        rt.close()


def test_changed_spec_never_reuses_an_old_instance(runtime, tmp_path):
    v1 = make_spec(tmp_path, {"index.py": COUNTER})
    first = call(runtime, v1)
    for changed in (
        make_spec(tmp_path, {"index.py": COUNTER + "\n# v2\n"}),
        make_spec(tmp_path, {"index.py": COUNTER}, environment={"V": "2"}),
        make_spec(tmp_path, {"index.py": COUNTER}, timeout=9),
    ):
        result = call(runtime, changed)
        assert result.cold_start and result.instance_id != first.instance_id
        assert payload_json(result)["count"] == 1


def test_retire_stops_idle_instances_and_busy_ones_after_their_request(runtime, tmp_path):
    spec = make_spec(tmp_path, {"index.py": COUNTER})
    pid = payload_json(call(runtime, spec))["pid"]
    runtime.retire(ACCOUNT, REGION, "fn")
    assert_reaped(pid)
    assert call(runtime, spec).cold_start

    gate = tmp_path / "gate"
    os.mkfifo(gate)
    blocking = make_spec(
        tmp_path,
        {
            "index.py": """
        import os
        def handler(event, context):
            with open(event.decode()) as fifo:
                fifo.read()
            return os.getpid()
        """
        },
    )
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(call, runtime, blocking, str(gate).encode())
        with open(gate, "w"):  # blocks until the handler opened the fifo: it is busy now
            runtime.retire(ACCOUNT, REGION, "fn")
            assert runtime.instance_count(ACCOUNT, REGION, "fn") == 1
        busy = future.result()
    assert busy.error_type is None
    assert_reaped(int(busy.payload))
    assert runtime.instance_count(ACCOUNT, REGION, "fn") == 0


def test_close_stops_everything_without_zombies(tmp_path):
    rt = ProcessRuntime(tmp_path / "work", SystemClock())
    pids = []
    for name in ("a", "b"):
        spec = make_spec(tmp_path, {"index.py": COUNTER}, function_name=name)
        pids.append(payload_json(call(rt, spec))["pid"])
    assert sorted(rt.instance_pids()) == sorted(pids)
    rt.close()
    for pid in pids:
        assert_reaped(pid)
    with pytest.raises(RuntimeUnavailableError, match="closed"):
        call(rt, make_spec(tmp_path, {"index.py": COUNTER}))


INIT = """
import os
calls = []
def initialize(context):
    calls.append(context.request_id)
    print("initializing")
    if os.environ.get("FAIL_INIT"):
        raise ValueError("cannot connect")
    if os.environ.get("HANG_INIT"):
        import time
        time.sleep(30)
def handler(event, context):
    return {"init_calls": calls, "pid": os.getpid()}
"""


def test_initializer_runs_once_per_instance(runtime, tmp_path):
    spec = make_spec(
        tmp_path, {"index.py": INIT}, initializer_handler="index.initialize", initializer_timeout=2
    )
    first = call(runtime, spec, rid="r1")
    second = call(runtime, spec, rid="r2")
    assert payload_json(first)["init_calls"] == ["r1"]
    assert payload_json(second)["init_calls"] == ["r1"]
    assert "FC Initialize Start RequestId: r1" in first.log_text
    assert "FC Initialize End RequestId: r1" in first.log_text
    assert b"Initialize" not in first.log_tail  # hook logs are not in the invocation's tail
    assert first.log_tail.startswith(b"FC Invoke Start RequestId: r1")
    assert "Initialize" not in second.log_text


def test_failing_initializer_discards_the_instance(runtime, tmp_path):
    spec = make_spec(
        tmp_path,
        {"index.py": INIT},
        initializer_handler="index.initialize",
        environment={"FAIL_INIT": "1"},
    )
    failed = call(runtime, spec, rid="r1")
    assert failed.error_type == "InitializationError"
    body = payload_json(failed)
    assert (body["errorType"], body["errorMessage"]) == ("ValueError", "cannot connect")
    assert "FC Initialize End RequestId: r1, Error: Unhandled function error" in failed.log_text
    assert b"initializing" in failed.log_tail
    assert "FC Invoke Start" not in failed.log_text
    retried = call(runtime, spec, rid="r2")
    assert retried.error_type == "InitializationError"
    assert retried.cold_start and retried.instance_id != failed.instance_id


def test_initializer_timeout(runtime, tmp_path):
    spec = make_spec(
        tmp_path,
        {"index.py": INIT},
        initializer_handler="index.initialize",
        initializer_timeout=1,
        environment={"HANG_INIT": "1"},
    )
    result = call(runtime, spec)
    assert result.error_type == "InitializationError"
    assert (
        result.payload == b'{"errorMessage": "Function initialization timed out after 1 seconds"}'
    )
    assert runtime.instance_count(ACCOUNT, REGION, "fn") == 0
