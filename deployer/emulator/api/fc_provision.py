"""FC 3.0 provisioned instances on the wire (fc3-api.md §2), entries of
:data:`~.fc.FC_ROUTES`: Get/Put/DeleteProvisionConfig (``/functions/{name}/provision-config
?qualifier=``), ListProvisionConfigs (``/provision-configs``), and the same four of the
scaling config (``scaling-config``, ``/scaling-configs``). The domain:
:mod:`services.provisioning`. A qualifier defaults to ``LATEST`` [INFERRED].
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from deployer.emulator.api.contract import Body, RequestContext, json_object
from deployer.emulator.api.fc import FC_ROUTES, fc_page, listing, qualifier
from deployer.emulator.services.provisioning import PROVISION, SCALING, ConfigKind, WarmConfig

if TYPE_CHECKING:
    from deployer.emulator.api.fc import FcApi

__all__ = ["warm_config_to_wire"]


def warm_config_to_wire(config: WarmConfig, kind: ConfigKind, arn: str) -> dict[str, Any]:
    """The ``ProvisionConfig`` or ``ScalingConfigStatus`` object."""
    arn += "" if config.qualifier == "LATEST" else f"/{config.qualifier}"
    counts = {"current": config.current} if kind is PROVISION else {
        "currentInstances": config.current, "targetInstances": config.target}
    return {**config.document, "functionArn": arn, **counts,
            **({"currentError": config.current_error} if config.current_error else {})}


def _routes(kind: ConfigKind, segment: str, listed: str) -> None:
    path = f"/2023-03-30/functions/{{name}}/{segment}"

    def answer(api: FcApi, ctx: RequestContext, name: str,
               call: Callable[..., WarmConfig]) -> Body:
        arn = api.function_arn(ctx, name)
        return warm_config_to_wire(call(kind, *ctx.key(name, qualifier(ctx))), kind, arn)

    @FC_ROUTES.route("PUT", path)
    def put(api: FcApi, ctx: RequestContext, name: str) -> Body:
        body = json_object(ctx.request.body)
        return answer(api, ctx, name, lambda *key: api.services.provisioned.put(*key, body))

    @FC_ROUTES.route("GET", path)
    def get(api: FcApi, ctx: RequestContext, name: str) -> Body:
        return answer(api, ctx, name, api.services.provisioned.get)

    @FC_ROUTES.route("DELETE", path)
    def delete(api: FcApi, ctx: RequestContext, name: str) -> None:
        api.function_arn(ctx, name)
        api.services.provisioned.delete(kind, *ctx.key(name, qualifier(ctx)))

    @FC_ROUTES.route("GET", f"/2023-03-30/{segment}s")
    def list_configs(api: FcApi, ctx: RequestContext) -> Body:
        found, token = api.services.provisioned.list(
            kind, *ctx.key(), function=ctx.query.get("functionName", ""), **listing(ctx))
        return fc_page(listed, [warm_config_to_wire(
            c, kind, f"acs:fc:{ctx.region}:{ctx.account_id}:functions/{c.function_name}")
            for c in found], token)


_routes(PROVISION, "provision-config", "provisionConfigs")
_routes(SCALING, "scaling-config", "scalingConfigs")
