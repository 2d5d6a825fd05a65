"""Typed client for FC 3.0 triggers (CreateTrigger, UpdateTrigger, DeleteTrigger,
ListTriggers), the same calls on Alibaba Cloud and the emulator.

``triggerConfig`` is sent as JSON text, as the SDK's ``CreateTriggerInput`` carries it; a
trigger read back (:class:`RemoteTrigger`) holds it parsed, with its HTTP URL when it has one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deployer.cloud.connection import ServiceClient
from deployer.cloud.errors import CloudNotFoundError

__all__ = ["FunctionTriggerClient", "RemoteTrigger"]


@dataclass(frozen=True, slots=True)
class RemoteTrigger:
    """A trigger as FC answers it."""

    name: str
    type: str
    config: Mapping[str, Any] = field(default_factory=dict)
    qualifier: str = "LATEST"
    description: str = ""
    source_arn: str = ""
    invocation_role: str = ""
    url: str = ""  # an HTTP trigger's urlInternet

    def wire(self) -> dict[str, Any]:
        """The comparable part, in the names :meth:`TriggerSpec.wire` uses."""
        out: dict[str, Any] = {"triggerName": self.name, "triggerType": self.type,
                               "qualifier": self.qualifier, "description": self.description,
                               "triggerConfig": dict(self.config)}
        if self.source_arn:
            out["sourceArn"] = self.source_arn
        if self.invocation_role:
            out["invocationRole"] = self.invocation_role
        return out


def _remote(body: Any) -> RemoteTrigger:
    try:
        config = json.loads(body.trigger_config or "{}")
    except ValueError:
        config = {}
    http = getattr(body, "http_trigger", None)
    return RemoteTrigger(body.trigger_name or "", body.trigger_type or "",
                         config if isinstance(config, dict) else {},
                         body.qualifier or "LATEST", body.description or "",
                         body.source_arn or "", body.invocation_role or "",
                         (http.url_internet or "") if http is not None else "")


class FunctionTriggerClient(ServiceClient):
    """FC 3.0's trigger actions of one connection."""

    SERVICE = "Function Compute"

    def list(self, function: str) -> list[RemoteTrigger]:
        """Every trigger of ``function`` (empty when the function does not exist)."""
        from alibabacloud_fc20230330 import models

        out: list[RemoteTrigger] = []
        token: str | None = None
        while True:
            request = models.ListTriggersRequest(limit=100, next_token=token)
            try:
                body = self._call("ListTriggers", lambda r=request: (
                    self._conn.fc.list_triggers(function, r))).body
            except CloudNotFoundError:
                return out
            out.extend(_remote(t) for t in body.triggers or [])
            token = body.next_token
            if not token:
                return out

    def create(self, function: str, wire: Mapping[str, Any]) -> RemoteTrigger:
        from alibabacloud_fc20230330 import models

        body = models.CreateTriggerInput(
            trigger_name=wire["triggerName"], trigger_type=wire["triggerType"],
            qualifier=wire.get("qualifier"), description=wire.get("description"),
            source_arn=wire.get("sourceArn"), invocation_role=wire.get("invocationRole"),
            trigger_config=json.dumps(wire["triggerConfig"], separators=(",", ":")))
        answer = self._call("CreateTrigger", lambda: self._conn.fc.create_trigger(
            function, models.CreateTriggerRequest(body=body))).body
        return _remote(answer)

    def update(self, function: str, wire: Mapping[str, Any]) -> RemoteTrigger:
        """UpdateTrigger (its type and source cannot change: those are replaced)."""
        from alibabacloud_fc20230330 import models

        body = models.UpdateTriggerInput(
            qualifier=wire.get("qualifier"), description=wire.get("description"),
            invocation_role=wire.get("invocationRole"),
            trigger_config=json.dumps(wire["triggerConfig"], separators=(",", ":")))
        answer = self._call("UpdateTrigger", lambda: self._conn.fc.update_trigger(
            function, wire["triggerName"], models.UpdateTriggerRequest(body=body))).body
        return _remote(answer)

    def delete(self, function: str, name: str) -> bool:
        try:
            self._call("DeleteTrigger", lambda: self._conn.fc.delete_trigger(function, name))
        except CloudNotFoundError:
            return False
        return True
