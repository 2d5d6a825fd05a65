"""Sample events of FC's triggers, built for a function's own trigger configuration.

``deploy invoke FUNCTION --event-template oss:ObjectCreated:PutObject`` sends the event an
OSS trigger would send for that object event, with the bucket, key prefix and suffix of the
function's OSS trigger in s.yaml (placeholders when it has none), so a handler's event parsing
is tested offline. The shapes are FC's documented ones ("Trigger event format"; the aliyun
fc-runtime-go-sdk ``events`` package; CONFIRMED), except where marked INFERRED:

* ``http[:METHOD]`` — the HTTP trigger's ``v1`` event for built-in runtimes;
* ``timer`` — ``{triggerTime, triggerName, payload}``;
* ``oss:<event>`` — ``{"events": [...]}`` with ``eventName`` without the ``oss:`` prefix;
* ``log`` — the Log Service trigger's job event (``cursorTime``, ``source``, ``taskId``);
* ``mns_topic`` — JSON (``TopicOwner``, ``Message``, ...) or the raw message (``STREAM``);
* ``cdn_events:<event>`` — ``{"events": [...]}`` with ``eventParameter``;
* ``tablestore`` — CBOR of ``{"Version": "Sync-v1", "Records": [...]}``;
* ``eventbridge`` — one CloudEvents 1.0 object (a list when the trigger batches) [INFERRED].
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from deployer.config.fc3_triggers import CDN_EVENTS, OSS_EVENTS, TriggerSpec
from deployer.errors import InvalidInputError

__all__ = ["EventContext", "build_event", "template_names"]


@dataclass(frozen=True, slots=True)
class EventContext:
    """Where the event comes from: the function, its account and region, its triggers in
    s.yaml, and the instant it happens."""

    function: str
    account_id: str
    region: str
    triggers: Sequence[TriggerSpec] = ()
    now: datetime = datetime(2024, 1, 1, tzinfo=timezone.utc)

    def trigger(self, kind: str) -> TriggerSpec | None:
        return next((t for t in self.triggers if t.type == kind), None)

    def stamp(self, millis: bool = False) -> str:
        text = self.now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        return f"{text}.{self.now.microsecond // 1000:03d}Z" if millis else f"{text}Z"

    def digest(self, *parts: str) -> str:
        return hashlib.sha1("/".join((self.function, *parts)).encode()).hexdigest()


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=2).encode("utf-8")


def _http(ctx: EventContext, method: str) -> bytes:
    trigger = ctx.trigger("http")
    if trigger is not None and method not in trigger.config.get("methods", (method,)):
        allowed = ", ".join(trigger.config.get("methods", ()))
        raise InvalidInputError(f"the HTTP trigger {trigger.name} of {ctx.function} does not "
                                f"take {method} (it takes {allowed})")
    prefix = hashlib.sha1(ctx.function.encode()).hexdigest()[:12]
    epoch = int(ctx.now.timestamp() * 1000)
    return _json({
        "version": "v1", "rawPath": "/", "body": "", "isBase64Encoded": False,
        "headers": {"Accept": "*/*", "User-Agent": "curl/8.0"}, "queryParameters": {},
        "requestContext": {
            "accountId": ctx.account_id, "domainName": f"{prefix}.{ctx.region}.fcapp.run",
            "domainPrefix": prefix,
            "http": {"method": method, "path": "/", "protocol": "HTTP/1.1",
                     "sourceIp": "127.0.0.1", "userAgent": "curl/8.0"},
            "requestId": f"1-{int(ctx.now.timestamp()):08x}-{ctx.digest('http')[:24]}",
            "time": ctx.stamp(), "timeEpoch": str(epoch)}})


def _timer(ctx: EventContext, _: str) -> bytes:
    trigger = ctx.trigger("timer")
    return _json({"triggerTime": ctx.stamp(),
                  "triggerName": trigger.name if trigger else "timer-trigger",
                  "payload": str(trigger.config.get("payload", "")) if trigger else ""})


def _oss(ctx: EventContext, event: str) -> bytes:
    name = f"oss:{event}"
    if name not in OSS_EVENTS or event.endswith("*"):
        raise InvalidInputError(f"unknown OSS event {name!r}", hint="one of " + ", ".join(
            e for e in OSS_EVENTS if not e.endswith("*")))
    trigger = ctx.trigger("oss")
    bucket, region = "my-bucket", ctx.region
    key = {"prefix": "", "suffix": ""}
    if trigger is not None:
        _, _, region, _, bucket = trigger.source_arn.split(":", 4)
        key = dict(trigger.config.get("filter", {}).get("key", key))
    created = event.startswith("ObjectCreated")
    size = 1024 if created else 0
    obj: dict[str, Any] = {
        "deltaSize": size if created else -1024,
        "eTag": ctx.digest(bucket, "etag")[:32].upper(),
        "key": f"{key.get('prefix', '')}example{key.get('suffix', '') or '.txt'}",
        "size": size}
    if created:
        obj["objectMeta"] = {"mimeType": "text/plain"}
    return _json({"events": [{
        "eventName": event, "eventSource": "acs:oss", "eventTime": ctx.stamp(millis=True),
        "eventVersion": "1.0",
        "oss": {"bucket": {"arn": f"acs:oss:{region}:{ctx.account_id}:{bucket}",
                           "name": bucket, "ownerIdentity": ctx.account_id},
                "object": obj, "ossSchemaVersion": "1.0", "ruleId": ctx.digest(bucket)},
        "region": region, "requestParameters": {"sourceIPAddress": "127.0.0.1"},
        "responseElements": {"requestId": ctx.digest(bucket, "request")[:24].upper()},
        "userIdentity": {"principalId": ctx.account_id}}]})


def _log(ctx: EventContext, _: str) -> bytes:
    trigger = ctx.trigger("log")
    project, logstore, parameter = "my-project", "my-logstore", {}
    if trigger is not None:
        project = trigger.source_arn.rsplit("/", 1)[-1]
        logstore = str(trigger.config["sourceConfig"]["logstore"])
        parameter = dict(trigger.config.get("functionParameter") or {})
    cursor = base64.b64encode(str(int(ctx.now.timestamp() * 1000)).encode()).decode()
    return _json({
        "cursorTime": int(ctx.now.timestamp()), "jobName": ctx.digest("log"),
        "parameter": parameter,
        "source": {"beginCursor": cursor, "endCursor": cursor,
                   "endpoint": f"http://{ctx.region}-intranet.log.aliyuncs.com",
                   "logstoreName": logstore, "projectName": project, "shardId": 0},
        "taskId": str(uuid.UUID(ctx.digest("task")[:32]))})


def _mns(ctx: EventContext, _: str) -> bytes:
    trigger = ctx.trigger("mns_topic")
    message = "hello topic"
    if trigger is not None and trigger.config.get("notifyContentFormat") == "STREAM":
        return message.encode()
    topic = trigger.source_arn.rsplit("/", 1)[-1] if trigger else "my-topic"
    return _json({
        "TopicOwner": ctx.account_id, "Message": message, "Subscriber": ctx.account_id,
        "PublishTime": int(ctx.now.timestamp() * 1000),
        "SubscriptionName": trigger.name if trigger else "my-subscription",
        "MessageMD5": hashlib.md5(message.encode()).hexdigest().upper(),
        "TopicName": topic, "MessageId": ctx.digest("mns")[:32].upper()})


def _cdn(ctx: EventContext, event: str) -> bytes:
    if event not in CDN_EVENTS:
        raise InvalidInputError(f"unknown CDN event {event!r}", hint="one of "
                                + ", ".join(CDN_EVENTS))
    trigger = ctx.trigger("cdn_events")
    domain = str(trigger.config["filter"]["domain"][0]) if trigger else "example.com"
    version = str(trigger.config.get("eventVersion") or "1.0.0") if trigger else "1.0.0"
    epoch = int(ctx.now.timestamp())
    return _json({"events": [{
        "eventName": event, "eventVersion": version, "eventSource": "cdn",
        "region": ctx.region, "eventTime": ctx.now.astimezone(timezone.utc).isoformat(),
        "traceId": str(uuid.UUID(ctx.digest("cdn")[:32])), "resource": {"domain": domain},
        "eventParameter": {"objectPath": ["/example.txt"], "createTime": epoch,
                           "domain": domain, "completeTime": epoch + 5, "objectType": "File",
                           "taskId": int(ctx.digest("cdn-task")[:8], 16)},
        "userIdentity": {"aliUid": ctx.account_id}}]})


def _tablestore(ctx: EventContext, _: str) -> bytes:
    import cbor2

    micros = int(ctx.now.timestamp() * 1_000_000)
    return bytes(cbor2.dumps({"Version": "Sync-v1", "Records": [{
        "Type": "PutRow", "Info": {"Timestamp": micros},
        "PrimaryKey": [{"ColumnName": "id", "Value": 1}],
        "Columns": [{"Type": "Put", "ColumnName": "value", "Value": "hello",
                     "Timestamp": micros // 1000}]}]}))


def _eventbridge(ctx: EventContext, _: str) -> bytes:
    trigger = ctx.trigger("eventbridge")
    source = "acs.custom"
    if trigger is not None:
        source = str(trigger.config["eventSourceConfig"].get("eventSourceType") or source)
    event = {"id": str(uuid.UUID(ctx.digest("eb")[:32])), "source": source,
             "specversion": "1.0", "type": f"{source}:event",
             "datacontenttype": "application/json; charset=utf-8",
             "subject": f"acs:eventbridge:{ctx.region}:{ctx.account_id}:eventbus/default",
             "time": ctx.stamp(millis=True), "aliyunaccountid": ctx.account_id,
             "aliyunpublishtime": ctx.stamp(millis=True), "aliyuneventbusname": "default",
             "aliyunregionid": ctx.region, "data": {"message": "hello"}}
    batched = trigger is not None and bool(
        (trigger.config.get("runOptions") or {}).get("batchWindow"))
    return _json([event] if batched else event)


_BUILDERS: dict[str, tuple[Callable[[EventContext, str], bytes], str]] = {
    "http": (_http, "GET"), "timer": (_timer, ""), "oss": (_oss, ""), "log": (_log, ""),
    "mns_topic": (_mns, ""), "cdn_events": (_cdn, "CachedObjectsRefreshed"),
    "tablestore": (_tablestore, ""), "eventbridge": (_eventbridge, ""),
}
_ALIASES = {"sls": "log", "mns": "mns_topic", "cdn": "cdn_events", "ots": "tablestore"}


def template_names() -> list[str]:
    """Every template name ``--event-template`` takes."""
    names = ["http", *(f"http:{m}" for m in ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD",
                                              "OPTIONS")), "timer"]
    names += [e for e in OSS_EVENTS if not e.endswith("*")]
    names += ["log", "mns_topic", *(f"cdn_events:{e}" for e in CDN_EVENTS), "tablestore",
              "eventbridge"]
    return names


def build_event(template: str, ctx: EventContext) -> bytes:
    """The event bytes of ``template`` (``kind[:detail]``, see the module docstring) for the
    function in ``ctx``; InvalidInputError (exit 3) naming the known templates otherwise."""
    kind, _, detail = template.partition(":")
    kind = _ALIASES.get(kind, kind)
    if kind not in _BUILDERS:
        raise InvalidInputError(f"unknown event template {template!r}",
                                hint="templates: " + ", ".join(template_names()))
    builder, default = _BUILDERS[kind]
    if kind == "http":
        detail = (detail or default).upper()
        if detail not in ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"):
            raise InvalidInputError(f"unknown HTTP method {detail!r} in {template!r}")
    elif kind == "oss" and not detail:
        raise InvalidInputError("an OSS template names the event, e.g. "
                                "oss:ObjectCreated:PutObject")
    return builder(ctx, detail or default)
