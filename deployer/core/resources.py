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
