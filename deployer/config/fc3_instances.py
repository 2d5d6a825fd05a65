"""Readers of the fc3 props that ask for instances ahead of requests: ``provisionConfig``
(PutProvisionConfig's body) and ``scalingConfig`` (PutScalingConfig's body), each for its
``qualifier`` (fc3's: LATEST by default, or an alias; kept in the value as ``qualifier``,
which :mod:`deployer.core.provisioning` sends as the query parameter). The policies they
hold (scheduled actions, target tracking, horizontal and scheduled scaling) are checked for
shape and sent as they are; the emulator records them (docs/fc3-functions.md, "Provisioned
instances").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from deployer.config.fc3_settings import Values, _frozen, _sub
from deployer.config.props import PropReader, type_name
from deployer.config.variables import BROKEN

__all__ = ["MAX_INSTANCES", "read_provision_config", "read_scaling_config"]

MAX_INSTANCES = 100  # per function [INFERRED: FC's console caps provisioned instances there]
_QUALIFIER = r"[A-Za-z_][A-Za-z0-9_-]{0,127}"
_SCHEDULED = ("name", "startTime", "endTime", "target", "scheduleExpression", "timeZone")
_TRACKING = ("name", "startTime", "endTime", "metricType", "metricTarget", "minCapacity",
             "maxCapacity", "timeZone")
_HORIZONTAL = ("name", "metricType", "metricTarget", "minInstances", "maxInstances",
               "startTime", "endTime", "timeZone")
_SCHEDULED_SCALING = ("name", "scheduleExpression", "target", "startTime", "endTime",
                      "timeZone")


def _policies(r: PropReader, key: str, allowed: tuple[str, ...]) -> list[Any] | None:
    """A list of policy maps with the keys FC's API names (each needs ``name``)."""
    items = r.sequence(key)
    if items is None:
        return None
    out: list[Any] = []
    for i, item in enumerate(items):
        if item is BROKEN:
            continue
        if not isinstance(item, Mapping):
            r.error((key, i), f"must be a map (got {type_name(item)})")
            continue
        one = PropReader(item, (*r.path, key, i), r.log)
        one.check_keys(allowed, {}, key)
        one.string("name", required=True)
        out.append({k: v for k, v in item.items() if v is not None})
    return out


def read_provision_config(r: PropReader, v: Values, c: Any) -> Any:
    """``provisionConfig``: ``defaultTarget`` (0-100; ``target`` is its older name),
    ``alwaysAllocateCPU``/``alwaysAllocateGPU`` (default true), ``scheduledActions``,
    ``targetTrackingPolicies``."""
    value = r.mapping("provisionConfig")
    if value is None:
        return None
    sub = _sub(r, "provisionConfig", value)
    sub.check_keys(("defaultTarget", "target", "alwaysAllocateCPU", "alwaysAllocateGPU",
                    "scheduledActions", "targetTrackingPolicies", "qualifier"), {},
                   "provisionConfig")
    names = [k for k in ("defaultTarget", "target") if sub.props.get(k) is not None]
    if len(names) != 1:
        sub.error("defaultTarget", "required: the instances to keep started (0-100); give "
                  "defaultTarget (or its older name target), not both")
        return None
    target = sub.integer(names[0], low=0, high=MAX_INSTANCES)
    out: dict[str, Any] = {
        "defaultTarget": target,
        "alwaysAllocateCPU": sub.boolean("alwaysAllocateCPU", default=True),
        "alwaysAllocateGPU": sub.boolean("alwaysAllocateGPU", default=True),
        "scheduledActions": _policies(sub, "scheduledActions", _SCHEDULED) or [],
        "targetTrackingPolicies": _policies(sub, "targetTrackingPolicies", _TRACKING) or [],
        "qualifier": _qualifier(sub)}
    return None if target is None else _frozen(out)


def _qualifier(sub: PropReader) -> str:
    return sub.string("qualifier", default="LATEST", pattern=_QUALIFIER,
                      what="must be LATEST or an alias name") or "LATEST"


def read_scaling_config(r: PropReader, v: Values, c: Any) -> Any:
    """``scalingConfig``: ``minInstances`` (0-100), ``horizontalScalingPolicies``,
    ``scheduledPolicies``, ``residentPoolId``."""
    value = r.mapping("scalingConfig")
    if value is None:
        return None
    sub = _sub(r, "scalingConfig", value)
    sub.check_keys(("minInstances", "horizontalScalingPolicies", "scheduledPolicies",
                    "residentPoolId", "qualifier"), {}, "scalingConfig")
    if sub.props.get("minInstances") is None:
        sub.error("minInstances", "required: the instances to keep started (0-100)")
        return None
    least = sub.integer("minInstances", low=0, high=MAX_INSTANCES)
    out: dict[str, Any] = {"minInstances": least, "qualifier": _qualifier(sub)}
    for key, allowed in (("horizontalScalingPolicies", _HORIZONTAL),
                         ("scheduledPolicies", _SCHEDULED_SCALING)):
        policies = _policies(sub, key, allowed)
        if policies:
            out[key] = policies
    pool = sub.string("residentPoolId")
    if pool:
        out["residentPoolId"] = pool
    return None if least is None else _frozen(out)
