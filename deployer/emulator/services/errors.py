"""The closed set of the emulator's domain errors.

Services raise only these. Each is one class of the small hierarchy below; where one class
covers several cases, the case is a member of a closed :class:`~enum.Enum` (``about``): the
resource that was not found, exists already or is still in use (:class:`Resource`), what is
wrong with a security token (:class:`TokenProblem`), why AssumeRole is refused
(:class:`RoleRefusal`), which quota refused a call (:class:`Quota`). Wire codes and HTTP statuses
are not here: each product's contract module maps these errors to its own codes in one
``ErrorTable`` (docs/architecture.md, "Errors").
"""

from __future__ import annotations

import enum

__all__ = [
    "AlreadyAttached",
    "AlreadyExists",
    "AssumeRoleRefused",
    "Decision",
    "DeleteConflict",
    "InvalidValue",
    "MalformedPolicy",
    "NotAttached",
    "NotAuthorized",
    "PayloadTooLarge",
    "Quota",
    "QuotaExceeded",
    "Resource",
    "ResourceNotFound",
    "RoleRefusal",
    "ServiceError",
    "TaskCompleted",
    "TokenError",
    "TokenProblem",
    "Unsupported",
]


class Resource(enum.Enum):
    """What a :class:`ResourceNotFound`, :class:`AlreadyExists` or :class:`DeleteConflict` is
    about."""

    FUNCTION = "function"
    VERSION = "version"
    ALIAS = "alias"
    ROLE = "role"
    POLICY = "policy"
    FLOW = "flow"
    EXECUTION = "execution"
    SCHEDULE = "schedule"
    PROJECT = "project"
    LOGSTORE = "logstore"
    FAULT = "fault"
    TRIGGER = "trigger"
    LAYER = "layer"
    ASYNC_TASK = "async task"
    ASYNC_INVOKE_CONFIG = "async invoke config"
    CONCURRENCY_CONFIG = "concurrency config"
    PROVISION_CONFIG = "provision config"
    SCALING_CONFIG = "scaling config"
    CUSTOM_DOMAIN = "custom domain"


class TokenProblem(enum.Enum):
    """Why a request's STS credentials are not acceptable."""

    MISSING = "missing"  # an STS key without its security token
    MALFORMED = "malformed"  # not a token this emulator issued
    MISMATCH = "mismatch"  # issued with another AccessKeyId (or sent with a permanent key)
    EXPIRED = "expired"


class RoleRefusal(enum.Enum):
    """Why AssumeRole cannot proceed."""

    ROOT_CALLER = "root_caller"  # the account's own AccessKey may not assume roles
    NOT_TRUSTED = "not_trusted"  # the role's trust policy does not name the caller
    SESSION_NAME = "session_name"
    DURATION = "duration"
    POLICY = "policy"  # the session policy breaks the grammar


class Quota(enum.Enum):
    """The cloud's quota that refused a call (``--throttle cloud``)."""

    API_RATE = "api_rate"  # CloudFlow's per-action call rate
    INSTANCES = "instances"  # FC's running instances per account and region
    RESERVED_CONCURRENCY = "reserved_concurrency"  # a function's reservedConcurrency


class Decision(enum.Enum):
    """A RAM authorization's outcome."""

    ALLOW = "Allow"
    IMPLICIT_DENY = "ImplicitDeny"
    EXPLICIT_DENY = "ExplicitDeny"


class ServiceError(Exception):
    """Base: ``message`` is user-facing text; ``about`` the case of a class covering several
    (None for the others)."""

    about: enum.Enum | None = None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class InvalidValue(ServiceError):
    """A parameter value breaks a rule (name syntax, range, enum); ``field`` names it."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class MalformedPolicy(InvalidValue):
    """A RAM policy document breaks the policy grammar."""


class Unsupported(ServiceError):
    """The emulated service knows the request but does not do it (Standard executions run
    synchronously)."""


class _ResourceError(ServiceError):
    def __init__(self, message: str, resource: Resource, *, name: str = "") -> None:
        super().__init__(message)
        self.about = self.resource = resource
        self.name = name


class ResourceNotFound(_ResourceError):
    """The named ``resource`` does not exist."""


class AlreadyExists(_ResourceError):
    """A ``resource`` with that name exists already."""


class DeleteConflict(_ResourceError):
    """The ``resource`` is still referenced (a role with policies, a policy attached)."""


class AlreadyAttached(ServiceError):
    """The policy is already attached to the role."""


class NotAttached(ServiceError):
    """The policy is not attached to the role."""


class PayloadTooLarge(ServiceError):
    """A code package or invocation payload exceeds its limit (``limit`` bytes)."""

    def __init__(self, message: str, *, limit: int) -> None:
        super().__init__(message)
        self.limit = limit


class TaskCompleted(ServiceError):
    """ReportTask* with a token whose task has completed already (or never existed)."""


class NotAuthorized(ServiceError):
    """The caller may not do ``action`` on ``resource``; ``decision`` says why."""

    def __init__(self, message: str, *, action: str, resource: str, principal: str,
                 decision: Decision, principal_type: str = "AssumedRoleUser",
                 account_id: str = "") -> None:
        super().__init__(message)
        self.action = action
        self.resource = resource
        self.principal = principal
        self.decision = decision
        self.principal_type = principal_type
        self.account_id = account_id


class TokenError(ServiceError):
    """A request's STS credentials are not acceptable (``about``: the :class:`TokenProblem`)."""

    def __init__(self, message: str, problem: TokenProblem) -> None:
        super().__init__(message)
        self.about = self.problem = problem


class AssumeRoleRefused(ServiceError):
    """AssumeRole cannot proceed (``about``: the :class:`RoleRefusal`)."""

    def __init__(self, message: str, refusal: RoleRefusal) -> None:
        super().__init__(message)
        self.about = self.refusal = refusal


class QuotaExceeded(ServiceError):
    """A quota refused the call (``about``: the :class:`Quota`); ``retry_after`` is the
    seconds until it would be admitted (None: unknown)."""

    def __init__(self, message: str, quota: Quota, *, retry_after: float | None) -> None:
        super().__init__(message)
        self.about = self.quota = quota
        self.retry_after = retry_after
