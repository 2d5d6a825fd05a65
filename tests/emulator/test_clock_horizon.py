"""The virtual clock's horizon (docs/emulator.md "Clocks"): no admin call moves it past
2100-01-01T00:00:00Z, and a state saved beyond it by an older version never makes the API
answer 500 (the clock comes back to the horizon at start)."""

from __future__ import annotations

import json
import sqlite3
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from alibabacloud_fc20230330 import models as fc_models
from alibabacloud_fnf20190315 import models as fnf_models
from alibabacloud_ram20150501 import models as ram_models

from deployer.emulator.clock import HORIZON, ClockHorizonError
from deployer.testing.environment import LocalCloud, mock_cloud
from tests.emulator.cloudflow_support import create, pass_flow, start, wait_flow


def _advance(cloud: LocalCloud, seconds: float) -> tuple[int, dict]:
    request = urllib.request.Request(
        cloud.url + "/_emulator/clock/advance", method="POST",
        data=json.dumps({"seconds": seconds}).encode(),
        headers={"Content-Type": "application/json", "X-Emulator-Token": cloud.admin_token})
    try:
        with urllib.request.urlopen(request, timeout=20) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _every_service_answers(cloud: LocalCloud, suffix: str) -> None:
    """RAM (prints times), CloudFlow (history times) and FC answer as usual."""
    cloud.ram_client().create_role(ram_models.CreateRoleRequest(
        role_name=f"role-{suffix}", assume_role_policy_document=json.dumps({
            "Version": "1", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                           "Principal": {"Service": ["fnf.aliyuncs.com"]}}]})))
    flows = cloud.fnf_client()
    create(flows, f"flow-{suffix}", pass_flow(f"flow-{suffix}"))
    start(flows, f"flow-{suffix}", "run")
    assert cloud.wait_for_execution(f"flow-{suffix}", "run")["Status"] == "Succeeded"
    assert cloud.fc_client().list_functions(fc_models.ListFunctionsRequest()).status_code == 200


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[LocalCloud]:
    with mock_cloud(intercept=False, state_dir=tmp_path / "state") as local:
        yield local


@pytest.mark.parametrize("seconds", [1e300, 1e18, 253402300799])
def test_the_admin_api_refuses_to_move_the_clock_past_its_horizon(cloud, seconds) -> None:
    before = cloud.now()
    status, body = _advance(cloud, seconds)
    assert status == 400 and body["Code"] == "InvalidArgument", body
    assert "cannot pass 2100-01-01T00:00:00Z (its horizon)" in body["Message"]
    assert cloud.now() == before
    _every_service_answers(cloud, "after")


def test_the_clock_reaches_its_horizon_and_everything_still_answers(cloud) -> None:
    status, body = _advance(cloud, HORIZON - cloud.now())
    assert status == 200 and body["iso"] == "2100-01-01T00:00:00Z"
    assert _advance(cloud, 1)[0] == 400
    with pytest.raises(ClockHorizonError):
        cloud.advance(1)
    _every_service_answers(cloud, "edge")
    flows = cloud.fnf_client()  # a Wait past the horizon: time stands still, nothing fails
    create(flows, "waits", wait_flow("waits", seconds=300))
    start(flows, "waits", "long")
    assert flows.describe_execution(fnf_models.DescribeExecutionRequest(
        flow_name="waits", execution_name="long")).body.status == "Running"
    assert cloud.now() == HORIZON


def test_a_clock_saved_past_year_9999_comes_back_to_the_horizon(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with mock_cloud(intercept=False, state_dir=state):
        pass
    with sqlite3.connect(state / "emulator.db") as db:  # what an older version could save
        db.execute("INSERT OR REPLACE INTO engine_meta VALUES ('clock', ?)", (repr(1e18),))
    with mock_cloud(intercept=False, state_dir=state) as cloud:
        assert cloud.now() == HORIZON
        assert cloud.health()["status"] == "ok"
        _every_service_answers(cloud, "restarted")


def test_reset_of_a_daemon_brings_its_virtual_clock_back_to_the_present(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from deployer.cli.main import cli
    from deployer.emulator.daemon import admin_request

    state = tmp_path / "daemon"
    runner = CliRunner()
    started = runner.invoke(cli, ["emulator", "start", "--state-dir", str(state), "--port", "0",
                                  "--clock", "virtual"])
    assert started.exit_code == 0, started.stderr
    try:
        now = admin_request(state, "/_emulator/clock", method="GET")["now"]
        moved = admin_request(state, "/_emulator/clock/advance", {"seconds": HORIZON - now})
        assert moved["iso"] == "2100-01-01T00:00:00Z"
        reset = runner.invoke(cli, ["emulator", "reset", "--yes", "--state-dir", str(state)])
        assert reset.exit_code == 0, reset.stderr
        after = admin_request(state, "/_emulator/clock", method="GET")["now"]
        assert now <= after < now + 3600  # the present again, and it moves
        assert admin_request(state, "/_emulator/clock/advance", {"seconds": 60})["now"] \
            == after + 60
    finally:
        runner.invoke(cli, ["emulator", "stop", "--state-dir", str(state)])


def test_reset_keeps_the_clock_unless_asked(cloud) -> None:
    def reset(body: dict) -> tuple[int, dict]:
        request = urllib.request.Request(
            cloud.url + "/_emulator/reset", method="POST", data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "X-Emulator-Token": cloud.admin_token})
        try:
            with urllib.request.urlopen(request, timeout=20) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    cloud.advance(3600)
    moved = cloud.now()
    assert reset({}) == (200, {"reset": True})
    assert cloud.now() == moved  # LocalCloud.reset() and tests keep their clock
    status, body = reset({"clock": "yesterday"})
    assert status == 400 and '"clock" must be "keep"' in body["Message"]
    assert reset({"clock": "now"}) == (200, {"reset": True})
    assert cloud.now() < moved
