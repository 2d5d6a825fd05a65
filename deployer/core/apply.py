"""Apply a plan: the only code in a deploy that changes anything in the cloud.

Each action is applied in plan order (functions, then the role and its policy, then the flow,
then the deletions), so a failure part-way leaves resources that the next ``deploy up``
converges from. Creations and removals are reported to a :class:`CreationLog` right after they
happen, so ``deploy down`` removes exactly what ``deploy up`` created and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from deployer.core import roles
from deployer.core.plan import (
    Action,
    ActionKind,
    Clients,
    DesiredFlow,
    DesiredRole,
    Plan,
    ResourceType,
    SettingChange,
)
from deployer.core.record import CreationLog
from deployer.core.releases import RELEASE_TYPES, ReleaseApplier
from deployer.core.removal import forget_gone, remove_resource
from deployer.errors import OperationError

__all__ = ["DeployResult", "ResourceResult", "apply_plan"]

#: The outcome of a deletion the user did not confirm.
KEPT_UNCONFIRMED = "kept: not confirmed (deploy up --yes removes it)"


@dataclass(frozen=True, slots=True)
class ResourceResult:
    resource: ResourceType
    name: str
    arn: str
    action: ActionKind
    changes: tuple[str, ...]
    settings: tuple[SettingChange, ...] = ()
    diff: str = ""
    outcome: str = ""  # for deletions: deleted | already gone | kept: <reason>


@dataclass(frozen=True, slots=True)
class DeployResult:
    region: str
    account_id: str
    resources: tuple[ResourceResult, ...]
    write_calls: int

    @property
    def changed(self) -> bool:
        return self.write_calls > 0

    @property
    def kept(self) -> tuple[ResourceResult, ...]:
        """Deletions that were planned but not carried out."""
        return tuple(r for r in self.resources if r.outcome.startswith("kept"))


class _Applier:
    def __init__(self, plan: Plan, clients: Clients, log: CreationLog | None,
                 progress: Callable[[str], None]) -> None:
        self.plan, self.state, self.clients = plan, plan.state, clients
        self.log, self.progress = log, progress
        self.writes = 0
        self.role_arns: dict[str, str] = {}

    def _created(self, resource: ResourceType, name: str, arn: str) -> None:
        if self.log is not None:
            self.log.created(resource, name, arn)

    def function(self, action: Action) -> str:
        desired = next(f for f in self.state.functions if f.name == action.name)
        fc = self.clients.fc
        if action.kind is ActionKind.CREATE:
            self.progress(f"creating function {action.name}")
            remote = fc.create_function(action.name, desired.config, desired.zip_bytes)
            self.writes += 1
            self._created(ResourceType.FUNCTION, action.name, remote.arn)
            self._warn(remote.warnings)
            return remote.arn
        code = action.changed("code")
        config = any(s.name != "code" for s in action.settings)
        self.progress(f"updating function {action.name} ({', '.join(action.changes)})")
        remote = fc.update_function(
            action.name,
            config=desired.config if config else None,
            zip_bytes=desired.zip_bytes if code else None,
        )
        self.writes += 1
        self._warn(remote.warnings)
        return remote.arn

    def _warn(self, warnings: tuple[str, ...]) -> None:
        for warning in warnings:  # said by the target once, when caused
            self.progress(f"warning: {warning}")

    def role(self, action: Action, role: DesiredRole) -> str:
        ram = self.clients.ram
        if action.kind is ActionKind.CREATE:
            self.progress(f"creating role {role.name}")
            created = ram.create_role(role.name, roles.trust_policy(), role.description)
            self.writes += 1
            self._created(ResourceType.ROLE, role.name, created.arn)
            arn = created.arn
        else:
            self.progress(f"updating the trust policy of role {role.name}")
            ram.update_trust_policy(role.name, roles.trust_policy())
            self.writes += 1
            arn = action.arn
        self.role_arns[role.name] = arn
        return arn

    def policy(self, action: Action, role: DesiredRole) -> None:
        ram = self.clients.ram
        document = roles.invoke_policy(self.state.function_arns())
        if action.kind is ActionKind.CREATE or action.diff:
            if action.kind is not ActionKind.CREATE:
                self.progress(f"replacing policy {role.policy_name}")
                self.writes += int(ram.detach_policy(role.name, role.policy_name))
                self.writes += int(ram.delete_policy(role.policy_name))
            else:
                self.progress(f"creating policy {role.policy_name}")
            ram.create_policy(
                role.policy_name,
                document,
                f"Lets role {role.name} invoke the "
                "project's functions (managed by cloudflow-deployer)",
            )
            self.writes += 1
            if action.kind is ActionKind.CREATE:
                self._created(ResourceType.POLICY, role.policy_name, action.arn)
        self.progress(f"attaching policy {role.policy_name} to role {role.name}")
        ram.attach_policy(role.name, role.policy_name)
        self.writes += 1

    def flow(self, action: Action, flow: DesiredFlow) -> str:
        role_arn = flow.role_arn
        if flow.role is not None:
            role_arn = self.role_arns.get(flow.role.name) or self._role_arn(flow.role)
        flows = self.clients.flows
        if action.kind is ActionKind.CREATE:
            self.progress(f"creating flow {flow.name}")
            flows.create_flow(flow.name, flow.definition, description=flow.description,
                              role_arn=role_arn, execution_mode=flow.execution_mode)
            self.writes += 1
            self._created(ResourceType.FLOW, flow.name, action.arn)
            return action.arn
        if action.changed("executionMode"):
            raise OperationError(
                f"flow {flow.name}: the execution mode of an existing flow cannot be changed",
                hint="run `deploy down` and then `deploy up` to re-create the flow",
            )
        self.progress(f"updating flow {flow.name} ({', '.join(action.changes)})")
        flows.update_flow(
            flow.name, flow.definition, description=flow.description, role_arn=role_arn
        )
        self.writes += 1
        return action.arn

    def delete(self, action: Action, prune: bool) -> str:
        if not prune:
            return KEPT_UNCONFIRMED
        item = next(r for r in self.plan.recorded
                    if r.resource is action.resource and r.name == action.name)
        self.progress(f"removing {action.resource.value} {action.name} (no longer in s.yaml)")
        outcome, calls = remove_resource(item, self.plan.recorded, self.clients)
        self.writes += calls
        if self.log is not None and not outcome.startswith("kept"):
            self.log.forget(action.resource, action.name)
        return outcome

    def _role_arn(self, role: DesiredRole) -> str:
        remote = self.clients.ram.get_role(role.name)
        return remote.arn if remote else roles.role_arn(self.state.account_id, role.name)


def apply_plan(
    plan: Plan,
    clients: Clients,
    *,
    log: CreationLog | None = None,
    prune: bool = False,
    progress: Callable[[str], None] = lambda message: None,
) -> DeployResult:
    """Carry out every write action of ``plan``; return what each resource ended as.

    Deletions (resources the record holds but s.yaml no longer declares) run only with
    ``prune``; otherwise they are reported as kept. Recorded resources that are already gone
    are forgotten from ``log``. Raises :class:`~deployer.cloud.errors.CloudError` on the first
    failed call; resources handled before it stay as they are (the next run converges).
    """
    applier = _Applier(plan, clients, log, progress)
    releases = ReleaseApplier(plan.state, clients, progress)
    roles_by_name = plan.state.roles()
    flows_by_name = {f.name: f for f in plan.state.flows}
    results: list[ResourceResult] = []
    for action in plan.actions:
        arn, outcome = action.arn, ""
        if action.kind is ActionKind.DELETE and action.resource not in RELEASE_TYPES:
            outcome = applier.delete(action, prune)
        elif action.is_write and action.resource in RELEASE_TYPES:
            releases.apply(action)
        elif action.is_write:
            if action.resource is ResourceType.FUNCTION:
                arn = applier.function(action)
            elif action.resource is ResourceType.ROLE:
                arn = applier.role(action, roles_by_name[action.name])
            elif action.resource is ResourceType.POLICY:
                role = next(r for r in roles_by_name.values() if r.policy_name == action.name)
                applier.policy(action, role)
            else:
                arn = applier.flow(action, flows_by_name[action.name])
        elif action.resource is ResourceType.ROLE:
            applier.role_arns[action.name] = action.arn
        results.append(ResourceResult(action.resource, action.name, arn, action.kind,
                                      action.changes, action.settings, action.diff, outcome))
    if log is not None:
        forget_gone(plan, log)
    return DeployResult(plan.region, plan.account_id, tuple(results),
                        applier.writes + releases.writes)
