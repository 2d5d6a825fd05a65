"""From s.yaml to a deployed application: desired state, plan, apply, and the deployment record.

Pipeline of ``deploy up``::

    Manifest --package--> zips + crc64 --render+check--> flow text
             --desired_state--> DesiredState --build_plan (read-only, + the record)--> Plan
             --apply_plan--> DeployResult (+ DeploymentRecord of what was created/removed)

The :class:`Plan` carries its whole payload (the desired state and the record's resources), so
applying it needs nothing else. ``deploy down`` reads the :class:`DeploymentRecord` and
deletes exactly the resources listed there, never anything it did not create; ``deploy up``
deletes those of them that s.yaml no longer declares, once the user confirmed. Nothing here
knows which target it talks to.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deployer.cloud.fc import FunctionConfig, LogConfig
from deployer.config.fc3_domains import AUTO_DOMAIN, auto_domain_name
from deployer.config.settings import require_cloudflow_region
from deployer.config.specs import FlowSpec, FunctionSpec, Manifest
from deployer.core import ownership, roles
from deployer.core.apply import ApplyEvents, DeployResult, ResourceResult, apply_plan
from deployer.core.next_steps import next_commands
from deployer.core.packaging import package_project
from deployer.core.plan import (
    Action,
    Clients,
    DesiredFlow,
    DesiredFunction,
    DesiredLogStore,
    DesiredRole,
    DesiredState,
    Plan,
    build_plan,
)
from deployer.core.record import DeploymentRecord, RecordedResource
from deployer.core.removal import DownResult, RemovedResource, remove_deployment
from deployer.core.service_roles import default_role
from deployer.core.validated import PLACEHOLDER_ACCOUNT_ID, check_flow_once
from deployer.errors import InvalidInputError

__all__ = [
    "DeploymentRecord",
    "DownResult",
    "PlanSummary",
    "RecordedResource",
    "RemovedResource",
    "UpSummary",
    "apply_deploy",
    "desired_state",
    "plan_deploy",
    "precheck_flows",
    "remove_deployment",
]

Progress = Callable[[str], None]


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
    """The FC configuration a deploy sets for ``spec`` (a bare role name becomes its ARN;
    ``role: auto`` is already the default role's ARN)."""
    role = spec.role or ""
    if role and not role.startswith("acs:ram::"):
        role = roles.role_arn(account_id, role)
    settings = dict(spec.settings)
    if spec.instance_lifecycle_config is not None:
        settings["instanceLifecycleConfig"] = spec.instance_lifecycle_config
    return FunctionConfig(
        runtime=spec.runtime, handler=spec.handler, memory_size=spec.memory_size,
        timeout=spec.timeout, cpu=spec.cpu, disk_size=spec.disk_size,
        description=spec.description,
        environment_variables=dict(spec.environment_variables or {}),
        instance_concurrency=spec.instance_concurrency, internet_access=spec.internet_access,
        role=role, log_config=_log_config(spec), layers=tuple(spec.layers),
        settings=settings)


def _log_config(spec: FunctionSpec) -> LogConfig | None:
    value = spec.log_config
    if value is None:
        return None
    return LogConfig(project=str(value["project"]), logstore=str(value["logstore"]),
                     enable_request_metrics=bool(value.get("enableRequestMetrics", True)),
                     enable_instance_metrics=bool(value.get("enableInstanceMetrics", False)),
                     log_begin_rule=str(value.get("logBeginRule") or ""))


def _desired_flow(manifest: Manifest, spec: FlowSpec, *, region: str, account_id: str,
                  rendered_dir: Path) -> DesiredFlow:
    checked = check_flow_once(manifest, spec, region=region, account_id=account_id,
                              rendered_dir=rendered_dir)
    if checked.report is not None and not checked.report.ok:
        raise FlowInvalidError(spec.name, checked.report.lines())
    return DesiredFlow(
        name=spec.name, definition=checked.text, description=spec.description,
        execution_mode=spec.execution_mode.value,
        role=DesiredRole(spec.role_name) if spec.role_name else None,
        role_arn=spec.role_arn or "", source=_flow_source(manifest, spec),
        release=spec.release, schedules=spec.schedules, resource=spec.resource,
        invokes=checked.invokes, dynamic_invokes=checked.dynamic)


def _flow_roles(manifest: Manifest, flows: tuple[DesiredFlow, ...]) -> tuple[DesiredFlow, ...]:
    """The flows with their roles merged: one role per name, shared by the flows naming it,
    whose policy grants what any of them invokes (all the project's functions, any
    qualifier, when one of them computes its function ARN)."""
    by_name: dict[str, list[DesiredFlow]] = {}
    for flow in flows:
        if flow.role is not None:
            by_name.setdefault(flow.role.name, []).append(flow)
    merged: dict[str, DesiredRole] = {}
    for name, users in by_name.items():
        resources: list[str] | None = []
        for flow in users:
            if flow.dynamic_invokes or resources is None:
                resources = None
                continue
            for arn in flow.invokes:
                base = arn if arn.count("/") == 1 else arn.rsplit("/", 1)[0]
                resources += [base, arn] if base != arn else [base]
        merged[name] = DesiredRole(name, ownership.role_description(manifest.name),
                                   None if resources is None else tuple(dict.fromkeys(resources)),
                                   tuple(f.resource for f in users))
    return tuple(dataclasses.replace(f, role=merged[f.role.name]) if f.role is not None else f
                 for f in flows)


def _flow_source(manifest: Manifest, spec: FlowSpec) -> str:
    """The file the user edits for ``spec``: its template relative to the project, or the
    definition file's name."""
    if not spec.is_template:
        return spec.definition.name
    try:
        return str(spec.definition.resolve().relative_to(manifest.project_dir.resolve()))
    except ValueError:
        return str(spec.definition)


def precheck_flows(manifest: Manifest, *, region: str | None, rendered_dir: Path) -> None:
    """Render and check every flow with the placeholder account before anything connects, so
    a broken template fails (FlowInvalidError, exit 3) before an emulator is started or a cloud
    call is made. Account-dependent findings wait for the real account (:func:`desired_state`).
    Raises InvalidInputError for a ``region`` without CloudFlow. Flows whose exact inputs
    validated cleanly before are not rendered again (:mod:`deployer.core.validated`)."""
    if region is not None:
        require_cloudflow_region(region)
    for spec in manifest.flows:
        report = check_flow_once(manifest, spec, region=region or spec.region,
                                 account_id=PLACEHOLDER_ACCOUNT_ID,
                                 rendered_dir=rendered_dir).report
        if report is None:  # these exact inputs rendered and validated cleanly before
            continue
        from deployer.core.validation import ProjectCode

        errors = [d for d in report.diagnostics
                  if d.is_error and d.code != ProjectCode.ACCOUNT_MISMATCH]
        if errors:
            raise FlowInvalidError(spec.name, report.lines(tuple(errors)))


def _custom_domain(spec: FunctionSpec) -> Any:
    """s.yaml's customDomain with ``domainName: auto`` named (core/custom_domains.py)."""
    domain = spec.custom_domain
    if domain is None or domain["domainName"] != AUTO_DOMAIN:
        return domain
    return {**domain, "domainName": auto_domain_name(spec.function_name, spec.region)}


def desired_state(manifest: Manifest, *, region: str, account_id: str, build_dir: Path,
                  rendered_dir: Path, progress: Progress = _quiet,
                  only: frozenset[str] | None = None) -> DesiredState:
    """Package every function and render + check every flow for ``region`` / ``account_id``
    (``only``: just these s.yaml resources; the checks still see the whole project).

    Local file work only (plus pip for a ``requirements.txt``). Raises InvalidInputError
    (exit 3) for an invalid flow, listing its diagnostics; packaging errors as
    :func:`~deployer.core.packaging.package_function` raises them.
    """
    wanted_functions = tuple(f for f in manifest.functions if only is None or f.resource in only)
    wanted_flows = tuple(f for f in manifest.flows if only is None or f.resource in only)
    report = package_project(wanted_functions, out_dir=build_dir, progress=progress)
    functions = tuple(
        DesiredFunction(name=spec.function_name, config=function_config(spec, account_id),
                        zip_bytes=pkg.zip_path.read_bytes(), crc64=pkg.crc64,
                        release=spec.release, resource=spec.resource, tags=spec.tags,
                        triggers=tuple(spec.triggers),
                        async_invoke_config=spec.async_invoke_config,
                        reserved_concurrency=spec.reserved_concurrency,
                        provision_config=spec.provision_config,
                        scaling_config=spec.scaling_config,
                        custom_domain=_custom_domain(spec))
        for spec, pkg in zip(wanted_functions, report.packages, strict=True))
    flows = _flow_roles(manifest, tuple(
        _desired_flow(manifest, spec, region=region, account_id=account_id,
                      rendered_dir=rendered_dir) for spec in wanted_flows))
    service = {r.name: r for spec in wanted_functions if spec.role_auto
               for r in [default_role("aliyunfcdefaultrole")] if r is not None}
    stores = {(s.project, s.logstore): s for spec in wanted_functions if spec.log_auto
              and spec.log_config is not None for s in [DesiredLogStore(
                  str(spec.log_config["project"]), str(spec.log_config["logstore"]))]}
    return DesiredState(
        region=region, account_id=account_id, functions=functions, flows=flows,
        project=manifest.name,
        flow_roles=tuple({f.role.name: f.role for f in flows if f.role is not None}.values()),
        service_roles=tuple(service.values()), log_stores=tuple(stores.values()),
        order=tuple(k for k in manifest.resource_names() if only is None or k in only),
        consumed=manifest.consumed, undeployed=manifest.undeployed, notes=manifest.notes)


# --- up / plan --------------------------------------------------------------------------------


def plan_deploy(state: DesiredState, clients: Clients,
                record: DeploymentRecord | None = None) -> Plan:
    """Compare ``state`` with the target using read-only calls (see ``build_plan``); the
    resources ``record`` holds but ``state`` no longer declares are planned as deletions."""
    recorded = tuple(record.resources) if record is not None else ()
    return build_plan(state, clients, recorded)


def apply_deploy(plan: Plan, clients: Clients, record: DeploymentRecord, *,
                 prune: bool = False, progress: Progress = _quiet,
                 events: ApplyEvents | None = None) -> DeployResult:
    """Apply the plan; every creation and removal is saved in ``record`` as it happens.
    Deletions run only with ``prune`` (the user confirmed them)."""
    return apply_plan(plan, clients, log=record, prune=prune, progress=progress, events=events)


def project_next_steps(manifest: Manifest, state: DesiredState) -> tuple[str, ...]:
    """The ``Next:`` commands for this project's flows (:mod:`deployer.core.next_steps`)."""
    texts = {f.name: f.definition for f in state.flows}
    return next_commands([(f.name, f.execution_input, texts.get(f.name, ""))
                       for f in manifest.flows])


def record_summary(record: DeploymentRecord) -> list[dict[str, Any]]:
    """The record's resources as JSON-ready rows."""
    return [{"type": r.resource.value, "name": r.name, "arn": r.arn} for r in record.resources]


# --- results the CLI renders --------------------------------------------------------------------


def _row(item: Action | ResourceResult) -> dict[str, Any]:
    kind = item.kind if isinstance(item, Action) else item.action
    row: dict[str, Any] = {"type": item.resource.value, "name": item.name,
                           "arn": item.arn or None, "action": kind.value,
                           "changes": list(item.changes),
                           "settings": [s.to_json() for s in item.settings],
                           "diff": item.diff or None}
    if isinstance(item, Action):
        row["owner"] = item.owner or None
        row["invoked_by"] = list(item.invoked_by)
    if isinstance(item, ResourceResult) and item.outcome:
        row["outcome"] = item.outcome
    if item.url:
        row["url"] = item.url
    return row


def _not_deployed(state: DesiredState) -> list[dict[str, Any]]:
    return [u.to_json() for u in state.undeployed]


@dataclass(frozen=True, slots=True)
class PlanSummary:
    """``deploy plan``: what ``deploy up`` would do, and what s.yaml holds that it does not
    deploy."""

    target: str
    plan: Plan

    def to_json(self) -> dict[str, Any]:
        return {"target": self.target, "region": self.plan.region,
                "account_id": self.plan.account_id, "changes": self.plan.has_changes,
                "resources": [_row(a) for a in self.plan.actions],
                "not_deployed": _not_deployed(self.plan.state),
                "notes": list(self.plan.state.notes)}


@dataclass(frozen=True, slots=True)
class UpSummary:
    """``deploy up``: every resource with its ARN and what happened to it."""

    target: str
    result: DeployResult
    record: Path
    state: DesiredState | None = None
    next_steps: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        r = self.result
        return {"target": self.target, "region": r.region, "account_id": r.account_id,
                "changed": r.changed, "write_calls": r.write_calls,
                "resources": [_row(x) for x in r.resources],
                "kept": [_row(x) for x in r.kept], "record": str(self.record),
                "not_deployed": _not_deployed(self.state) if self.state else [],
                "notes": list(self.state.notes) if self.state else [],
                "warnings": list(r.warnings), "next": list(self.next_steps)}
