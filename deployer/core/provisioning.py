"""A function's ``provisionConfig`` and ``scalingConfig`` in a deploy, per qualifier (fc3's
``qualifier``, LATEST by default): planned against the configs the function has in the cloud
(List*Configs for its qualifiers, Get*Config for each), put after the function and its
aliases, and deleted when s.yaml drops the prop or names another qualifier. An action is
named after the function, ``<function>/<qualifier>`` for a qualifier other than LATEST.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deployer.cloud.fc_invocation_settings import InvocationSettingsClient
from deployer.core.changes import SettingChange
from deployer.core.plan_model import Action, DesiredFunction
from deployer.core.resources import ActionKind, ResourceType
from deployer.plain_values import plain_data

__all__ = ["INSTANCE_TYPES", "apply_instance_setting", "plan_instance_settings"]

#: the action type -> the client's kind and the s.yaml prop
INSTANCE_TYPES = {ResourceType.PROVISION_CONFIG: ("provision", "provisionConfig"),
                  ResourceType.SCALING_CONFIG: ("scaling", "scalingConfig")}


def _wanted(fn: DesiredFunction, kind: ResourceType) -> tuple[str, dict[str, Any]] | None:
    """(qualifier, Put*Config's body) s.yaml asks for, None when it sets none."""
    config = fn.provision_config if kind is ResourceType.PROVISION_CONFIG else \
        fn.scaling_config
    if not config:
        return None
    body = plain_data(config)
    return str(body.pop("qualifier", "LATEST")), body


def plan_instance_settings(fn: DesiredFunction, exists: bool, arn: str,
                           client: InvocationSettingsClient) -> list[Action]:
    """The provision-config and scaling-config actions of one function (read-only calls)."""
    out: list[Action] = []
    for kind, (which, prop) in INSTANCE_TYPES.items():
        wanted = _wanted(fn, kind)
        have = client.instances_qualifiers(which, fn.name) if exists else []
        for qualifier in sorted({*have, *([wanted[0]] if wanted else [])}):
            old = client.get_instances_config(which, fn.name, qualifier) \
                if qualifier in have else None
            new = wanted[1] if wanted and wanted[0] == qualifier else None
            name = fn.name if qualifier == "LATEST" else f"{fn.name}/{qualifier}"
            where = arn if qualifier == "LATEST" else f"{arn}/{qualifier}"
            if old == new:
                out.append(Action(kind, name, ActionKind.NO_CHANGE, where, origin=fn.resource))
            elif new is None:
                out.append(Action(kind, name, ActionKind.DELETE, where,
                                  (SettingChange(prop, old, None),),
                                  notes=(f"s.yaml no longer sets it for {qualifier}",),
                                  origin=fn.resource))
            else:
                out.append(Action(kind, name, ActionKind.CREATE if old is None
                                  else ActionKind.UPDATE, where,
                                  (SettingChange(prop, old, new),), origin=fn.resource))
    return out


def apply_instance_setting(action: Action, fn: DesiredFunction | None,
                           client: InvocationSettingsClient,
                           progress: Callable[[str], None]) -> None:
    """Put or delete one function's provision or scaling config for one qualifier."""
    which, prop = INSTANCE_TYPES[action.resource]
    function, _, qualifier = action.name.partition("/")
    qualifier = qualifier or "LATEST"
    progress(f"setting the {prop} of function {function} ({qualifier})")
    wanted = None if fn is None or action.kind is ActionKind.DELETE else \
        _wanted(fn, action.resource)
    if wanted is None or wanted[0] != qualifier:
        client.delete_instances_config(which, function, qualifier)
    else:
        client.put_instances_config(which, function, wanted[1], qualifier)
