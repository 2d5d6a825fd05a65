"""fc3's ``triggers``: one :class:`TriggerSpec` per entry, checked per trigger type.

The types are fc3's (devsapp/fc3 ``TriggerType``): ``http``, ``timer``, ``oss``, ``log``,
``mns_topic``, ``cdn_events``, ``tablestore`` and ``eventbridge``; the shape of each
``triggerConfig`` is the one fc3 declares (``src/interface/trigger.ts``) and FC's
CreateTrigger takes (as a JSON string). ``qualifier`` defaults to ``LATEST`` and
``description`` to ``''`` (fc3's ``FC_TRIGGER_DEFAULT_CONFIG``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from deployer.config.props import PropReader, type_name
from deployer.config.variables import BROKEN
from deployer.plain_values import plain_data

__all__ = ["HTTP_METHODS", "OSS_EVENTS", "TRIGGER_TYPES", "TriggerSpec", "read_triggers"]

TRIGGER_TYPES = ("http", "timer", "oss", "log", "mns_topic", "cdn_events", "tablestore",
                 "eventbridge")
HTTP_METHODS = ("HEAD", "DELETE", "POST", "GET", "OPTIONS", "PUT", "PATCH")
OSS_EVENTS = (
    "oss:ObjectCreated:*", "oss:ObjectCreated:PutObject", "oss:ObjectCreated:PostObject",
    "oss:ObjectCreated:CompleteMultipartUpload", "oss:ObjectCreated:PutSymlink",
    "oss:ObjectCreated:CopyObject", "oss:ObjectCreated:InitiateMultipartUpload",
    "oss:ObjectCreated:UploadPart", "oss:ObjectCreated:UploadPartCopy",
    "oss:ObjectCreated:AppendObject", "oss:ObjectRemoved:DeleteObject",
    "oss:ObjectRemoved:DeleteObjects", "oss:ObjectRemoved:AbortMultipartUpload",
    "oss:ObjectModified:UpdateObjectMeta")
CDN_EVENTS = ("CachedObjectsRefreshed", "CachedObjectsPushed", "CachedObjectsBlocked",
              "LogFileCreated", "CdnDomainStarted", "CdnDomainStopped", "CdnDomainAdded",
              "CdnDomainDeleted")
TRIGGER_NAME = r"[A-Za-z_][A-Za-z0-9_-]{0,127}"
MAX_TRIGGERS = 50  # per function (fc3-api.md §8.10)
#: sourceArn of each event source type (the ARN forms FC's trigger docs give).
SOURCE_ARNS = {
    "oss": (r"acs:oss:[a-z0-9-]+:\d+:[a-z0-9][a-z0-9-]{1,61}[a-z0-9]",
            "acs:oss:<region>:<account>:<bucket>"),
    "log": (r"acs:log:[a-z0-9-]+:\d+:project/[a-z0-9][a-z0-9-]{1,61}[a-z0-9]",
            "acs:log:<region>:<account>:project/<project>"),
    "mns_topic": (r"acs:mns:[a-z0-9-]+:\d+:/topics/[A-Za-z0-9-]{1,256}",
                  "acs:mns:<region>:<account>:/topics/<topic>"),
    "cdn_events": (r"acs:cdn:\*:\d+", "acs:cdn:*:<account>"),
    "tablestore": (r"acs:ots:[a-z0-9-]+:\d+:instance/[A-Za-z0-9-]+/table/[A-Za-z0-9_]+",
                   "acs:ots:<region>:<account>:instance/<instance>/table/<table>"),
}
_CRON = re.compile(r"^(CRON_TZ=\S+\s+)?(@every\s+\d+m|\S+(\s+\S+){5})$")


@dataclass(frozen=True, slots=True)
class TriggerSpec:
    """One trigger of a function; ``config`` is its ``triggerConfig`` (API names)."""

    name: str
    type: str
    config: Mapping[str, Any]
    qualifier: str = "LATEST"
    description: str = ""
    source_arn: str = ""
    invocation_role: str = ""

    def wire(self) -> dict[str, Any]:
        """The CreateTriggerInput body (``triggerConfig`` still an object)."""
        out: dict[str, Any] = {"triggerName": self.name, "triggerType": self.type,
                               "qualifier": self.qualifier, "description": self.description,
                               "triggerConfig": plain_data(self.config)}
        if self.source_arn:
            out["sourceArn"] = self.source_arn
        if self.invocation_role:
            out["invocationRole"] = self.invocation_role
        return out


def _frozen(value: Any) -> Any:
    if isinstance(value, Mapping):
        return MappingProxyType({str(k): _frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    return value


def read_triggers(r: PropReader, v: dict[str, Any], c: Any) -> Any:
    """``triggers`` -> a tuple of :class:`TriggerSpec` (problems reported by field)."""
    items = r.sequence("triggers")
    if items is None:
        return ()
    out: list[TriggerSpec] = []
    for i, item in enumerate(items):
        if item is BROKEN:
            continue
        if not isinstance(item, Mapping):
            r.error(("triggers", i), f"must be a map (got {type_name(item)})")
            continue
        spec = _trigger(PropReader(item, (*r.path, "triggers", i), r.log))
        if spec is None:
            continue
        if any(t.name == spec.name for t in out):
            r.error(("triggers", i, "triggerName"), f"trigger {spec.name!r} is listed twice")
        else:
            out.append(spec)
    if len(items) > MAX_TRIGGERS:
        r.error("triggers", f"at most {MAX_TRIGGERS} triggers per function (got {len(items)})")
    return tuple(out)


def _trigger(t: PropReader) -> TriggerSpec | None:
    t.check_keys(("triggerName", "triggerType", "triggerConfig", "qualifier", "description",
                  "sourceArn", "invocationRole"), {}, "trigger")
    name = t.string("triggerName", required=True, pattern=TRIGGER_NAME,
                    what="must start with a letter or _ and use letters, digits, _ and - "
                    "(1-128 chars)")
    kind = t.one_of("triggerType", TRIGGER_TYPES, default="")
    if not kind and t.props.get("triggerType") in (None, ""):
        t.error("triggerType", f"required: one of {', '.join(TRIGGER_TYPES)}")
    qualifier = t.string("qualifier", default="LATEST", pattern=r"LATEST|[0-9]+|"
                         r"[A-Za-z_][A-Za-z0-9_-]{0,127}", what="must be LATEST, a version or "
                         "an alias") or "LATEST"
    description = t.string("description", default="") or ""
    source = t.string("sourceArn", default="") or ""
    role = t.string("invocationRole", default="", pattern=r"acs:ram::\d+:role/.+",
                    what="must be a role ARN (acs:ram::<account>:role/<name>)") or ""
    raw = t.props.get("triggerConfig")
    config = t.mapping("triggerConfig") if raw is not None else None
    if config is None and kind not in ("tablestore", ""):
        if raw is None:
            t.error("triggerConfig", f"required for a {kind} trigger")
        return None
    checked = _CHECKS[kind](PropReader(config or {}, (*t.path, "triggerConfig"), t.log)) \
        if kind else None
    if kind in SOURCE_ARNS:
        pattern, shape = SOURCE_ARNS[kind]
        if not source:
            t.error("sourceArn", f"required for a {kind} trigger: {shape}")
        elif not re.fullmatch(pattern, source):
            t.error("sourceArn", f"must be {shape} (got {source!r})")
    if not (name and kind) or checked is None:
        return None
    return TriggerSpec(name, kind, _frozen(checked), qualifier, description, source, role)


def _http(c: PropReader) -> dict[str, Any] | None:
    c.check_keys(("authType", "methods", "disableURLInternet"), {
        "authConfig": "JWT authentication is not deployed by this toolkit (the emulator "
                      "checks anonymous and function); use authType anonymous or function"},
        "http triggerConfig")
    auth = c.one_of("authType", ("anonymous", "function"), default="anonymous")
    if c.props.get("authType") == "jwt":
        return None
    methods = c.sequence("methods")
    if not methods:
        c.error("methods", f"required: a list of {', '.join(HTTP_METHODS)}")
        return None
    bad = [m for m in methods if m not in HTTP_METHODS]
    if bad:
        c.error("methods", f"unknown method {bad[0]!r}; use {', '.join(HTTP_METHODS)}")
        return None
    return {"authType": auth, "methods": list(dict.fromkeys(methods)),
            "disableURLInternet": c.boolean("disableURLInternet", default=False)}


def _timer(c: PropReader) -> dict[str, Any] | None:
    c.check_keys(("cronExpression", "enable", "payload"), {}, "timer triggerConfig")
    cron = c.string("cronExpression", required=True)
    if cron is not None and not _CRON.match(cron.strip()):
        c.error("cronExpression", "must be '@every <N>m' or six fields 'Seconds Minutes Hours "
                f"Day-of-month Month Day-of-week' (UTC, or CRON_TZ=<zone> first) (got {cron!r})")
        return None
    payload = c.props.get("payload", "")
    if not isinstance(payload, str):
        c.error("payload", f"must be a string (got {type_name(payload)})")
        return None
    if len(payload.encode()) > 128 * 1024:
        c.error("payload", "must be at most 128 KB (FC's asynchronous payload limit)")
        return None
    if cron is None:
        return None
    return {"cronExpression": cron, "enable": c.boolean("enable", default=True),
            "payload": payload}


def _oss(c: PropReader) -> dict[str, Any] | None:
    c.check_keys(("events", "filter"), {}, "oss triggerConfig")
    events = c.sequence("events")
    if not events:
        c.error("events", "required: the OSS events, e.g. [oss:ObjectCreated:PutObject]")
        return None
    bad = [e for e in events if e not in OSS_EVENTS]
    if bad:
        c.error("events", f"unknown OSS event {bad[0]!r}")
        return None
    key: Mapping[str, Any] = {}
    flt = c.mapping("filter")
    if flt is not None:
        inner = flt.get("key") or {}
        key = inner if isinstance(inner, Mapping) else {}
    return {"events": list(events), "filter": {"key": {
        "prefix": str(key.get("prefix") or ""), "suffix": str(key.get("suffix") or "")}}}


def _log(c: PropReader) -> dict[str, Any] | None:
    c.check_keys(("jobConfig", "logConfig", "sourceConfig", "functionParameter", "enable"), {},
                 "log triggerConfig")
    source = c.mapping("sourceConfig") or {}
    logs = c.mapping("logConfig") or {}
    if not source.get("logstore"):
        c.error("sourceConfig", "required: {logstore: <the logstore the trigger reads>}")
    if not (logs.get("project") and logs.get("logstore")):
        c.error("logConfig", "required: {project, logstore} where the trigger writes its logs")
    if not source.get("logstore") or not (logs.get("project") and logs.get("logstore")):
        return None
    job = c.mapping("jobConfig") or {}
    return {"sourceConfig": {"logstore": str(source["logstore"])},
            "logConfig": {"project": str(logs["project"]), "logstore": str(logs["logstore"])},
            "jobConfig": {"maxRetryTime": int(job.get("maxRetryTime") or 3),
                          "triggerInterval": int(job.get("triggerInterval") or 60)},
            "functionParameter": dict(c.mapping("functionParameter") or {}),
            "enable": c.boolean("enable", default=True)}


def _mns(c: PropReader) -> dict[str, Any] | None:
    c.check_keys(("notifyContentFormat", "notifyStrategy", "filterTag"), {},
                 "mns_topic triggerConfig")
    out = {"notifyContentFormat": c.one_of("notifyContentFormat", ("STREAM", "JSON"),
                                           default="STREAM"),
           "notifyStrategy": c.one_of("notifyStrategy", ("BACKOFF_RETRY",
                                                         "EXPONENTIAL_DECAY_RETRY"),
                                      default="BACKOFF_RETRY")}
    tag = c.string("filterTag")
    if tag:
        out["filterTag"] = tag
    return out


def _cdn(c: PropReader) -> dict[str, Any] | None:
    c.check_keys(("eventName", "eventVersion", "notes", "filter"), {}, "cdn_events "
                 "triggerConfig")
    name = c.one_of("eventName", CDN_EVENTS, default="")
    flt = c.mapping("filter") or {}
    domains = flt.get("domain")
    if not name:
        c.error("eventName", f"required: one of {', '.join(CDN_EVENTS)}")
    if not isinstance(domains, list) or not domains:
        c.error("filter", "required: {domain: [<the CDN domains>]}")
    if not name or not isinstance(domains, list) or not domains:
        return None
    return {"eventName": name, "eventVersion": c.string("eventVersion", default="1.0.0"),
            "notes": c.string("notes", default="") or "",
            "filter": {"domain": [str(d) for d in domains]}}


def _tablestore(c: PropReader) -> dict[str, Any] | None:
    c.check_keys((), {}, "tablestore triggerConfig")
    return {}


def _eventbridge(c: PropReader) -> dict[str, Any] | None:
    c.check_keys(("triggerEnable", "asyncInvocationType", "eventRuleFilterPattern",
                  "eventSourceConfig", "eventSinkConfig", "runOptions"), {},
                 "eventbridge triggerConfig")
    source = c.mapping("eventSourceConfig")
    if source is None or not isinstance(source.get("eventSourceType"), str):
        c.error("eventSourceConfig", "required: {eventSourceType, eventSourceParameters}")
        return None
    pattern = c.props.get("eventRuleFilterPattern", "{}")
    return {"triggerEnable": c.boolean("triggerEnable", default=True),
            "asyncInvocationType": c.boolean("asyncInvocationType", default=False),
            "eventRuleFilterPattern": pattern if isinstance(pattern, str) else
            json.dumps(plain_data(pattern)),
            "eventSourceConfig": plain_data(source),
            **{k: plain_data(c.props[k]) for k in ("eventSinkConfig", "runOptions")
               if isinstance(c.props.get(k), Mapping)}}


_CHECKS = {"http": _http, "timer": _timer, "oss": _oss, "log": _log, "mns_topic": _mns,
           "cdn_events": _cdn, "tablestore": _tablestore, "eventbridge": _eventbridge}
