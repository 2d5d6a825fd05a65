"""The engine's worker pool (deployer/emulator/engine/pool.py): jobs run, the pool grows only
while no worker is idle and never past its limit, a failing job loses no worker, and after
shutdown new jobs are refused and queued ones dropped."""

from __future__ import annotations

import threading

import pytest

from deployer.emulator.engine.pool import WorkerPool


def test_jobs_run_on_named_workers() -> None:
    pool = WorkerPool(2, "test-pool")
    seen: list[str] = []
    done = threading.Event()

    def job() -> None:
        seen.append(threading.current_thread().name)
        done.set()

    pool.submit(job)
    assert done.wait(10)
    assert seen == ["test-pool_0"]
    pool.shutdown()
    pool.join()


def test_grows_while_busy_up_to_its_limit_and_reuses_idle_workers() -> None:
    pool = WorkerPool(3, "grow")
    release = threading.Event()
    started = threading.Semaphore(0)
    names: set[str] = set()

    def blocked() -> None:
        names.add(threading.current_thread().name)
        started.release()
        release.wait(10)

    for _ in range(5):  # three run at once, two wait for a free worker
        pool.submit(blocked)
    for _ in range(3):
        assert started.acquire(timeout=10)
    assert not started.acquire(timeout=0.2)  # no fourth thread
    release.set()
    for _ in range(2):
        assert started.acquire(timeout=10)
    assert names == {"grow_0", "grow_1", "grow_2"}
    done = threading.Event()
    pool.submit(done.set)  # an idle worker takes it: no new thread
    assert done.wait(10)
    assert len({t.name for t in threading.enumerate() if t.name.startswith("grow_")}) == 3
    pool.shutdown()
    pool.join()


def test_a_failing_job_loses_no_worker(caplog: pytest.LogCaptureFixture) -> None:
    pool = WorkerPool(1, "fails")

    def broken() -> None:
        raise ValueError("boom")

    pool.submit(broken)
    done = threading.Event()
    pool.submit(done.set)
    assert done.wait(10)
    assert "a job of the fails pool failed" in caplog.text
    pool.shutdown()
    pool.join()


def test_shutdown_refuses_new_jobs_and_drops_queued_ones() -> None:
    pool = WorkerPool(1, "stops")
    running, release = threading.Event(), threading.Event()
    ran: list[str] = []

    def first() -> None:
        running.set()
        release.wait(10)
        ran.append("first")

    pool.submit(first)
    assert running.wait(10)
    pool.submit(lambda: ran.append("queued"))
    pool.shutdown()
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit(lambda: None)
    release.set()
    pool.join()  # the running job finishes; the queued one never starts
    assert ran == ["first"]
