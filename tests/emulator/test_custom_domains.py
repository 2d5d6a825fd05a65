"""Custom domains in the emulator's domain: CRUD and routing paths to functions."""

from __future__ import annotations

from pathlib import Path

import pytest

from deployer.emulator.app import Emulator
from deployer.emulator.clock import VirtualClock
from deployer.emulator.services.errors import AlreadyExists, InvalidValue, ResourceNotFound


@pytest.fixture
def emulator(tmp_path: Path):
    emu = Emulator(tmp_path / "state", VirtualClock(1_700_000_000.0))
    yield emu
    emu.close()


ROUTES = {"routes": [
    {"path": "/api/*", "functionName": "api"},
    {"path": "/api/orders/*", "functionName": "orders", "qualifier": "prod"},
    {"path": "/health", "functionName": "health", "methods": ["GET"]},
    {"path": "/*", "functionName": "site"}]}


def test_paths_route_to_functions_exact_first_then_longest_prefix(emulator: Emulator) -> None:
    svc, a = emulator.custom_domains, emulator.identity.account_id
    domain = svc.put(a, "cn-hangzhou", "shop.example.com",
                     {"protocol": "HTTP", "routeConfig": ROUTES}, create=True)

    def target(path: str, method: str = "GET") -> tuple[str, str] | None:
        route = domain.route(path, method)
        return (route.function_name, route.qualifier) if route else None

    assert target("/health") == ("health", "LATEST")
    assert target("/health", "POST") == ("site", "LATEST")
    assert target("/api/orders/7") == ("orders", "prod")
    assert target("/api/users") == ("api", "LATEST")
    assert target("/api") == ("api", "LATEST")
    assert target("/index.html") == ("site", "LATEST")
    assert domain.settings == {"protocol": "HTTP"}


def test_domain_crud(emulator: Emulator) -> None:
    svc, a = emulator.custom_domains, emulator.identity.account_id
    svc.put(a, "cn-hangzhou", "b.example.com", {"routeConfig": ROUTES}, create=True)
    svc.put(a, "cn-hangzhou", "a.example.com", {}, create=True)
    with pytest.raises(AlreadyExists):
        svc.put(a, "cn-hangzhou", "a.example.com", {}, create=True)
    with pytest.raises(InvalidValue, match="invalid domain name"):
        svc.put(a, "cn-hangzhou", "Not A Domain", {}, create=True)
    with pytest.raises(InvalidValue, match="routes\\[0\\]"):
        svc.put(a, "cn-hangzhou", "a.example.com", {"routeConfig": {"routes": [{}]}},
                create=False)
    updated = svc.put(a, "cn-hangzhou", "a.example.com", {"routeConfig": {"routes": [
        {"path": "/x", "functionName": "x"}]}}, create=False)
    page, token = svc.list(a, "cn-hangzhou", limit=1)
    svc.delete(a, "cn-hangzhou", "b.example.com")
    with pytest.raises(ResourceNotFound):
        svc.get(a, "cn-hangzhou", "b.example.com")
    assert [r.path for r in updated.routes] == ["/x"]
    assert [d.name for d in page] == ["a.example.com"] and token == "b.example.com"
