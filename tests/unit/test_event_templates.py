"""Trigger specs read from s.yaml props, and the events --event-template builds from them."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import cbor2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.config.fc3_triggers import TriggerSpec, read_triggers
from deployer.config.problems import ProblemLog
from deployer.config.props import PropReader
from deployer.core.event_templates import EventContext, build_event, template_names
from deployer.errors import InvalidInputError

ACCOUNT = "1234567890123456"
NOW = datetime(2025, 3, 4, 5, 6, 7, 890000, tzinfo=timezone.utc)
TRIGGERS = [
    {"triggerName": "web", "triggerType": "http",
     "triggerConfig": {"authType": "function", "methods": ["GET", "POST"]}},
    {"triggerName": "nightly", "triggerType": "timer",
     "triggerConfig": {"cronExpression": "CRON_TZ=Asia/Shanghai 0 0 2 * * *",
                       "enable": True, "payload": "rebuild"}},
    {"triggerName": "uploads", "triggerType": "oss",
     "sourceArn": f"acs:oss:cn-shanghai:{ACCOUNT}:orders-bucket",
     "triggerConfig": {"events": ["oss:ObjectCreated:PutObject"],
                       "filter": {"key": {"prefix": "in/", "suffix": ".csv"}}}},
    {"triggerName": "audit", "triggerType": "log",
     "sourceArn": f"acs:log:cn-hangzhou:{ACCOUNT}:project/orders-logs",
     "triggerConfig": {"sourceConfig": {"logstore": "access"},
                       "logConfig": {"project": "orders-logs", "logstore": "trigger"},
                       "functionParameter": {"team": "orders"}}},
    {"triggerName": "topic", "triggerType": "mns_topic",
     "sourceArn": f"acs:mns:cn-hangzhou:{ACCOUNT}:/topics/orders",
     "triggerConfig": {"notifyContentFormat": "JSON"}},
    {"triggerName": "cdn", "triggerType": "cdn_events", "sourceArn": f"acs:cdn:*:{ACCOUNT}",
     "triggerConfig": {"eventName": "CachedObjectsRefreshed", "eventVersion": "1.0.0",
                       "filter": {"domain": ["cdn.example.org"]}}},
    {"triggerName": "rows", "triggerType": "tablestore",
     "sourceArn": f"acs:ots:cn-hangzhou:{ACCOUNT}:instance/shop/table/orders"},
    {"triggerName": "bus", "triggerType": "eventbridge",
     "triggerConfig": {"eventSourceConfig": {"eventSourceType": "MNS"},
                       "runOptions": {"batchWindow": {"countBasedWindow": 10}}}},
]


def _read(items: Any) -> tuple[tuple[TriggerSpec, ...], list[str]]:
    log = ProblemLog("s.yaml", {})
    found = read_triggers(PropReader({"triggers": items}, (), log), {}, None)
    return found, [f"{p.path}: {p.message}" for p in log.errors]


def _context(triggers: tuple[TriggerSpec, ...] = ()) -> EventContext:
    return EventContext("orders", ACCOUNT, "cn-hangzhou", triggers, NOW)


def test_every_fc3_trigger_type_is_read() -> None:
    specs, errors = _read(TRIGGERS)
    assert errors == []
    assert [s.type for s in specs] == ["http", "timer", "oss", "log", "mns_topic",
                                       "cdn_events", "tablestore", "eventbridge"]
    assert specs[0].wire()["triggerConfig"] == {"authType": "function",
                                                "methods": ["GET", "POST"],
                                                "disableURLInternet": False}
    assert specs[2].qualifier == "LATEST" and specs[2].description == ""


@pytest.mark.parametrize(("item", "message"), [
    ({"triggerName": "t", "triggerType": "ftp", "triggerConfig": {}},
     "triggers[0].triggerType: must be one of http"),
    ({"triggerName": "t", "triggerType": "oss", "sourceArn": "bucket",
      "triggerConfig": {"events": ["oss:ObjectCreated:PutObject"]}},
     "triggers[0].sourceArn: must be acs:oss:<region>:<account>:<bucket>"),
    ({"triggerName": "t", "triggerType": "http",
      "triggerConfig": {"authType": "jwt", "methods": ["GET"]}},
     "triggers[0].triggerConfig.authType: must be one of anonymous, function (got 'jwt')"),
    ({"triggerName": "t", "triggerType": "timer", "triggerConfig": {"cronExpression": "daily"}},
     "triggers[0].triggerConfig.cronExpression: must be '@every <N>m' or six fields"),
    ({"triggerName": "9t", "triggerType": "tablestore"}, "triggers[0].triggerName: must start"),
])
def test_bad_triggers_are_refused_by_field(item: dict[str, Any], message: str) -> None:
    _, errors = _read([item])
    assert any(message in e for e in errors), errors


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(
    ["triggerName", "triggerType", "triggerConfig", "sourceArn", "qualifier", "x"]),
    st.one_of(st.text(max_size=8), st.sampled_from(["http", "timer", "oss", "log"]),
              st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3),
              st.integers(), st.none())), max_size=4))
def test_any_triggers_value_is_read_or_refused_without_raising(items: Any) -> None:
    specs, errors = _read(items)
    assert len(specs) <= len(items)
    assert all(isinstance(s, TriggerSpec) for s in specs)
    assert len(specs) == len(items) or errors


def test_oss_event_uses_the_trigger_bucket_and_key_filter() -> None:
    specs, _ = _read(TRIGGERS)
    event = json.loads(build_event("oss:ObjectCreated:PutObject", _context(specs)))
    (record,) = event["events"]
    assert record["eventName"] == "ObjectCreated:PutObject"
    assert record["eventSource"] == "acs:oss" and record["region"] == "cn-shanghai"
    assert record["oss"]["bucket"]["name"] == "orders-bucket"
    assert record["oss"]["bucket"]["arn"] == f"acs:oss:cn-shanghai:{ACCOUNT}:orders-bucket"
    key = record["oss"]["object"]["key"]
    assert key.startswith("in/") and key.endswith(".csv")
    assert record["eventTime"] == "2025-03-04T05:06:07.890Z"


def test_timer_http_log_mns_and_cdn_events_follow_their_triggers() -> None:
    specs, _ = _read(TRIGGERS)
    ctx = _context(specs)
    assert json.loads(build_event("timer", ctx)) == {
        "triggerTime": "2025-03-04T05:06:07Z", "triggerName": "nightly", "payload": "rebuild"}
    http = json.loads(build_event("http:POST", ctx))
    assert http["version"] == "v1" and http["requestContext"]["http"]["method"] == "POST"
    with pytest.raises(InvalidInputError, match="does not take DELETE"):
        build_event("http:DELETE", ctx)
    log = json.loads(build_event("log", ctx))
    assert log["source"]["projectName"] == "orders-logs"
    assert log["source"]["logstoreName"] == "access" and log["parameter"] == {"team": "orders"}
    assert json.loads(build_event("mns_topic", ctx))["TopicName"] == "orders"
    cdn = json.loads(build_event("cdn_events:CachedObjectsRefreshed", ctx))["events"][0]
    assert cdn["resource"]["domain"] == "cdn.example.org"


def test_tablestore_events_are_cbor_and_eventbridge_batches_are_lists() -> None:
    specs, _ = _read(TRIGGERS)
    rows = cbor2.loads(build_event("tablestore", _context(specs)))
    assert rows["Version"] == "Sync-v1" and rows["Records"][0]["Type"] == "PutRow"
    batch = json.loads(build_event("eventbridge", _context(specs)))
    assert isinstance(batch, list) and batch[0]["specversion"] == "1.0"
    single = json.loads(build_event("eventbridge", _context()))
    assert single["source"] == "acs.custom"


def test_every_listed_template_builds_without_triggers() -> None:
    for name in template_names():
        assert build_event(name, _context())


def test_unknown_templates_name_the_known_ones() -> None:
    with pytest.raises(InvalidInputError) as info:
        build_event("s3:ObjectCreated", _context())
    assert "oss:ObjectCreated:PutObject" in (info.value.hint or "")
    with pytest.raises(InvalidInputError, match="unknown OSS event"):
        build_event("oss:ObjectCreated:Teleport", _context())
