"""CloudFlow flow versions and aliases (domain logic, no HTTP).

``PublishFlowVersion`` freezes the flow's definition, role, environment and mode as version
"1", "2", ... (never reused after a deletion); ``StartExecution`` with ``Qualifier`` (a version
or an alias) runs the frozen definition. An alias routes to one or two versions by weight: the
docs say "Configure one or two flow versions. When an execution starts for the alias, the
system selects a flow version based on the specified weights" (CreateFlowAlias /
UpdateFlowAlias). Weights are integers; each start picks a version with probability
weight / (sum of weights) — the docs' examples give a single version a weight of 10, 20 or
30, so weights are relative rather than percentages that must add up to 100 (INFERRED).

Decisions (INFERRED, docs/emulator.md): version and alias names follow the flow-name rules;
a version an alias routes to cannot be deleted (InvalidValue); deleting a flow drops its
versions and aliases; ListFlowVersions is newest first and ListFlowAliases by name, both with
``Limit`` 1-999 (default 60) like ListFlows, the token being the next page's first item.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.records import FlowRecord
from deployer.emulator.services.errors import (
    AlreadyExists,
    InvalidValue,
    Resource,
    ResourceNotFound,
)
from deployer.emulator.services.flows import FlowService, check_name
from deployer.emulator.services.numbers import names_version, parse_number
from deployer.emulator.store.release_repos import AliasRow, ReleaseRepo, VersionRow

__all__ = ["FlowAlias", "FlowReleases", "FlowVersion", "Route"]

MAX_ROUTES = 2


@dataclass(frozen=True, slots=True)
class Route:
    version: str
    weight: int


@dataclass(frozen=True, slots=True)
class FlowVersion:
    flow_name: str
    version: str
    description: str
    created_at: float


@dataclass(frozen=True, slots=True)
class FlowAlias:
    flow_name: str
    name: str
    description: str
    routes: tuple[Route, ...]
    created_at: float
    modified_at: float


def _version(row: VersionRow) -> FlowVersion:
    return FlowVersion(row.name, str(row.version), row.description, row.created_at)


def _alias(row: AliasRow) -> FlowAlias:
    routes = tuple(Route(str(r["version"]), int(r["weight"])) for r in row.routing or [])
    return FlowAlias(row.name, row.alias, row.description, routes, row.created_at,
                     row.modified_at)


def _snapshot(flow: FlowRecord) -> dict[str, Any]:
    return {"definition": flow.definition, "role_arn": flow.role_arn,
            "environment": flow.environment, "execution_mode": flow.execution_mode,
            "flow_id": flow.flow_id, "type": flow.type}


class FlowReleases:
    """Versions and aliases of the flows of ``flows``."""

    def __init__(self, flows: FlowService, repo: ReleaseRepo, clock: Clock, *,
                 rng: random.Random | None = None) -> None:
        self._flows = flows
        self._repo = repo
        self._clock = clock
        self._random = rng or random.Random()

    # --- versions -----------------------------------------------------------------------------

    def publish(self, account_id: str, region: str, flow_name: str,
                description: str = "") -> FlowVersion:
        flow = self._flows.get(account_id, region, flow_name)
        row = self._repo.publish(account_id, region, flow_name, description, _snapshot(flow),
                                 self._clock.now())
        return _version(row)

    def list_versions(self, account_id: str, region: str, flow_name: str, *, limit: int,
                      next_token: str = "") -> tuple[list[FlowVersion], str]:
        """Newest first; the token is the next page's first version."""
        self._flows.get(account_id, region, flow_name)
        start = parse_number(next_token) if next_token else None
        if next_token and start is None:
            raise InvalidValue(f"NextToken '{next_token}' is invalid", field="NextToken")
        rows = self._repo.versions(account_id, region, flow_name, start=start,
                                   limit=limit + 1, descending=True)
        token = str(rows[limit].version) if len(rows) > limit else ""
        return [_version(r) for r in rows[:limit]], token

    def delete_version(self, account_id: str, region: str, flow_name: str,
                       version: str) -> None:
        self._flows.get(account_id, region, flow_name)
        number = self._existing(account_id, region, flow_name, version).version
        users = [a.alias for a in self._repo.all_aliases(account_id, region, flow_name)
                 if any(str(r["version"]) == version for r in a.routing or [])]
        if users:
            raise InvalidValue(f"FlowVersion {version} of flow {flow_name} is used by alias "
                               f"{', '.join(users)}: route the alias elsewhere first",
                               field="FlowVersion")
        self._repo.delete_version(account_id, region, flow_name, number)

    def _existing(self, account_id: str, region: str, flow_name: str,
                  version: str) -> VersionRow:
        number = parse_number(version)
        row = (self._repo.version(account_id, region, flow_name, number)
               if number is not None else None)
        if row is None:
            raise ResourceNotFound(f"FlowVersion {version} of flow {flow_name} does not exist.",
                                   Resource.VERSION, name=version)
        return row

    def describe_version(self, account_id: str, region: str, flow_name: str,
                         version: str) -> FlowRecord:
        """The flow as version ``version`` froze it (DescribeFlow with FlowVersion)."""
        flow = self._flows.get(account_id, region, flow_name)
        return self._frozen(flow, self._existing(account_id, region, flow_name, version))

    @staticmethod
    def _frozen(flow: FlowRecord, row: VersionRow) -> FlowRecord:
        snap = row.snapshot
        return dataclasses.replace(
            flow, definition=snap["definition"], role_arn=snap["role_arn"],
            environment=snap["environment"], execution_mode=snap["execution_mode"],
            description=row.description or flow.description, modified_at=row.created_at)

    # --- aliases ------------------------------------------------------------------------------

    def create_alias(self, account_id: str, region: str, flow_name: str, name: str, *,
                     routes: tuple[Route, ...] | None, description: str = "") -> FlowAlias:
        self._flows.get(account_id, region, flow_name)
        check_name(name)
        if routes is None:
            raise InvalidValue("The required parameter RoutingConfigurations is missing.",
                               field="RoutingConfigurations")
        self._check_routes(account_id, region, flow_name, routes)
        now = self._clock.now()
        row = AliasRow(flow_name, name, routes[0].version, description, _routing(routes),
                       now, now)
        if not self._repo.insert_alias(account_id, region, row):
            raise AlreadyExists(f"FlowAlias {name} of flow {flow_name} already exists.",
                                Resource.ALIAS, name=name)
        return _alias(row)

    def describe_alias(self, account_id: str, region: str, flow_name: str,
                       name: str) -> FlowAlias:
        return _alias(self._alias_row(account_id, region, flow_name, name))

    def _alias_row(self, account_id: str, region: str, flow_name: str, name: str) -> AliasRow:
        self._flows.get(account_id, region, flow_name)
        row = self._repo.alias(account_id, region, flow_name, name)
        if row is None:
            raise ResourceNotFound(f"FlowAlias {name} of flow {flow_name} does not exist.",
                                   Resource.ALIAS, name=name)
        return row

    def update_alias(self, account_id: str, region: str, flow_name: str, name: str, *,
                     routes: tuple[Route, ...] | None,
                     description: str | None = None) -> FlowAlias:
        row = self._alias_row(account_id, region, flow_name, name)
        routing = row.routing
        version = row.version
        if routes is not None:
            self._check_routes(account_id, region, flow_name, routes)
            routing, version = _routing(routes), routes[0].version
        new = dataclasses.replace(
            row, version=version, routing=routing,
            description=row.description if description is None else description,
            modified_at=max(self._clock.now(), row.modified_at))
        self._repo.update_alias(account_id, region, new)
        return _alias(new)

    def delete_alias(self, account_id: str, region: str, flow_name: str, name: str) -> None:
        self._flows.get(account_id, region, flow_name)
        if not self._repo.delete_alias(account_id, region, flow_name, name):
            raise ResourceNotFound(f"FlowAlias {name} of flow {flow_name} does not exist.",
                                   Resource.ALIAS, name=name)

    def list_aliases(self, account_id: str, region: str, flow_name: str, *, limit: int,
                     next_token: str = "") -> tuple[list[FlowAlias], str]:
        self._flows.get(account_id, region, flow_name)
        rows = self._repo.aliases(account_id, region, flow_name, start=next_token,
                                  limit=limit + 1)
        token = rows[limit].alias if len(rows) > limit else ""
        return [_alias(r) for r in rows[:limit]], token

    def _check_routes(self, account_id: str, region: str, flow_name: str,
                      routes: tuple[Route, ...]) -> None:
        if not 1 <= len(routes) <= MAX_ROUTES:
            raise InvalidValue("RoutingConfigurations must name one or two flow versions",
                               field="RoutingConfigurations")
        if len({r.version for r in routes}) != len(routes):
            raise InvalidValue("RoutingConfigurations names a version twice",
                               field="RoutingConfigurations")
        for route in routes:
            if not 0 <= route.weight <= 100:
                raise InvalidValue(f"Weight of version {route.version} must be between 0 and "
                                   f"100, got {route.weight}", field="RoutingConfigurations")
            self._existing(account_id, region, flow_name, route.version)
        if sum(r.weight for r in routes) <= 0:
            raise InvalidValue("RoutingConfigurations needs a positive Weight",
                               field="RoutingConfigurations")

    # --- StartExecution's Qualifier -----------------------------------------------------------

    def resolve(self, flow: FlowRecord, qualifier: str) -> tuple[FlowRecord, str]:
        """The flow a ``qualifier`` (a version or an alias) runs and the chosen version."""
        a, r, name = flow.account_id, flow.region, flow.name
        if names_version(qualifier):
            return self._frozen(flow, self._existing(a, r, name, qualifier)), qualifier
        alias = self._repo.alias(a, r, name, qualifier)
        if alias is None:
            raise ResourceNotFound(f"Qualifier {qualifier} of flow {name} does not exist: it is "
                                   "neither a version nor an alias.", Resource.ALIAS,
                                   name=qualifier)
        routes = _alias(alias).routes
        pick = self._random.random() * sum(x.weight for x in routes)
        chosen = routes[-1].version
        for route in routes:
            if pick < route.weight:
                chosen = route.version
                break
            pick -= route.weight
        return self._frozen(flow, self._existing(a, r, name, chosen)), chosen

    def forget(self, account_id: str, region: str, flow_name: str) -> None:
        """The flow was deleted: drop its versions, aliases and version counter."""
        self._repo.drop_all(account_id, region, flow_name)


def _routing(routes: tuple[Route, ...]) -> list[dict[str, Any]]:
    return [{"version": r.version, "weight": r.weight} for r in routes]
