"""Acknowledged means durable: what the emulator answered survives a power cut.

A power cut keeps of each file only what was fsynced; :class:`PowerCut` records, at every
``os.fsync``, the content of the file synced (SQLite's own syncs happen only around
checkpoints, which these few commits never reach), and builds the state directory a power cut
at any moment would leave: the WAL as last synced, nothing of what was written after."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from alibabacloud_fnf20190315 import models as fnf

from deployer.emulator.clock import VirtualClock
from deployer.emulator.server import EmulatorServer
from deployer.emulator.store.identity import IDENTITY_FILE
from deployer.testing.environment import LocalCloud
from deployer.testing.runtimes import EchoRuntime
from tests.emulator.cloudflow_support import create, history, wait_flow

DB = "emulator.db"


class PowerCut:
    """Records what each fsync (or fdatasync) made durable (see the module docstring)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.synced: dict[str, bytes] = {}
        self.fsyncs = 0
        self._lock = threading.Lock()
        for name in ("fsync", "fdatasync"):
            monkeypatch.setattr(os, name, self._recording(getattr(os, name)))

    def _recording(self, real: Callable[[int], None]) -> Callable[[int], None]:
        def sync(fd: int) -> None:
            real(fd)
            path = os.readlink(f"/proc/self/fd/{fd}")
            with self._lock:
                self.fsyncs += 1
                if os.path.isfile(path):
                    with open(path, "rb") as fh:
                        self.synced[path] = fh.read()

        return sync

    def disk(self, state: Path) -> dict[str, bytes | None]:
        """The database files as a power cut now would leave them."""
        with self._lock:
            wal = self.synced.get(str(state / f"{DB}-wal"))
        return {DB: (state / DB).read_bytes(), f"{DB}-wal": wal}

    @staticmethod
    def restore(disk: dict[str, bytes | None], into: Path) -> Path:
        into.mkdir(parents=True)
        for name, data in disk.items():
            if data is not None:
                (into / name).write_bytes(data)
        return into


def execution_names(state: Path) -> set[str]:
    """The executions a database left by a power cut holds (read by SQLite itself)."""
    conn = sqlite3.connect(state / DB)
    try:
        return {row[0] for row in conn.execute("SELECT name FROM executions")}
    except sqlite3.OperationalError:  # not even the schema survived
        return set()
    finally:
        conn.close()


@pytest.fixture
def durable_cloud(tmp_path: Path) -> Iterator[tuple[LocalCloud, Path]]:
    state = tmp_path / "state"
    server = EmulatorServer(state, clock=VirtualClock(), runtime=EchoRuntime()).start()
    try:
        yield LocalCloud(server, "cn-hangzhou"), state
    finally:
        server.stop()


def test_every_answered_start_survives_a_power_cut(monkeypatch, tmp_path, durable_cloud):
    cloud, state = durable_cloud
    power = PowerCut(monkeypatch)
    client = cloud.fnf_client()
    create(client, "w", wait_flow("w", seconds=300))
    disks = []
    with cloud.auto_advance_disabled():
        for i in range(20):
            client.start_execution(fnf.StartExecutionRequest(flow_name="w",
                                                             execution_name=f"e{i}"))
            disks.append(power.disk(state))  # the plug pulled right after the answer
    for i, disk in enumerate(disks):
        names = execution_names(PowerCut.restore(disk, tmp_path / f"cut{i}"))
        assert {f"e{j}" for j in range(i + 1)} <= names, f"start e{i} was answered, not kept"
    assert power.fsyncs >= 1  # and not one fsync per statement: see the group commit test


def test_an_answered_stop_and_a_report_survive_a_power_cut(monkeypatch, tmp_path,
                                                           durable_cloud):
    cloud, state = durable_cloud
    power = PowerCut(monkeypatch)
    client = cloud.fnf_client()
    create(client, "w", wait_flow("w", seconds=300))
    with cloud.auto_advance_disabled():
        client.start_execution(fnf.StartExecutionRequest(flow_name="w", execution_name="s"))
        client.stop_execution(fnf.StopExecutionRequest(flow_name="w", execution_name="s"))
        disk = power.disk(state)
    cut = PowerCut.restore(disk, tmp_path / "cut")
    conn = sqlite3.connect(cut / DB)
    try:
        (status,) = conn.execute("SELECT status FROM executions WHERE name='s'").fetchone()
    finally:
        conn.close()
    assert status == "Stopped"


def test_concurrent_acknowledgements_share_fsyncs(monkeypatch, tmp_path) -> None:
    """Group commit: commits made while an fsync runs are covered by the next one, so eight
    waiting acknowledgements cost two fsyncs, not eight."""
    from deployer.emulator.store.durability import WalSyncer

    db_path = tmp_path / DB
    db_path.write_bytes(b"")
    syncer = WalSyncer(db_path)
    inside, release = threading.Event(), threading.Event()
    real = os.fdatasync
    calls = []

    def slow_sync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 1:  # the first fsync takes long: the other commits pile up
            inside.set()
            release.wait(10)
        real(fd)

    monkeypatch.setattr(os, "fdatasync", slow_sync)
    first = syncer.committed()
    waiter = threading.Thread(target=syncer.sync, args=(first,))
    waiter.start()
    assert inside.wait(10)
    later = [syncer.committed() for _ in range(7)]
    woken = threading.Event()
    waiters = [threading.Thread(target=syncer.sync, args=(n,)) for n in later]
    for w in waiters:
        w.start()
    syncer.when_durable(later[-1], woken.set)
    release.set()
    for w in [waiter, *waiters]:
        w.join(10)
    assert woken.wait(10)
    assert syncer.synced == 8
    assert syncer.syncs == 2  # one for the first commit, one for the seven behind it
    syncer.close()


def test_a_lone_acknowledgement_is_synced_at_once_a_crowd_is_gathered(monkeypatch,
                                                                       tmp_path) -> None:
    """The gathering pause is for a busy emulator: one client's commit is fsynced at once
    (no pause before the disk's own latency); after an fsync that served several waiting
    acknowledgements, the next fsync first gathers the commits still coming."""
    from deployer.emulator.store.durability import WalSyncer

    db_path = tmp_path / DB
    db_path.write_bytes(b"")
    syncer = WalSyncer(db_path)
    gathers: list[int] = []
    monkeypatch.setattr(syncer, "_gather", lambda: gathers.append(syncer.syncs))
    syncer.sync(syncer.committed())
    syncer.sync(syncer.committed())
    assert (syncer.syncs, gathers) == (2, [])  # two lone clients, one after the other

    inside, release = threading.Event(), threading.Event()
    real = os.fdatasync

    def held(fd: int) -> None:  # the third fsync waits: acknowledgements pile up behind it
        if not inside.is_set():
            inside.set()
            release.wait(10)
        real(fd)

    monkeypatch.setattr(os, "fdatasync", held)
    first = threading.Thread(target=syncer.sync, args=(syncer.committed(),))
    first.start()
    assert inside.wait(10)
    crowd = [threading.Thread(target=syncer.sync, args=(syncer.committed(),))
             for _ in range(3)]
    for waiter in crowd:
        waiter.start()
    while syncer._asked < 3:  # the three are waiting for the next fsync
        threading.Event().wait(0.001)
    release.set()
    for waiter in [first, *crowd]:
        waiter.join(10)
    assert syncer.synced == 6 and syncer.syncs == 4
    assert gathers == []  # the crowd's fsync followed a lone one: synced at once
    syncer.sync(syncer.committed())
    assert gathers == [4]  # the fsync after the crowd's gathered first
    syncer.close()


def test_a_throwaway_state_never_waits_for_the_disk(monkeypatch) -> None:
    """mock_cloud()'s temporary state directory dies with the process: no fsync."""
    from deployer.testing.environment import mock_cloud

    with mock_cloud(runtime=EchoRuntime(), intercept=False) as cloud:
        calls: list[int] = []
        monkeypatch.setattr(os, "fsync", calls.append)
        monkeypatch.setattr(os, "fdatasync", calls.append)
        create(cloud.fnf_client(), "w", wait_flow("w", seconds=10))
        cloud.fnf_client().start_execution(fnf.StartExecutionRequest(flow_name="w"))
        assert calls == []


def test_a_failed_fsync_is_a_storage_error_not_an_acknowledgement(monkeypatch,
                                                                  durable_cloud) -> None:
    cloud, _state = durable_cloud
    client = cloud.fnf_client()
    create(client, "w", wait_flow("w", seconds=10))

    def broken(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken)
    monkeypatch.setattr(os, "fdatasync", broken)
    from Tea.exceptions import TeaException

    with pytest.raises(TeaException) as refused:
        client.start_execution(fnf.StartExecutionRequest(flow_name="w", execution_name="x"))
    assert refused.value.code == "StorageError"
    assert "durable" in refused.value.message and "Input/output error" in refused.value.message
    monkeypatch.undo()
    again = client.start_execution(fnf.StartExecutionRequest(flow_name="w",
                                                             execution_name="y")).body
    assert again.status == "Running"


PASS6 = "Type: StateMachine\nSpecVersion: v1\nName: p6\nStartAt: s1\nStates:\n" + "".join(
    f"  - Type: Pass\n    Name: s{i}\n    " + (f"Next: s{i + 1}\n" if i < 6 else "End: true\n")
    for i in range(1, 7))


def status_on_disk(disk: dict[str, bytes | None], into: Path, name: str) -> str:
    conn = sqlite3.connect(PowerCut.restore(disk, into) / DB)
    try:
        (status,) = conn.execute("SELECT status FROM executions WHERE name=?",
                                 (name,)).fetchone()
    finally:
        conn.close()
    return str(status)


def test_a_pass_only_execution_costs_one_fsync_which_covers_its_instant_states(
        monkeypatch, tmp_path, durable_cloud) -> None:
    """The answered StartExecution is the only acknowledgement of a Pass-only execution: its
    fsync waits for the first step under way (six Pass states and the end, no wait between
    them) and covers it too; the polls that follow read durable state and sync nothing."""
    from deployer.emulator.store import durability

    cloud, state = durable_cloud
    monkeypatch.setattr(durability, "SETTLE_MAX", 30.0)  # however slow the machine
    cloud.server.emulator.db.syncer.idle_sync = 3600  # no background sync in between
    client = cloud.fnf_client()
    create(client, "p6", PASS6)
    power = PowerCut(monkeypatch)
    counted = cloud.health()["store"]["diskSyncs"]
    for i in range(5):
        client.start_execution(fnf.StartExecutionRequest(flow_name="p6", execution_name=f"e{i}"))
        disk = power.disk(state)  # the plug pulled right after the answer
        assert status_on_disk(disk, tmp_path / f"cut{i}", f"e{i}") == "Succeeded"
        described = client.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="p6", execution_name=f"e{i}")).body
        assert described.status == "Succeeded"
        assert len(history(client, "p6", f"e{i}")) > 6
    assert power.fsyncs == 5  # one per execution: its start's, nothing for the reads
    assert cloud.health()["store"]["diskSyncs"] - counted == 5  # as the health document says


def test_a_read_may_show_an_unsynced_step_that_a_power_cut_has_redone_the_same(
        monkeypatch, tmp_path, durable_cloud) -> None:
    """A step nobody is answered about (a due timer's) is not waited for: DescribeExecution
    shows it at once, before any fsync covers it. A power cut then leaves the execution at its
    last durable step, and the engine, started on what is left, redoes the step: the same
    history, event for event, times included (virtual clock)."""
    cloud, state = durable_cloud
    cloud.server.emulator.db.syncer.idle_sync = 3600  # no background sync either
    client = cloud.fnf_client()
    create(client, "w", wait_flow("w", seconds=10))
    power = PowerCut(monkeypatch)
    with cloud.auto_advance_disabled():
        client.start_execution(fnf.StartExecutionRequest(flow_name="w", execution_name="x"))
        cloud.advance(10)  # the timer fires on the engine; nobody is answered about it
        seen = cloud.wait_for_execution("w", "x", timeout=30)
    assert seen["Status"] == "Succeeded"
    before = [(e.type, e.step_name, e.event_detail, e.time) for e in history(client, "w", "x")]
    disk = power.disk(state)
    assert status_on_disk(disk, tmp_path / "peek", "x") == "Running"  # not durable yet
    cut = PowerCut.restore(disk, tmp_path / "cut")
    (cut / IDENTITY_FILE).write_bytes((state / IDENTITY_FILE).read_bytes())  # the account
    server = EmulatorServer(cut, clock=VirtualClock(), runtime=EchoRuntime()).start()
    try:
        again = LocalCloud(server, "cn-hangzhou")
        assert again.wait_for_execution("w", "x", timeout=30)["Status"] == "Succeeded"
        after = [(e.type, e.step_name, e.event_detail, e.time)
                 for e in history(again.fnf_client(), "w", "x")]
    finally:
        server.stop()
    assert after == before


def test_commits_nobody_waits_for_are_synced_in_the_background(tmp_path) -> None:
    """What a read may show ahead of the disk is bounded in time: commits no acknowledgement
    asked for (timers, task results) are fsynced ``idle_sync`` seconds after they were made,
    as PostgreSQL's WAL writer bounds what ``synchronous_commit=off`` may lose."""
    from deployer.emulator.store.durability import WalSyncer

    db_path = tmp_path / DB
    db_path.write_bytes(b"")
    syncer = WalSyncer(db_path)
    syncer.idle_sync = 0.01
    try:
        last = [syncer.committed() for _ in range(3)][-1]
        with syncer._cond:
            assert syncer._cond.wait_for(lambda: syncer.synced >= last, timeout=30)
        assert syncer._asked == 0 and syncer.syncs == 1  # one fsync, nobody asked for it
    finally:
        syncer.close()
