"""``deploy emulator ...`` through CliRunner, with real background daemons (the latency model
they run with: docs/runtime.md "Latency model")."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from deployer.cli.main import cli


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def daemon_dir(tmp_path: Path) -> Iterator[Path]:
    state = tmp_path / "state"
    yield state
    _run("emulator", "stop", "--state-dir", str(state))


def test_start_status_credentials_stop(daemon_dir: Path) -> None:
    started = _run("emulator", "start", "--state-dir", str(daemon_dir), "--port", "0",
                   "--clock", "virtual", "--output", "json")
    assert started.exit_code == 0, started.stderr
    info = json.loads(started.stdout)
    assert info["running"] and info["message"] == "started" and info["clock"] == "virtual"
    again = _run("emulator", "start", "--state-dir", str(daemon_dir), "--port", "0")
    assert again.exit_code == 0 and "already running" in again.stdout

    creds = json.loads(_run("emulator", "credentials", "--state-dir", str(daemon_dir),
                            "--output", "json").stdout)
    assert creds["endpoint"] == info["endpoint"] and creds["account_id"] == info["account_id"]
    env = _run("emulator", "credentials", "--state-dir", str(daemon_dir), "--format", "env")
    assert f"export ALIBABA_CLOUD_ACCESS_KEY_ID={creds['access_key_id']}" in env.stdout

    from alibabacloud_sts20150401.client import Client
    from alibabacloud_tea_openapi import models as open_api
    sts = Client(open_api.Config(access_key_id=creds["access_key_id"],
                                 access_key_secret=creds["access_key_secret"],
                                 endpoint=creds["endpoint"], protocol="http"))
    assert sts.get_caller_identity().body.account_id == info["account_id"]

    status = _run("emulator", "status", "--state-dir", str(daemon_dir), "--output", "json")
    assert status.exit_code == 0 and json.loads(status.stdout)["pid"] == info["pid"]
    reset = _run("emulator", "reset", "--yes", "--state-dir", str(daemon_dir))
    assert reset.exit_code == 0 and "running emulator" in reset.stdout
    stopped = _run("emulator", "stop", "--state-dir", str(daemon_dir))
    assert stopped.exit_code == 0 and "stopped" in stopped.stdout
    down = _run("emulator", "status", "--state-dir", str(daemon_dir))
    assert down.exit_code == 4 and "not running" in down.stdout


def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = _run("emulator", "start", "--state-dir", str(tmp_path), "--port", str(port))
    assert result.exit_code == 1
    assert f"port {port}" in result.stderr and "already in use" in result.stderr
    assert "Traceback" not in result.stderr


def test_stale_pid_file_is_cleaned(tmp_path: Path) -> None:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "emulator.pid").write_text("999999999")
    result = _run("emulator", "status", "--state-dir", str(tmp_path))
    assert result.exit_code == 4 and "stale pid file" in result.stdout
    assert not (tmp_path / "emulator.pid").exists()


def test_credentials_before_first_start_and_offline_reset(tmp_path: Path) -> None:
    result = _run("emulator", "credentials", "--state-dir", str(tmp_path / "none"))
    assert result.exit_code == 4 and "deploy emulator start" in result.stderr
    (tmp_path / "emulator.db").write_text("x")
    result = _run("emulator", "reset", "--yes", "--state-dir", str(tmp_path))
    assert result.exit_code == 0 and not (tmp_path / "emulator.db").exists()


def test_default_state_dir_is_under_the_project(tmp_path: Path) -> None:
    result = _run("-C", str(tmp_path), "emulator", "status", "--output", "json")
    assert json.loads(result.stdout)["state_dir"] == str(tmp_path / ".deploy" / "emulator")
    assert os.path.isdir(tmp_path)


def _start(daemon_dir: Path, *options: str) -> dict:
    started = _run("emulator", "start", "--state-dir", str(daemon_dir), "--port", "0", *options,
                   "--output", "json")
    assert started.exit_code == 0, started.stderr
    return json.loads(started.stdout)


def test_the_real_clock_models_the_cloud_by_default(daemon_dir: Path) -> None:
    info = _start(daemon_dir)
    assert info["clock"] == "real"
    assert info["latency"] == {"model": "cloud", "cold_start": 1.0, "step_latency": 0.1}
    text = _run("emulator", "status", "--state-dir", str(daemon_dir))
    assert text.exit_code == 0
    assert ("Latency: cloud-like defaults: cold start 1 s per new function instance, 0.1 s per "
            "CloudFlow step") in text.stdout


def test_explicit_values_win_and_zero_turns_a_cost_off(daemon_dir: Path) -> None:
    info = _start(daemon_dir, "--cold-start", "0.5", "--step-latency", "0")
    assert info["latency"] == {"model": "custom", "cold_start": 0.5, "step_latency": 0.0}
    status = json.loads(_run("emulator", "status", "--state-dir", str(daemon_dir), "--output",
                             "json").stdout)
    assert status["latency"] == info["latency"]
    same = _run("emulator", "start", "--state-dir", str(daemon_dir), "--cold-start", "0.5")
    assert same.exit_code == 0 and "Emulator already running: http" in same.stdout
    other = _run("emulator", "start", "--state-dir", str(daemon_dir), "--cold-start", "2")
    assert other.exit_code == 0
    assert "already running (not with the latency asked for: `deploy emulator stop` first" \
        in other.stdout
    assert "Latency: custom: cold start 0.5 s per new function instance, 0 s per CloudFlow " \
        "step" in other.stdout


def test_the_virtual_clock_is_exact_unless_told(daemon_dir: Path) -> None:
    assert _start(daemon_dir, "--clock", "virtual")["latency"]["model"] == "exact"
    text = _run("emulator", "status", "--state-dir", str(daemon_dir)).stdout
    assert "Latency: exact (no cold start, no per-step overhead)" in text


def test_negative_values_are_usage_errors(tmp_path: Path) -> None:
    result = _run("emulator", "start", "--state-dir", str(tmp_path), "--cold-start", "-1")
    assert result.exit_code == 2 and "--cold-start" in result.stderr
    assert not (tmp_path / "emulator.pid").exists()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_start_listens_on_deploy_emulator_port(daemon_dir: Path, monkeypatch) -> None:
    """`deploy up` looks for the emulator on DEPLOY_EMULATOR_PORT; `emulator start` listens
    there too (it used to bind 9125 whatever the variable said)."""
    port = _free_port()
    monkeypatch.setenv("DEPLOY_EMULATOR_PORT", str(port))
    started = _run("emulator", "start", "--state-dir", str(daemon_dir), "--clock", "virtual",
                   "--output", "json")
    assert started.exit_code == 0, started.stderr
    assert json.loads(started.stdout)["endpoint"] == f"127.0.0.1:{port}"
    monkeypatch.setenv("DEPLOY_EMULATOR_PORT", "99999")
    bad = _run("emulator", "start", "--state-dir", str(daemon_dir / "other"))
    assert bad.exit_code == 2 and "DEPLOY_EMULATOR_PORT='99999' is not a TCP port" in bad.stderr


def test_stop_from_another_process_does_not_wait_for_the_parent_to_reap(
        daemon_dir: Path) -> None:
    """A daemon started by a long-lived process (this one, as a script or `deploy dev` would)
    is its child: once it exits it stays a zombie until that parent waits. `deploy emulator
    stop` run elsewhere sees it has ended instead of waiting 15 s and sending SIGKILL."""
    import subprocess
    import sys

    from deployer.emulator import daemon

    daemon.start_daemon(daemon_dir, port=0, clock="virtual")
    stop = subprocess.run(
        [sys.executable, "-c", "from deployer.cli.main import main; main()", "emulator",
         "stop", "--state-dir", str(daemon_dir)],
        capture_output=True, text=True, timeout=10, check=False)
    assert stop.returncode == 0 and "stopped" in stop.stdout, stop.stderr
    assert not daemon.status(daemon_dir).running
