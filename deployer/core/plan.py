"""Plan: compare the desired state with what the cloud has, using read-only calls only.

``build_plan(desired, clients)`` returns a :class:`Plan` of :class:`Action` values (plain data);
``deploy plan`` renders it and :func:`deployer.core.apply.apply_plan` is the only code that
changes anything. The same code runs against Alibaba Cloud and the local emulator.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from deployer.cloud.cloudflow import CloudFlowClient
from deployer.cloud.fc import FunctionComputeClient, FunctionConfig
from deployer.cloud.ram import RamClient
from deployer.config.releases import ReleaseSpec, ScheduleSpec
from deployer.core import roles


class ActionKind(str, enum.Enum):
    CREATE = "create"
    UPDATE = "update"
    NO_CHANGE = "no-change"
    DELETE = "delete"


class ResourceType(str, enum.Enum):
    FUNCTION = "function"
    ROLE = "role"
    POLICY = "policy"
    FLOW = "flow"
    FUNCTION_VERSION = "function-version"
    FUNCTION_ALIAS = "function-alias"
    FLOW_VERSION = "flow-version"
    FLOW_ALIAS = "flow-alias"
    SCHEDULE = "schedule"


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


@dataclass(frozen=True, slots=True)
class Clients:
    """The typed cloud clients a deploy uses (one connection, any target)."""

    fc: FunctionComputeClient
    ram: RamClient
    flows: CloudFlowClient


@dataclass(frozen=True, slots=True)
class Action:
    resource: ResourceType
    name: str
    kind: ActionKind
    arn: str
    changes: tuple[str, ...] = ()

    @property
    def is_write(self) -> bool:
        return self.kind is not ActionKind.NO_CHANGE


@dataclass(frozen=True, slots=True)
class Plan:
    region: str
    account_id: str
    actions: tuple[Action, ...]

    @property
    def has_changes(self) -> bool:
        return any(a.is_write for a in self.actions)

    def action(self, resource: ResourceType, name: str) -> Action:
        return next(a for a in self.actions if a.resource is resource and a.name == name)


def _fmt(value: object) -> str:
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


def plan_function(desired: DesiredFunction, clients: Clients, arn: str) -> Action:
    remote = clients.fc.get_function(desired.name)
    if remote is None:
        return Action(ResourceType.FUNCTION, desired.name, ActionKind.CREATE, arn, ("code",))
    changes = [
        f"{name}: {_fmt(old)} -> {_fmt(new)}"
        for name, (old, new) in desired.config.differences(remote.config).items()
    ]
    if remote.code_checksum != desired.crc64:
        changes.insert(0, "code")
    kind = ActionKind.UPDATE if changes else ActionKind.NO_CHANGE
    return Action(ResourceType.FUNCTION, desired.name, kind, remote.arn or arn, tuple(changes))


def plan_role(role: DesiredRole, state: DesiredState, clients: Clients) -> list[Action]:
    role_arn = roles.role_arn(state.account_id, role.name)
    remote = clients.ram.get_role(role.name)
    trust = roles.trust_policy()
    if remote is None:
        role_action = Action(
            ResourceType.ROLE, role.name, ActionKind.CREATE, role_arn, ("trust fnf.aliyuncs.com",)
        )
    elif not roles.same_document(remote.trust_policy, trust):
        role_action = Action(
            ResourceType.ROLE,
            role.name,
            ActionKind.UPDATE,
            remote.arn,
            ("trust policy -> fnf.aliyuncs.com",),
        )
    else:
        role_action = Action(ResourceType.ROLE, role.name, ActionKind.NO_CHANGE, remote.arn)

    policy = roles.invoke_policy(state.function_arns())
    current = clients.ram.get_policy_document(role.policy_name)
    attached = remote is not None and any(
        p.name == role.policy_name for p in clients.ram.list_role_policies(role.name)
    )
    changes: list[str] = []
    if current is None:
        kind = ActionKind.CREATE
        changes.append("allow fc:InvokeFunction on the project's functions")
    else:
        if not roles.same_document(current, policy):
            changes.append("policy document")
        kind = ActionKind.UPDATE if changes or not attached else ActionKind.NO_CHANGE
    if not attached:
        changes.append(f"attach to role {role.name}")
    policy_action = Action(ResourceType.POLICY, role.policy_name, kind,
                           roles.policy_arn(state.account_id, role.policy_name), tuple(changes))
    return [role_action, policy_action]


def plan_flow(flow: DesiredFlow, role_arn: str, state: DesiredState, clients: Clients) -> Action:
    arn = roles.flow_arn(state.region, state.account_id, flow.name)
    remote = clients.flows.describe_flow(flow.name)
    if remote is None:
        return Action(ResourceType.FLOW, flow.name, ActionKind.CREATE, arn, ("definition",))
    changes: list[str] = []
    if remote.definition.strip() != flow.definition.strip():
        changes.append("definition")
    if remote.description != flow.description:
        changes.append(f"description: {_fmt(remote.description)} -> {_fmt(flow.description)}")
    if remote.role_arn != role_arn:
        changes.append(f"role: {_fmt(remote.role_arn)} -> {_fmt(role_arn)}")
    if (remote.execution_mode or "Standard") != flow.execution_mode:
        changes.append(
            f"execution mode: {remote.execution_mode} -> {flow.execution_mode} (needs re-create)"
        )
    kind = ActionKind.UPDATE if changes else ActionKind.NO_CHANGE
    return Action(ResourceType.FLOW, flow.name, kind, arn, tuple(changes))


def build_plan(state: DesiredState, clients: Clients) -> Plan:
    """Compare ``state`` with the cloud (describe/get/list calls only) and list the actions."""
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
    return Plan(region=state.region, account_id=state.account_id, actions=tuple(actions))
