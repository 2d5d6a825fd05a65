"""Ctrl-C while `deploy execute` watches a Wait: exit 130, a re-attach hint, and the execution
keeps running on the (background, real-clock) emulator."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from deployer.emulator import daemon


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _signal_masks(pid: int) -> str:
    """The process's blocked, ignored, caught and pending signal masks (/proc/PID/status)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError as exc:
        return str(exc)
    return " ".join(line.replace("\t", " ") for line in lines if line.startswith("Sig"))


@pytest.fixture
def local_project(project, monkeypatch):
    monkeypatch.setenv("DEPLOY_EMULATOR_PORT", str(_free_port()))
    yield project
    daemon.stop(project / ".deploy" / "emulator")


@pytest.mark.slow
def test_sigint_during_a_wait_stops_watching_not_the_execution(deploy, local_project):
    assert deploy("up", target="local").exit_code == 0
    proc = subprocess.Popen(
        [sys.executable, "-c", "from deployer.cli.main import main; main()", "-C",
         str(local_project), "execute", "--target", "local", "--delay", "20", "--name", "run-i"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"})
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # the flow is now in its first 10 s Wait
            if line.split()[2:3] == ["Pass"]:
                break
        proc.send_signal(signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # say where it is and what it does with signals
            masks = _signal_masks(proc.pid)
            proc.send_signal(signal.SIGABRT)  # faulthandler prints every thread's stack
            _, stacks = proc.communicate(timeout=30)
            pytest.fail(f"still running 30 s after SIGINT ({masks}):\n{stacks}")
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "execution run-i keeps running" in err and "deploy status run-i --wait" in err
    status = deploy("status", "run-i", "--output", "json", target="local")
    assert status.exit_code == 0, status.stderr
    assert json.loads(status.stdout)["status"] == "Running"
