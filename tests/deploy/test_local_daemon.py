"""`--target local` with the background emulator: auto-start, and an emulator killed in the
middle of `deploy execute` and restarted — `deploy status --wait` still reports the end.

Real clock (the daemon runs as a separate process); the flow is shortened through its
definitionVars (Wait 2 s) so the whole test takes a few seconds.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys

import pytest

from deployer.emulator import daemon


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def local_project(project, monkeypatch):
    manifest = project / "s.yaml"
    manifest.write_text(manifest.read_text().replace("wait_seconds: 10", "wait_seconds: 2"))
    monkeypatch.setenv("DEPLOY_EMULATOR_PORT", str(_free_port()))
    state_dir = project / ".deploy" / "emulator"
    yield project
    daemon.stop(state_dir)


@pytest.mark.slow
def test_emulator_killed_during_execute_then_status_wait_reports_the_end(deploy, local_project):
    state_dir = local_project / ".deploy" / "emulator"
    up = deploy("up", target="local")
    assert up.exit_code == 0, up.stderr
    assert "Starting the local emulator" in up.stderr
    assert up.stderr.splitlines()[1].startswith(
        "Target: local (local emulator), region cn-hangzhou")
    assert deploy.json("up", target="local")["write_calls"] == 0  # same daemon reused

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", "from deployer.cli.main import main; main()", "-C",
         str(local_project), "execute", "--target", "local", "--delay", "3", "--name", "run-k"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # blocks until the first poll has been answered
            if "GetJobStatus" in line:
                break
        old = daemon.status(state_dir)
        os.kill(old.pid, signal.SIGKILL)
        restarted = daemon.start_daemon(state_dir, port=_free_port())
        assert restarted.running
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    # The watcher either reconnected in time or stopped with a way to re-attach.
    assert proc.returncode in (0, 1), err
    if proc.returncode == 1:
        assert "deploy status run-k --wait" in err

    waited = deploy("status", "run-k", "--wait", "--output", "json", target="local")
    assert waited.exit_code == 0, waited.stderr
    result = json.loads(waited.stdout)
    assert result["status"] == "Succeeded"
    assert result["output"]["job_status"] == "success"
    assert result["states"][-1] == "JobSucceeded"
