"""The engine's change notifications for live readers: one-shot subscriptions per execution and
for the engine's facts, woken at once when the change is already known, never twice."""

from __future__ import annotations

from deployer.emulator.engine.changes import ExecutionChanges


def test_a_reader_is_woken_once_by_the_next_commit_of_its_execution() -> None:
    changes, woken = ExecutionChanges(), []
    stop = changes.watch(7, 3, lambda: woken.append("seven"))
    changes.committed(8, 4)  # another execution
    changes.committed(7, 3)  # not above the version the reader has
    assert woken == []
    changes.committed(7, 4)
    changes.committed(7, 5)  # one-shot: already fired
    assert woken == ["seven"] and changes.watching() == 0
    stop()  # unsubscribing after it fired is harmless


def test_a_commit_already_known_wakes_at_once_and_unsubscribe_stops_it() -> None:
    changes, woken = ExecutionChanges(), []
    changes.committed(1, 6)
    changes.watch(1, 5, lambda: woken.append("late"))  # it missed version 6: woken now
    assert woken == ["late"]
    stop = changes.watch(1, 6, lambda: woken.append("gone"))
    stop()
    changes.committed(1, 7)
    assert woken == ["late"] and changes.watching() == 0


def test_engine_readers_follow_every_step_and_every_touch() -> None:
    changes, woken = ExecutionChanges(), []
    start = changes.generation
    changes.watch_engine(start, lambda: woken.append("step"))
    changes.committed(3, 1)
    changes.watch_engine(changes.generation, lambda: woken.append("touch"))
    changes.touched()  # the clock moved, or the engine went idle
    changes.watch_engine(start, lambda: woken.append("behind"))  # already moved: at once
    assert woken == ["step", "touch", "behind"] and changes.generation == start + 2


def test_wake_all_wakes_everyone_and_forgets_versions() -> None:
    changes, woken = ExecutionChanges(), []
    changes.committed(2, 9)
    changes.watch(2, 9, lambda: woken.append("execution"))
    changes.watch_engine(changes.generation, lambda: woken.append("engine"))
    changes.wake_all()  # rows changed behind the engine (reset, DeleteFlow)
    assert sorted(woken) == ["engine", "execution"] and changes.watching() == 0
    changes.watch(2, 0, lambda: woken.append("re-read"))  # version 9 is forgotten: it waits
    assert changes.watching() == 1
