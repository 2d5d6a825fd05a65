"""FC 3.0 triggers on the wire: CreateTrigger, GetTrigger, UpdateTrigger, DeleteTrigger and
ListTriggers (``/2023-03-30/functions/{name}/triggers[/{trigger}]``, fc3-api.md §2), entries
of :data:`~.fc.FC_ROUTES`; the domain is :mod:`services.triggers`.

``triggerConfig`` travels as JSON text both ways (the SDK's ``Trigger.triggerConfig`` is a
string). An HTTP trigger's ``httpTrigger.urlInternet`` and ``urlIntranet`` are the local URL
the emulator serves it at (``<endpoint>/fcapp/<url prefix>``, :mod:`.http_trigger_serving`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from deployer.emulator.api import errors as e
from deployer.emulator.api.contract import Body, RequestContext, json_object
from deployer.emulator.api.fc import (
    FC_ROUTES,
    fc_page,
    listing,
    optional_string,
    required_string,
)
from deployer.emulator.services.triggers import TriggerChanges, TriggerInput, TriggerRow
from deployer.timestamps import iso_seconds

if TYPE_CHECKING:
    from deployer.emulator.api.fc import FcApi

__all__ = ["HTTP_TRIGGER_PATH", "trigger_to_wire"]

HTTP_TRIGGER_PATH = "/fcapp/"
_TRIGGERS = "/2023-03-30/functions/{name}/triggers"


def trigger_to_wire(row: TriggerRow, public_url: str) -> dict[str, Any]:
    """The ``Trigger`` object (``triggerConfig`` as JSON text)."""
    out: dict[str, Any] = {
        "triggerName": row.name, "triggerId": row.trigger_id, "triggerType": row.trigger_type,
        "description": row.description, "qualifier": row.qualifier,
        "sourceArn": row.source_arn, "invocationRole": row.invocation_role,
        "triggerConfig": json.dumps(row.config, separators=(",", ":")), "status": "Success",
        "targetArn": f"acs:fc:{row.region}:{row.account_id}:functions/{row.function_name}",
        "createdTime": iso_seconds(row.created_at),
        "lastModifiedTime": iso_seconds(row.modified_at)}
    if row.trigger_type == "http":
        url = f"{public_url}{HTTP_TRIGGER_PATH}{row.url_prefix}"
        out["httpTrigger"] = {"urlInternet": url, "urlIntranet": url}
    return out


def _config(body: dict[str, Any], required: bool) -> dict[str, Any] | None:
    raw = body.get("triggerConfig")
    if raw is None:
        if required:
            raise e.InvalidArgument("triggerConfig is required")
        return None
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        raise e.InvalidArgument("triggerConfig must be a JSON string")
    try:
        value = json.loads(raw) if raw.strip() else {}
    except ValueError as exc:
        raise e.InvalidArgument(f"triggerConfig is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise e.InvalidArgument("triggerConfig must be a JSON object")
    return value


@FC_ROUTES.route("POST", _TRIGGERS)
def create_trigger(api: FcApi, ctx: RequestContext, name: str) -> Body:
    body = json_object(ctx.request.body)
    spec = TriggerInput(required_string(body, "triggerName"),
                        required_string(body, "triggerType"),
                        _config(body, required=True) or {},
                        qualifier=optional_string(body, "qualifier") or "LATEST",
                        description=optional_string(body, "description") or "",
                        source_arn=optional_string(body, "sourceArn") or "",
                        invocation_role=optional_string(body, "invocationRole") or "")
    return trigger_to_wire(api.services.triggers.create(*ctx.key(name), spec), ctx.public_url)


@FC_ROUTES.route("GET", _TRIGGERS + "/{trigger}")
def get_trigger(api: FcApi, ctx: RequestContext, name: str, trigger: str) -> Body:
    return trigger_to_wire(api.services.triggers.get(*ctx.key(name, trigger)), ctx.public_url)


@FC_ROUTES.route("PUT", _TRIGGERS + "/{trigger}")
def update_trigger(api: FcApi, ctx: RequestContext, name: str, trigger: str) -> Body:
    body = json_object(ctx.request.body)
    changes = TriggerChanges(config=_config(body, required=False),
                             qualifier=optional_string(body, "qualifier"),
                             description=optional_string(body, "description"),
                             invocation_role=optional_string(body, "invocationRole"))
    row = api.services.triggers.update(*ctx.key(name, trigger), changes)
    return trigger_to_wire(row, ctx.public_url)


@FC_ROUTES.route("DELETE", _TRIGGERS + "/{trigger}")
def delete_trigger(api: FcApi, ctx: RequestContext, name: str, trigger: str) -> None:
    api.services.triggers.delete(*ctx.key(name, trigger))


@FC_ROUTES.route("GET", _TRIGGERS)
def list_triggers(api: FcApi, ctx: RequestContext, name: str) -> Body:
    rows, token = api.services.triggers.list(*ctx.key(name),
                                             prefix=ctx.query.get("prefix", ""), **listing(ctx))
    return fc_page("triggers", [trigger_to_wire(r, ctx.public_url) for r in rows], token)
