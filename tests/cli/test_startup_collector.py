"""The garbage collector stays out of a command's start and exit (deployer.cli.startup)."""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from deployer.cli.startup import RESUME_THREAD, collector_paused


@pytest.fixture(autouse=True)
def _restore_collector() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()


def _resume_timer() -> threading.Thread:
    return next(t for t in threading.enumerate() if t.name == RESUME_THREAD)


def test_paused_while_the_command_starts_then_frozen_and_running_again() -> None:
    gc.unfreeze()
    with collector_paused(seconds=600):
        assert not gc.isenabled()
        timer = _resume_timer()
    timer.join(timeout=10)  # cancelled when the block ends
    assert not timer.is_alive()
    assert gc.isenabled()
    assert gc.get_freeze_count() > 0  # what the block made is never traversed again


def test_a_long_command_gets_the_collector_back_after_the_pause() -> None:
    with collector_paused(seconds=0.0):
        for thread in [t for t in threading.enumerate() if t.name == RESUME_THREAD]:
            thread.join(timeout=10)  # (it may be over already)
        assert gc.isenabled()  # resumed while the block still runs


def test_a_collector_switched_off_by_the_caller_stays_off() -> None:
    gc.disable()
    with collector_paused():
        assert not any(t.name == RESUME_THREAD for t in threading.enumerate())
    assert not gc.isenabled()


def test_the_entry_point_runs_commands_with_the_collector_paused() -> None:
    code = ("import gc, sys, click\n"
            "from deployer.cli import main as m\n"
            "probe = click.command('probe')(lambda: print(gc.isenabled()))\n"
            "m.COMMANDS['probe'] = '__main__:probe'\n"
            "sys.argv = ['deploy', 'probe']\n"
            "m.main()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"
