"""The CloudFlow engine's in-memory mirrors: the timer index against a plain model, the
decoded-execution cache's versions, and the shallow command JSON against ``to_json``."""

from __future__ import annotations

import json
import tracemalloc
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.emulator.engine.live import LiveExecution, LiveExecutions
from deployer.emulator.engine.timers import TimerIndex
from deployer.emulator.store.steps import command_text
from deployer.fdl import TaskMode
from deployer.fdl.interpreter import CancelTimer, Execution, InvokeTask, StartTimer
from deployer.fdl.interpreter.commands import (
    CancelTask,
    CompleteExecution,
    TimerPurpose,
    command_from_json,
)
from deployer.fdl.interpreter.model import ExecutionStatus

SEQS = st.integers(1, 3)
IDS = st.sampled_from(["t1", "t2", "t3"])
TIMES = st.integers(0, 20).map(float)
PURPOSES = st.sampled_from(list(TimerPurpose))

OPS = st.one_of(
    st.tuples(st.just("start"), SEQS, IDS, TIMES, PURPOSES),
    st.tuples(st.just("cancel"), SEQS, IDS),
    st.tuples(st.just("end"), SEQS),
    st.tuples(st.just("due"), TIMES),
    st.tuples(st.just("fired")),
)


def _execution(timers: dict[str, int], status: ExecutionStatus) -> Execution:
    ex = Execution("e", "f", {})
    ex.timers = dict(timers)
    ex.status = status
    return ex


@settings(max_examples=200, deadline=None)
@given(st.lists(OPS, max_size=40))
def test_timer_index_agrees_with_a_plain_model(ops: list[tuple[Any, ...]]) -> None:
    index = TimerIndex()
    model: dict[tuple[int, str], tuple[float, TimerPurpose]] = {}
    firing: list[tuple[int, str]] = []
    for op in ops:
        if op[0] in ("start", "cancel", "end"):
            seq = op[1]
            if op[0] == "start":
                model[(seq, op[2])] = (op[3], op[4])
                commands: list[Any] = [StartTimer(op[2], op[3], op[4])]
            elif op[0] == "cancel":
                model.pop((seq, op[2]), None)
                commands = [CancelTimer(op[2])]
            else:
                commands = []
                for key in [k for k in model if k[0] == seq]:
                    del model[key]
            status = ExecutionStatus.SUCCEEDED if op[0] == "end" else ExecutionStatus.RUNNING
            live = {t: 0 for (s, t) in model if s == seq}
            index.apply(seq, _execution(live, status), commands, delay=0.0)
        elif op[0] == "due":
            expected = sorted((at, key) for key, (at, _) in model.items()
                              if at <= op[1] and key not in firing)
            taken = index.take_due(op[1], 100)
            assert sorted(taken) == sorted(key for _, key in expected)
            assert [model[k][0] for k in taken] == sorted(model[k][0] for k in taken)
            firing.extend(taken)
        elif firing:
            index.fired(firing.pop(0))
        waiting = [(at, key) for key, (at, _) in model.items() if key not in firing]
        nxt = index.next_timer()
        if index.firing:
            assert firing
        assert (nxt[0] if nxt else None) == (min(waiting)[0] if waiting else None)
        skips = [at for at, p in model.values()
                 if p in (TimerPurpose.WAIT, TimerPurpose.RETRY)]
        assert index.next_skip_at() == (min(skips) if skips else None)
        assert len(index) == len(model)


def test_timer_index_memory_follows_the_timers_pending_not_those_ever_started() -> None:
    """On the real clock nothing reads the Wait/retry heap, and cancelled timers leave their
    heap entries behind: both stay bounded by the timers pending."""
    tracemalloc.start()
    index = TimerIndex()
    now = 0.0
    for seq in range(1, 20_001):  # executions each waiting 10 s, with a day-long timeout
        index.apply(seq, _execution({"w": 0, "t": 0}, ExecutionStatus.RUNNING),
                    [StartTimer("w", now + 10, TimerPurpose.WAIT),
                     StartTimer("t", now + 86_400, TimerPurpose.EXECUTION_TIMEOUT)], delay=0.0)
        now += 0.05
        for key in index.take_due(now, 100):  # the Wait fires, the execution ends
            index.apply(key[0], _execution({}, ExecutionStatus.SUCCEEDED), [], delay=0.0)
            index.fired(key)
    held, _peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(index) <= 2 * 201  # the executions still waiting
    assert held < 512 * 1024, f"{held} bytes held for {len(index)} pending timers"


def test_timer_index_adds_the_step_latency_to_fire_at() -> None:
    index = TimerIndex()
    index.apply(7, _execution({"w": 0}, ExecutionStatus.RUNNING),
                [StartTimer("w", 10.0, TimerPurpose.WAIT)], delay=0.3)
    assert index.next_timer() == (10.3, (7, "w"))
    assert index.take_due(10.2, 10) == []
    assert index.take_due(10.3, 10) == [(7, "w")]


def test_live_executions_keep_the_newest_version_and_drop_finished_ones() -> None:
    cache = LiveExecutions(capacity=2)
    flow: Any = object()
    running = _execution({}, ExecutionStatus.RUNNING)
    cache.put(1, LiveExecution(2, running, flow, "a", "r"))
    cache.put(1, LiveExecution(1, running, flow, "a", "r"))  # an older commit arrives late
    live = cache.get(1)
    assert live is not None and live.version == 2
    cache.put(1, LiveExecution(3, _execution({}, ExecutionStatus.FAILED), flow, "a", "r"))
    assert cache.get(1) is None
    for seq in (2, 3, 4):
        cache.put(seq, LiveExecution(1, running, flow, "a", "r"))
    assert cache.get(2) is None and cache.get(4) is not None  # least recently used left


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                max_size=3),
    max_leaves=8)


@given(JSON_VALUES, st.lists(st.text(max_size=4), max_size=3), st.sampled_from(list(TaskMode)))
def test_command_text_is_to_json(parameters: Any, path: list[str], mode: TaskMode) -> None:
    commands = [
        InvokeTask("t-1", tuple(path), "FC:InvokeFunction", parameters, mode, "tok", 30),
        StartTimer("w-1", 12.5, TimerPurpose.RETRY),
        CancelTimer("w-1"),
        CancelTask("t-1"),
        CompleteExecution("Succeeded", parameters),
    ]
    for cmd in commands:
        text = command_text(cmd)
        assert json.loads(text) == cmd.to_json()
        assert command_from_json(json.loads(text)) == cmd
