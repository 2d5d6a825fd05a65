"""CloudFlow flows: create, describe, update, delete, list (domain logic, no HTTP).

A definition is checked with :func:`deployer.fdl.check_flow` for the flow's execution mode; any
error diagnostic refuses the request with :class:`InvalidValue` whose message lists every
error as ``Definition:<line>:<col>: error <code>: <path>: <message>``. The definition's
``Name`` must equal the flow name (a legacy-dialect definition, ``version`` / ``type: flow`` /
``steps``, has none: the API names it). A ``RoleArn`` must name a role of the emulator's RAM whose
trust policy lets ``fnf.aliyuncs.com`` assume it.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.records import FlowRecord
from deployer.emulator.services.errors import (
    AlreadyExists,
    InvalidValue,
    Resource,
    ResourceNotFound,
)
from deployer.emulator.store.flow_repos import FlowRepo
from deployer.fdl import LegacyFlow, check_flow
from deployer.fdl.limits import DEFINITION_BYTES

__all__ = ["CLOUDFLOW_PRINCIPAL", "FLOW_EXECUTION_MODES", "FLOW_NAME_RE", "FlowChanges",
           "FlowService"]

FLOW_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,127}$")
FLOW_EXECUTION_MODES = ("Standard", "Express")
CLOUDFLOW_PRINCIPAL = "fnf.aliyuncs.com"
MAX_DEFINITION = DEFINITION_BYTES

RoleCheck = Callable[[str, str, str], bool]


def check_name(name: str, what: str = "Name") -> None:
    if not FLOW_NAME_RE.match(name):
        raise InvalidValue(
            f"{what} '{name}' is invalid: use 1-128 letters, digits, '_' or '-', starting with "
            "a letter or '_'", field=what)


class FlowChanges:
    """UpdateFlow's optional fields (None = leave unchanged)."""

    __slots__ = ("definition", "description", "environment", "role_arn", "type")

    def __init__(self, *, definition: str | None = None, description: str | None = None,
                 type: str | None = None, role_arn: str | None = None,
                 environment: dict[str, Any] | None = None) -> None:
        self.definition = definition
        self.description = description
        self.type = type
        self.role_arn = role_arn
        self.environment = environment


class FlowService:
    """Flow CRUD over :class:`FlowRepo`; times come from the injected clock."""

    def __init__(self, repo: FlowRepo, clock: Clock, role_trusts: RoleCheck) -> None:
        self._repo = repo
        self._clock = clock
        self._role_trusts = role_trusts
        # called with (account_id, region, name) after a flow is deleted (its versions,
        # aliases and schedules go with it)
        self.on_delete: list[Callable[[str, str, str], None]] = []

    def create(self, account_id: str, region: str, name: str, *, definition: str,
               description: str = "", type: str = "FDL", role_arn: str = "",
               execution_mode: str = "", environment: dict[str, Any] | None = None,
               resource_group_id: str = "", external_storage: str = "") -> FlowRecord:
        """Validate and store a new flow. Raises InvalidValue or AlreadyExists."""
        check_name(name)
        mode = execution_mode or "Standard"
        if mode not in FLOW_EXECUTION_MODES:
            raise InvalidValue(f"ExecutionMode '{execution_mode}' is invalid: use Standard or "
                               "Express", field="ExecutionMode")
        self._check_type(type)
        self._check_definition(name, definition, mode)
        self._check_role(account_id, role_arn)
        now = self._clock.now()
        rec = FlowRecord(account_id, region, name, str(uuid.uuid4()), definition, description,
                         type or "FDL", role_arn, mode, environment, resource_group_id,
                         external_storage, now, now)
        if not self._repo.insert_flow(rec):
            raise AlreadyExists(f"Flow {name} already exists.", Resource.FLOW, name=name)
        return rec

    def get(self, account_id: str, region: str, name: str) -> FlowRecord:
        """The flow or ResourceNotFound (``Resource.FLOW``)."""
        rec = self._repo.get_flow(account_id, region, name)
        if rec is None:
            raise ResourceNotFound(f"Flow {name} does not exist.", Resource.FLOW, name=name)
        return rec

    def update(self, account_id: str, region: str, name: str,
               changes: FlowChanges) -> FlowRecord:
        """Change the given fields; running executions keep their definition snapshot."""
        rec = self.get(account_id, region, name)
        if changes.type is not None:
            self._check_type(changes.type)
        if changes.definition is not None:
            self._check_definition(name, changes.definition, rec.execution_mode)
        if changes.role_arn is not None:
            self._check_role(account_id, changes.role_arn)
        new = replace(
            rec,
            definition=_pick(changes.definition, rec.definition),
            description=_pick(changes.description, rec.description),
            type=_pick(changes.type, rec.type) or "FDL",
            role_arn=_pick(changes.role_arn, rec.role_arn),
            environment=(changes.environment if changes.environment is not None
                         else rec.environment),
            modified_at=max(self._clock.now(), rec.modified_at))
        self._repo.update_flow(new)
        return new

    def delete(self, account_id: str, region: str, name: str) -> None:
        """Delete the flow; its executions can no longer be queried and stop at once; its
        versions, aliases and schedules are deleted too."""
        if not self._repo.delete_flow(account_id, region, name):
            raise ResourceNotFound(f"Flow {name} does not exist.", Resource.FLOW, name=name)
        for hook in self.on_delete:
            hook(account_id, region, name)

    def list(self, account_id: str, region: str, *, limit: int, next_token: str = "",
             resource_group_id: str = "") -> tuple[list[FlowRecord], str]:
        """One page in ascending name order and the next page's token ('' on the last)."""
        rows = self._repo.list_flows(account_id, region, start=next_token, limit=limit + 1,
                                     resource_group_id=resource_group_id)
        token = rows[limit].name if len(rows) > limit else ""
        return rows[:limit], token

    @staticmethod
    def _check_type(type: str) -> None:
        if type not in ("", "FDL"):
            raise InvalidValue(f"Type '{type}' is invalid: only FDL is supported",
                               field="Type")

    @staticmethod
    def _check_definition(name: str, definition: str, mode: str) -> None:
        if not definition.strip():
            raise InvalidValue("Definition is empty", field="Definition")
        if len(definition.encode()) > MAX_DEFINITION:
            raise InvalidValue(f"Definition exceeds {MAX_DEFINITION} bytes",
                               field="Definition")
        checked = check_flow(definition, source="Definition", execution_mode=mode)
        if checked.errors or checked.flow is None:
            lines = "; ".join(d.format() for d in checked.errors) or "not a flow definition"
            raise InvalidValue(f"Definition is invalid: {lines}", field="Definition")
        if not isinstance(checked.flow, LegacyFlow) and checked.flow.name != name:
            raise InvalidValue(
                f"Definition is invalid: its Name '{checked.flow.name}' must equal the flow "
                f"name '{name}'", field="Definition")

    def _check_role(self, account_id: str, role_arn: str) -> None:
        if role_arn and not self._role_trusts(account_id, role_arn, CLOUDFLOW_PRINCIPAL):
            raise InvalidValue(
                f"RoleArn '{role_arn}' cannot be assumed by CloudFlow: the role must exist in "
                f"account {account_id} (acs:ram::{account_id}:role/<name>) and its trust "
                f"policy must allow sts:AssumeRole for the service {CLOUDFLOW_PRINCIPAL}",
                field="RoleArn")


def _pick(value: str | None, current: str) -> str:
    return current if value is None else value
