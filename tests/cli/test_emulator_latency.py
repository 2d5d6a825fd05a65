"""``deploy emulator start --cold-start/--step-latency`` and the model `status` shows, with
real background daemons (docs/runtime.md "Latency model")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from deployer.cli.main import cli


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def state(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "state"
    yield directory
    _run("emulator", "stop", "--state-dir", str(directory))


def _start(state: Path, *options: str) -> dict:
    started = _run("emulator", "start", "--state-dir", str(state), "--port", "0", *options,
                   "--output", "json")
    assert started.exit_code == 0, started.stderr
    return json.loads(started.stdout)


def test_the_real_clock_models_the_cloud_by_default(state: Path) -> None:
    info = _start(state)
    assert info["clock"] == "real"
    assert info["latency"] == {"model": "cloud", "cold_start": 1.0, "step_latency": 0.1}
    text = _run("emulator", "status", "--state-dir", str(state))
    assert text.exit_code == 0
    assert ("Latency: cloud-like defaults: cold start 1 s per new function instance, 0.1 s per "
            "CloudFlow step") in text.stdout


def test_explicit_values_win_and_zero_turns_a_cost_off(state: Path) -> None:
    info = _start(state, "--cold-start", "0.5", "--step-latency", "0")
    assert info["latency"] == {"model": "custom", "cold_start": 0.5, "step_latency": 0.0}
    status = json.loads(_run("emulator", "status", "--state-dir", str(state), "--output",
                             "json").stdout)
    assert status["latency"] == info["latency"]
    same = _run("emulator", "start", "--state-dir", str(state), "--cold-start", "0.5")
    assert same.exit_code == 0 and "Emulator already running: http" in same.stdout
    other = _run("emulator", "start", "--state-dir", str(state), "--cold-start", "2")
    assert other.exit_code == 0
    assert "already running (not with the latency asked for: `deploy emulator stop` first" \
        in other.stdout
    assert "Latency: custom: cold start 0.5 s per new function instance, 0 s per CloudFlow " \
        "step" in other.stdout


def test_the_virtual_clock_is_exact_unless_told(state: Path) -> None:
    assert _start(state, "--clock", "virtual")["latency"]["model"] == "exact"
    text = _run("emulator", "status", "--state-dir", str(state)).stdout
    assert "Latency: exact (no cold start, no per-step overhead)" in text


def test_negative_values_are_usage_errors(tmp_path: Path) -> None:
    result = _run("emulator", "start", "--state-dir", str(tmp_path), "--cold-start", "-1")
    assert result.exit_code == 2 and "--cold-start" in result.stderr
    assert not (tmp_path / "emulator.pid").exists()
