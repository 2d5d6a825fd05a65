"""CloudFlow time-based schedules: CRUD, and what happens when one fires (no HTTP).

A schedule belongs to a flow and starts an execution of it at each instant of its
``CronExpression`` (:mod:`.schedule_cron`), with ``Payload`` (a JSON object) as the
execution's input ("payload: 您可以自定义执行定时调度的输入", the schedule docs). Only enabled
schedules fire; ``Enable`` defaults to false when CreateSchedule omits it (INFERRED).

Firing (called by the engine at the instant, :meth:`ScheduleService.fire`): the execution is
named from the schedule id and the instant (a UUID5, INFERRED), so firing the same instant
twice — a crash between the start and recording the fire — starts nothing new. Its record and
the next instant are then written in one transaction guarded by the instant.

Catching up (docs/emulator.md): when the clock passes several instants at once
(``LocalCloud.advance``), each fires in turn; when more than :data:`MAX_CATCH_UP` were passed,
only the first and the most recent fire, then the schedule resumes at its next future
instant. Fires missed while the emulator was not running
are coalesced: when it starts again, one execution for the most recent missed instant, then
the normal rhythm (like cron's anacron or a Kubernetes CronJob).

``ListSchedules``: ``Limit`` 1-1000 (SDK doc), ascending by name; the token is the next
page's first name. Deleting a flow deletes its schedules (INFERRED; the fnf component deletes
them itself before the flow).
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import logging
import uuid
from dataclasses import dataclass

from deployer.emulator.clock import Clock
from deployer.emulator.ports import ScheduleTimers
from deployer.emulator.records import ScheduleKey, ScheduleRow
from deployer.emulator.services.errors import (
    AlreadyExists,
    InvalidValue,
    Resource,
    ResourceNotFound,
    ServiceError,
)
from deployer.emulator.services.executions import ExecutionService
from deployer.emulator.services.flows import FlowService, check_name
from deployer.emulator.services.schedule_cron import ScheduleExpression, parse_cron
from deployer.emulator.store.schedule_repos import ScheduleRepo

__all__ = ["MAX_CATCH_UP", "ScheduleChanges", "ScheduleService"]


log = logging.getLogger("deployer.emulator")
MAX_CATCH_UP = 100
SCHEDULES_LIST_LIMIT = (1, 1000)
MAX_PAYLOAD = 64 * 1024
_NAMESPACE = uuid.UUID("6f0b8a52-3c1e-4d55-9b8e-5c1f0a6d2e71")


@dataclass(frozen=True, slots=True)
class ScheduleChanges:
    """UpdateSchedule's optional fields (None = leave unchanged)."""

    cron: str | None = None
    payload: str | None = None
    description: str | None = None
    enable: bool | None = None


def check_payload(payload: str) -> str:
    """The payload as stored: '' or the JSON object text."""
    if payload == "":
        return ""
    if len(payload.encode("utf-8")) > MAX_PAYLOAD:
        raise InvalidValue(f"Payload exceeds {MAX_PAYLOAD} bytes", field="Payload")
    try:
        value = json.loads(payload)
    except json.JSONDecodeError as exc:
        raise InvalidValue(f"Payload is not valid JSON: {exc.msg} at position {exc.pos}",
                           field="Payload") from None
    if not isinstance(value, dict):
        raise InvalidValue("Payload must be a JSON object", field="Payload")
    return payload


class ScheduleService:
    """Schedules over :class:`ScheduleRepo`; the engine (``timers``) fires them."""

    def __init__(self, repo: ScheduleRepo, flows: FlowService, executions: ExecutionService,
                 clock: Clock, timers: ScheduleTimers) -> None:
        self._repo = repo
        self._flows = flows
        self._executions = executions
        self._clock = clock
        self._timers = timers

    # --- CRUD ---------------------------------------------------------------------------------

    def create(self, account_id: str, region: str, flow_name: str, name: str, *, cron: str,
               payload: str = "", description: str = "", enable: bool = False) -> ScheduleRow:
        self._flows.get(account_id, region, flow_name)
        check_name(name, "ScheduleName")
        expr = parse_cron(cron)
        now = self._clock.now()
        row = ScheduleRow(account_id, region, flow_name, name, str(uuid.uuid4()), cron,
                          check_payload(payload), description, enable, now, now,
                          self._next(expr, now, now) if enable else None)
        if not self._repo.insert(row):
            raise AlreadyExists(f"Schedule {name} of flow {flow_name} already exists.",
                                Resource.SCHEDULE, name=name)
        self._timers.schedule_changed(row.key, row.next_fire_at)
        return row

    def describe(self, account_id: str, region: str, flow_name: str, name: str) -> ScheduleRow:
        self._flows.get(account_id, region, flow_name)
        row = self._repo.get((account_id, region, flow_name, name))
        if row is None:
            raise ResourceNotFound(f"Schedule {name} of flow {flow_name} does not exist.",
                                   Resource.SCHEDULE, name=name)
        return row

    def update(self, account_id: str, region: str, flow_name: str, name: str,
               changes: ScheduleChanges) -> ScheduleRow:
        """Change the given fields; the next fire is computed again from now."""
        row = self.describe(account_id, region, flow_name, name)
        cron = row.cron if changes.cron is None else changes.cron
        expr = parse_cron(cron)
        payload = row.payload if changes.payload is None else check_payload(changes.payload)
        enable = row.enable if changes.enable is None else changes.enable
        now = max(self._clock.now(), row.modified_at)
        new = dataclasses.replace(
            row, cron=cron, payload=payload, enable=enable, modified_at=now,
            description=row.description if changes.description is None
            else changes.description,
            next_fire_at=self._next(expr, now, now) if enable else None)
        self._repo.update(new)
        self._timers.schedule_changed(new.key, new.next_fire_at)
        return new

    def delete(self, account_id: str, region: str, flow_name: str, name: str) -> None:
        self._flows.get(account_id, region, flow_name)
        key = (account_id, region, flow_name, name)
        if not self._repo.delete(key):
            raise ResourceNotFound(f"Schedule {name} of flow {flow_name} does not exist.",
                                   Resource.SCHEDULE, name=name)
        self._timers.schedule_changed(key, None)

    def list(self, account_id: str, region: str, flow_name: str, *, limit: int,
             next_token: str = "") -> tuple[builtins.list[ScheduleRow], str]:
        self._flows.get(account_id, region, flow_name)
        low, high = SCHEDULES_LIST_LIMIT
        if not low <= limit <= high:
            raise InvalidValue(f"Limit must be between {low} and {high}, got {limit}.",
                               field="Limit")
        rows = self._repo.list(account_id, region, flow_name, start=next_token,
                               limit=limit + 1)
        token = rows[limit].name if len(rows) > limit else ""
        return rows[:limit], token

    def forget_flow(self, account_id: str, region: str, flow_name: str) -> None:
        """The flow was deleted: its schedules go with it."""
        for key in self._repo.delete_flow(account_id, region, flow_name):
            self._timers.schedule_changed(key, None)

    # --- the engine's ScheduleSource ----------------------------------------------------------

    @staticmethod
    def _next(expr: ScheduleExpression, after: float, anchor: float) -> float:
        return expr.next_after(after, anchor=anchor)

    def pending(self, *, after_downtime: bool) -> builtins.list[tuple[ScheduleKey, float]]:
        """Every enabled schedule's next fire; ``after_downtime`` coalesces fires missed
        while the emulator was not running into the most recent one."""
        now = self._clock.now()
        out = []
        for row in self._repo.pending():
            at = row.next_fire_at
            assert at is not None
            if after_downtime and at < now:
                latest = self._expression(row).latest_at_or_before(now, anchor=row.modified_at)
                if latest is not None and latest > at and self._repo.move(row.key, at, latest):
                    log.info("schedule %s/%s missed fires while the emulator was down; firing "
                             "once for the latest", row.flow_name, row.name)
                    at = latest
            out.append((row.key, at))
        return out

    def _expression(self, row: ScheduleRow) -> ScheduleExpression:
        return parse_cron(row.cron)

    def fire(self, key: ScheduleKey, fire_at: float) -> float | None:
        """Start the execution due at ``fire_at`` and move the schedule on (see the module
        docstring); the next fire instant, None when the schedule no longer waits for it."""
        row = self._repo.get(key)
        if row is None or not row.enable or row.next_fire_at != fire_at:
            return None if row is None or not row.enable else row.next_fire_at
        name = str(uuid.uuid5(_NAMESPACE, f"{row.schedule_id}:{fire_at!r}"))
        try:
            self._executions.start_scheduled(row.account_id, row.region, row.flow_name,
                                             name=name, input_text=row.payload)
        except ServiceError as exc:  # the flow changed under the schedule: log, move on
            log.warning("schedule %s/%s could not start an execution: %s", row.flow_name,
                        row.name, exc.message)
            name = ""
        next_at = self._following(row, fire_at)
        if not self._repo.fired(key, fire_at, next_at, name, self._clock.now()):
            current = self._repo.get(key)
            return current.next_fire_at if current is not None else None
        return next_at

    def _following(self, row: ScheduleRow, fire_at: float) -> float:
        """The instant after ``fire_at``; past ones are caught up to MAX_CATCH_UP."""
        expr = self._expression(row)
        now = self._clock.now()
        nxt = expr.next_after(fire_at, anchor=row.modified_at)
        behind = 0
        probe = nxt
        while probe <= now and behind <= MAX_CATCH_UP:
            behind += 1
            probe = expr.next_after(probe, anchor=row.modified_at)
        if behind > MAX_CATCH_UP:
            latest = expr.latest_at_or_before(now, anchor=row.modified_at)
            log.warning("schedule %s/%s is more than %d fires behind; skipping to the latest",
                        row.flow_name, row.name, MAX_CATCH_UP)
            return latest if latest is not None and latest > fire_at else nxt
        return nxt
