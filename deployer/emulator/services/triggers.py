"""Function Compute triggers: CRUD, the checks of each type's ``triggerConfig``, and timer
triggers firing on the emulator's clock (no HTTP).

A trigger belongs to a function (FC 3.0 has no services). ``triggerConfig`` travels as JSON
text on the wire and is kept as an object here. Types and shapes: fc3's (devsapp/fc3
``ITrigger``), checked as far as they matter locally; the source ARNs of event triggers are
recorded (the emulator has no OSS, Log Service, MNS, CDN, Tablestore or EventBridge to
connect: ``deploy invoke --event-template`` sends their events).

Timer triggers (FC docs, "Time triggers"; CONFIRMED): the cron dialect of CloudFlow's
schedules (:mod:`.schedule_cron`: ``@every Nm`` or six fields in UTC, ``CRON_TZ=``), fired
while ``enable`` is true, each firing an **asynchronous** invocation of the trigger's
qualifier with the event ``{"triggerTime", "triggerName", "payload"}``; the invocation is
recorded like any other, so ``deploy logs`` shows each firing. The engine's scheduler fires
them like schedules (keys ``(account, region, "fc:" + function, trigger)``), on the virtual
clock too; when time passes several instants at once each fires in turn, up to
:data:`MAX_CATCH_UP`, then the latest only (as schedules). Deleting a function deletes its
triggers [INFERRED: the reference marks FC's FunctionNotEmpty INFERRED; fc3 deletes
triggers before their function].
"""

from __future__ import annotations

import builtins
import dataclasses
import hashlib
import json
import logging
import re
import uuid
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any, Protocol

from deployer.emulator.clock import Clock
from deployer.emulator.records import TriggerKey, TriggerRow
from deployer.emulator.services.errors import (
    AlreadyExists,
    InvalidValue,
    Resource,
    ResourceNotFound,
)
from deployer.emulator.services.schedule_cron import ScheduleExpression, parse_cron
from deployer.emulator.services.schedules import MAX_CATCH_UP
from deployer.emulator.store.trigger_repos import TriggerRepo

__all__ = ["FC_KEY_PREFIX", "MAX_CATCH_UP", "TriggerChanges", "TriggerInput", "TriggerRow",
           "TriggerService"]

log = logging.getLogger("deployer.emulator")
FC_KEY_PREFIX = "fc:"
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,127}$")
TYPES = ("http", "timer", "oss", "log", "mns_topic", "cdn_events", "tablestore", "eventbridge")
TRIGGER_METHODS = ("HEAD", "DELETE", "POST", "GET", "OPTIONS", "PUT", "PATCH")
SOURCED = {"oss": "acs:oss:", "log": "acs:log:", "mns_topic": "acs:mns:", "cdn_events":
           "acs:cdn:", "tablestore": "acs:ots:"}
_MAX_PAYLOAD = 128 * 1024


class TimerSink(Protocol):
    """The engine's schedule mirror (``FlowEngine.schedule_changed``)."""

    def schedule_changed(self, key: tuple[str, str, str, str],
                         next_fire_at: float | None) -> None: ...


Invoke = Callable[[str, str, str, bytes, str], None]
"""(account, region, function, event, qualifier): queue an asynchronous invocation."""
FunctionExists = Callable[[str, str, str], None]
"""Raise NotFound when the function does not exist."""


@dataclasses.dataclass(frozen=True, slots=True)
class TriggerInput:
    """CreateTrigger's fields (snake_case; ``config`` already parsed from JSON)."""

    name: str
    type: str
    config: Mapping[str, Any]
    qualifier: str = "LATEST"
    description: str = ""
    source_arn: str = ""
    invocation_role: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class TriggerChanges:
    """UpdateTrigger's optional fields (None: unchanged)."""

    config: Mapping[str, Any] | None = None
    qualifier: str | None = None
    description: str | None = None
    invocation_role: str | None = None


def check_config(kind: str, config: Mapping[str, Any], source_arn: str) -> dict[str, Any]:
    """The ``triggerConfig`` of a ``kind`` trigger as stored; InvalidValue naming the
    field otherwise."""
    if kind not in TYPES:
        raise InvalidValue(f"triggerType '{kind}' is not supported; valid: "
                           + ", ".join(TYPES), field="triggerType")
    if kind in SOURCED and not source_arn.startswith(SOURCED[kind]):
        raise InvalidValue(f"sourceArn of a {kind} trigger must start with "
                           f"{SOURCED[kind]} (got '{source_arn}')", field="sourceArn")
    out = dict(config)
    if kind == "http":
        auth = out.get("authType", "anonymous")
        if auth not in ("anonymous", "function"):
            raise InvalidValue(f"triggerConfig.authType '{auth}' is not supported by the "
                               "emulator (anonymous or function)", field="triggerConfig")
        methods = out.get("methods")
        if not isinstance(methods, list) or not methods or not all(
                m in TRIGGER_METHODS for m in methods):
            raise InvalidValue("triggerConfig.methods must be a list of "
                               + ", ".join(TRIGGER_METHODS), field="triggerConfig")
        out["authType"] = auth
    elif kind == "timer":
        cron = out.get("cronExpression")
        if not isinstance(cron, str):
            raise InvalidValue("triggerConfig.cronExpression is required",
                               field="triggerConfig")
        parse_cron(cron)
        payload = out.get("payload", "")
        if not isinstance(payload, str) or len(payload.encode()) > _MAX_PAYLOAD:
            raise InvalidValue("triggerConfig.payload must be a string of at most 128 KB",
                               field="triggerConfig")
        out["enable"] = bool(out.get("enable", True))
    elif kind == "oss" and not isinstance(out.get("events"), list):
        raise InvalidValue("triggerConfig.events must be a list of OSS events",
                           field="triggerConfig")
    return out


class TriggerService:
    """Triggers over :class:`TriggerRepo`; timer triggers fire through ``timers``."""

    def __init__(self, repo: TriggerRepo, clock: Clock, function_exists: FunctionExists,
                 invoke: Invoke, timers: TimerSink | None = None) -> None:
        self._repo = repo
        self._clock = clock
        self._exists = function_exists
        self._invoke = invoke
        self._timers = timers

    # --- CRUD ---------------------------------------------------------------------------------

    def create(self, account_id: str, region: str, function: str,
               spec: TriggerInput) -> TriggerRow:
        self._exists(account_id, region, function)
        if not _NAME_RE.match(spec.name):
            raise InvalidValue(f"invalid trigger name '{spec.name}'", field="triggerName")
        config = check_config(spec.type, spec.config, spec.source_arn)
        now = self._clock.now()
        trigger_id = str(uuid.uuid4())
        prefix = f"{function.lower().replace('_', '-')}-" + hashlib.sha1(
            f"{account_id}/{region}/{function}/{spec.name}".encode()).hexdigest()[:10]
        row = TriggerRow(account_id, region, function, spec.name, trigger_id, spec.type,
                         spec.qualifier or "LATEST", spec.description, spec.source_arn,
                         spec.invocation_role, config, prefix, now, now)
        row = dataclasses.replace(row, next_fire_at=self._next(row, now))
        if not self._repo.insert(row):
            raise AlreadyExists(f"trigger '{spec.name}' of function '{function}' already "
                                "exists", Resource.TRIGGER, name=spec.name)
        self._changed(row)
        return row

    def get(self, account_id: str, region: str, function: str, name: str) -> TriggerRow:
        self._exists(account_id, region, function)
        row = self._repo.get((account_id, region, function, name))
        if row is None:
            raise ResourceNotFound(f"trigger '{name}' of function '{function}' does not exist",
                                   Resource.TRIGGER, name=name)
        return row

    def update(self, account_id: str, region: str, function: str, name: str,
               changes: TriggerChanges) -> TriggerRow:
        row = self.get(account_id, region, function, name)
        config = row.config if changes.config is None else check_config(
            row.trigger_type, changes.config, row.source_arn)
        now = max(self._clock.now(), row.modified_at)
        new = dataclasses.replace(
            row, config=config, modified_at=now,
            qualifier=row.qualifier if changes.qualifier is None else changes.qualifier,
            description=row.description if changes.description is None
            else changes.description,
            invocation_role=row.invocation_role if changes.invocation_role is None
            else changes.invocation_role)
        new = dataclasses.replace(new, next_fire_at=self._next(new, now))
        self._repo.update(new)
        self._changed(new)
        return new

    def delete(self, account_id: str, region: str, function: str, name: str) -> None:
        self._exists(account_id, region, function)
        key = (account_id, region, function, name)
        if not self._repo.delete(key):
            raise ResourceNotFound(f"trigger '{name}' of function '{function}' does not exist",
                                   Resource.TRIGGER, name=name)
        self._mirror(key, None)

    def list(self, account_id: str, region: str, function: str, *, prefix: str = "",
             next_token: str = "", limit: int = 20) -> tuple[builtins.list[TriggerRow], str]:
        self._exists(account_id, region, function)
        if not 1 <= limit <= 100:
            raise InvalidValue(f"limit must be between 1 and 100, got {limit}",
                               field="limit")
        rows = self._repo.list(account_id, region, function, prefix=prefix, start=next_token,
                               limit=limit + 1)
        return rows[:limit], rows[limit].name if len(rows) > limit else ""

    def forget_function(self, account_id: str, region: str, function: str) -> None:
        """The function was deleted: its triggers go with it."""
        for key in self._repo.delete_function(account_id, region, function):
            self._mirror(key, None)

    def http_trigger_of(self, account_id: str, region: str, function: str,
                        qualifier: str) -> TriggerRow | None:
        """The function's HTTP trigger for ``qualifier`` (else its first HTTP trigger), which
        a custom domain's route to it is served by; None when it has none."""
        rows = [r for r in self._repo.list(account_id, region, function, prefix="", start="",
                                           limit=1000) if r.trigger_type == "http"]
        return next((r for r in rows if r.qualifier == qualifier), rows[0] if rows else None)

    def by_url(self, url_prefix: str) -> TriggerRow | None:
        """The HTTP trigger served under ``/fcapp/<url_prefix>/`` (None: none)."""
        row = self._repo.by_url(url_prefix)
        return row if row is not None and row.trigger_type == "http" else None

    # --- timers: the engine's ScheduleSource for keys "fc:<function>" ---------------------------

    @staticmethod
    def _expression(row: TriggerRow) -> ScheduleExpression:
        return parse_cron(str(row.config["cronExpression"]))

    def _next(self, row: TriggerRow, after: float) -> float | None:
        if row.trigger_type != "timer" or not row.config.get("enable", True):
            return None
        return self._expression(row).next_after(after, anchor=row.modified_at)

    def _changed(self, row: TriggerRow) -> None:
        if row.trigger_type == "timer":
            self._mirror(row.key, row.next_fire_at)

    def _mirror(self, key: TriggerKey, at: float | None) -> None:
        if self._timers is not None:
            account, region, function, name = key
            self._timers.schedule_changed((account, region, FC_KEY_PREFIX + function, name), at)

    def pending(self, *, after_downtime: bool) -> builtins.list[tuple[tuple[str, str, str, str],
                                                                      float]]:
        """Every enabled timer trigger's next fire (fires missed while the emulator was down
        are not repeated: each fires once for its latest missed instant, as schedules do)."""
        now = self._clock.now()
        out = []
        for row in self._repo.pending():
            at = row.next_fire_at
            assert at is not None
            if after_downtime and at < now:
                latest = self._expression(row).latest_at_or_before(now, anchor=row.modified_at)
                if latest is not None and latest > at and self._repo.fired(
                        row.key, at, latest, row.last_fired_at or row.created_at):
                    at = latest
            account, region, function, name = row.key
            out.append(((account, region, FC_KEY_PREFIX + function, name), at))
        return out

    def fire(self, key: tuple[str, str, str, str], fire_at: float) -> float | None:
        """Invoke the function for the instant ``fire_at``; the timer's next instant."""
        account, region, tagged, name = key
        row = self._repo.get((account, region, tagged[len(FC_KEY_PREFIX):], name))
        if row is None or row.next_fire_at != fire_at:
            return None if row is None else row.next_fire_at
        event = json.dumps({
            "triggerTime": datetime.fromtimestamp(fire_at, timezone.utc).strftime(
                "%Y-%m-%dT%H:%M:%SZ"),
            "triggerName": row.name, "payload": str(row.config.get("payload", ""))})
        try:
            self._invoke(account, region, row.function_name, event.encode(), row.qualifier)
        except Exception as exc:  # the function changed under the trigger: log, move on
            log.warning("timer trigger %s of %s could not invoke it: %s", row.name,
                        row.function_name, getattr(exc, "message", exc))
        next_at = self._following(row, fire_at)
        if not self._repo.fired(row.key, fire_at, next_at, self._clock.now()):
            current = self._repo.get(row.key)
            return current.next_fire_at if current is not None else None
        return next_at

    def _following(self, row: TriggerRow, fire_at: float) -> float:
        expr = self._expression(row)
        now = self._clock.now()
        nxt = expr.next_after(fire_at, anchor=row.modified_at)
        probe, behind = nxt, 0
        while probe <= now and behind <= MAX_CATCH_UP:
            behind += 1
            probe = expr.next_after(probe, anchor=row.modified_at)
        if behind > MAX_CATCH_UP:
            latest = expr.latest_at_or_before(now, anchor=row.modified_at)
            return latest if latest is not None and latest > fire_at else nxt
        return nxt
