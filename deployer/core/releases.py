"""Versions, aliases and schedules in a deploy: plan them (read-only), apply them.

What s.yaml asks for (``deployer.config.releases``): publish a version of a function (the
fc3 ``version publish`` step) or a flow (``publishVersion``), keep aliases pointing at a
version (``latest`` = the newest, i.e. the one this deploy publishes), and keep a flow's
schedules as listed. Everything is idempotent: a version is published only when the
function's code or configuration (a flow's definition or role) differs from its newest
version; an alias or a schedule is written only when it differs; so a second ``deploy up``
makes no write call. A flow that lists ``schedules`` owns them: remote schedules not listed
are deleted.

``plan_releases`` runs after the function/flow actions are planned (it needs to know whether
they change) and returns more :class:`~deployer.core.plan.Action` values; ``ReleaseApplier``
carries them out after the functions and flows are written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from deployer.cloud.releases import (
    FlowReleaseClient,
    FunctionReleaseClient,
    RemoteAlias,
    RemoteSchedule,
    RemoteVersion,
)
from deployer.config.releases import LATEST, AliasSpec, ReleaseSpec, ScheduleSpec
from deployer.core import ownership, roles
from deployer.core.plan import (
    Action,
    ActionKind,
    Clients,
    DesiredFlow,
    DesiredFunction,
    DesiredState,
    ResourceType,
)
from deployer.errors import InvalidInputError

__all__ = ["ReleaseApplier", "flow_routing", "plan_releases", "remove_flow_schedules",
           "remove_function_releases"]

RELEASE_TYPES = frozenset({ResourceType.FUNCTION_VERSION, ResourceType.FUNCTION_ALIAS,
                           ResourceType.FLOW_VERSION, ResourceType.FLOW_ALIAS,
                           ResourceType.SCHEDULE})
NEW = "(new)"


def flow_routing(alias: AliasSpec, main: str) -> dict[str, float]:
    """CloudFlow RoutingConfigurations for an alias: the canary's share in percent, the rest
    on the main version (fc3-style ``{"2": 0.1}`` -> ``{main: 90, "2": 10}``)."""
    routes = {main: 100.0}
    for version, share in alias.weights:
        percent = float(round(share * 100))
        routes = {main: 100.0 - percent, version: percent}
    return routes


def _payload_equal(a: str, b: str) -> bool:
    try:
        return bool(json.loads(a or "{}") == json.loads(b or "{}"))
    except ValueError:
        return a == b


def _action(resource: ResourceType, name: str, kind: ActionKind, arn: str,
            *changes: str) -> Action:
    return Action(resource, name, kind, arn, notes=tuple(changes))


def _previous(actions: Sequence[Action], resource: ResourceType, name: str) -> Action | None:
    return next((a for a in actions if a.resource is resource and a.name == name), None)


# --- plan ---------------------------------------------------------------------------------------


def plan_releases(state: DesiredState, clients: Clients, planned: Sequence[Action]) -> list[Action]:
    """The version, alias and schedule actions ``state`` asks for (read-only calls)."""
    out: list[Action] = []
    fc = FunctionReleaseClient(clients.fc.connection)
    flows = FlowReleaseClient(clients.flows.connection)
    for fn in state.functions:
        if fn.release is not None:
            before = _previous(planned, ResourceType.FUNCTION, fn.name)
            out.extend(_plan_function(fn, fn.release, before, fc, state))
    for flow in state.flows:
        before = _previous(planned, ResourceType.FLOW, flow.name)
        exists = before is not None and before.kind is not ActionKind.CREATE
        if flow.release is not None:
            out.extend(_plan_flow(flow, flow.release, exists, before, flows, state))
        if flow.schedules is not None:
            out.extend(_plan_schedules(flow, flow.schedules, exists, flows, state))
    return out


def _plan_function(fn: DesiredFunction, release: ReleaseSpec, before: Action | None,
                   client: FunctionReleaseClient, state: DesiredState) -> list[Action]:
    exists = before is not None and before.kind is not ActionKind.CREATE

    def differs(version: str) -> bool:
        remote = client.get_version(fn.name, version)
        return remote is None or remote.code_checksum != fn.crc64 or bool(
            fn.config.differences(remote.config))

    return _release_actions(
        (ResourceType.FUNCTION_VERSION, ResourceType.FUNCTION_ALIAS), "function", fn.name,
        roles.function_arn(state.region, state.account_id, fn.name), release, before,
        client.latest_version(fn.name) if exists else None, differs,
        (lambda name: client.get_alias(fn.name, name)) if exists else (lambda name: None),
        lambda alias, target: dict(alias.weights), "code or configuration",
        "add `component: fc3 version publish` before the alias step in actions.success-deploy")


def _plan_flow(flow: DesiredFlow, release: ReleaseSpec, exists: bool, before: Action | None,
               client: FlowReleaseClient, state: DesiredState) -> list[Action]:
    role = flow.role_arn or (roles.role_arn(state.account_id, flow.role.name)
                             if flow.role else "")

    def differs(version: str) -> bool:
        frozen = client.version_definition(flow.name, version)
        return frozen is None or ownership.definition_owner(frozen[0])[0].strip() != \
            flow.definition.strip() or frozen[1] != role

    return _release_actions(
        (ResourceType.FLOW_VERSION, ResourceType.FLOW_ALIAS), "flow", flow.name,
        roles.flow_arn(state.region, state.account_id, flow.name), release, before,
        client.latest_version(flow.name) if exists else None, differs,
        (lambda name: client.get_alias(flow.name, name)) if exists else (lambda name: None),
        flow_routing, "definition or role", "add `publishVersion: true` to the flow's props")


def _release_actions(types: tuple[ResourceType, ResourceType], what: str, owner: str, arn: str,
                     release: ReleaseSpec, before: Action | None, latest: RemoteVersion | None,
                     differs: Callable[[str], bool],
                     get_alias: Callable[[str], RemoteAlias | None],
                     weights: Callable[[AliasSpec, str], Mapping[str, float]],
                     compared: str, hint: str) -> list[Action]:
    """The version action (publish or not) and the alias actions of one function or flow."""
    version_type, alias_type = types
    actions = []
    publish = False
    if release.publish:
        if before is not None and before.is_write:
            publish, why = True, f"the {what} changes in this deploy"
        elif latest is None:
            publish, why = True, f"the {what} has no version yet"
        else:
            publish = differs(latest.version)
            why = f"{compared} differs from version {latest.version}"
        actions.append(
            _action(version_type, owner, ActionKind.CREATE, arn, f"publish a new version: {why}")
            if publish else
            _action(version_type, owner, ActionKind.NO_CHANGE, arn,
                    f"version {latest.version if latest else '?'} matches the {what}"))
    newest = NEW if publish else (latest.version if latest else None)
    for alias in release.aliases:
        target = newest if alias.version == LATEST else alias.version
        if target is None:
            raise InvalidInputError(f"{what} {owner}: alias {alias.name} asks for the latest "
                                    f"version, but the {what} has none", hint=hint)
        actions.append(_alias_action(alias_type, f"{owner}:{alias.name}", f"{arn}/{alias.name}",
                                     get_alias(alias.name), target, weights(alias, target),
                                     alias.description))
    return actions


def _alias_action(resource: ResourceType, name: str, arn: str, remote: RemoteAlias | None,
                  target: str, weights: Mapping[str, float], description: str) -> Action:
    """``weights`` are in the remote's terms: FC canary shares, or CloudFlow's routing."""
    shown = f"version {target}" + (f" (weights {dict(weights)})" if weights else "")
    if remote is None:
        return _action(resource, name, ActionKind.CREATE, arn, f"-> {shown}")
    changes = []
    if target == NEW or remote.version != target:
        changes.append(f"version: {remote.version} -> {target}")
    elif dict(remote.weights) != dict(weights):
        changes.append(f"weights: {dict(remote.weights)} -> {dict(weights)}")
    if remote.description != description:
        changes.append("description")
    kind = ActionKind.UPDATE if changes else ActionKind.NO_CHANGE
    return _action(resource, name, kind, arn, *changes)


def _plan_schedules(flow: DesiredFlow, wanted: Sequence[ScheduleSpec], exists: bool,
                    client: FlowReleaseClient, state: DesiredState) -> list[Action]:
    arn = roles.flow_arn(state.region, state.account_id, flow.name)
    remote = {s.name: s for s in client.schedules(flow.name)} if exists else {}
    actions = []
    for spec in wanted:
        name, found = f"{flow.name}/{spec.name}", remote.pop(spec.name, None)
        if found is None:
            actions.append(_action(ResourceType.SCHEDULE, name, ActionKind.CREATE,
                                   f"{arn}/schedules/{spec.name}", f"cron {spec.cron!r}"))
            continue
        changes = [f"cron: {found.cron!r} -> {spec.cron!r}"] if found.cron != spec.cron else []
        if not _payload_equal(found.payload, spec.payload):
            changes.append("payload")
        if found.enable != spec.enable:
            changes.append(f"enable: {found.enable} -> {spec.enable}")
        if found.description != spec.description:
            changes.append("description")
        kind = ActionKind.UPDATE if changes else ActionKind.NO_CHANGE
        actions.append(_action(ResourceType.SCHEDULE, name, kind,
                               f"{arn}/schedules/{spec.name}", *changes))
    for extra in remote.values():
        actions.append(_action(ResourceType.SCHEDULE, f"{flow.name}/{extra.name}",
                               ActionKind.DELETE, f"{arn}/schedules/{extra.name}",
                               "not listed in the flow's schedules"))
    return actions


# --- apply --------------------------------------------------------------------------------------


class ReleaseApplier:
    """Carries out release actions in plan order (versions before the aliases using them)."""

    def __init__(self, state: DesiredState, clients: Clients, progress: Any) -> None:
        self._state = state
        self._fc = FunctionReleaseClient(clients.fc.connection)
        self._flows = FlowReleaseClient(clients.flows.connection)
        self._progress = progress
        self._published: dict[tuple[ResourceType, str], str] = {}
        self.writes = 0

    def apply(self, action: Action) -> None:
        kind = action.resource
        if kind is ResourceType.FUNCTION_VERSION:
            fn = next(f for f in self._state.functions if f.name == action.name)
            self._progress(f"publishing a version of function {action.name}")
            assert fn.release is not None
            version = self._fc.publish(action.name, fn.release.description)
            self._published[(kind, action.name)] = version
        elif kind is ResourceType.FLOW_VERSION:
            flow = self._flow(action.name)
            self._progress(f"publishing a version of flow {action.name}")
            assert flow.release is not None
            version = self._flows.publish(action.name, flow.release.description)
            self._published[(kind, action.name)] = version
        elif kind is ResourceType.FUNCTION_ALIAS:
            self._function_alias(action)
        elif kind is ResourceType.FLOW_ALIAS:
            self._flow_alias(action)
        else:
            self._schedule(action)
        self.writes += 1

    def _flow(self, name: str) -> DesiredFlow:
        return next(f for f in self._state.flows if f.name == name)

    def _target(self, resource: ResourceType, owner: str, alias: AliasSpec) -> str:
        if alias.version != LATEST:
            return alias.version
        published = self._published.get((resource, owner))
        if published is not None:
            return published
        latest = (self._fc.latest_version(owner) if resource is ResourceType.FUNCTION_VERSION
                  else self._flows.latest_version(owner))
        if latest is None:
            raise InvalidInputError(f"{owner}: alias {alias.name} asks for the latest version, "
                                    "but there is none")
        return latest.version

    def _function_alias(self, action: Action) -> None:
        owner, _, name = action.name.partition(":")
        fn = next(f for f in self._state.functions if f.name == owner)
        assert fn.release is not None
        alias = next(a for a in fn.release.aliases if a.name == name)
        target = self._target(ResourceType.FUNCTION_VERSION, owner, alias)
        self._progress(f"pointing alias {name} of function {owner} at version {target}")
        self._fc.put_alias(owner, RemoteAlias(name, target, alias.description,
                                              dict(alias.weights)),
                           exists=action.kind is ActionKind.UPDATE)

    def _flow_alias(self, action: Action) -> None:
        owner, _, name = action.name.partition(":")
        flow = self._flow(owner)
        assert flow.release is not None
        alias = next(a for a in flow.release.aliases if a.name == name)
        target = self._target(ResourceType.FLOW_VERSION, owner, alias)
        self._progress(f"pointing alias {name} of flow {owner} at version {target}")
        self._flows.put_alias(owner, RemoteAlias(name, target, alias.description,
                                                 flow_routing(alias, target)),
                              exists=action.kind is ActionKind.UPDATE)

    def _schedule(self, action: Action) -> None:
        owner, _, name = action.name.partition("/")
        if action.kind is ActionKind.DELETE:
            self._progress(f"deleting schedule {name} of flow {owner}")
            self._flows.delete_schedule(owner, name)
            return
        flow = self._flow(owner)
        spec = next(s for s in flow.schedules or () if s.name == name)
        self._progress(f"{'updating' if action.kind is ActionKind.UPDATE else 'creating'} "
                       f"schedule {name} of flow {owner}")
        self._flows.put_schedule(owner, RemoteSchedule(spec.name, spec.cron, spec.payload,
                                                       spec.description, spec.enable),
                                 exists=action.kind is ActionKind.UPDATE)


# --- down ---------------------------------------------------------------------------------------


def remove_function_releases(clients: Clients, function: str) -> int:
    """Delete a function's aliases, then its versions (as ``s remove`` does before the
    function); the number of delete calls that removed something."""
    client = FunctionReleaseClient(clients.fc.connection)
    calls = 0
    try:
        for alias in client.aliases(function):
            calls += int(client.delete_alias(function, alias))
        for version in client.versions(function):
            calls += int(client.delete_version(function, version))
    except Exception as exc:  # a missing function or an older target: nothing to remove
        from deployer.cloud.errors import CloudNotFoundError

        if not isinstance(exc, CloudNotFoundError):
            raise
    return calls


def remove_flow_schedules(clients: Clients, flow: str) -> int:
    """Delete a flow's schedules (as the fnf component does before the flow)."""
    client = FlowReleaseClient(clients.flows.connection)
    return sum(int(client.delete_schedule(flow, s.name)) for s in client.schedules(flow))
