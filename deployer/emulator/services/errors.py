"""Domain errors of the emulated services; ``emulator/api/errors.py`` maps them to wire codes."""

from __future__ import annotations

__all__ = [
    "AlreadyAttached",
    "AlreadyExists",
    "DeleteConflict",
    "InvalidArgument",
    "NotAttached",
    "NotFound",
    "PayloadTooLarge",
    "ServiceError",
]


class ServiceError(Exception):
    """Base: ``message`` is user-facing text; ``kind`` names the resource ('function', 'role')."""

    def __init__(self, message: str, *, kind: str = "", name: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.name = name


class InvalidArgument(ServiceError):
    """A parameter value breaks a rule (name syntax, range, enum, document syntax)."""

    def __init__(self, message: str, *, kind: str = "", name: str = "", field: str = "") -> None:
        super().__init__(message, kind=kind, name=name)
        self.field = field


class NotFound(ServiceError):
    """The named resource does not exist."""


class AlreadyExists(ServiceError):
    """A resource with that name exists already."""


class AlreadyAttached(ServiceError):
    """The policy is already attached to the role."""


class NotAttached(ServiceError):
    """The policy is not attached to the role."""


class DeleteConflict(ServiceError):
    """The resource is still referenced (role with policies, policy attached to roles)."""


class PayloadTooLarge(ServiceError):
    """A code package or invocation payload exceeds its limit (``limit`` bytes)."""

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit
