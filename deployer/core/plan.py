"""Plan: compare the desired state with what the cloud has, using read-only calls only.

``build_plan(desired, clients, recorded)`` returns a :class:`Plan`: plain data that carries
everything applying it needs (the desired state, the actions, and the deployment record's
resources). ``deploy plan`` renders it and :func:`deployer.core.apply.apply_plan` is the only
code that changes anything. Each action says what changes: the old and new value of every
setting (:class:`SettingChange`; code by its CRC-64 checksum) and, for documents (a flow
definition, a policy), a unified diff. Resources the deployment record holds but s.yaml no
longer declares become ``delete`` actions. The same code runs against Alibaba Cloud and the
local emulator.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from deployer.cloud.cloudflow import CloudFlowClient
from deployer.cloud.fc import FunctionComputeClient, FunctionConfig
from deployer.cloud.ram import RamClient
from deployer.config.releases import ReleaseSpec, ScheduleSpec
from deployer.core import roles
from deployer.core.changes import (
    SettingChange,
    document_diff,
    function_changes,
    json_document_diff,
)
from deployer.core.record import RecordedResource
from deployer.core.resources import ActionKind, ResourceType

__all__ = [
    "Action",
    "ActionKind",
    "Clients",
    "DesiredFlow",
    "DesiredFunction",
    "DesiredRole",
    "DesiredState",
    "Plan",
    "ResourceType",
    "SettingChange",
    "build_plan",
]

#: The order deletions run in (and ``deploy down``): what uses a resource goes before it.
REMOVAL_ORDER = (ResourceType.FLOW, ResourceType.POLICY, ResourceType.ROLE,
                 ResourceType.FUNCTION)


@dataclass(frozen=True, slots=True)
class DesiredFunction:
    name: str
    config: FunctionConfig
    zip_bytes: bytes = field(repr=False)
    crc64: str
    release: ReleaseSpec | None = None  # versions/aliases to maintain (core/releases.py)


@dataclass(frozen=True, slots=True)
class DesiredRole:
    """An execution role the deploy owns: trusts CloudFlow, may invoke the project's functions."""

    name: str
    description: str = "Execution role of a CloudFlow flow, managed by cloudflow-deployer"

    @property
    def policy_name(self) -> str:
        return f"{self.name}-invoke"


@dataclass(frozen=True, slots=True)
class DesiredFlow:
    name: str
    definition: str
    description: str
    execution_mode: str
    role: DesiredRole | None = None  # a role to ensure, or
    role_arn: str = ""  # an existing role used as is
    source: str = ""  # the file the definition was rendered from (for diff headers)
    release: ReleaseSpec | None = None  # versions/aliases to maintain (core/releases.py)
    schedules: tuple[ScheduleSpec, ...] | None = None  # None: the flow's schedules unmanaged


@dataclass(frozen=True, slots=True)
class DesiredState:
    region: str
    account_id: str
    functions: tuple[DesiredFunction, ...]
    flows: tuple[DesiredFlow, ...]

    def function_arns(self) -> list[str]:
        return [roles.function_arn(self.region, self.account_id, f.name) for f in self.functions]

    def roles(self) -> dict[str, DesiredRole]:
        return {f.role.name: f.role for f in self.flows if f.role is not None}

    def declares(self, resource: ResourceType, name: str) -> bool:
        """Whether s.yaml (this state) declares the resource ``name`` of type ``resource``."""
        if resource is ResourceType.FUNCTION:
            return any(f.name == name for f in self.functions)
        if resource is ResourceType.FLOW:
            return any(f.name == name for f in self.flows)
        if resource is ResourceType.ROLE:
            return name in self.roles()
        return any(r.policy_name == name for r in self.roles().values())


@dataclass(frozen=True, slots=True)
class Clients:
    """The typed cloud clients a deploy uses (one connection, any target)."""

    fc: FunctionComputeClient
    ram: RamClient
    flows: CloudFlowClient


@dataclass(frozen=True, slots=True)
class Action:
    """What a deploy does to one resource. ``settings`` lists each changed setting (old and new
    value); ``diff`` is a unified diff of the resource's document (flow definition, policy);
    ``notes`` are changes without a value (attaching a policy, the reason for a deletion)."""

    resource: ResourceType
    name: str
    kind: ActionKind
    arn: str
    settings: tuple[SettingChange, ...] = ()
    diff: str = ""
    notes: tuple[str, ...] = ()

    @property
    def is_write(self) -> bool:
        return self.kind is not ActionKind.NO_CHANGE

    @property
    def changes(self) -> tuple[str, ...]:
        """The names of what changes (``code``, ``memorySize``, ``definition``, ...)."""
        names = [s.name for s in self.settings]
        if self.diff:
            names.append("definition" if self.resource is ResourceType.FLOW else "document")
        return (*names, *self.notes)

    def changed(self, name: str) -> bool:
        return any(s.name == name or s.name.startswith(f"{name}.") for s in self.settings)


@dataclass(frozen=True, slots=True)
class Plan:
    """The actions of a deploy and the payload applying them needs: the desired state (zips,
    definitions, configurations) and the deployment record's resources at planning time."""

    state: DesiredState
    actions: tuple[Action, ...]
    recorded: tuple[RecordedResource, ...] = ()

    @property
    def region(self) -> str:
        return self.state.region

    @property
    def account_id(self) -> str:
        return self.state.account_id

    @property
    def has_changes(self) -> bool:
        return any(a.is_write for a in self.actions)

    @property
    def deletions(self) -> tuple[Action, ...]:
        return tuple(a for a in self.actions if a.kind is ActionKind.DELETE)

    def action(self, resource: ResourceType, name: str) -> Action:
        return next(a for a in self.actions if a.resource is resource and a.name == name)


def plan_function(desired: DesiredFunction, clients: Clients, arn: str) -> Action:
    remote = clients.fc.get_function(desired.name)
    code = SettingChange("code", None, desired.crc64)
    if remote is None:
        return Action(ResourceType.FUNCTION, desired.name, ActionKind.CREATE, arn, (code,))
    settings = function_changes(remote.config, desired.config)
    if remote.code_checksum != desired.crc64:
        settings.insert(0, SettingChange("code", remote.code_checksum, desired.crc64))
    kind = ActionKind.UPDATE if settings else ActionKind.NO_CHANGE
    return Action(ResourceType.FUNCTION, desired.name, kind, remote.arn or arn, tuple(settings))


def plan_role(role: DesiredRole, state: DesiredState, clients: Clients) -> list[Action]:
    role_arn = roles.role_arn(state.account_id, role.name)
    remote = clients.ram.get_role(role.name)
    trust = roles.trust_policy()
    if remote is None:
        role_action = Action(ResourceType.ROLE, role.name, ActionKind.CREATE, role_arn,
                             diff=json_document_diff("", trust, role.name, "trust policy"))
    elif not roles.same_document(remote.trust_policy, trust):
        role_action = Action(ResourceType.ROLE, role.name, ActionKind.UPDATE, remote.arn,
                             diff=json_document_diff(remote.trust_policy, trust, role.name,
                                                     "trust policy"))
    else:
        role_action = Action(ResourceType.ROLE, role.name, ActionKind.NO_CHANGE, remote.arn)

    policy = roles.invoke_policy(state.function_arns())
    current = clients.ram.get_policy_document(role.policy_name)
    attached = remote is not None and any(
        p.name == role.policy_name for p in clients.ram.list_role_policies(role.name)
    )
    diff = ""
    if current is None:
        kind = ActionKind.CREATE
        diff = json_document_diff("", policy, role.policy_name, "policy document")
    else:
        if not roles.same_document(current, policy):
            diff = json_document_diff(current, policy, role.policy_name, "policy document")
        kind = ActionKind.UPDATE if diff or not attached else ActionKind.NO_CHANGE
    notes = () if attached else (f"attach to role {role.name}",)
    policy_action = Action(ResourceType.POLICY, role.policy_name, kind,
                           roles.policy_arn(state.account_id, role.policy_name), diff=diff,
                           notes=notes)
    return [role_action, policy_action]


def plan_flow(flow: DesiredFlow, role_arn: str, state: DesiredState, clients: Clients) -> Action:
    arn = roles.flow_arn(state.region, state.account_id, flow.name)
    remote = clients.flows.describe_flow(flow.name)
    source = flow.source or flow.name
    if remote is None:
        diff = document_diff("", flow.definition, "/dev/null", f"{flow.name} ({source})")
        return Action(ResourceType.FLOW, flow.name, ActionKind.CREATE, arn,
                      (SettingChange("role", None, role_arn),) if role_arn else (), diff)
    diff = ""
    if remote.definition.strip() != flow.definition.strip():
        diff = document_diff(remote.definition, flow.definition, f"{flow.name} (deployed)",
                             f"{flow.name} ({source})")
    settings: list[SettingChange] = []
    if remote.description != flow.description:
        settings.append(SettingChange("description", remote.description, flow.description))
    if remote.role_arn != role_arn:
        settings.append(SettingChange("role", remote.role_arn, role_arn))
    if (remote.execution_mode or "Standard") != flow.execution_mode:
        settings.append(SettingChange("executionMode", remote.execution_mode,
                                      flow.execution_mode))
    kind = ActionKind.UPDATE if settings or diff else ActionKind.NO_CHANGE
    return Action(ResourceType.FLOW, flow.name, kind, arn, tuple(settings), diff)


def plan_removals(state: DesiredState, recorded: tuple[RecordedResource, ...],
                  clients: Clients) -> list[Action]:
    """``delete`` actions for what the record holds but ``state`` no longer declares and still
    exists (a recorded resource that is already gone needs no call; apply forgets it)."""
    actions: list[Action] = []
    for kind in REMOVAL_ORDER:
        for item in recorded:
            if item.resource is not kind or state.declares(kind, item.name):
                continue
            if _exists(kind, item.name, clients):
                actions.append(Action(kind, item.name, ActionKind.DELETE, item.arn,
                                      notes=("s.yaml no longer declares it",)))
    return actions


def _exists(kind: ResourceType, name: str, clients: Clients) -> bool:
    if kind is ResourceType.FUNCTION:
        return clients.fc.get_function(name) is not None
    if kind is ResourceType.FLOW:
        return clients.flows.describe_flow(name) is not None
    if kind is ResourceType.ROLE:
        return clients.ram.get_role(name) is not None
    return clients.ram.get_policy_document(name) is not None


def build_plan(state: DesiredState, clients: Clients,
               recorded: tuple[RecordedResource, ...] = ()) -> Plan:
    """Compare ``state`` with the cloud (describe/get/list calls only) and list the actions:
    creations and updates in apply order (functions, role and policy, flow), then the
    deletions of ``recorded`` resources that ``state`` no longer declares."""
    actions: list[Action] = []
    for fn in state.functions:
        actions.append(
            plan_function(fn, clients, roles.function_arn(state.region, state.account_id, fn.name))
        )
    for flow in state.flows:
        role_arn = flow.role_arn
        if flow.role is not None:
            role_actions = plan_role(flow.role, state, clients)
            actions.extend(role_actions)
            role_arn = role_actions[0].arn
        actions.append(plan_flow(flow, role_arn, state, clients))
    from deployer.core.releases import plan_releases  # it builds on this module's types

    actions.extend(plan_releases(state, clients, actions))
    actions.extend(plan_removals(state, recorded, clients))
    return Plan(state=state, actions=tuple(actions), recorded=recorded)
