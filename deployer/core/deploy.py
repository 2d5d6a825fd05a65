"""From s.yaml to a deployed application: desired state, plan, apply, and the deployment record.

Pipeline of ``deploy up``::

    Manifest --package--> zips + crc64 --render+check--> flow text
             --desired_state--> DesiredState --build_plan (read-only)--> Plan
             --apply_plan--> DeployResult (+ DeploymentRecord of what was created)

``deploy down`` reads the :class:`DeploymentRecord` and deletes exactly the resources listed
there, never anything it did not create. Nothing here knows which target it talks to.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from deployer.cloud.errors import CloudClientError
from deployer.cloud.fc import FunctionConfig
from deployer.config.specs import FlowSpec, FunctionSpec, Manifest
from deployer.core import roles
from deployer.core.apply import DeployResult, apply_plan
from deployer.core.packaging import package_project
from deployer.core.plan import (
    Clients,
    DesiredFlow,
    DesiredFunction,
    DesiredRole,
    DesiredState,
    Plan,
    ResourceType,
    build_plan,
)
from deployer.core.releases import remove_flow_schedules, remove_function_releases
from deployer.core.rendering import render_flow
from deployer.core.validation import check_one_flow
from deployer.errors import InvalidInputError, OperationError

__all__ = [
    "DeploymentRecord",
    "DownResult",
    "PlanSummary",
    "PlannedDeploy",
    "RecordedResource",
    "RemovedResource",
    "UpSummary",
    "apply_deploy",
    "desired_state",
    "plan_deploy",
    "remove_deployment",
]

Progress = Callable[[str], None]
POLICY_SUFFIX = DesiredRole("x").policy_name[1:]  # "-invoke"


def _quiet(message: str) -> None:
    """The default progress sink: discards the message."""


class FlowInvalidError(InvalidInputError):
    """A rendered flow has error diagnostics; they are listed after the message."""

    def __init__(self, flow: str, lines: list[str]) -> None:
        super().__init__(f"flow {flow} is invalid; nothing was deployed",
                         hint="fix the template or its definitionVars; `deploy validate` "
                         "shows the same diagnostics")
        self.lines = lines

    def details(self) -> list[str]:
        return self.lines


def function_config(spec: FunctionSpec, account_id: str) -> FunctionConfig:
    """The FC configuration a deploy sets for ``spec`` (a bare role name becomes its ARN)."""
    role = spec.role or ""
    if role == "auto":
        raise InvalidInputError(f"{spec.resource}: role 'auto' is not supported",
                                hint="name a RAM role or give its ARN")
    if role and not role.startswith("acs:ram::"):
        role = roles.role_arn(account_id, role)
    return FunctionConfig(
        runtime=spec.runtime, handler=spec.handler, memory_size=spec.memory_size,
        timeout=spec.timeout, cpu=spec.cpu, disk_size=spec.disk_size,
        description=spec.description,
        environment_variables=dict(spec.environment_variables or {}),
        instance_concurrency=spec.instance_concurrency, internet_access=spec.internet_access,
        role=role)


def _desired_flow(manifest: Manifest, spec: FlowSpec, *, region: str, account_id: str,
                  rendered_dir: Path) -> DesiredFlow:
    report = check_one_flow(manifest, spec, region=region, account_id=account_id,
                            rendered_dir=rendered_dir)
    if not report.ok:
        raise FlowInvalidError(spec.name, [d.format() for d in report.diagnostics])
    text = render_flow(spec, region=region, account_id=account_id,
                       project_dir=manifest.project_dir).text
    return DesiredFlow(
        name=spec.name, definition=text, description=spec.description,
        execution_mode=spec.execution_mode.value,
        role=DesiredRole(spec.role_name) if spec.role_name else None,
        role_arn=spec.role_arn or "", release=spec.release, schedules=spec.schedules)


def desired_state(manifest: Manifest, *, region: str, account_id: str, build_dir: Path,
                  rendered_dir: Path, progress: Progress = _quiet) -> DesiredState:
    """Package every function and render + check every flow for ``region`` / ``account_id``.

    Local file work only (plus pip for a ``requirements.txt``). Raises InvalidInputError
    (exit 3) for an invalid flow, listing its diagnostics; packaging errors as
    :func:`~deployer.core.packaging.package_function` raises them.
    """
    report = package_project(manifest.functions, out_dir=build_dir, progress=progress)
    functions = tuple(
        DesiredFunction(name=spec.function_name, config=function_config(spec, account_id),
                        zip_bytes=pkg.zip_path.read_bytes(), crc64=pkg.crc64,
                        release=spec.release)
        for spec, pkg in zip(manifest.functions, report.packages, strict=True))
    flows = tuple(_desired_flow(manifest, spec, region=region, account_id=account_id,
                                rendered_dir=rendered_dir) for spec in manifest.flows)
    return DesiredState(region=region, account_id=account_id, functions=functions, flows=flows)


# --- the deployment record ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecordedResource:
    resource: ResourceType
    name: str
    arn: str
    created_at: str


@dataclass
class DeploymentRecord:
    """What ``deploy up`` created for one (project, target, account, region); a
    :class:`CreationLog`.

    Stored as ``<dir>/<project>-<target>-<account>-<region>.json`` (the project is the
    manifest's ``name``, so two manifests never share a record) and rewritten atomically (temporary
    file + rename) after every creation, so a deploy that fails half-way still records what it
    made. ``deploy down`` deletes exactly these resources.
    """

    path: Path
    project: str
    target: str
    account_id: str
    region: str
    resources: list[RecordedResource] = field(default_factory=list)

    @classmethod
    def location(cls, state_dir: Path, project: str, target: str, account_id: str,
                 region: str) -> Path:
        return state_dir / f"{project}-{target}-{account_id}-{region}.json"

    @classmethod
    def load(cls, state_dir: Path, project: str, target: str, account_id: str, region: str
             ) -> DeploymentRecord:
        """The record, or an empty one when none was written yet."""
        path = cls.location(state_dir, project, target, account_id, region)
        record = cls(path, project, target, account_id, region)
        if not path.exists():
            return record
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            record.resources = [
                RecordedResource(ResourceType(r["type"]), r["name"], r.get("arn", ""),
                                 r.get("created_at", "")) for r in data["resources"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise OperationError(f"cannot read the deployment record {path}: {exc}",
                                 hint="fix or delete the file; without it `deploy down` "
                                 "removes nothing") from None
        return record

    def has(self, resource: ResourceType, name: str) -> bool:
        return any(r.resource is resource and r.name == name for r in self.resources)

    def created(self, resource: ResourceType, name: str, arn: str) -> None:
        """Record a creation (CreationLog protocol) and save at once."""
        if not self.has(resource, name):
            stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
            self.resources.append(RecordedResource(resource, name, arn, stamp))
        self.save()

    def forget(self, resource: ResourceType, name: str) -> None:
        self.resources = [r for r in self.resources
                          if not (r.resource is resource and r.name == name)]
        self.save()

    def save(self) -> None:
        data = {"version": 1, "project": self.project, "target": self.target,
                "account_id": self.account_id,
                "region": self.region,
                "resources": [{"type": r.resource.value, "name": r.name, "arn": r.arn,
                               "created_at": r.created_at} for r in self.resources]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=self.path.name, suffix=".partial", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=2)
                fh.write("\n")
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


# --- up / plan --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlannedDeploy:
    """A plan plus the desired state it was computed for (what ``apply_deploy`` needs)."""

    state: DesiredState
    plan: Plan


def plan_deploy(state: DesiredState, clients: Clients) -> PlannedDeploy:
    """Compare ``state`` with the target using read-only calls (see ``build_plan``)."""
    return PlannedDeploy(state, build_plan(state, clients))


def apply_deploy(planned: PlannedDeploy, clients: Clients, record: DeploymentRecord,
                 progress: Progress = _quiet) -> DeployResult:
    """Apply the plan; every creation is recorded in ``record`` as soon as it happens."""
    return apply_plan(planned.plan, planned.state, clients, log=record, progress=progress)


# --- down -------------------------------------------------------------------------------------


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


_DOWN_ORDER = (ResourceType.FLOW, ResourceType.POLICY, ResourceType.ROLE, ResourceType.FUNCTION)


def remove_deployment(record: DeploymentRecord, clients: Clients,
                      progress: Progress = _quiet) -> DownResult:
    """Delete what ``record`` lists (flows, then policies, roles, functions); idempotent.

    A resource already gone counts as removed. A policy still attached to a role this deploy
    did not create, or a role still holding policies it did not attach, is kept and reported,
    never force-removed. Each removal is saved to the record at once.
    """
    writes = 0
    out: list[RemovedResource] = []
    ours = {r.name for r in record.resources if r.resource is ResourceType.POLICY}
    for kind in _DOWN_ORDER:
        for item in [r for r in record.resources if r.resource is kind]:
            progress(f"removing {kind.value} {item.name}")
            outcome, calls = _remove(kind, item, record, ours, clients)
            writes += calls
            out.append(RemovedResource(kind, item.name, item.arn, outcome))
            if not outcome.startswith("kept"):
                record.forget(kind, item.name)
    return DownResult(record.region, record.account_id, record.path, tuple(out), writes)


def _remove(kind: ResourceType, item: RecordedResource, record: DeploymentRecord,
            our_policies: set[str], clients: Clients) -> tuple[str, int]:
    if kind is ResourceType.FLOW:  # its schedules first, as the fnf component removes them
        calls = remove_flow_schedules(clients, item.name)
        gone = not clients.flows.delete_flow(item.name)
        return ("already gone", calls) if gone else ("deleted", calls + 1)
    if kind is ResourceType.FUNCTION:  # aliases and versions first, as `s remove` does
        calls = remove_function_releases(clients, item.name)
        gone = not clients.fc.delete_function(item.name)
        return ("already gone", calls) if gone else ("deleted", calls + 1)
    if kind is ResourceType.POLICY:
        calls = 0
        roles_to_check = {r.name for r in record.resources if r.resource is ResourceType.ROLE}
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
    if clients.ram.get_role(item.name) is None:
        return "already gone", 0
    foreign = [p.name for p in clients.ram.list_role_policies(item.name)
               if p.name not in our_policies]
    if foreign:
        return f"kept: has policies this deploy did not attach ({', '.join(foreign)})", 0
    return ("deleted", 1) if clients.ram.delete_role(item.name) else ("already gone", 0)


def record_summary(record: DeploymentRecord) -> list[dict[str, Any]]:
    """The record's resources as JSON-ready rows."""
    return [{"type": r.resource.value, "name": r.name, "arn": r.arn} for r in record.resources]


# --- results the CLI renders --------------------------------------------------------------------


def _rows(actions: Any) -> list[dict[str, Any]]:
    return [{"type": a.resource.value, "name": a.name, "arn": a.arn or None,
             "action": (a.kind if hasattr(a, "kind") else a.action).value,
             "changes": list(a.changes)} for a in actions]


@dataclass(frozen=True, slots=True)
class PlanSummary:
    """``deploy plan``: what ``deploy up`` would do."""

    target: str
    plan: Plan

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "region": self.plan.region,
                "account_id": self.plan.account_id, "changes": self.plan.has_changes,
                "resources": _rows(self.plan.actions)}


@dataclass(frozen=True, slots=True)
class UpSummary:
    """``deploy up``: every resource with its ARN and what happened to it."""

    target: str
    result: DeployResult
    record: Path

    def to_json(self) -> dict[str, Any]:
        r = self.result
        return {"target": self.target, "region": r.region, "account_id": r.account_id,
                "changed": r.changed, "write_calls": r.write_calls,
                "resources": _rows(r.resources), "record": str(self.record)}
