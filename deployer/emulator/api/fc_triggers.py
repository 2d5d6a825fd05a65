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
from deployer.emulator.api.contract import RequestContext, json_object, page
from deployer.emulator.api.fc import (
    FC_ROUTES,
    list_limit,
    no_content,
    ok_response,
    optional_string,
)
from deployer.emulator.api.http import HttpResponse
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
def create_trigger(api: FcApi, ctx: RequestContext, name: str) -> HttpResponse:
    body = json_object(ctx.request.body)
    trigger_name = optional_string(body, "triggerName")
    trigger_type = optional_string(body, "triggerType")
    if not trigger_name:
        raise e.InvalidArgument("triggerName is required")
    if not trigger_type:
        raise e.InvalidArgument("triggerType is required")
    spec = TriggerInput(trigger_name, trigger_type, _config(body, required=True) or {},
                        qualifier=optional_string(body, "qualifier") or "LATEST",
                        description=optional_string(body, "description") or "",
                        source_arn=optional_string(body, "sourceArn") or "",
                        invocation_role=optional_string(body, "invocationRole") or "")
    row = api.services.triggers.create(ctx.account_id, ctx.region, name, spec)
    return ok_response(ctx, trigger_to_wire(row, ctx.public_url))


@FC_ROUTES.route("GET", _TRIGGERS + "/{trigger}")
def get_trigger(api: FcApi, ctx: RequestContext, name: str, trigger: str) -> HttpResponse:
    row = api.services.triggers.get(ctx.account_id, ctx.region, name, trigger)
    return ok_response(ctx, trigger_to_wire(row, ctx.public_url))


@FC_ROUTES.route("PUT", _TRIGGERS + "/{trigger}")
def update_trigger(api: FcApi, ctx: RequestContext, name: str, trigger: str) -> HttpResponse:
    body = json_object(ctx.request.body)
    changes = TriggerChanges(config=_config(body, required=False),
                             qualifier=optional_string(body, "qualifier"),
                             description=optional_string(body, "description"),
                             invocation_role=optional_string(body, "invocationRole"))
    row = api.services.triggers.update(ctx.account_id, ctx.region, name, trigger, changes)
    return ok_response(ctx, trigger_to_wire(row, ctx.public_url))


@FC_ROUTES.route("DELETE", _TRIGGERS + "/{trigger}")
def delete_trigger(api: FcApi, ctx: RequestContext, name: str, trigger: str) -> HttpResponse:
    api.services.triggers.delete(ctx.account_id, ctx.region, name, trigger)
    return no_content(ctx)


@FC_ROUTES.route("GET", _TRIGGERS)
def list_triggers(api: FcApi, ctx: RequestContext, name: str) -> HttpResponse:
    q = ctx.request.query_params()
    rows, token = api.services.triggers.list(
        ctx.account_id, ctx.region, name, prefix=q.get("prefix", ""),
        next_token=q.get("nextToken", ""), limit=list_limit(q))
    triggers = [trigger_to_wire(r, ctx.public_url) for r in rows]
    return ok_response(ctx, page("triggers", triggers, token, "nextToken"))
