"""Wire errors: one class per error code, and the only serializer of error bodies.

FC (ROA) errors carry ``x-fc-request-id``; RPC products (RAM, STS, later CloudFlow) carry
``x-acs-request-id`` and a ``HostId`` in the body. Bodies are always JSON
``{"Code","Message","RequestId"}`` so the SDKs raise typed exceptions (fc3-api.md §3.3, §5.2).
"""

from __future__ import annotations

import enum

from deployer.emulator.api.http import HttpResponse, json_response
from deployer.emulator.services import errors as svc

__all__ = ["ApiError", "Style", "error_response", "from_service_error"]


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

_NOT_FOUND = {"function": FunctionNotFound, "role": EntityNotExistRole,
              "version": VersionNotFound, "alias": AliasNotFound,
              "policy": EntityNotExistPolicy, "project": ProjectNotExist,
              "logstore": LogStoreNotExist}
_EXISTS = {"function": FunctionAlreadyExists, "role": EntityAlreadyExistsRole,
           "policy": EntityAlreadyExistsPolicy, "alias": AliasAlreadyExists,
           "project": ProjectAlreadyExist, "logstore": LogStoreAlreadyExist}
_CONFLICT = {"role": DeleteConflictRolePolicy, "policy": DeleteConflictPolicyRole}


def from_service_error(exc: svc.ServiceError, style: Style) -> ApiError:
    """The wire error for a domain error, in the conventions of ``style``'s products."""
    table: dict[type[svc.ServiceError], type[ApiError]] = {
        svc.AlreadyAttached: EntityAlreadyExistsRolePolicy,
        svc.NotAttached: EntityNotExistRolePolicy,
        svc.PayloadTooLarge: EntityTooLarge,
    }
    if isinstance(exc, svc.NotFound):
        cls = _NOT_FOUND.get(exc.kind, NotFound)
    elif isinstance(exc, svc.AlreadyExists):
        cls = _EXISTS.get(exc.kind, InvalidArgument)
    elif isinstance(exc, svc.DeleteConflict):
        cls = _CONFLICT.get(exc.kind, InvalidArgument)
    elif isinstance(exc, svc.InvalidArgument):
        if exc.kind == "document":
            cls = MalformedPolicyDocument
        elif style is Style.SLS:
            cls = ParameterInvalid
        else:
            cls = InvalidArgument if style is Style.ROA else InvalidParameter
    else:
        cls = table.get(type(exc), InternalServerError)
    return cls(exc.message)


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
