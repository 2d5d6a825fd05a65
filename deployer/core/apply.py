"""Apply a plan: the only code in a deploy that changes anything in the cloud.

Each action is applied in order (functions, then the role and its policy, then the flow), so a
failure part-way leaves resources that the next ``deploy up`` converges from. Resources created
here are reported to a :class:`CreationLog` right after their creation, so ``deploy down`` can
remove exactly what ``deploy up`` created and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from deployer.core import roles
from deployer.core.plan import (
    Action,
    ActionKind,
    Clients,
    DesiredFlow,
    DesiredRole,
    DesiredState,
    Plan,
    ResourceType,
)
from deployer.core.releases import RELEASE_TYPES, ReleaseApplier
from deployer.errors import OperationError


class CreationLog(Protocol):
    def created(self, resource: ResourceType, name: str, arn: str) -> None: ...


@dataclass(frozen=True, slots=True)
class ResourceResult:
    resource: ResourceType
    name: str
    arn: str
    action: ActionKind
    changes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DeployResult:
    region: str
    account_id: str
    resources: tuple[ResourceResult, ...]
    write_calls: int

    @property
    def changed(self) -> bool:
        return self.write_calls > 0


class _Applier:
    def __init__(
        self,
        state: DesiredState,
        clients: Clients,
        log: CreationLog | None,
        progress: Callable[[str], None],
    ) -> None:
        self.state, self.clients, self.log, self.progress = state, clients, log, progress
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
            return remote.arn
        code = "code" in action.changes
        config = any(c != "code" for c in action.changes)
        self.progress(f"updating function {action.name} ({', '.join(action.changes)})")
        remote = fc.update_function(
            action.name,
            config=desired.config if config else None,
            zip_bytes=desired.zip_bytes if code else None,
        )
        self.writes += 1
        return remote.arn

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
        if action.kind is ActionKind.CREATE or "policy document" in action.changes:
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
            flows.create_flow(
                flow.name,
                flow.definition,
                description=flow.description,
                role_arn=role_arn,
                execution_mode=flow.execution_mode,
            )
            self.writes += 1
            self._created(ResourceType.FLOW, flow.name, action.arn)
            return action.arn
        if any(c.startswith("execution mode") for c in action.changes):
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

    def _role_arn(self, role: DesiredRole) -> str:
        remote = self.clients.ram.get_role(role.name)
        return remote.arn if remote else roles.role_arn(self.state.account_id, role.name)


def apply_plan(
    plan: Plan,
    state: DesiredState,
    clients: Clients,
    *,
    log: CreationLog | None = None,
    progress: Callable[[str], None] = lambda message: None,
) -> DeployResult:
    """Carry out every write action of ``plan``; return what each resource ended as.

    Raises :class:`~deployer.cloud.errors.CloudError` on the first failed call; resources
    handled before it stay as they are (the next run converges from there).
    """
    applier = _Applier(state, clients, log, progress)
    releases = ReleaseApplier(state, clients, progress)
    roles_by_name = {f.role.name: f.role for f in state.flows if f.role is not None}
    flows_by_name = {f.name: f for f in state.flows}
    results: list[ResourceResult] = []
    for action in plan.actions:
        arn = action.arn
        if action.is_write and action.resource in RELEASE_TYPES:
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
        results.append(
            ResourceResult(action.resource, action.name, arn, action.kind, action.changes)
        )
    return DeployResult(plan.region, plan.account_id, tuple(results),
                        applier.writes + releases.writes)
