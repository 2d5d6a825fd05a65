"""Wire errors: one class per error code, and the only serializer of error bodies.

Which domain error becomes which of these is each product's error table (an
:class:`~deployer.emulator.api.contract.ErrorTable` in its contract module). Bodies are JSON
``{"Code","Message","RequestId"}`` so the SDKs raise typed exceptions (fc3-api.md §3.3, §5.2),
with ``x-fc-request-id`` (FC), or ``x-acs-request-id`` and a ``HostId`` (the RPC products);
Log Service's are ``{"errorCode","errorMessage"}``.
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
    """Base of every wire error; subclasses fix ``code`` and ``http_status`` (an error of a code
    known only at run time gives them here)."""

    code = "InternalServerError"
    http_status = 500

    def __init__(self, message: str, *, headers: dict[str, str] | None = None,
                 code: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status is not None:
            self.http_status = status
        self.headers = headers or {}
        self.extra: dict[str, object] = {}  # more body keys (e.g. AccessDeniedDetail)


def define(code: str, status: int) -> type[ApiError]:
    """The wire error class of ``code`` (its name is the code without dots)."""
    return type(code.replace(".", ""), (ApiError,),
                {"code": code, "http_status": status, "__module__": __name__})


# --- shared / FC 3.0 (fc3-api.md §9) -----------------------------------------------------------
InternalServerError = define("InternalServerError", 500)
InvalidArgument = define("InvalidArgument", 400)
MissingRequiredHeader = define("MissingRequiredHeader", 400)
PathNotSupported = define("PathNotSupported", 400)
EntityTooLarge = define("EntityTooLarge", 400)
AccessDenied = define("AccessDenied", 403)
SignatureNotMatch = define("SignatureNotMatch", 403)
InvalidAccessKeyID = define("InvalidAccessKeyID", 403)
FunctionNotFound = define("FunctionNotFound", 404)
VersionNotFound = define("VersionNotFound", 404)
AliasNotFound = define("AliasNotFound", 404)
AliasAlreadyExists = define("AliasAlreadyExists", 409)
FunctionAlreadyExists = define("FunctionAlreadyExists", 409)
NotFound = define("NotFound", 404)
# FC's other resources (FC error codes page: AsyncConfigNotExists, DomainNameNotFound and
# DomainNameAlreadyExists CONFIRMED; the trigger, layer, task, concurrency, provision and
# scaling codes INFERRED from FC 2.0's naming)
TriggerNotFound = define("TriggerNotFound", 404)
TriggerAlreadyExists = define("TriggerAlreadyExists", 409)
LayerNotFound = define("LayerNotFound", 404)
AsyncConfigNotExists = define("AsyncConfigNotExists", 404)
AsyncTaskNotFound = define("AsyncTaskNotFound", 404)
ConcurrencyConfigNotFound = define("ConcurrencyConfigNotFound", 404)
ProvisionConfigNotFound = define("ProvisionConfigNotFound", 404)
ScalingConfigNotFound = define("ScalingConfigNotFound", 404)
DomainNameNotFound = define("DomainNameNotFound", 404)
DomainNameAlreadyExists = define("DomainNameAlreadyExists", 409)

# --- request freshness (docs/emulator.md "Request freshness": sources and inferred choices) ----
RequestTimeTooSkewed = define("RequestTimeTooSkewed", 403)
SignatureNonceUsed = define("SignatureNonceUsed", 403)
PopSignatureNonceUsed = define("SignatureNonceUsed", 400)
InvalidTimeStampFormat = define("InvalidTimeStamp.Format", 400)
InvalidTimeStampExpired = define("InvalidTimeStamp.Expired", 400)
SlsRequestTimeExpired = define("RequestTimeExpired", 400)
SlsInvalidRequestTime = define("InvalidRequestTime", 400)

# --- the emulator's own front door (any product) ----------------------------------------------
RequestTimeout = define("RequestTimeout", 408)
ExpectationFailed = define("ExpectationFailed", 417)
MethodNotAllowed = define("MethodNotAllowed", 405)
ServiceUnavailable = define("ServiceUnavailable", 503)
TooManyStreams = define("TooManyStreams", 429)
StorageFull = define("StorageFull", 507)
StorageReadOnly = define("StorageReadOnly", 503)
StorageError = define("StorageError", 503)

# --- RPC products (RAM / STS, and the POP gateway's InvalidVersion) --------------------------
InvalidVersion = define("InvalidVersion", 400)
SignatureDoesNotMatch = define("SignatureDoesNotMatch", 403)
InvalidAccessKeyIdNotFound = define("InvalidAccessKeyId.NotFound", 403)
IncompleteSignature = define("IncompleteSignature", 400)
MissingParameter = define("MissingParameter", 400)
InvalidParameter = define("InvalidParameter", 400)
InvalidActionNotFound = define("InvalidAction.NotFound", 404)
MalformedPolicyDocument = define("MalformedPolicyDocument", 400)
EntityNotExistRole = define("EntityNotExist.Role", 404)
EntityAlreadyExistsRole = define("EntityAlreadyExists.Role", 409)
EntityNotExistPolicy = define("EntityNotExist.Policy", 404)
EntityAlreadyExistsPolicy = define("EntityAlreadyExists.Policy", 409)
EntityAlreadyExistsRolePolicy = define("EntityAlreadyExists.Role.Policy", 409)
EntityNotExistRolePolicy = define("EntityNotExist.Role.Policy", 404)
DeleteConflictRolePolicy = define("DeleteConflict.Role.Policy", 409)
DeleteConflictPolicyRole = define("DeleteConflict.Policy.Role", 409)
InvalidRoleSessionName = define("InvalidParameter.RoleSessionName", 400)
InvalidDurationSeconds = define("InvalidParameter.DurationSeconds", 400)
InvalidPolicyGrammar = define("InvalidParameter.PolicyGrammar", 400)

# --- Log Service (SLS error codes) --------------------------------------------------------------
SlsUnauthorized = define("Unauthorized", 401)
SlsSignatureNotMatch = define("SignatureNotMatch", 401)
ProjectNotExist = define("ProjectNotExist", 404)
LogStoreNotExist = define("LogStoreNotExist", 404)
ProjectAlreadyExist = define("ProjectAlreadyExist", 409)
LogStoreAlreadyExist = define("LogStoreAlreadyExist", 409)
ParameterInvalid = define("ParameterInvalid", 400)
PostBodyInvalid = define("PostBodyInvalid", 400)

# --- CloudFlow (cloudflow-api.md §6.3) ---------------------------------------------------------
ActionNotSupported = define("ActionNotSupported", 400)
APIVersionNotSupported = define("APIVersionNotSupported", 400)
MissingRequiredParams = define("MissingRequiredParams", 400)
ExecutionAlreadyExists = define("ExecutionAlreadyExists", 400)
TaskAlreadyCompleted = define("TaskAlreadyCompleted", 400)
FlowNotExists = define("FlowNotExists", 404)
ExecutionNotExists = define("ExecutionNotExists", 404)
FlowAlreadyExists = define("FlowAlreadyExists", 409)
FlowVersionNotExists = define("FlowVersionNotExists", 404)
FlowAliasNotExists = define("FlowAliasNotExists", 404)
FlowAliasAlreadyExists = define("FlowAliasAlreadyExists", 409)
ScheduleNotExists = define("ScheduleNotExists", 404)
ScheduleAlreadyExists = define("ScheduleAlreadyExists", 409)

# --- security tokens and authorization (any product; docs/runtime.md "RAM authorization") ------
MissingSecurityToken = define("MissingSecurityToken", 403)
InvalidSecurityTokenMalformed = define("InvalidSecurityToken.Malformed", 403)
InvalidSecurityTokenMismatch = define("InvalidSecurityToken.MismatchWithAccessKey", 403)
InvalidSecurityTokenExpired = define("InvalidSecurityToken.Expired", 403)
NoPermission = define("NoPermission", 403)

# --- quotas (--throttle cloud) ------------------------------------------------------------------
Throttling = define("Throttling", 429)
ResourceExhausted = define("ResourceExhausted", 429)

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


_ERRNO = {errno.ENOSPC: "full", errno.EDQUOT: "full", errno.EFBIG: "full", errno.EIO: "io",
          errno.EROFS: "read-only", errno.EACCES: "read-only", errno.EPERM: "read-only"}
_SQLITE = (("full", "SQLITE_FULL", "disk is full"),
           ("read-only", "SQLITE_READONLY", "readonly database"),
           ("io", "SQLITE_IOERR", "disk I/O error"), ("io", "SQLITE_CANTOPEN", "disk I/O error"))


def storage_error(exc: BaseException, where: str) -> ApiError | None:
    """The wire error for a failure to write the state directory ``where`` (disk full,
    read-only, I/O error), or None when ``exc`` is something else."""
    reason = ""
    if isinstance(exc, sqlite3.OperationalError):
        name = getattr(exc, "sqlite_errorname", "")
        reason = next((kind for kind, prefix, text in _SQLITE
                       if name.startswith(prefix) or text in str(exc)), "")
    elif isinstance(exc, OSError) and exc.errno is not None:
        reason = _ERRNO.get(exc.errno, "")
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
    return StorageError(f"the emulator cannot save its state in {where}: I/O error ({exc}).{tail}")


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
