"""Function Compute triggers in the emulator's domain: CRUD and per-type checks, timer
triggers firing on the virtual clock with FC's payload, shown by `deploy logs`."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.emulator.services.errors import AlreadyExists, InvalidValue, ResourceNotFound
from deployer.emulator.services.triggers import TriggerChanges, TriggerInput
from deployer.testing import mock_cloud

HANDLER = ("import json\ndef handler(event, context):\n"
           "    print('fired', event.decode())\n    return 'ok'\n")


def _function(cloud: Any, name: str = "nightly") -> None:
    from alibabacloud_fc20230330 import models

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("index.py", HANDLER)
    cloud.fc_client().create_function(models.CreateFunctionRequest(
        body=models.CreateFunctionInput(
            function_name=name, runtime="python3.10", handler="index.handler",
            log_config=models.LogConfig(project="nightly-logs", logstore="fc"),
            code=models.InputCodeLocation(zip_file=base64.b64encode(buffer.getvalue()).decode()))))


def _timer(cron: str = "0 0 2 * * *", payload: str = "rebuild") -> TriggerInput:
    return TriggerInput("every-night", "timer", {"cronExpression": cron, "enable": True,
                                                 "payload": payload})


def test_timer_trigger_fires_on_the_virtual_clock_and_shows_in_logs(tmp_path: Path) -> None:
    with mock_cloud() as cloud:
        _function(cloud)
        triggers = cloud.server.emulator.triggers
        row = triggers.create(cloud.account_id, cloud.region, "nightly", _timer())
        assert row.next_fire_at is not None and row.next_fire_at > cloud.now()
        fires = cloud.wait_for_timer_trigger("nightly", "every-night")
        (record,) = cloud.invocations("nightly")
        logs = CliRunner().invoke(cli, ["-C", str(tmp_path), "logs", "nightly", "--target",
                                        "aliyun", "--region", cloud.region, "--output", "json"])
    assert fires == 1
    assert record.invocation_type == "Async" and record.status == "Succeeded"
    line = next(x for x in record.log.splitlines() if "fired" in x)
    event = json.loads(line.split("fired ", 1)[1])
    assert event == {"triggerTime": event["triggerTime"], "triggerName": "every-night",
                     "payload": "rebuild"}
    assert event["triggerTime"].endswith("T02:00:00Z")
    assert logs.exit_code == 0, logs.stderr
    assert "every-night" in logs.stdout


def test_every_minute_catches_up_when_time_passes_several_instants() -> None:
    with mock_cloud() as cloud:
        _function(cloud)
        triggers = cloud.server.emulator.triggers
        triggers.create(cloud.account_id, cloud.region, "nightly", _timer("@every 1m"))
        with cloud.auto_advance_disabled():
            cloud.advance(3 * 60 + 1)
            assert cloud.wait_for_timer_trigger("nightly", "every-night", fires=3) == 3
        records = cloud.invocations("nightly")
    assert len(records) == 3


def test_trigger_crud_and_checks() -> None:
    with mock_cloud() as cloud:
        _function(cloud)
        svc = cloud.server.emulator.triggers
        a, r = cloud.account_id, cloud.region
        http = svc.create(a, r, "nightly", TriggerInput(
            "web", "http", {"authType": "anonymous", "methods": ["GET"]}))
        with pytest.raises(AlreadyExists):
            svc.create(a, r, "nightly", TriggerInput("web", "http", {"methods": ["GET"]}))
        with pytest.raises(InvalidValue, match="sourceArn of a oss trigger"):
            svc.create(a, r, "nightly", TriggerInput("up", "oss", {"events": []}, source_arn="x"))
        with pytest.raises(InvalidValue, match="CronExpression"):
            svc.create(a, r, "nightly", _timer("every day"))
        with pytest.raises(InvalidValue, match="authType 'jwt'"):
            svc.create(a, r, "nightly", TriggerInput("j", "http", {"authType": "jwt",
                                                                    "methods": ["GET"]}))
        with pytest.raises(ResourceNotFound):
            svc.create(a, r, "missing", _timer())
        timer = svc.create(a, r, "nightly", _timer())
        off = svc.update(a, r, "nightly", "every-night", TriggerChanges(
            config={**timer.config, "enable": False}))
        page, token = svc.list(a, r, "nightly", limit=1)
        assert svc.by_url(http.url_prefix) == http
        cloud.fc_client().delete_function("nightly")
        with pytest.raises(ResourceNotFound):
            svc.get(a, r, "nightly", "web")
    assert off.next_fire_at is None and off.config["enable"] is False
    assert [t.name for t in page] == ["every-night"] and token == "web"
