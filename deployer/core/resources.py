"""The closed sets a deploy speaks in: resource types and what a plan does to each."""

from __future__ import annotations

import enum

__all__ = ["ActionKind", "ResourceType"]


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
    SERVICE_ROLE = "service-role"  # a documented default role (role: auto)
    LOG_STORE = "logstore"  # a Log Service project/logstore (logConfig: auto)
    ASYNC_INVOKE_CONFIG = "async-invoke-config"  # a function's asyncInvokeConfig (LATEST)
    CONCURRENCY_CONFIG = "concurrency-config"  # a function's reserved concurrency
    PROVISION_CONFIG = "provision-config"  # a function's provisionConfig (LATEST)
    SCALING_CONFIG = "scaling-config"  # a function's scalingConfig (LATEST)
    CUSTOM_DOMAIN = "custom-domain"  # a function's route on a custom domain, <function>/<domain>
    LAYER = "layer"  # a layer version published from a local directory
    TRIGGER = "trigger"  # a function's trigger, named <function>/<trigger>
