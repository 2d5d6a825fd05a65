"""FC 3.0 asynchronous invocation and concurrency on the wire (fc3-api.md §2), entries of
:data:`~.fc.FC_ROUTES`: Get/Put/DeleteAsyncInvokeConfig (``/functions/{name}/
async-invoke-config?qualifier=``), ListAsyncInvokeConfigs (``/async-invoke-configs``),
GetAsyncTask, StopAsyncTask and ListAsyncTasks (``/functions/{name}/async-tasks``),
Get/Put/DeleteConcurrencyConfig (``/functions/{name}/concurrency``) and
ListConcurrencyConfigs (``/concurrency-configs``). The domain: :mod:`services.async_tasks`
and :mod:`services.function_concurrency`.

An async task's ``startedTime`` and ``endTime`` are epoch milliseconds, its payloads text, as
the SDK's ``AsyncTask`` carries them [INFERRED from the SDK's field types].
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from deployer.emulator.api import errors as e
from deployer.emulator.api.contract import Body, RequestContext, json_object
from deployer.emulator.api.fc import FC_ROUTES, fc_page, listing, qualifier
from deployer.emulator.services.async_tasks import AsyncTaskRow
from deployer.timestamps import iso_seconds

if TYPE_CHECKING:
    from deployer.emulator.api.fc import FcApi

__all__ = ["async_task_to_wire"]

_FUNCTION = "/2023-03-30/functions/{name}"


def _ms(at: float | None) -> int | None:
    return None if at is None else int(at * 1000)


def async_task_to_wire(row: AsyncTaskRow, arn: str) -> dict[str, Any]:
    """The ``AsyncTask`` object."""
    out: dict[str, Any] = {
        "taskId": row.task_id, "requestId": row.request_id, "status": row.status,
        "functionArn": arn, "qualifier": row.qualifier,
        "taskPayload": row.payload.decode("utf-8", "replace"),
        "taskErrorMessage": row.error_message, "alreadyRetriedTimes": row.retries,
        "destinationStatus": row.destination_status, "instanceId": row.instance_id,
        "startedTime": _ms(row.started_at or row.created_at), "endTime": _ms(row.ended_at),
        "events": []}
    if row.return_payload is not None:
        out["returnPayload"] = row.return_payload.decode("utf-8", "replace")
    if row.duration_ms is not None:
        out["durationMs"] = int(row.duration_ms)
    return {k: v for k, v in out.items() if v is not None}


def _async_config(arn: str, doc: dict[str, Any], modified: float) -> dict[str, Any]:
    return {**doc, "functionArn": arn, "createdTime": iso_seconds(modified),
            "lastModifiedTime": iso_seconds(modified)}


# --- asyncInvokeConfig -------------------------------------------------------------------------

def _config_answer(api: FcApi, ctx: RequestContext, name: str,
                   read: Callable[..., dict[str, Any]]) -> Body:
    """The config ``read(account, region, name, qualifier)`` puts or gets, once the function
    is known to exist."""
    arn = api.function_arn(ctx, name)
    key = ctx.key(name, qualifier(ctx))
    doc = read(*key)
    return _async_config(arn, doc, api.services.async_configs.modified_at(*key))


@FC_ROUTES.route("PUT", _FUNCTION + "/async-invoke-config")
def put_async_invoke_config(api: FcApi, ctx: RequestContext, name: str) -> Body:
    configs = api.services.async_configs
    return _config_answer(api, ctx, name,
                          lambda *key: configs.put(*key, json_object(ctx.request.body)))


@FC_ROUTES.route("GET", _FUNCTION + "/async-invoke-config")
def get_async_invoke_config(api: FcApi, ctx: RequestContext, name: str) -> Body:
    return _config_answer(api, ctx, name, api.services.async_configs.get)


@FC_ROUTES.route("DELETE", _FUNCTION + "/async-invoke-config")
def delete_async_invoke_config(api: FcApi, ctx: RequestContext, name: str) -> None:
    api.function_arn(ctx, name)
    api.services.async_configs.get(*ctx.key(name, qualifier(ctx)))
    api.services.async_configs.delete(*ctx.key(name, qualifier(ctx)))


@FC_ROUTES.route("GET", "/2023-03-30/async-invoke-configs")
def list_async_invoke_configs(api: FcApi, ctx: RequestContext) -> Body:
    rows, token = api.services.async_configs.list(
        *ctx.key(), function=ctx.query.get("functionName", ""), **listing(ctx))
    configs = [_async_config(f"acs:fc:{ctx.region}:{ctx.account_id}:functions/{fn}"
                             + ("" if qualifier == "LATEST" else f"/{qualifier}"), doc, at)
               for fn, qualifier, doc, at in rows]
    return fc_page("configs", configs, token)


# --- async tasks -------------------------------------------------------------------------------

@FC_ROUTES.route("GET", _FUNCTION + "/async-tasks/{task}")
def get_async_task(api: FcApi, ctx: RequestContext, name: str, task: str) -> Body:
    arn = api.function_arn(ctx, name)
    return async_task_to_wire(api.services.async_tasks.get(*ctx.key(name, task)), arn)


@FC_ROUTES.route("PUT", _FUNCTION + "/async-tasks/{task}/stop")
def stop_async_task(api: FcApi, ctx: RequestContext, name: str, task: str) -> Body:
    api.function_arn(ctx, name)
    api.services.async_tasks.stop(*ctx.key(name, task))
    return {}


@FC_ROUTES.route("GET", _FUNCTION + "/async-tasks")
def list_async_tasks(api: FcApi, ctx: RequestContext, name: str) -> Body:
    arn = api.function_arn(ctx, name)
    q = ctx.query
    order = q.get("sortOrderByTime") or "desc"
    if order not in ("asc", "desc"):
        raise e.InvalidArgument(f"sortOrderByTime must be asc or desc, got {order!r}")
    rows, token = api.services.async_tasks.list(
        *ctx.key(name), prefix=q.get("prefix", ""), status=q.get("status", ""),
        newest_first=order == "desc", **listing(ctx))
    hidden = () if q.get("includePayload") == "true" else ("taskPayload",)
    tasks = [{k: v for k, v in async_task_to_wire(row, arn).items() if k not in hidden}
             for row in rows]
    return fc_page("tasks", tasks, token)


# --- reserved concurrency ----------------------------------------------------------------------

def _concurrency(config: Any) -> Body:
    return {"functionArn": config.function_arn,
            "reservedConcurrency": config.reserved_concurrency}


@FC_ROUTES.route("PUT", _FUNCTION + "/concurrency")
def put_concurrency_config(api: FcApi, ctx: RequestContext, name: str) -> Body:
    api.function_arn(ctx, name)
    reserved = json_object(ctx.request.body).get("reservedConcurrency")
    return _concurrency(api.services.concurrency.put(*ctx.key(name), reserved))


@FC_ROUTES.route("GET", _FUNCTION + "/concurrency")
def get_concurrency_config(api: FcApi, ctx: RequestContext, name: str) -> Body:
    api.function_arn(ctx, name)
    return _concurrency(api.services.concurrency.get(*ctx.key(name)))


@FC_ROUTES.route("DELETE", _FUNCTION + "/concurrency")
def delete_concurrency_config(api: FcApi, ctx: RequestContext, name: str) -> None:
    api.function_arn(ctx, name)
    api.services.concurrency.delete(*ctx.key(name))


@FC_ROUTES.route("GET", "/2023-03-30/concurrency-configs")
def list_concurrency_configs(api: FcApi, ctx: RequestContext) -> Body:
    configs, token = api.services.concurrency.list(
        *ctx.key(), function=ctx.query.get("functionName", ""), **listing(ctx))
    return fc_page("configs", [_concurrency(c) for c in configs], token)
