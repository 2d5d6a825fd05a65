"""The cloud-like latency model on the real clock, end to end: `deploy up` starts the
background emulator with its defaults, and the seed run on a fresh instance ends as on the
cloud (docs/runtime.md "Latency model").

The seed's `--delay 30` with 10 s Waits, scaled to take a quarter of the time: Waits of 3 s
and `--delay 9` (three Waits, as 30 is). Poll k then sees d = 1 + 3.2 (k - 1) seconds since
GetJobStatus imported its module (1 s cold start; two 0.1 s steps a cycle) plus whatever the
machine adds: poll 4 sees at least 10.6 s, so `int(now) - start_time` > 9 whatever the
sub-second phase (JobSucceeded, try_count 4), while poll 3 succeeds only if the machine adds
1.6 s over two cycles. With no model at all, poll 4 would see 9 s and the job would fail.
"""

from __future__ import annotations

import json
import socket

import pytest

from deployer.emulator import daemon


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_delay_30_scaled_ends_like_the_scenario_on_a_fresh_real_clock_emulator(
        deploy, project, monkeypatch) -> None:
    manifest = project / "s.yaml"
    manifest.write_text(manifest.read_text().replace("wait_seconds: 10", "wait_seconds: 3"))
    monkeypatch.setenv("DEPLOY_EMULATOR_PORT", str(_free_port()))
    state_dir = project / ".deploy" / "emulator"
    try:
        assert deploy("up", target="local").exit_code == 0
        status = daemon.status(state_dir)
        assert status.clock == "real" and status.latency_model is not None
        assert status.latency_model.kind == "cloud"
        result = deploy("execute", "--delay", "9", "--output", "json", target="local")
    finally:
        daemon.stop(state_dir)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["status"] == "Succeeded"
    assert doc["output"]["job_status"] == "success" and doc["output"]["try_count"] == 4
    assert doc["states"].count("GetJobStatus") == 4 and doc["states"][-1] == "JobSucceeded"
