"""Wire errors: one class per error code, and the only serializer of error bodies.

Which domain error becomes which of these is each product's error table (``ERRORS`` in its
contract module, an :class:`~deployer.emulator.api.contract.ErrorTable`).

FC (ROA) errors carry ``x-fc-request-id``; RPC products (RAM, STS, later CloudFlow) carry
``x-acs-request-id`` and a ``HostId`` in the body. Bodies are always JSON
``{"Code","Message","RequestId"}`` so the SDKs raise typed exceptions (fc3-api.md §3.3, §5.2).
"""

from __future__ import annotations

import enum
import errno
import sqlite3
from collections.abc import Callable

from deployer.emulator.api.http import HttpResponse, json_response
from deployer.emulator.services import errors as svc

__all__ = ["TOKEN_ERRORS", "ApiError", "Style", "access_denied", "error_response", "storage_error",
           "throttled"]


class Style(enum.Enum):
    ROA = "roa"  # Function Compute 3.0
    RPC = "rpc"  # RAM, STS, CloudFlow
    SLS = "sls"  # Log Service: {"errorCode", "errorMessage"} and x-log-requestid


class ApiError(Exception):
    """Base of every wire error; subclasses fix ``code`` and ``http_status``."""

    code = "InternalServerError"
    http_status = 500

    def __init__(self, message: str, *, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.headers = headers or {}
        self.extra: dict[str, object] = {}  # more body keys (e.g. AccessDeniedDetail)


def _define(name: str, code: str, status: int) -> type[ApiError]:
    return type(name, (ApiError,), {"code": code, "http_status": status, "__module__": __name__})


def define(code: str, status: int) -> type[ApiError]:
    """A wire error class of one surface's own (``code`` without dots)."""
    return _define(code, code, status)


# --- shared / FC 3.0 (fc3-api.md §9) -----------------------------------------------------------
InternalServerError = _define("InternalServerError", "InternalServerError", 500)
InvalidArgument = _define("InvalidArgument", "InvalidArgument", 400)
MissingRequiredHeader = _define("MissingRequiredHeader", "MissingRequiredHeader", 400)
PathNotSupported = _define("PathNotSupported", "PathNotSupported", 400)
EntityTooLarge = _define("EntityTooLarge", "EntityTooLarge", 400)
AccessDenied = _define("AccessDenied", "AccessDenied", 403)
SignatureNotMatch = _define("SignatureNotMatch", "SignatureNotMatch", 403)
InvalidAccessKeyID = _define("InvalidAccessKeyID", "InvalidAccessKeyID", 403)
FunctionNotFound = _define("FunctionNotFound", "FunctionNotFound", 404)
VersionNotFound = _define("VersionNotFound", "VersionNotFound", 404)
AliasNotFound = _define("AliasNotFound", "AliasNotFound", 404)
AliasAlreadyExists = _define("AliasAlreadyExists", "AliasAlreadyExists", 409)
FunctionAlreadyExists = _define("FunctionAlreadyExists", "FunctionAlreadyExists", 409)
NotFound = _define("NotFound", "NotFound", 404)
# FC's other resources (FC error codes page: AsyncConfigNotExists, DomainNameNotFound and
# DomainNameAlreadyExists CONFIRMED; the trigger, layer, task, concurrency, provision and
# scaling codes INFERRED
# from FC 2.0's naming)
TriggerNotFound = _define("TriggerNotFound", "TriggerNotFound", 404)
TriggerAlreadyExists = _define("TriggerAlreadyExists", "TriggerAlreadyExists", 409)
LayerNotFound = _define("LayerNotFound", "LayerNotFound", 404)
AsyncConfigNotExists = _define("AsyncConfigNotExists", "AsyncConfigNotExists", 404)
AsyncTaskNotFound = _define("AsyncTaskNotFound", "AsyncTaskNotFound", 404)
ConcurrencyConfigNotFound = _define("ConcurrencyConfigNotFound", "ConcurrencyConfigNotFound",
                                    404)
ProvisionConfigNotFound = _define("ProvisionConfigNotFound", "ProvisionConfigNotFound", 404)
ScalingConfigNotFound = _define("ScalingConfigNotFound", "ScalingConfigNotFound", 404)
DomainNameNotFound = _define("DomainNameNotFound", "DomainNameNotFound", 404)
DomainNameAlreadyExists = _define("DomainNameAlreadyExists", "DomainNameAlreadyExists", 409)

# --- request freshness (docs/emulator.md "Request freshness": sources and inferred choices) ----
RequestTimeTooSkewed = _define("RequestTimeTooSkewed", "RequestTimeTooSkewed", 403)
SignatureNonceUsed = _define("SignatureNonceUsed", "SignatureNonceUsed", 403)
PopSignatureNonceUsed = _define("PopSignatureNonceUsed", "SignatureNonceUsed", 400)
InvalidTimeStampFormat = _define("InvalidTimeStampFormat", "InvalidTimeStamp.Format", 400)
InvalidTimeStampExpired = _define("InvalidTimeStampExpired", "InvalidTimeStamp.Expired", 400)
SlsRequestTimeExpired = _define("SlsRequestTimeExpired", "RequestTimeExpired", 400)
SlsInvalidRequestTime = _define("SlsInvalidRequestTime", "InvalidRequestTime", 400)

# --- the emulator's own front door (any product) ----------------------------------------------
RequestTimeout = _define("RequestTimeout", "RequestTimeout", 408)
ExpectationFailed = _define("ExpectationFailed", "ExpectationFailed", 417)
ServiceUnavailable = _define("ServiceUnavailable", "ServiceUnavailable", 503)
TooManyStreams = _define("TooManyStreams", "TooManyStreams", 429)
StorageFull = _define("StorageFull", "StorageFull", 507)
StorageReadOnly = _define("StorageReadOnly", "StorageReadOnly", 503)
StorageError = _define("StorageError", "StorageError", 503)

# --- RPC products (RAM / STS) -----------------------------------------------------------------
SignatureDoesNotMatch = _define("SignatureDoesNotMatch", "SignatureDoesNotMatch", 403)
InvalidAccessKeyIdNotFound = _define(
    "InvalidAccessKeyIdNotFound", "InvalidAccessKeyId.NotFound", 403
)
IncompleteSignature = _define("IncompleteSignature", "IncompleteSignature", 400)
MissingParameter = _define("MissingParameter", "MissingParameter", 400)
InvalidParameter = _define("InvalidParameter", "InvalidParameter", 400)
InvalidActionNotFound = _define("InvalidActionNotFound", "InvalidAction.NotFound", 404)
MalformedPolicyDocument = _define("MalformedPolicyDocument", "MalformedPolicyDocument", 400)
EntityNotExistRole = _define("EntityNotExistRole", "EntityNotExist.Role", 404)
EntityAlreadyExistsRole = _define("EntityAlreadyExistsRole", "EntityAlreadyExists.Role", 409)
EntityNotExistPolicy = _define("EntityNotExistPolicy", "EntityNotExist.Policy", 404)
EntityAlreadyExistsPolicy = _define("EntityAlreadyExistsPolicy", "EntityAlreadyExists.Policy", 409)
EntityAlreadyExistsRolePolicy = _define(
    "EntityAlreadyExistsRolePolicy", "EntityAlreadyExists.Role.Policy", 409
)
EntityNotExistRolePolicy = _define("EntityNotExistRolePolicy", "EntityNotExist.Role.Policy", 404)
DeleteConflictRolePolicy = _define("DeleteConflictRolePolicy", "DeleteConflict.Role.Policy", 409)
DeleteConflictPolicyRole = _define("DeleteConflictPolicyRole", "DeleteConflict.Policy.Role", 409)

# --- Log Service (SLS error codes) --------------------------------------------------------------
SlsUnauthorized = _define("SlsUnauthorized", "Unauthorized", 401)
SlsSignatureNotMatch = _define("SlsSignatureNotMatch", "SignatureNotMatch", 401)
ProjectNotExist = _define("ProjectNotExist", "ProjectNotExist", 404)
LogStoreNotExist = _define("LogStoreNotExist", "LogStoreNotExist", 404)
ProjectAlreadyExist = _define("ProjectAlreadyExist", "ProjectAlreadyExist", 409)
LogStoreAlreadyExist = _define("LogStoreAlreadyExist", "LogStoreAlreadyExist", 409)
ParameterInvalid = _define("ParameterInvalid", "ParameterInvalid", 400)
PostBodyInvalid = _define("PostBodyInvalid", "PostBodyInvalid", 400)

# --- RPC routing ---------------------------------------------------------------------------------
InvalidVersion = _define("InvalidVersion", "InvalidVersion", 400)

# --- CloudFlow (cloudflow-api.md §6.3) ---------------------------------------------------------
ActionNotSupported = _define("ActionNotSupported", "ActionNotSupported", 400)
APIVersionNotSupported = _define("APIVersionNotSupported", "APIVersionNotSupported", 400)
MissingRequiredParams = _define("MissingRequiredParams", "MissingRequiredParams", 400)
ExecutionAlreadyExists = _define("ExecutionAlreadyExists", "ExecutionAlreadyExists", 400)
TaskAlreadyCompleted = _define("TaskAlreadyCompleted", "TaskAlreadyCompleted", 400)
FlowNotExists = _define("FlowNotExists", "FlowNotExists", 404)
ExecutionNotExists = _define("ExecutionNotExists", "ExecutionNotExists", 404)
FlowAlreadyExists = _define("FlowAlreadyExists", "FlowAlreadyExists", 409)
FlowVersionNotExists = _define("FlowVersionNotExists", "FlowVersionNotExists", 404)
FlowAliasNotExists = _define("FlowAliasNotExists", "FlowAliasNotExists", 404)
FlowAliasAlreadyExists = _define("FlowAliasAlreadyExists", "FlowAliasAlreadyExists", 409)
ScheduleNotExists = _define("ScheduleNotExists", "ScheduleNotExists", 404)
ScheduleAlreadyExists = _define("ScheduleAlreadyExists", "ScheduleAlreadyExists", 409)

# --- security tokens and authorization (any product; docs/runtime.md "RAM authorization") ------
MissingSecurityToken = _define("MissingSecurityToken", "MissingSecurityToken", 403)
InvalidSecurityTokenMalformed = _define("InvalidSecurityTokenMalformed",
                                        "InvalidSecurityToken.Malformed", 403)
InvalidSecurityTokenMismatch = _define("InvalidSecurityTokenMismatch",
                                       "InvalidSecurityToken.MismatchWithAccessKey", 403)
InvalidSecurityTokenExpired = _define("InvalidSecurityTokenExpired",
                                      "InvalidSecurityToken.Expired", 403)
NoPermission = _define("NoPermission", "NoPermission", 403)

# --- STS (AssumeRole) ---------------------------------------------------------------------------
InvalidRoleSessionName = _define("InvalidRoleSessionName", "InvalidParameter.RoleSessionName",
                                 400)
InvalidDurationSeconds = _define("InvalidDurationSeconds", "InvalidParameter.DurationSeconds",
                                 400)
InvalidPolicyGrammar = _define("InvalidPolicyGrammar", "InvalidParameter.PolicyGrammar", 400)

# --- quotas (--throttle cloud) ------------------------------------------------------------------
Throttling = _define("Throttling", "Throttling", 429)
ResourceExhausted = _define("ResourceExhausted", "ResourceExhausted", 429)

TOKEN_ERRORS: dict[object, type[ApiError]] = {
    (svc.TokenError, svc.TokenProblem.MISSING): MissingSecurityToken,
    (svc.TokenError, svc.TokenProblem.MALFORMED): InvalidSecurityTokenMalformed,
    (svc.TokenError, svc.TokenProblem.MISMATCH): InvalidSecurityTokenMismatch,
    (svc.TokenError, svc.TokenProblem.EXPIRED): InvalidSecurityTokenExpired,
}
"""The security-token rows every signed product's error table shares (the access hook checks
tokens before any product sees the request)."""


def access_denied(cls: type[ApiError], preface: str = "") -> Callable[[svc.NotAuthorized],
                                                                        ApiError]:
    """An error-table entry for a refused authorization: ``cls`` (FC and CloudFlow
    ``AccessDenied``, RAM and STS ``NoPermission``) with ``preface`` before the reason, and the
    ``AccessDeniedDetail`` the SDKs expose."""
    def build(exc: svc.NotAuthorized) -> ApiError:
        err = cls(preface + exc.message)
        err.extra = {"AccessDeniedDetail": {
            "AuthAction": exc.action, "AuthResource": exc.resource,
            "AuthPrincipalType": exc.principal_type, "AuthPrincipalDisplayName": exc.principal,
            "AuthPrincipalOwnerId": exc.account_id, "NoPermissionType": exc.decision.value,
            "PolicyType": "AccountLevelIdentityBasedPolicy"}}
        return err
    return build


RAM_DENIED = access_denied(NoPermission, "You are not authorized to do this action. You should "
                                         "be authorized by RAM. ")


def throttled(cls: type[ApiError]) -> Callable[[svc.QuotaExceeded], ApiError]:
    """An error-table entry for a quota's refusal: ``cls`` with ``x-acs-retry-after`` (ms)
    when the quota knows when the call would be admitted."""
    def build(exc: svc.QuotaExceeded) -> ApiError:
        headers = ({} if exc.retry_after is None
                   else {"x-acs-retry-after": str(max(1, round(exc.retry_after * 1000)))})
        return cls(exc.message, headers=headers)
    return build


_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_READ_ONLY = {errno.EROFS, errno.EACCES, errno.EPERM}


def storage_error(exc: BaseException, where: str) -> ApiError | None:
    """The wire error for a failure to write the state directory ``where`` (disk full,
    read-only, I/O error), or None when ``exc`` is something else."""
    reason = ""
    if isinstance(exc, sqlite3.OperationalError):
        name = getattr(exc, "sqlite_errorname", "")
        text = str(exc)
        if name.startswith("SQLITE_FULL") or "disk is full" in text:
            reason = "full"
        elif name.startswith("SQLITE_READONLY") or "readonly database" in text:
            reason = "read-only"
        elif name.startswith(("SQLITE_IOERR", "SQLITE_CANTOPEN")) or "disk I/O error" in text:
            reason = "io"
    elif isinstance(exc, OSError) and exc.errno is not None:
        reason = ("full" if exc.errno in _FULL else "read-only" if exc.errno in _READ_ONLY
                  else "io" if exc.errno == errno.EIO else "")
    if not reason:
        return None
    tail = (" Nothing of this request was saved; what was saved before is intact. The emulator "
            "keeps running: retry once the state directory is writable again.")
    if reason == "full":
        return StorageFull(f"the emulator cannot save its state: the disk holding {where} is "
                             f"full ({exc}).{tail}")
    if reason == "read-only":
        return StorageReadOnly(f"the emulator cannot save its state: {where} is read-only "
                                 f"({exc}).{tail}")
    return StorageError(f"the emulator cannot save its state in {where}: I/O error "
                          f"({exc}).{tail}")


def error_response(error: ApiError, request_id: str, style: Style, host: str = "") -> HttpResponse:
    """Serialize ``error`` as the JSON body and headers of ``style``."""
    if style is Style.SLS:
        return json_response(error.http_status,
                             {"errorCode": error.code, "errorMessage": error.message},
                             {"x-log-requestid": request_id, **error.headers})
    body: dict[str, object] = {"Code": error.code, "Message": error.message,
                               "RequestId": request_id, **error.extra}
    if style is Style.RPC:
        body["HostId"] = host
        headers = {"x-acs-request-id": request_id}
    else:
        headers = {"x-fc-request-id": request_id}
    return json_response(error.http_status, body, {**headers, **error.headers})
