"""Typed client for FC 3.0 custom domains (Get/Create/Update/Delete/ListCustomDomains), the
same calls on Alibaba Cloud and the emulator. A domain is handled as FC's wire map
(``domainName``, ``protocol``, ``routeConfig.routes``, the certificate and other settings)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deployer.cloud.connection import ServiceClient
from deployer.cloud.errors import CloudNotFoundError

__all__ = ["CustomDomainClient"]


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


class CustomDomainClient(ServiceClient):
    """Custom domains of the account in the connection's region."""

    SERVICE = "Function Compute"

    def get(self, name: str) -> dict[str, Any] | None:
        """The domain (wire map), None when it does not exist."""
        try:
            body = self._call("GetCustomDomain", lambda: (
                self._conn.fc.get_custom_domain(name))).body
        except CloudNotFoundError:
            return None
        return dict(_plain(body.to_map()))

    def every(self) -> dict[str, dict[str, Any]]:
        """Every custom domain (wire map) by name: ListCustomDomains, all pages (its entries
        are whole domains, routes included, so nothing is read again per domain)."""
        from alibabacloud_fc20230330 import models

        found: dict[str, dict[str, Any]] = {}
        token = None
        while True:
            request = models.ListCustomDomainsRequest(limit=100, next_token=token)
            body = self._call("ListCustomDomains", lambda r=request: (
                self._conn.fc.list_custom_domains(r))).body
            found |= {d.domain_name: dict(_plain(d.to_map()))
                      for d in body.custom_domains or () if d.domain_name}
            token = body.next_token
            if not token:
                return found

    def create(self, domain: Mapping[str, Any]) -> None:
        from alibabacloud_fc20230330 import models

        body = models.CreateCustomDomainInput().from_map(_plain(domain))
        self._call("CreateCustomDomain", lambda: self._conn.fc.create_custom_domain(
            models.CreateCustomDomainRequest(body=body)))

    def update(self, name: str, domain: Mapping[str, Any]) -> None:
        from alibabacloud_fc20230330 import models

        body = models.UpdateCustomDomainInput().from_map(
            {k: v for k, v in _plain(domain).items() if k != "domainName"})
        self._call("UpdateCustomDomain", lambda: self._conn.fc.update_custom_domain(
            name, models.UpdateCustomDomainRequest(body=body)))

    def delete(self, name: str) -> bool:
        try:
            self._call("DeleteCustomDomain", lambda: self._conn.fc.delete_custom_domain(name))
        except CloudNotFoundError:
            return False
        return True

    def url(self, name: str, path: str) -> str:
        """Where the route answers: ``http://<domain><path>``, with the emulator's port when
        the connection is the emulator's (it serves a domain by the request's Host)."""
        prefix = path[:-1] if path.endswith("*") else path
        if self._conn.endpoints.is_local:
            port = self._conn.endpoints.fc.rsplit(":", 1)[-1]
            return f"http://{name}:{port}{prefix}"
        return f"http://{name}{prefix}"
