"""``deploy emulator faults ...`` against a real background daemon, seen through the SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from alibabacloud_sts20150401.client import Client as Sts
from alibabacloud_tea_openapi import models as open_api
from alibabacloud_tea_openapi.exceptions import ClientException
from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.testing import mock_cloud


def _run(state: Path, *args: str):
    return CliRunner().invoke(cli, ["emulator", *args, "--state-dir", str(state)])


def _json(state: Path, *args: str) -> dict:
    result = _run(state, *args, "--output", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def state(tmp_path_factory) -> Iterator[Path]:
    directory = tmp_path_factory.mktemp("faults") / "state"
    started = _run(directory, "start", "--port", "0", "--clock", "virtual")
    assert started.exit_code == 0, started.stderr
    yield directory
    _run(directory, "stop")


def _sts(state: Path) -> Sts:
    creds = _json(state, "credentials")
    return Sts(open_api.Config(access_key_id=creds["access_key_id"],
                               access_key_secret=creds["access_key_secret"],
                               endpoint=creds["endpoint"], protocol="http"))


def test_add_list_and_clear_faults_that_the_sdk_meets(state: Path):
    added = _json(state, "faults", "add", "--service", "sts", "--action", "GetCallerIdentity",
                  "--error", "Throttling", "--times", "1")
    assert added["changed"] == "added fault-1"
    assert added["faults"][0] | {"remaining": 1} == added["faults"][0]
    with pytest.raises(ClientException) as info:
        _sts(state).get_caller_identity()
    assert (info.value.code, info.value.status_code) == ("Throttling", 400)
    assert _sts(state).get_caller_identity().body.account_id  # only the next call failed
    listed = _json(state, "faults", "list")
    assert [(f["id"], f["fired"], f["remaining"]) for f in listed["faults"]] == [
        ("fault-1", 1, 0)]
    text = _run(state, "faults", "list")
    assert "fault-1" in text.stdout and "error Throttling (400)" in text.stdout

    _json(state, "faults", "add", "--service", "fc", "--latency", "0.5")
    assert _json(state, "faults", "clear", "fault-1")["changed"] == "removed fault-1"
    cleared = _json(state, "faults", "clear")
    assert (cleared["changed"], cleared["faults"]) == ("cleared 1 fault", [])


def test_throttle_mode_and_clear_errors(state: Path):
    assert _json(state, "faults", "throttle", "cloud")["throttle"] == "cloud"
    assert _json(state, "faults", "list")["throttle"] == "cloud"
    assert _json(state, "faults", "throttle", "off")["throttle"] == "off"
    missing = _run(state, "faults", "clear", "fault-99")
    assert missing.exit_code == 1 and "fault 'fault-99' does not exist" in missing.stderr
    bad = _run(state, "faults", "add", "--service", "fc", "--error", "Nope")
    assert bad.exit_code == 1 and "give its HTTP status too" in bad.stderr
    usage = _run(state, "faults", "add", "--service", "fc", "--timeout", "--latency", "1")
    assert usage.exit_code == 2 and "exactly one of --error" in usage.stderr


def test_inside_mock_cloud_the_python_api_is_the_way(tmp_path: Path):
    with mock_cloud():
        result = _run(tmp_path / "state", "faults", "list")
    assert result.exit_code == 1 and "inside mock_cloud()" in result.stderr
