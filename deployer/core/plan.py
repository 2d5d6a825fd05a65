"""Plan: compare the desired state with what the cloud has, using read-only calls only.

``build_plan(desired, clients, recorded)`` returns a :class:`Plan`: plain data that carries
everything applying it needs (the desired state, the actions, and the deployment record's
resources). ``deploy plan`` renders it and :func:`deployer.core.apply.apply_plan` is the only
code that changes anything. Each action says what changes: the old and new value of every
setting (:class:`SettingChange`; code by its CRC-64 checksum) and, for documents (a flow
definition, a policy), a unified diff. Actions come in apply order: the default roles and
Log Service logstores ``auto`` asks for, then each resource of s.yaml in dependency order
(a flow's role and policy, once per role, before its first flow), then versions, aliases
and schedules, then the deletions of resources the deployment record holds but s.yaml no
longer declares. Resources another project owns (:mod:`deployer.core.ownership`) are marked
with their owner; deleting a function a flow still invokes is marked with those flows. The
same code runs against Alibaba Cloud and the local emulator.
"""

from __future__ import annotations

from deployer.core import ownership, roles
from deployer.core.changes import (
    SettingChange,
    document_diff,
    function_changes,
    json_document_diff,
)
from deployer.core.plan_model import (
    Action,
    Clients,
    DesiredFlow,
    DesiredFunction,
    DesiredLogStore,
    DesiredRole,
    DesiredServiceRole,
    DesiredState,
    Plan,
)
from deployer.core.record import RecordedResource
from deployer.core.resources import ActionKind, ResourceType

__all__ = [
    "Action",
    "ActionKind",
    "Clients",
    "DesiredFlow",
    "DesiredFunction",
    "DesiredLogStore",
    "DesiredRole",
    "DesiredServiceRole",
    "DesiredState",
    "Plan",
    "ResourceType",
    "SettingChange",
    "build_plan",
]

#: The order deletions run in (and ``deploy down``): what uses a resource goes before it.
REMOVAL_ORDER = (ResourceType.FLOW, ResourceType.POLICY, ResourceType.ROLE,
                 ResourceType.FUNCTION)


def _owner(found: str | None, project: str, name: str,
           taken: frozenset[tuple[ResourceType, str]], kind: ResourceType) -> str:
    """The other project that owns a resource (empty: ours, unmarked, or taken over)."""
    if not found or not project or found == project or (kind, name) in taken:
        return ""
    return found


def plan_function(desired: DesiredFunction, clients: Clients, arn: str, project: str = "",
                  taken: frozenset[tuple[ResourceType, str]] = frozenset()) -> Action:
    remote = clients.fc.get_function(desired.name)
    code = SettingChange("code", None, desired.crc64)
    if remote is None:
        return Action(ResourceType.FUNCTION, desired.name, ActionKind.CREATE, arn, (code,),
                      origin=desired.resource)
    settings = function_changes(remote.config, desired.config)
    if remote.code_checksum != desired.crc64:
        settings.insert(0, SettingChange("code", remote.code_checksum, desired.crc64))
    theirs = {k: v for k, v in remote.tags if k != ownership.PROJECT_TAG}
    if theirs != dict(desired.tags):
        settings.append(SettingChange("tags", theirs or None, dict(desired.tags) or None))
    kind = ActionKind.UPDATE if settings else ActionKind.NO_CHANGE
    owner = _owner(ownership.function_owner(remote.tags), project, desired.name, taken,
                   ResourceType.FUNCTION)
    return Action(ResourceType.FUNCTION, desired.name, kind, remote.arn or arn,
                  tuple(settings), origin=desired.resource, owner=owner)


def _role_action(role: DesiredRole, state: DesiredState, clients: Clients,
                 taken: frozenset[tuple[ResourceType, str]]) -> tuple[Action, bool]:
    role_arn = roles.role_arn(state.account_id, role.name)
    remote = clients.ram.get_role(role.name)
    trust = roles.trust_policy()
    origin = role.flows[0] if role.flows else ""
    if remote is None:
        return Action(ResourceType.ROLE, role.name, ActionKind.CREATE, role_arn,
                      diff=json_document_diff("", trust, role.name, "trust policy"),
                      origin=origin), False
    owner = _owner(ownership.description_owner(remote.description), state.project,
                   role.name, taken, ResourceType.ROLE)
    if not roles.same_document(remote.trust_policy, trust):
        return Action(ResourceType.ROLE, role.name, ActionKind.UPDATE, remote.arn,
                      diff=json_document_diff(remote.trust_policy, trust, role.name,
                                              "trust policy"), origin=origin,
                      owner=owner), True
    return Action(ResourceType.ROLE, role.name, ActionKind.NO_CHANGE, remote.arn,
                  origin=origin, owner=owner), True


def plan_role(role: DesiredRole, state: DesiredState, clients: Clients,
              taken: frozenset[tuple[ResourceType, str]] = frozenset()) -> list[Action]:
    """The role and its invoke policy (attached to it)."""
    role_action, exists = _role_action(role, state, clients, taken)
    policy = roles.invoke_policy_for(role, state)
    current = clients.ram.get_policy_document(role.policy_name)
    attached = exists and any(
        p.name == role.policy_name for p in clients.ram.list_role_policies(role.name))
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
                           notes=notes, origin=role_action.origin)
    return [role_action, policy_action]


def plan_flow(flow: DesiredFlow, role_arn: str, state: DesiredState, clients: Clients,
              taken: frozenset[tuple[ResourceType, str]] = frozenset()) -> Action:
    arn = roles.flow_arn(state.region, state.account_id, flow.name)
    remote = clients.flows.describe_flow(flow.name)
    source = flow.source or flow.name
    if remote is None:
        diff = document_diff("", flow.definition, "/dev/null", f"{flow.name} ({source})")
        return Action(ResourceType.FLOW, flow.name, ActionKind.CREATE, arn,
                      (SettingChange("role", None, role_arn),) if role_arn else (), diff,
                      origin=flow.resource)
    deployed, owner = ownership.definition_owner(remote.definition)
    diff = ""
    if deployed.strip() != flow.definition.strip():
        diff = document_diff(deployed, flow.definition, f"{flow.name} (deployed)",
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
    return Action(ResourceType.FLOW, flow.name, kind, arn, tuple(settings), diff,
                  origin=flow.resource,
                  owner=_owner(owner, state.project, flow.name, taken, ResourceType.FLOW))


def plan_service_role(role: DesiredServiceRole, state: DesiredState,
                      clients: Clients) -> Action:
    """A default role ``role: auto`` needs: created with its trust and policies, once."""
    remote = clients.ram.get_role(role.name)
    arn = roles.role_arn(state.account_id, role.name.lower())
    if remote is None:
        return Action(ResourceType.SERVICE_ROLE, role.name, ActionKind.CREATE, arn,
                      notes=(f"trusts {role.service}", *(f"attach {p}" for p in role.policies)))
    attached = {p.name for p in clients.ram.list_role_policies(role.name)}
    missing = tuple(f"attach {p}" for p in role.policies if p not in attached)
    kind = ActionKind.UPDATE if missing else ActionKind.NO_CHANGE
    return Action(ResourceType.SERVICE_ROLE, role.name, kind, remote.arn, notes=missing)


def plan_log_store(store: DesiredLogStore, state: DesiredState, clients: Clients) -> Action:
    arn = f"acs:log:{state.region}:{state.account_id}:project/{store.project}/logstore/" \
          f"{store.logstore}"
    admin = clients.logs
    if admin is not None and admin.project_exists(store.project) and \
            admin.logstore_exists(store.project, store.logstore):
        return Action(ResourceType.LOG_STORE, store.name, ActionKind.NO_CHANGE, arn)
    return Action(ResourceType.LOG_STORE, store.name, ActionKind.CREATE, arn)


def plan_removals(state: DesiredState, recorded: tuple[RecordedResource, ...],
                  clients: Clients) -> list[Action]:
    """``delete`` actions for what the record holds but ``state`` no longer declares and still
    exists (a recorded resource that is already gone needs no call; apply forgets it). A
    function that a flow of ``state`` still invokes says so (``invoked_by``)."""
    actions: list[Action] = []
    for kind in REMOVAL_ORDER:
        for item in recorded:
            if item.resource is not kind or item.taken_from or state.declares(kind, item.name):
                continue
            if _exists(kind, item.name, clients):
                invoked = _invokers(state, item.name) if kind is ResourceType.FUNCTION else ()
                notes: tuple[str, ...] = ("s.yaml no longer declares it",)
                if invoked:
                    notes += (f"still invoked by flow {', '.join(invoked)}",)
                actions.append(Action(kind, item.name, ActionKind.DELETE, item.arn,
                                      notes=notes, invoked_by=invoked))
    return actions


def _invokers(state: DesiredState, function: str) -> tuple[str, ...]:
    arn = roles.function_arn(state.region, state.account_id, function)
    return tuple(f.name for f in state.flows
                 if any(i == arn or i.startswith(f"{arn}/") for i in f.invokes))


def _exists(kind: ResourceType, name: str, clients: Clients) -> bool:
    if kind is ResourceType.FUNCTION:
        return clients.fc.get_function(name) is not None
    if kind is ResourceType.FLOW:
        return clients.flows.describe_flow(name) is not None
    if kind is ResourceType.ROLE:
        return clients.ram.get_role(name) is not None
    return clients.ram.get_policy_document(name) is not None


def _resource_actions(state: DesiredState, clients: Clients,
                      taken: frozenset[tuple[ResourceType, str]]) -> list[Action]:
    functions = {f.resource or f.name: f for f in state.functions}
    flows = {f.resource or f.name: f for f in state.flows}
    order = state.order or (*functions, *flows)
    actions: list[Action] = []
    role_arns: dict[str, str] = {}
    for key in order:
        if key in functions:
            fn = functions[key]
            actions.append(plan_function(fn, clients, roles.function_arn(
                state.region, state.account_id, fn.name), state.project, taken))
        elif key in flows:
            flow = flows[key]
            role_arn = flow.role_arn
            if flow.role is not None:
                if flow.role.name not in role_arns:
                    shared = state.roles().get(flow.role.name, flow.role)
                    planned = plan_role(shared, state, clients, taken)
                    actions.extend(planned)
                    role_arns[flow.role.name] = planned[0].arn
                role_arn = role_arns[flow.role.name]
            actions.append(plan_flow(flow, role_arn, state, clients, taken))
    return actions


def build_plan(state: DesiredState, clients: Clients,
               recorded: tuple[RecordedResource, ...] = ()) -> Plan:
    """Compare ``state`` with the cloud (describe/get/list calls only) and list the actions
    in apply order (see the module docstring)."""
    taken = frozenset((r.resource, r.name) for r in recorded if r.taken_from)
    from deployer.core.layers import plan_layers  # it builds on this module's types

    state, layer_actions = plan_layers(state, clients)
    actions: list[Action] = [plan_service_role(r, state, clients) for r in state.service_roles]
    actions += layer_actions
    actions += [plan_log_store(s, state, clients) for s in state.log_stores]
    actions += _resource_actions(state, clients, taken)
    from deployer.core.releases import plan_releases  # it builds on this module's types

    actions.extend(plan_releases(state, clients, actions))
    from deployer.core.triggers import plan_triggers  # it builds on this module's types

    actions.extend(plan_triggers(state, clients, actions))
    from deployer.core.invocation_settings import plan_invocation_settings

    actions.extend(plan_invocation_settings(state, clients, actions))
    from deployer.core.custom_domains import plan_custom_domains

    actions.extend(plan_custom_domains(state, clients, actions))
    actions.extend(plan_removals(state, recorded, clients))
    return Plan(state=state, actions=tuple(actions), recorded=recorded)
