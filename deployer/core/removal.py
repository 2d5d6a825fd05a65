"""Removing what ``deploy up`` created: all of it (``deploy down``) or what s.yaml dropped.

Only resources in the deployment record are ever removed. A resource already gone counts as
removed. A policy still attached to a role this deploy did not create, or a role still holding
policies it did not attach, is kept and reported, never force-removed. A resource whose
ownership marker now names another project (:mod:`deployer.core.ownership`) is kept, naming
that project, unless ``force``; one this project took over from another is never deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from deployer.cloud.errors import CloudClientError
from deployer.core import ownership
from deployer.core.custom_domains import remove_function_routes
from deployer.core.plan import REMOVAL_ORDER, ActionKind, Clients, DesiredRole, Plan
from deployer.core.record import CreationLog, DeploymentRecord, RecordedResource
from deployer.core.releases import remove_flow_schedules, remove_function_releases
from deployer.core.resources import ResourceType
from deployer.core.triggers import remove_function_triggers

__all__ = ["DownResult", "RemovedResource", "forget_gone", "remove_deployment",
           "remove_resource"]

POLICY_SUFFIX = DesiredRole("x").policy_name[1:]  # "-invoke"


@dataclass(frozen=True, slots=True)
class RemovedResource:
    resource: ResourceType
    name: str
    arn: str
    outcome: str  # deleted | already gone | kept: <reason>


@dataclass(frozen=True, slots=True)
class DownResult:
    region: str
    account_id: str
    record: Path
    resources: tuple[RemovedResource, ...]
    write_calls: int


def remove_deployment(record: DeploymentRecord, clients: Clients,
                      progress: Callable[[str], None] = lambda message: None, *,
                      force: bool = False) -> DownResult:
    """Delete what ``record`` lists (flows, then policies, roles, functions); idempotent.

    Each removal is saved to the record at once. A resource now owned by another project is
    kept (``force``: deleted anyway); one taken over from another project is forgotten, not
    deleted.
    """
    writes = 0
    out: list[RemovedResource] = []
    recorded = tuple(record.resources)
    for kind in REMOVAL_ORDER:
        for item in [r for r in recorded if r.resource is kind]:
            owner = "" if force else current_owner(item, clients, record.project)
            if item.taken_from or owner:
                outcome = f"kept: taken over from project {item.taken_from}" \
                    if item.taken_from else f"kept: project {owner} owns it now " \
                    "(deploy down --force deletes it)"
                out.append(RemovedResource(kind, item.name, item.arn, outcome))
                if item.taken_from:
                    record.forget(kind, item.name)
                continue
            progress(f"removing {kind.value} {item.name}")
            outcome, calls = remove_resource(item, recorded, clients)
            writes += calls
            out.append(RemovedResource(kind, item.name, item.arn, outcome))
            if not outcome.startswith("kept"):
                record.forget(kind, item.name)
    return DownResult(record.region, record.account_id, record.path, tuple(out), writes)


def current_owner(item: RecordedResource, clients: Clients, project: str) -> str:
    """Another project named by the resource's ownership marker ("" when it is ours, has no
    marker, or is gone)."""
    found: str | None = None
    if item.resource is ResourceType.FUNCTION:
        remote = clients.fc.get_function(item.name)
        found = ownership.function_owner(remote.tags) if remote is not None else None
    elif item.resource is ResourceType.FLOW:
        flow = clients.flows.describe_flow(item.name)
        found = ownership.definition_owner(flow.definition)[1] if flow is not None else None
    elif item.resource is ResourceType.ROLE:
        role = clients.ram.get_role(item.name)
        found = ownership.description_owner(role.description) if role is not None else None
    return found if found and found != project else ""


def forget_gone(plan: Plan, log: CreationLog) -> None:
    """Forget recorded resources that s.yaml no longer declares and that no longer exist
    (the plan found them gone, so it has no delete action for them)."""
    deleting = {(a.resource, a.name) for a in plan.actions if a.kind is ActionKind.DELETE}
    for item in plan.recorded:
        if not plan.state.declares(item.resource, item.name) \
                and (item.resource, item.name) not in deleting:
            log.forget(item.resource, item.name)


def remove_resource(item: RecordedResource, recorded: tuple[RecordedResource, ...],
                    clients: Clients) -> tuple[str, int]:
    """Remove one recorded resource; ``(outcome, write calls)``."""
    kind = item.resource
    if kind is ResourceType.FLOW:  # its schedules first, as the fnf component removes them
        calls = remove_flow_schedules(clients, item.name)
        gone = not clients.flows.delete_flow(item.name)
        return ("already gone", calls) if gone else ("deleted", calls + 1)
    if kind is ResourceType.FUNCTION:  # aliases and versions first, as `s remove` does
        calls = remove_function_triggers(clients, item.name)
        calls += remove_function_routes(clients, item.name)
        calls += remove_function_releases(clients, item.name)
        gone = not clients.fc.delete_function(item.name)
        return ("already gone", calls) if gone else ("deleted", calls + 1)
    if kind is ResourceType.POLICY:
        return _remove_policy(item, recorded, clients)
    return _remove_role(item, recorded, clients)


def _remove_policy(item: RecordedResource, recorded: tuple[RecordedResource, ...],
                   clients: Clients) -> tuple[str, int]:
    calls = 0
    roles_to_check = {r.name for r in recorded if r.resource is ResourceType.ROLE}
    if item.name.endswith(POLICY_SUFFIX):  # the role it was made for may predate the deploy
        roles_to_check.add(item.name[: -len(POLICY_SUFFIX)])
    for role in sorted(roles_to_check):
        if clients.ram.get_role(role) is not None:
            calls += int(clients.ram.detach_policy(role, item.name))
    try:
        gone = not clients.ram.delete_policy(item.name)
    except CloudClientError as exc:
        return f"kept: {exc.code or 'refused'} (attached elsewhere?)", calls
    return ("already gone", calls) if gone else ("deleted", calls + 1)


def _remove_role(item: RecordedResource, recorded: tuple[RecordedResource, ...],
                 clients: Clients) -> tuple[str, int]:
    if clients.ram.get_role(item.name) is None:
        return "already gone", 0
    ours = {r.name for r in recorded if r.resource is ResourceType.POLICY}
    foreign = [p.name for p in clients.ram.list_role_policies(item.name) if p.name not in ours]
    if foreign:
        return f"kept: has policies this deploy did not attach ({', '.join(foreign)})", 0
    return ("deleted", 1) if clients.ram.delete_role(item.name) else ("already gone", 0)
