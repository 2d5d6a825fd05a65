"""CloudFlow time-based schedules through the official SDK: CRUD, cron dialect, firing on the
emulator's clock (virtual days in milliseconds), catching up, restarts, and deletion with
their flow."""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
from alibabacloud_fnf20190315 import models as fnf
from alibabacloud_tea_openapi.exceptions import ClientException

from deployer.emulator.clock import VirtualClock
from deployer.testing import mock_cloud

START = datetime(2026, 3, 1, 6, 30, tzinfo=timezone.utc).timestamp()  # a Sunday
FLOW = ("Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: p\nStates:\n"
        "  - Type: Pass\n    Name: p\n    End: true\n")


def _flow(client, name: str = "nightly") -> None:
    client.create_flow(fnf.CreateFlowRequest(name=name, definition=FLOW.format(name=name),
                                             description="", type="FDL"))


def _create(client, cron: str, *, name: str = "s", flow: str = "nightly",
            enable: bool | None = True, payload: str | None = None):
    return client.create_schedule(fnf.CreateScheduleRequest(
        flow_name=flow, schedule_name=name, cron_expression=cron, enable=enable,
        payload=payload)).body


def _error(call, request):
    with pytest.raises(ClientException) as info:
        call(request)
    return info.value


def _executions(client, flow: str = "nightly") -> list:
    return client.list_executions(fnf.ListExecutionsRequest(flow_name=flow)).body.executions


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture
def cloud():
    with mock_cloud(clock=VirtualClock(START)) as local:
        _flow(local.fnf_client())
        yield local


def test_a_daily_schedule_fires_in_milliseconds_with_its_payload_as_input(cloud) -> None:
    client = cloud.fnf_client()
    created = _create(client, "0 0 8 * * *", payload='{"report": "daily"}')
    assert (created.schedule_name, created.enable, created.payload) == (
        "s", True, '{"report": "daily"}')
    began = time.monotonic()
    first = cloud.wait_for_schedule("nightly", "s")
    second = cloud.wait_for_schedule("nightly", "s")
    elapsed = time.monotonic() - began
    assert elapsed < 5  # two virtual days
    assert _utc(first["StartedTime"]) == datetime(2026, 3, 1, 8, tzinfo=timezone.utc)
    assert _utc(second["StartedTime"]) == datetime(2026, 3, 2, 8, tzinfo=timezone.utc)
    assert json.loads(first["Input"]) == {"report": "daily"}
    assert cloud.wait_for_execution("nightly", first["Name"])["Status"] == "Succeeded"
    assert len(_executions(client)) == 2


def test_describe_update_list_and_delete(cloud) -> None:
    client = cloud.fnf_client()
    _create(client, "0 0 8 * * *", name="b")
    _create(client, "@every 5m", name="a", enable=None)
    described = client.describe_schedule(fnf.DescribeScheduleRequest(
        flow_name="nightly", schedule_name="a")).body
    assert described.enable is False  # Enable omitted: created disabled (docs/emulator.md)
    updated = client.update_schedule(fnf.UpdateScheduleRequest(
        flow_name="nightly", schedule_name="a", enable=True, description="five",
        payload='{"x": 1}')).body
    assert (updated.cron_expression, updated.enable, updated.description) == (
        "@every 5m", True, "five")
    page = client.list_schedules(fnf.ListSchedulesRequest(flow_name="nightly", limit=1)).body
    assert [s.schedule_name for s in page.schedules] == ["a"] and page.next_token == "b"
    rest = client.list_schedules(fnf.ListSchedulesRequest(
        flow_name="nightly", limit=1, next_token=page.next_token)).body
    assert [s.schedule_name for s in rest.schedules] == ["b"] and rest.next_token is None
    client.delete_schedule(fnf.DeleteScheduleRequest(flow_name="nightly", schedule_name="b"))
    gone = _error(client.describe_schedule, fnf.DescribeScheduleRequest(
        flow_name="nightly", schedule_name="b"))
    assert (gone.code, gone.status_code) == ("ScheduleNotExists", 404)
    taken = _error(client.create_schedule, fnf.CreateScheduleRequest(
        flow_name="nightly", schedule_name="a", cron_expression="@every 1m"))
    assert taken.code == "ScheduleAlreadyExists"
    assert _error(client.create_schedule, fnf.CreateScheduleRequest(
        flow_name="missing", schedule_name="a", cron_expression="@every 1m")).code \
        == "FlowNotExists"


@pytest.mark.parametrize("cron", [
    "*/10 * * * * *",  # seconds: a fixed number only (one fire a minute at most)
    "0 * * * *",  # five fields
    "0 0 8 L * *", "0 0 8 ? * 5#3", "0 0 8 15W * *",  # L, #, W: not in the dialect
    "0 61 * * * *", "0 0 25 * * *", "0 0 8 * 13 *",  # out of range
    "@every 30s", "@every 0m", "@daily", "CRON_TZ=Mars/Olympus 0 0 8 * * *",
    "0 0 0 30 2 *",  # never fires
])
def test_expressions_outside_the_dialect_are_refused(cloud, cron: str) -> None:
    err = _error(cloud.fnf_client().create_schedule, fnf.CreateScheduleRequest(
        flow_name="nightly", schedule_name="bad", cron_expression=cron, enable=True))
    assert (err.code, err.status_code) == ("InvalidArgument", 400)
    assert "CronExpression" in err.message


@pytest.mark.parametrize("payload", ["[1, 2]", "not json", '"text"'])
def test_payload_must_be_a_json_object(cloud, payload: str) -> None:
    err = _error(cloud.fnf_client().create_schedule, fnf.CreateScheduleRequest(
        flow_name="nightly", schedule_name="bad", cron_expression="@every 1m",
        payload=payload))
    assert err.code == "InvalidArgument" and "Payload" in err.message


def test_time_zone_and_weekday_fields(cloud) -> None:
    client = cloud.fnf_client()
    _create(client, "CRON_TZ=Asia/Shanghai 0 30 12 ? * MON-FRI")
    fired = cloud.wait_for_schedule("nightly", "s")
    # 12:30 in Shanghai on Monday 2026-03-02 (START is a Sunday) is 04:30 UTC
    assert _utc(fired["StartedTime"]) == datetime(2026, 3, 2, 4, 30, tzinfo=timezone.utc)


def test_advancing_past_several_instants_fires_each(cloud) -> None:
    client = cloud.fnf_client()
    _create(client, "@every 60m")
    with cloud.auto_advance_disabled():
        cloud.advance(3 * 3600 + 60)
        cloud.wait_for_schedule("nightly", "s", fires=3)
    starts = sorted(_utc(e.started_time).timestamp() for e in _executions(client))
    assert len(starts) == 3  # each passed instant fired (the clock was already past them)


def test_a_disabled_schedule_never_fires_and_a_deleted_flow_takes_its_schedules(cloud) -> None:
    client = cloud.fnf_client()
    _create(client, "@every 1m", enable=False)
    with pytest.raises(ValueError, match="disabled"):
        cloud.wait_for_schedule("nightly", "s")
    cloud.advance(600)
    assert _executions(client) == []
    client.update_schedule(fnf.UpdateScheduleRequest(flow_name="nightly", schedule_name="s",
                                                     enable=True))
    client.delete_flow(fnf.DeleteFlowRequest(name="nightly"))
    _flow(client)
    assert client.list_schedules(fnf.ListSchedulesRequest(flow_name="nightly")).body \
        .schedules == []
    cloud.advance(600)
    assert _executions(client) == []


def test_schedules_survive_a_restart_and_missed_fires_are_coalesced(tmp_path: Path) -> None:
    with mock_cloud(clock=VirtualClock(START), state_dir=tmp_path) as cloud:
        client = cloud.fnf_client()
        _flow(client)
        _create(client, "@every 10m")
        first = cloud.wait_for_schedule("nightly", "s")
    # down for an hour: five instants missed
    with mock_cloud(clock=VirtualClock(START + 3600 + 30), state_dir=tmp_path) as cloud:
        client = cloud.fnf_client()
        # it fires at start-up, maybe before this call: wait for its second fire in all
        caught_up = cloud.wait_for_schedule("nightly", "s", fires=2, timeout=10)
        names = {e.name for e in _executions(client)}
        described = client.describe_schedule(fnf.DescribeScheduleRequest(
            flow_name="nightly", schedule_name="s")).body
        assert described.enable is True
    assert _utc(first["StartedTime"]).timestamp() == START + 600
    assert names == {first["Name"], caught_up["Name"]}  # one execution for the missed hour
