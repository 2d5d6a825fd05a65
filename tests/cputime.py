"""``--cpu-report PATH``: the CPU time each test costs (opt-in; loaded by tests/conftest.py).

Wall-clock durations on a shared machine measure the neighbours as much as the test, so the
suite's budget (docs/testing.md) is kept in CPU seconds: for every test, the user + system time
of its setup, call and teardown, in the pytest process (all its threads, so an in-process
emulator's too) and in the processes it started that have ended (``RUSAGE_CHILDREN``: workers,
daemons, nested ``deploy`` and ``pytest`` runs, with their own children). A child that has
exited but is not yet reaped is charged to the test in which it exited (its figures are read
from ``/proc`` while it is a zombie) and not again when it is reaped. A process still running
after its test (a daemon a later test stops, a session fixture's) is charged when it ends.

With ``-n`` each worker measures its own tests and the figures travel to the controller on the
test reports. The controller writes one JSON document to PATH (every test's phases, sorted by
total CPU, and the sums) and prints the slowest ``--cpu-report-top`` tests. Whole-suite totals,
including processes nobody reaps, come from ``benchmarks/suite_time.py``.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_KEY = "cputime"
_TICK = os.sysconf("SC_CLK_TCK")


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("cputime", "CPU time per test (docs/testing.md)")
    group.addoption(
        "--cpu-report", default=None, metavar="PATH",
        help="write each test's CPU time (user + system, this process and its ended "
             "children) as JSON to PATH and print the slowest tests")
    group.addoption(
        "--cpu-report-top", type=int, default=40, metavar="N",
        help="how many of the slowest tests --cpu-report prints (default 40)")


class _Meter:
    """CPU seconds of this process and of its children, children reaped later included."""

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._zombies: dict[int, float] = {}  # already charged, not yet reaped

    def read(self) -> tuple[float, float, float]:
        me = resource.getrusage(resource.RUSAGE_SELF)
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, time.perf_counter())

    def settle(self) -> float:
        """CPU of newly exited unreaped children, minus that of charged ones since reaped."""
        now = self._scan()
        charged_then_reaped = sum(cpu for pid, cpu in self._zombies.items() if pid not in now)
        new = sum(cpu for pid, cpu in now.items() if pid not in self._zombies)
        self._zombies = now
        return new - charged_then_reaped

    def _children(self) -> list[str] | None:
        """This process's children (every thread's ``children`` file: a few reads instead of
        one per process of the machine, about 13 ms each time on a busy one); None where the
        kernel has no such file."""
        task = f"/proc/{self._pid}/task"
        try:
            threads = os.listdir(task)
        except OSError:
            return None
        pids: list[str] = []
        for tid in threads:
            try:
                pids += Path(f"{task}/{tid}/children").read_text().split()
            except FileNotFoundError:
                if tid == str(self._pid):
                    return None
            except OSError:
                continue
        return pids

    def _scan(self) -> dict[int, float]:
        found: dict[int, float] = {}
        names = self._children()
        if names is None:
            try:
                names = os.listdir("/proc")
            except OSError:
                return found
        for name in names:
            if not name.isdigit():
                continue
            try:
                raw = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            fields = raw[raw.rindex(")") + 2:].split()
            # fields[0] state, [1] ppid, [11..14] utime stime cutime cstime (clock ticks)
            if fields[0] == "Z" and int(fields[1]) == self._pid:
                found[int(name)] = sum(int(f) for f in fields[11:15]) / _TICK
        return found


_meter: _Meter | None = None


def pytest_configure(config: Any) -> None:
    global _meter
    path = config.getoption("--cpu-report")
    if not path:
        return
    _meter = _Meter()
    _meter.settle()
    if not hasattr(config, "workerinput"):  # the controller (or the only process) reports
        config.pluginmanager.register(
            _Collector(path, config.getoption("--cpu-report-top")), "cputime-collector")


def _measured(item: Any, phase: str) -> Iterator[None]:
    if _meter is None:
        yield
        return
    me0, kids0, wall0 = _meter.read()
    yield
    me1, kids1, wall1 = _meter.read()
    kids = kids1 - kids0 + _meter.settle()
    item.user_properties.append(
        (_KEY, {"phase": phase, "self": round(me1 - me0, 4), "children": round(kids, 4),
                "wall": round(wall1 - wall0, 4)}))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: Any) -> Iterator[None]:
    yield from _measured(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Iterator[None]:
    yield from _measured(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: Any) -> Iterator[None]:
    yield from _measured(item, "teardown")


def _worker(report: Any) -> str:
    node = getattr(report, "node", None)  # xdist's controller: the worker that ran it
    return str(node.gateway.id) if node is not None else "main"


class _Collector:
    def __init__(self, path: str, top: int) -> None:
        self.path = Path(path)
        self.top = top
        self.tests: dict[str, dict[str, Any]] = {}

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when != "teardown":
            return
        phases = [value for key, value in report.user_properties if key == _KEY]
        if not phases:
            return
        entry = {
            "test": report.nodeid,
            "worker": _worker(report),
            "self": round(sum(p["self"] for p in phases), 3),
            "children": round(sum(p["children"] for p in phases), 3),
            "wall": round(sum(p["wall"] for p in phases), 3),
            "phases": {p["phase"]: p for p in phases},
        }
        entry["cpu"] = round(entry["self"] + entry["children"], 3)
        self.tests[report.nodeid] = entry

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        rows = sorted(self.tests.values(), key=lambda e: e["cpu"], reverse=True)
        total = {k: round(sum(e[k] for e in rows), 1) for k in ("cpu", "self", "children", "wall")}
        self.path.write_text(json.dumps({"tests": len(rows), "total": total, "rows": rows},
                                        indent=1) + "\n")
        tr = terminalreporter
        tr.write_sep("=", f"CPU time per test: {self.top} slowest of {len(rows)}")
        tr.write_line(f"{'cpu s':>8} {'self':>8} {'children':>8} {'wall s':>8}  test")
        for e in rows[: self.top]:
            tr.write_line(f"{e['cpu']:8.2f} {e['self']:8.2f} {e['children']:8.2f} "
                          f"{e['wall']:8.2f}  {e['test']}")
        tr.write_line(f"{total['cpu']:8.1f} {total['self']:8.1f} {total['children']:8.1f} "
                      f"{total['wall']:8.1f}  all {len(rows)} tests (written to {self.path})")
