"""The console's live channel over HTTP: one server-sent-event stream per page, fed by the
engine's change notifications; reconnecting with Last-Event-ID; the header's engine facts;
what open streams cost (no worker thread, no CPU, no stopped clock)."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import pytest

from deployer.emulator.api.console_live import FACTS_INTERVAL
from deployer.testing.environment import LocalCloud
from tests.console.sse import EventStream, node
from tests.console.support import FLOW, CommitLog, execution_path, seed_cloud, start_seed


def stream_path(cloud: LocalCloud, name: str, query: str = "") -> str:
    return "/_console/api" + execution_path(cloud, name)[len("/_console"):] + "/stream" + query


def waiting_turn(delta: dict[str, Any], visits: int) -> bool:
    wait = node(delta, "Wait")
    return wait is not None and wait["status"] == "waiting" and wait["visits"] == visits


def test_each_step_arrives_as_a_delta_soon_after_its_commit() -> None:
    with seed_cloud() as cloud, cloud.auto_advance_disabled():
        start_seed(cloud, "live", delay=10**6)
        with EventStream(cloud, stream_path(cloud, "live")) as stream:
            assert stream.status == 200
            assert stream.headers["Content-Type"].startswith("text/event-stream")
            first = stream.until("step")
            assert {n["key"] for n in first.json()["nodes"]} >= {"StartJob", "FailJobFailed"}
            event = stream.until("step", lambda d: waiting_turn(d, 1))
            commits = CommitLog(cloud, "live", int(event.id))
            lags = []
            for turn in range(2, 5):
                version = int(event.id)
                stats = cloud.server.emulator.flow_engine.stats()
                assert stats.in_flight == 0  # an open stream is no engine activity
                cloud.advance(10)
                event = stream.until("step", lambda d, t=turn: waiting_turn(d, t))
                assert int(event.id) > version
                lags.append(event.at - commits.wait(int(event.id))[1])
                delta = event.json()
                assert node(delta, "StartJob") is None  # unchanged nodes are not sent again
                assert {"summary", "panel", "table", "events", "timeline"} <= set(delta["html"])
            print(f"commit -> event lags (s): {[round(lag, 4) for lag in lags]}")
            assert sorted(lags)[1] < 0.1  # the median; generous on a shared 2-core machine
            cloud.advance(10)
            last = stream.until("step", lambda d: d["summary"]["finished"])
            assert node(last.json(), "FailJobFailed")["status"] == "failed"
            end = stream.until("end")
            assert end.json()["status"] == "Failed"
            with pytest.raises(EOFError):  # the stream ends at the terminal status
                stream.next()


def test_a_reconnect_with_last_event_id_misses_nothing() -> None:
    with seed_cloud() as cloud, cloud.auto_advance_disabled():
        start_seed(cloud, "again", delay=10**6)
        with EventStream(cloud, stream_path(cloud, "again")) as stream:
            seen = stream.until("step", lambda d: waiting_turn(d, 1))
        commits = CommitLog(cloud, "again", int(seen.id), 1)
        cloud.advance(10)  # steps while no page listens: Wait ends, GetJobStatus runs...
        commits.wait(int(seen.id) + 1)
        stale = {"Last-Event-ID": seen.id}
        with EventStream(cloud, stream_path(cloud, "again", "?since=1"),
                         stale) as stream:
            caught_up = stream.until("step")
            assert int(caught_up.id) > int(seen.id)
            nodes = {n["key"]: n for n in caught_up.json()["nodes"]}
            assert nodes["GetJobStatus"]["visits"] == 1  # the page learns what it missed
            if nodes["Wait"]["visits"] == 1:  # the task's result came after the reconnect
                caught_up = stream.until("step", lambda d: waiting_turn(d, 2))
            current = caught_up.id
        # up to date: no step is sent until the next commit, only the engine facts
        with EventStream(cloud, stream_path(cloud, "again"),
                         {"Last-Event-ID": current}) as stream:
            assert stream.next().kind == "engine"
            cloud.server.emulator.executions.stop(cloud.account_id, cloud.region, FLOW, "again",
                                                  error="Halt", cause="test")
            stopped = stream.until("step")
            assert int(stopped.id) == int(current) + 1
            assert stopped.json()["summary"]["status"] == "Stopped"
            assert stream.until("end").json()["status"] == "Stopped"
        # a finished execution whose last step the page has: just the end
        with EventStream(cloud, stream_path(cloud, "again"),
                         {"Last-Event-ID": stopped.id}) as stream:
            kinds = [stream.next().kind, stream.next().kind]
            assert kinds == ["engine", "end"]


def test_a_missing_execution_is_404_and_a_deleted_one_ends_its_stream() -> None:
    with seed_cloud() as cloud, cloud.auto_advance_disabled():
        with EventStream(cloud, stream_path(cloud, "nope")) as stream:
            assert stream.status == 404 and b"NotFound" in stream.response.read()
        start_seed(cloud, "doomed", delay=10**6)
        with EventStream(cloud, stream_path(cloud, "doomed")) as stream:
            stream.until("step", lambda d: waiting_turn(d, 1))
            cloud.fnf_client().delete_flow(_delete_request(FLOW))
            assert stream.until("gone").json() == {"name": "doomed"}


def _delete_request(flow: str) -> Any:
    from alibabacloud_fnf20190315 import models

    return models.DeleteFlowRequest(name=flow)


def test_the_engine_stream_carries_the_header_facts_live() -> None:
    with seed_cloud() as cloud, cloud.auto_advance_disabled(), \
            EventStream(cloud, "/_console/api/engine/stream") as stream:
        idle = stream.until("engine").json()
        assert idle["running"] == 0 and idle["clock"] == "virtual"
        start_seed(cloud, "facts", delay=10**6)
        busy = stream.until("engine", lambda f: f["running"] == 1 and f["in_flight"] == 0
                            and f["timers"] >= 1).json()
        cloud.advance(1)  # the Wait fires at +10 s: the clock moves without a step
        later = stream.until("engine", lambda f: f["now"] != busy["now"]).json()
        assert later["now"] > busy["now"]
        cloud.server.emulator.executions.stop(cloud.account_id, cloud.region, FLOW, "facts",
                                              error="", cause="")
        assert stream.until("engine", lambda f: f["running"] == 0).json()["in_flight"] == 0


def _cpu_of(prefix: str) -> float:
    """CPU seconds used so far by this process's threads whose name starts with ``prefix``."""
    total = 0.0
    for thread in threading.enumerate():
        if thread.name.startswith(prefix) and thread.ident is not None:
            with contextlib.suppress(OSError, ProcessLookupError):  # it ended meanwhile
                total += time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
    return total


@pytest.mark.skipif(not hasattr(time, "pthread_getcpuclockid"), reason="needs per-thread CPU")
def test_fifty_open_pages_hold_no_worker_thread_and_cost_no_cpu_while_idle() -> None:
    pages = 50
    with seed_cloud() as cloud:
        streams: list[EventStream] = []
        try:
            with cloud.auto_advance_disabled():
                start_seed(cloud, "watched", delay=20)
                streams += [EventStream(cloud, stream_path(cloud, "watched"))
                            for _ in range(pages)]
                for stream in streams:  # each page is up to date: the Wait is waiting
                    _up_to_date(stream)
                _idle_costs_nothing(cloud, pages)
            # auto-advance on: the virtual clock jumps over the Waits while fifty pages watch
            final = cloud.wait_for_execution(FLOW, "watched", timeout=60)
            assert final["Status"] == "Succeeded"
            for stream in streams:
                assert stream.until("end").json()["status"] == "Succeeded"
        finally:
            for stream in streams:
                stream.close()


def _up_to_date(stream: EventStream) -> None:
    """Read until the page shows the Wait waiting and has had the engine facts."""
    kinds: set[str] = set()
    while not {"waiting", "engine"} <= kinds:
        event = stream.next()
        if event.kind == "step" and event.json()["summary"]["current"].startswith("Wait"):
            kinds.add("waiting")
        kinds.add(event.kind)


def _idle_costs_nothing(cloud: LocalCloud, pages: int) -> None:
    # a page's last engine-facts event may trail the change that caused it by FACTS_INTERVAL
    threading.Event().wait(2 * FACTS_INTERVAL)
    began, cpu, wall = time.monotonic(), _cpu_of("http-"), time.process_time()
    threading.Event().wait(2.0)  # nothing happens for two seconds
    server_cpu = _cpu_of("http-") - cpu
    process_cpu = time.process_time() - wall
    print(f"{pages} open streams, {time.monotonic() - began:.2f} s idle: HTTP server threads "
          f"{server_cpu * 1000:.2f} ms CPU, whole process {process_cpu * 1000:.2f} ms")
    assert server_cpu < 0.005
    # every worker thread is free: all of them can block at once
    http = cloud.server.http
    assert http is not None
    workers = http.limits.worker_threads
    barrier = threading.Barrier(workers + 1, timeout=10)
    futures = [http._pool.submit(barrier.wait) for _ in range(workers)]
    barrier.wait()
    assert all(f.result(timeout=10) is not None for f in futures)
    assert cloud.server.emulator.flow_engine.stats().in_flight == 0
