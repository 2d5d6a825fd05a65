"""Per-function queues of flow tasks' calls: a cap per function, FIFO within it, no thread for
a waiting call, other functions never queued behind, threads reused."""

from __future__ import annotations

import threading

from deployer.emulator.services.fc_task_calls import FunctionCalls


class Gate:
    def __init__(self) -> None:
        self.opened = threading.Event()
        self.lock = threading.Lock()
        self.inside = 0
        self.order: list[int] = []
        self.threads: set[int] = set()

    def call(self, i: int, done: threading.Event | None = None):
        def run() -> None:
            with self.lock:
                self.inside += 1
                self.threads.add(threading.get_ident())
            self.opened.wait(10)
            with self.lock:
                self.inside -= 1
                self.order.append(i)
            if done is not None:
                done.set()
        return run


def test_a_function_runs_its_cap_at_once_and_the_others_wait_without_a_thread() -> None:
    calls, gate = FunctionCalls(3), Gate()
    before = threading.active_count()
    last = threading.Event()
    for i in range(50):
        calls.submit("slow", gate.call(i, last if i == 49 else None))
    assert calls.waiting("slow") == 47
    assert threading.active_count() - before <= 3  # a waiting call holds no thread
    other = threading.Event()
    calls.submit("other", other.set)
    assert other.wait(10)  # another function is never queued behind
    gate.opened.set()
    assert last.wait(10)
    assert len(gate.threads) <= 3


def test_one_at_a_time_the_calls_run_in_the_order_they_came() -> None:
    calls, gate = FunctionCalls(1), Gate()
    last = threading.Event()
    for i in range(20):
        calls.submit("f", gate.call(i, last if i == 19 else None))
    gate.opened.set()
    assert last.wait(10)
    assert gate.order == list(range(20))


def test_threads_are_reused_across_functions_and_close_drops_waiting_calls() -> None:
    calls = FunctionCalls(1)
    seen: list[int] = []
    for name in ("a", "b", "c", "d"):
        done = threading.Event()
        calls.submit(name, lambda d=done: (seen.append(threading.get_ident()), d.set()))
        assert done.wait(10)
    assert len(set(seen)) == 1  # one thread served them one after the other
    gate = Gate()
    calls.submit("a", gate.call(0))
    ran = threading.Event()
    calls.submit("a", ran.set)
    calls.close()
    gate.opened.set()
    assert not ran.wait(0.2)
