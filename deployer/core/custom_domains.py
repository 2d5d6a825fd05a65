"""A function's ``customDomain`` in a deploy: its route on the domain, planned against the
domain in the cloud (GetCustomDomain), applied after the function and its triggers, and
taken off the domain when s.yaml drops it (or names another domain).

As fc3 deploys it, a domain is shared: each function owns the routes naming it and leaves
the others' routes alone. A ``custom-domain`` action, named ``<function>/<domain>``:
``create`` (the domain does not exist: CreateCustomDomain with this route), ``update`` (the
function's routes, the protocol or a setting s.yaml gives differ: UpdateCustomDomain with
the other functions' routes kept), ``no-change``, or ``delete`` (the function's routes are
taken off; the domain is deleted with its last route). A path another function's route
holds is refused at plan time, naming both. The same calls run on both targets
(:class:`~deployer.cloud.fc_domains.CustomDomainClient`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from deployer.cloud.fc_domains import CustomDomainClient
from deployer.core.changes import SettingChange
from deployer.core.plan_model import Action, Clients, DesiredFunction, DesiredState
from deployer.core.resources import ActionKind, ResourceType
from deployer.errors import InvalidInputError
from deployer.plain_values import plain_data

__all__ = ["apply_custom_domain", "plan_custom_domains", "remove_function_routes"]

_SETTINGS = ("protocol", "certConfig", "tlsConfig", "authConfig", "wafConfig")


def _route(route: Mapping[str, Any]) -> dict[str, Any]:
    """A route as compared: qualifier LATEST when absent, methods only when some."""
    out = {"path": route.get("path"), "functionName": route.get("functionName"),
           "qualifier": route.get("qualifier") or "LATEST"}
    if route.get("methods"):
        out["methods"] = sorted(str(m).upper() for m in route["methods"])
    return out


def _routes(domain: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    config = (domain or {}).get("routeConfig") or {}
    return [_route(r) for r in config.get("routes") or ()]


def _wanted(fn: DesiredFunction) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(domain name, this function's route, the domain's settings s.yaml gives)."""
    config = plain_data(fn.custom_domain)
    route = _route({**config["route"], "functionName": fn.name})
    return config["domainName"], route, {k: config[k] for k in _SETTINGS if k in config}


def _check_path(name: str, route: Mapping[str, Any], routes: Sequence[Mapping[str, Any]]
                ) -> None:
    for other in routes:
        if other["path"] == route["path"] and other["functionName"] != route["functionName"]:
            raise InvalidInputError(
                f"custom domain {name}: path {route['path']} is routed to function "
                f"{other['functionName']}, not {route['functionName']}",
                hint="give this function's customDomain.route another path, or take the "
                     "route off the other function first")


def _plan_function(fn: DesiredFunction, arn: str, client: CustomDomainClient,
                   domain_of: Callable[[str], dict[str, Any] | None],
                   creating: set[str]) -> Action:
    name, route, settings = _wanted(fn)
    found = domain_of(name)
    label = f"{fn.name}/{name}"
    if found is None and name in creating:  # an earlier action of this plan creates it
        return Action(ResourceType.CUSTOM_DOMAIN, label, ActionKind.UPDATE, arn,
                      (SettingChange("customDomain.route", None, [route]),),
                      origin=fn.resource)
    if found is None:
        creating.add(name)
        return Action(ResourceType.CUSTOM_DOMAIN, label, ActionKind.CREATE, arn,
                      (SettingChange("customDomain", None, {**settings, "domainName": name,
                                                            "route": route}),),
                      origin=fn.resource)
    routes = _routes(found)
    _check_path(name, route, routes)
    own = [r for r in routes if r["functionName"] == fn.name]
    changes = [SettingChange("customDomain.route", own or None, [route])] \
        if own != [route] else []
    changes += [SettingChange(f"customDomain.{key}", found.get(key), value)
                for key, value in settings.items() if found.get(key) != value]
    return Action(ResourceType.CUSTOM_DOMAIN, label,
                  ActionKind.UPDATE if changes else ActionKind.NO_CHANGE, arn, tuple(changes),
                  origin=fn.resource, url=client.url(name, route["path"]))


def plan_custom_domains(state: DesiredState, clients: Clients,
                        planned: Sequence[Action]) -> list[Action]:
    """The custom-domain actions of ``state``'s functions (read-only calls)."""
    client = CustomDomainClient(clients.fc.connection)
    seen: dict[str, dict[str, Any] | None] = {}

    def domain_of(name: str) -> dict[str, Any] | None:
        if name not in seen:
            seen[name] = client.get(name)
        return seen[name]

    existing = {a.name for a in planned if a.resource is ResourceType.FUNCTION
                and a.kind is not ActionKind.CREATE}
    every = client.every() if existing else {}
    seen.update(every)
    creating: set[str] = set()
    out: list[Action] = []
    for fn in state.functions:
        wanted = _wanted(fn)[0] if fn.custom_domain else None
        arn = f"acs:fc:{state.region}:{state.account_id}:custom-domains/"
        if wanted is not None:
            out.append(_plan_function(fn, arn + wanted, client, domain_of, creating))
        if fn.name not in existing:
            continue
        for name in every:
            if name != wanted and any(r["functionName"] == fn.name
                                      for r in _routes(domain_of(name))):
                out.append(Action(ResourceType.CUSTOM_DOMAIN, f"{fn.name}/{name}",
                                  ActionKind.DELETE, arn + name,
                                  notes=("s.yaml no longer routes this domain to the "
                                         "function",), origin=fn.resource))
    return out


def apply_custom_domain(action: Action, state: DesiredState, clients: Clients,
                        progress: Callable[[str], None]) -> str:
    """Put or take off one function's route (merged into the domain as it is now); the
    route's URL, "" for a deletion."""
    client = CustomDomainClient(clients.fc.connection)
    function, _, name = action.name.partition("/")
    found = client.get(name)
    others = [r for r in _routes(found) if r["functionName"] != function]
    if action.kind is ActionKind.DELETE:
        progress(f"taking function {function} off custom domain {name}")
        _take_off(client, name, found, others)
        return ""
    fn = next(f for f in state.functions if f.name == function)
    _, route, settings = _wanted(fn)
    _check_path(name, route, others)
    body = {**(found or {}), **settings, "domainName": name,
            "routeConfig": {"routes": [*others, route]}}
    body = {k: v for k, v in body.items() if k in ("domainName", "routeConfig", *_SETTINGS)}
    progress(f"routing custom domain {name} to function {function}")
    if found is None:
        client.create(body)
    else:
        client.update(name, body)
    return client.url(name, route["path"])


def remove_function_routes(clients: Clients, function: str) -> int:
    """Take ``function``'s routes off every custom domain, before the function itself is
    deleted (``deploy down``, or s.yaml dropped it): a domain keeps the other functions'
    routes and is deleted with its last one, as when s.yaml drops a route. Write calls."""
    client = CustomDomainClient(clients.fc.connection)
    calls = 0
    for name, found in client.every().items():
        routes = _routes(found)
        others = [r for r in routes if r["functionName"] != function]
        if len(others) < len(routes):
            _take_off(client, name, found, others)
            calls += 1
    return calls


def _take_off(client: CustomDomainClient, name: str, found: Mapping[str, Any] | None,
              others: list[dict[str, Any]]) -> None:
    """Leave ``others`` on the domain; delete it when none are left."""
    if not others:
        client.delete(name)
    elif found is not None:
        client.update(name, {**found, "routeConfig": {"routes": others}})
