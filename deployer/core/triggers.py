"""A function's ``triggers`` in a deploy: planned against the function's triggers in the cloud,
applied after the function (and its versions and aliases, which a trigger's ``qualifier`` may
name), removed with it.

Each trigger s.yaml lists is created, updated (``triggerConfig``, ``qualifier``,
``description`` and ``invocationRole`` are what UpdateTrigger changes) or left alone; a
changed ``triggerType`` or ``sourceArn`` replaces the trigger (FC cannot update those). A
trigger the function has in the cloud but s.yaml no longer lists is deleted, as a flow's
schedules are. ``deploy down`` deletes a function's triggers before the function (FC refuses
to delete a function that has triggers). The same calls run against Alibaba Cloud and the
emulator (:class:`~deployer.cloud.fc_triggers.FunctionTriggerClient`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from deployer.cloud.fc_triggers import FunctionTriggerClient, RemoteTrigger
from deployer.core import roles
from deployer.core.changes import SettingChange
from deployer.core.plan_model import Action, Clients, DesiredFunction, DesiredState
from deployer.core.resources import ActionKind, ResourceType

__all__ = ["REPLACED", "apply_trigger", "plan_triggers", "remove_function_triggers"]

REPLACED = "replaced (FC cannot change a trigger's type or source)"
_FIXED = ("triggerType", "sourceArn")
_FIELDS = ("triggerType", "sourceArn", "qualifier", "description", "invocationRole",
           "triggerConfig")


def _changes(remote: RemoteTrigger, wanted: dict[str, Any]) -> list[SettingChange]:
    have = remote.wire()
    return [SettingChange(f"triggers.{wanted['triggerName']}.{key}", have.get(key) or None,
                          wanted.get(key) or None)
            for key in _FIELDS if (have.get(key) or None) != (wanted.get(key) or None)]


def _plan_function(fn: DesiredFunction, exists: bool, client: FunctionTriggerClient,
                   arn: str) -> list[Action]:
    remote = {t.name: t for t in client.list(fn.name)} if exists else {}
    actions: list[Action] = []
    for spec in fn.triggers:
        wanted = spec.wire()
        name, where = f"{fn.name}/{spec.name}", f"{arn}/triggers/{spec.name}"
        found = remote.pop(spec.name, None)
        if found is None:
            actions.append(Action(ResourceType.TRIGGER, name, ActionKind.CREATE, where,
                                  (SettingChange(f"triggers.{spec.name}", None, wanted),),
                                  origin=fn.resource))
            continue
        changes = _changes(found, wanted)
        replaced = any(c.name.rsplit(".", 1)[1] in _FIXED for c in changes)
        actions.append(Action(ResourceType.TRIGGER, name,
                              ActionKind.UPDATE if changes else ActionKind.NO_CHANGE, where,
                              tuple(changes), notes=(REPLACED,) if replaced else (),
                              origin=fn.resource, url=found.url))
    for extra in remote.values():
        actions.append(Action(ResourceType.TRIGGER, f"{fn.name}/{extra.name}",
                              ActionKind.DELETE, f"{arn}/triggers/{extra.name}",
                              notes=("s.yaml no longer lists it",), origin=fn.resource))
    return actions


def plan_triggers(state: DesiredState, clients: Clients,
                  planned: Sequence[Action]) -> list[Action]:
    """The trigger actions of ``state``'s functions (read-only calls)."""
    client = FunctionTriggerClient(clients.fc.connection)
    out: list[Action] = []
    for fn in state.functions:
        before = next((a for a in planned if a.resource is ResourceType.FUNCTION
                       and a.name == fn.name), None)
        exists = before is not None and before.kind is not ActionKind.CREATE
        out.extend(_plan_function(fn, exists, client,
                                  roles.function_arn(state.region, state.account_id, fn.name)))
    return out


def apply_trigger(action: Action, state: DesiredState, clients: Clients,
                  progress: Callable[[str], None]) -> str:
    """Carry out one trigger action; the trigger's HTTP URL when it has one."""
    client = FunctionTriggerClient(clients.fc.connection)
    function, _, name = action.name.partition("/")
    if action.kind is ActionKind.DELETE:
        progress(f"deleting trigger {name} of function {function}")
        client.delete(function, name)
        return ""
    fn = next(f for f in state.functions if f.name == function)
    spec = next(t for t in fn.triggers if t.name == name)
    if action.kind is ActionKind.CREATE or REPLACED in action.notes:
        if action.kind is not ActionKind.CREATE:
            client.delete(function, name)
        progress(f"creating trigger {name} of function {function}")
        return client.create(function, spec.wire()).url
    progress(f"updating trigger {name} of function {function}")
    return client.update(function, spec.wire()).url


def remove_function_triggers(clients: Clients, function: str) -> int:
    """Delete every trigger of ``function`` (before the function itself); how many."""
    client = FunctionTriggerClient(clients.fc.connection)
    return sum(client.delete(function, t.name) for t in client.list(function))
