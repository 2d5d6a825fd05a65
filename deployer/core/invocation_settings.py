"""A function's ``asyncInvokeConfig``, ``concurrencyConfig``, ``provisionConfig`` and
``scalingConfig`` in a deploy: each is planned against what the function has in the cloud,
put after the function, and deleted when s.yaml no longer sets it (their Get* answer 404 when
the function has none). Action names are the function's; the same calls run on both targets
(:class:`~deployer.cloud.fc_invocation_settings.InvocationSettingsClient`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from deployer.cloud.fc_invocation_settings import InvocationSettingsClient
from deployer.core import roles
from deployer.core.changes import SettingChange
from deployer.core.plan_model import Action, Clients, DesiredFunction, DesiredState
from deployer.core.provisioning import (
    INSTANCE_TYPES,
    apply_instance_setting,
    plan_instance_settings,
)
from deployer.core.resources import ActionKind, ResourceType
from deployer.plain_values import plain_data

__all__ = ["SETTING_TYPES", "apply_invocation_setting", "plan_invocation_settings"]

SETTING_TYPES = frozenset({ResourceType.ASYNC_INVOKE_CONFIG, ResourceType.CONCURRENCY_CONFIG,
                           *INSTANCE_TYPES})


def _action(kind: ResourceType, fn: DesiredFunction, arn: str, old: Any, new: Any,
            label: str) -> Action | None:
    if old is None and new is None:
        return None
    if old == new:
        return Action(kind, fn.name, ActionKind.NO_CHANGE, arn, origin=fn.resource)
    if new is None:
        return Action(kind, fn.name, ActionKind.DELETE, arn, (SettingChange(label, old, None),),
                      notes=("s.yaml no longer sets it",), origin=fn.resource)
    return Action(kind, fn.name, ActionKind.CREATE if old is None else ActionKind.UPDATE, arn,
                  (SettingChange(label, old, new),), origin=fn.resource)


def plan_invocation_settings(state: DesiredState, clients: Clients,
                             planned: Sequence[Action]) -> list[Action]:
    """The asyncInvokeConfig and concurrencyConfig actions (read-only calls)."""
    client = InvocationSettingsClient(clients.fc.connection)
    out: list[Action] = []
    for fn in state.functions:
        before = next((a for a in planned if a.resource is ResourceType.FUNCTION
                       and a.name == fn.name), None)
        exists = before is not None and before.kind is not ActionKind.CREATE
        arn = roles.function_arn(state.region, state.account_id, fn.name)
        wanted = plain_data(fn.async_invoke_config) if fn.async_invoke_config else None
        found = client.get_async_invoke_config(fn.name) if exists else None
        for action in (
                _action(ResourceType.ASYNC_INVOKE_CONFIG, fn, arn, found, wanted,
                        "asyncInvokeConfig"),
                _action(ResourceType.CONCURRENCY_CONFIG, fn, arn,
                        client.get_reserved_concurrency(fn.name) if exists else None,
                        fn.reserved_concurrency, "concurrencyConfig.reservedConcurrency")):
            if action is not None:
                out.append(action)
        out.extend(plan_instance_settings(fn, exists, arn, client))
    return out


def apply_invocation_setting(action: Action, state: DesiredState, clients: Clients,
                             progress: Callable[[str], None]) -> None:
    """Put or delete one function's setting."""
    client = InvocationSettingsClient(clients.fc.connection)
    fn = next((f for f in state.functions if f.name == action.name), None)
    if action.resource is ResourceType.ASYNC_INVOKE_CONFIG:
        progress(f"setting the asynchronous invocation of function {action.name}")
        if action.kind is ActionKind.DELETE or fn is None or not fn.async_invoke_config:
            client.delete_async_invoke_config(action.name)
        else:
            client.put_async_invoke_config(action.name, plain_data(fn.async_invoke_config))
        return
    if action.resource in INSTANCE_TYPES:
        function = action.name.partition("/")[0]
        apply_instance_setting(action, next((f for f in state.functions
                                             if f.name == function), None), client, progress)
        return
    progress(f"setting the reserved concurrency of function {action.name}")
    if action.kind is ActionKind.DELETE or fn is None or fn.reserved_concurrency is None:
        client.delete_reserved_concurrency(action.name)
    else:
        client.put_reserved_concurrency(action.name, fn.reserved_concurrency)
