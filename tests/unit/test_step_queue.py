"""The engine's step queue when the engine is stopping: a step whose caller waits for it is
committed (or fails) even though the pool takes no more jobs, so no engine thread waits
forever — such a thread kept the process from exiting (the pool's threads are joined at
exit)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from deployer.emulator.engine.group_commit import PendingStep, StepQueue


def _event(now: float) -> Any:  # what the step would record: the batch here never asks
    raise AssertionError("not called")


def test_a_waiting_step_is_committed_when_the_pool_takes_no_more_jobs() -> None:
    first_batch, go = threading.Event(), threading.Event()
    committed: list[int] = []

    def run_batch(batch: Sequence[PendingStep]) -> None:
        if not committed and not first_batch.is_set():
            first_batch.set()
            assert go.wait(10)
        for item in batch:
            committed.append(item.seq)
            item.finish()

    queue = StepQueue(run_batch, lambda job: False, max_batch=1)  # a stopping engine's pool
    leader = threading.Thread(target=queue.call, args=(1, _event))
    leader.start()
    assert first_batch.wait(10)  # the leader commits step 1 alone (one step per batch)
    answers: list[PendingStep] = []
    waiter = threading.Thread(target=lambda: answers.append(queue.call(2, _event)))
    waiter.start()
    deadline = time.monotonic() + 10
    while queue.queued < 2:  # step 2 queued behind the leader's batch; its caller waits
        assert time.monotonic() < deadline
        time.sleep(0.001)
    go.set()
    for thread in (leader, waiter):
        thread.join(10)
        assert not thread.is_alive()
    assert committed == [1, 2] and answers[0].seq == 2 and answers[0].error is None


def test_closing_the_queue_fails_a_step_whose_drain_job_the_stopping_pool_dropped() -> None:
    """A posted step's drain job was taken by the pool, which stopped before running it; a
    leader then left a waiting caller's step to that job. Closing the queue (the engine's
    stop) ends the wait with an error; later steps are refused."""
    first_batch, go = threading.Event(), threading.Event()
    committed: list[int] = []

    def run_batch(batch: Sequence[PendingStep]) -> None:
        if not first_batch.is_set():
            first_batch.set()
            assert go.wait(10)
        for item in batch:
            committed.append(item.seq)
            item.finish()

    queue = StepQueue(run_batch, lambda job: True, max_batch=1)  # taken, never run
    queue.post(0, _event)
    leader = threading.Thread(target=queue.call, args=(1, _event))
    leader.start()
    assert first_batch.wait(10)  # the leader commits step 0, then its own step 1
    answers: list[PendingStep | BaseException] = []

    def wait_for_step_2() -> None:
        try:
            answers.append(queue.call(2, _event))
        except RuntimeError as exc:
            answers.append(exc)

    waiter = threading.Thread(target=wait_for_step_2)
    waiter.start()
    deadline = time.monotonic() + 10
    while queue.queued < 3:
        assert time.monotonic() < deadline
        time.sleep(0.001)
    go.set()
    leader.join(10)
    assert committed == [0, 1] and waiter.is_alive()  # step 2 is left to the dropped job
    queue.close()
    waiter.join(10)
    assert not waiter.is_alive()
    assert isinstance(answers[0], RuntimeError) and "stopped" in str(answers[0])
    with pytest.raises(RuntimeError, match="stopped"):
        queue.call(3, _event)
