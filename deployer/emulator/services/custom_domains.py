"""Function Compute custom domains: CRUD and the routing of a request's path to a function
(no HTTP; the front door hands in the Host's domain, the path and the method).

A custom domain (Create/Get/Update/Delete/ListCustomDomains) holds ``routeConfig.routes``:
``{path, functionName, qualifier, methods}``. A request's path matches a route whose ``path``
equals it, or ends in ``/*`` and prefixes it; an exact route wins over a wildcard one, and a
longer wildcard over a shorter one (FC docs, "Configure a custom domain name": "exact match
first, then the longest prefix"; CONFIRMED as the rule, the tie-breaks INFERRED). A route
with ``methods`` takes only those. ``protocol``, ``certConfig``, ``tlsConfig``, ``authConfig``
and ``wafConfig`` are recorded (locally the domain is served over plain HTTP on loopback).
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.services.errors import (
    AlreadyExists,
    InvalidValue,
    Resource,
    ResourceNotFound,
)
from deployer.emulator.store.function_config_repos import FunctionConfigRepo

__all__ = ["CustomDomain", "CustomDomainService", "DomainRoute"]

_DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9*]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
_KIND = "custom-domain"
_OWNER = "*"  # custom domains belong to no function: stored under this function name
_RECORDED = ("protocol", "certConfig", "tlsConfig", "authConfig", "wafConfig")


@dataclass(frozen=True, slots=True)
class DomainRoute:
    path: str
    function_name: str
    qualifier: str = "LATEST"
    methods: tuple[str, ...] = ()

    def takes(self, path: str, method: str) -> bool:
        if self.methods and method.upper() not in self.methods:
            return False
        if self.path.endswith("/*"):
            return path == self.path[:-2] or path.startswith(self.path[:-1])
        return path == self.path


@dataclass(frozen=True, slots=True)
class CustomDomain:
    name: str
    routes: tuple[DomainRoute, ...]
    settings: Mapping[str, Any]
    created_at: float
    modified_at: float

    def route(self, path: str, method: str) -> DomainRoute | None:
        """The route a request takes (module docstring), None when none does."""
        exact = [r for r in self.routes if not r.path.endswith("/*") and r.takes(path, method)]
        if exact:
            return exact[0]
        wild = [r for r in self.routes if r.path.endswith("/*") and r.takes(path, method)]
        return max(wild, key=lambda r: len(r.path)) if wild else None


def _routes(config: Any) -> tuple[DomainRoute, ...]:
    if config is None:
        return ()
    routes = config.get("routes") if isinstance(config, Mapping) else None
    if not isinstance(routes, list):
        raise InvalidValue("routeConfig.routes must be a list", field="routeConfig")
    out = []
    for i, item in enumerate(routes):
        if not isinstance(item, Mapping) or not isinstance(item.get("path"), str) or \
                not item["path"].startswith("/") or not isinstance(item.get("functionName"), str):
            raise InvalidValue(f"routeConfig.routes[{i}] needs a path starting with / and a "
                               "functionName", field="routeConfig")
        methods = item.get("methods") or []
        out.append(DomainRoute(item["path"], item["functionName"], str(item.get("qualifier") or
                                                                 "LATEST"),
                         tuple(str(m).upper() for m in methods)))
    return tuple(out)


class CustomDomainService:
    """Custom domains of an account and region (documents in the function config table)."""

    def __init__(self, repo: FunctionConfigRepo, clock: Clock) -> None:
        self._repo = repo
        self._clock = clock

    def _key(self, account_id: str, region: str, name: str) -> tuple[str, str, str, str, str]:
        return (account_id, region, _OWNER, _KIND, name)

    def put(self, account_id: str, region: str, name: str, body: Mapping[str, Any], *,
            create: bool) -> CustomDomain:
        """CreateCustomDomain (``create``) or UpdateCustomDomain (fields given replace)."""
        if not _DOMAIN.match(name):
            raise InvalidValue(f"invalid domain name '{name}'", field="domainName")
        found = self._repo.get(self._key(account_id, region, name))
        if create and found is not None:
            raise AlreadyExists(f"custom domain '{name}' already exists",
                                Resource.CUSTOM_DOMAIN, name=name)
        if not create and found is None:
            raise ResourceNotFound(f"custom domain '{name}' does not exist",
                                   Resource.CUSTOM_DOMAIN, name=name)
        doc = dict(found[0]) if found else {"createdAt": self._clock.now()}
        if "routeConfig" in body:
            _routes(body["routeConfig"])
            doc["routeConfig"] = body["routeConfig"]
        doc.update({k: body[k] for k in _RECORDED if k in body})
        self._repo.put(self._key(account_id, region, name), doc, self._clock.now())
        return self.get(account_id, region, name)

    def get(self, account_id: str, region: str, name: str) -> CustomDomain:
        found = self._repo.get(self._key(account_id, region, name))
        if found is None:
            raise ResourceNotFound(f"custom domain '{name}' does not exist",
                                   Resource.CUSTOM_DOMAIN, name=name)
        doc, modified = found
        return CustomDomain(name, _routes(doc.get("routeConfig")),
                            {k: doc[k] for k in _RECORDED if k in doc},
                            float(doc.get("createdAt", modified)), modified)

    @staticmethod
    def may_be_domain(name: str) -> bool:
        """Whether a request's host name could be a custom domain (not an address, not
        ``localhost``, not a cloud endpoint): a cheap test before :meth:`find`."""
        return bool(_DOMAIN.match(name)) and not name.endswith(".aliyuncs.com")

    def is_domain(self, name: str) -> bool:
        """Whether ``name`` is a custom domain of some account and region."""
        return self.may_be_domain(name) and self._repo.find(_KIND, _OWNER, name) is not None

    def find(self, name: str) -> tuple[str, str, CustomDomain] | None:
        """(account, region, domain) of the custom domain ``name`` (domain names are global,
        as on FC); None when there is none."""
        found = self._repo.find(_KIND, _OWNER, name) if self.may_be_domain(name) else None
        if found is None:
            return None
        return found[0], found[1], self.get(found[0], found[1], name)

    def delete(self, account_id: str, region: str, name: str) -> None:
        if not self._repo.delete(self._key(account_id, region, name)):
            raise ResourceNotFound(f"custom domain '{name}' does not exist",
                                   Resource.CUSTOM_DOMAIN, name=name)

    def list(self, account_id: str, region: str, *, prefix: str = "", next_token: str = "",
             limit: int = 20) -> tuple[builtins.list[CustomDomain], str]:
        rows = self._repo.list(account_id, region, _KIND, function_name=_OWNER,
                               start="", limit=10_000)
        names = sorted(q for _f, q, _d, _t in rows if q.startswith(prefix) and q >= next_token)
        page = [self.get(account_id, region, n) for n in names[:limit]]
        return page, names[limit] if len(names) > limit else ""
