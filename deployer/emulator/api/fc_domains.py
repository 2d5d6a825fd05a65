"""FC 3.0 custom domains on the wire: Create/Get/Update/Delete/ListCustomDomain(s)
(``/2023-03-30/custom-domains[/{domain}]``, fc3-api.md §2), entries of
:data:`~.fc.FC_ROUTES`; the domain is :mod:`services.custom_domains`. The certificate, TLS,
authentication and WAF settings are recorded and echoed; the routes decide which function a
request to the domain reaches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deployer.emulator.api import errors as e
from deployer.emulator.api.contract import Body, RequestContext, json_object
from deployer.emulator.api.fc import FC_ROUTES, fc_page, listing
from deployer.emulator.services.custom_domains import CustomDomain
from deployer.timestamps import iso_seconds

if TYPE_CHECKING:
    from deployer.emulator.api.fc import FcApi

__all__ = ["custom_domain_to_wire"]

_DOMAINS = "/2023-03-30/custom-domains"


def custom_domain_to_wire(domain: CustomDomain, account_id: str) -> dict[str, Any]:
    """The ``CustomDomain`` object."""
    routes = [{"path": r.path, "functionName": r.function_name, "qualifier": r.qualifier,
               **({"methods": list(r.methods)} if r.methods else {})} for r in domain.routes]
    return {"domainName": domain.name, "accountId": account_id, "apiVersion": "2023-03-30",
            "protocol": "HTTP", **dict(domain.settings), "routeConfig": {"routes": routes},
            "subdomainCount": "1", "createdTime": iso_seconds(domain.created_at),
            "lastModifiedTime": iso_seconds(domain.modified_at)}


@FC_ROUTES.route("POST", _DOMAINS)
def create_custom_domain(api: FcApi, ctx: RequestContext) -> Body:
    body = json_object(ctx.request.body)
    name = body.get("domainName")
    if not isinstance(name, str) or not name:
        raise e.InvalidArgument("domainName is required and must be a string")
    domain = api.services.custom_domains.put(*ctx.key(name), body, create=True)
    return custom_domain_to_wire(domain, ctx.account_id)


@FC_ROUTES.route("GET", _DOMAINS + "/{domain}")
def get_custom_domain(api: FcApi, ctx: RequestContext, domain: str) -> Body:
    found = api.services.custom_domains.get(*ctx.key(domain))
    return custom_domain_to_wire(found, ctx.account_id)


@FC_ROUTES.route("PUT", _DOMAINS + "/{domain}")
def update_custom_domain(api: FcApi, ctx: RequestContext, domain: str) -> Body:
    found = api.services.custom_domains.put(*ctx.key(domain), json_object(ctx.request.body),
                                            create=False)
    return custom_domain_to_wire(found, ctx.account_id)


@FC_ROUTES.route("DELETE", _DOMAINS + "/{domain}")
def delete_custom_domain(api: FcApi, ctx: RequestContext, domain: str) -> None:
    api.services.custom_domains.delete(*ctx.key(domain))


@FC_ROUTES.route("GET", _DOMAINS)
def list_custom_domains(api: FcApi, ctx: RequestContext) -> Body:
    found, token = api.services.custom_domains.list(
        *ctx.key(), prefix=ctx.query.get("prefix", ""), **listing(ctx))
    return fc_page("customDomains", [custom_domain_to_wire(d, ctx.account_id) for d in found],
                   token)
