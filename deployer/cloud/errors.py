"""SDK exceptions -> CloudError types. The only place that knows the SDKs' exception classes.

Everything above ``deployer.cloud`` sees :class:`CloudError` subclasses only: a one-line message
with the service, operation, error code, HTTP status and request id, and a ``retryable`` flag
that :mod:`deployer.cloud.retry` uses.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from deployer.errors import DeployerError, ExitCode, OperationError, redact

THROTTLING_CODES = frozenset(
    {
        "Throttling",
        "Throttling.User",
        "Throttling.Api",
        "ResourceThrottled",
        "ResourceExhausted",
        "ServiceUnavailable",
        "ConcurrentUpdateError",
    }
)


class CloudError(OperationError):
    """A cloud call failed."""

    retryable = False

    def __init__(
        self,
        message: str,
        *,
        service: str = "",
        operation: str = "",
        code: str = "",
        status: int | None = None,
        request_id: str = "",
        hint: str | None = None,
    ) -> None:
        super().__init__(redact(message), hint=hint)
        self.service = service
        self.operation = operation
        self.code = code
        self.status = status
        self.request_id = request_id


class CloudClientError(CloudError):
    """The service refused the request (4xx)."""


class CloudNotFoundError(CloudClientError):
    """The addressed resource does not exist."""

    exit_code = ExitCode.NOT_FOUND


class CloudAuthError(CloudClientError):
    """Credentials were refused (unknown key, bad signature, access denied)."""


class CloudThrottledError(CloudError):
    """Throttled or out of capacity; worth retrying."""

    retryable = True


class CloudServerError(CloudError):
    """The service failed (5xx); worth retrying."""

    retryable = True


class CloudConnectionError(CloudError):
    """The endpoint could not be reached or the connection broke; worth retrying."""

    retryable = True


class CredentialsError(DeployerError):
    """No usable credentials were found."""

    exit_code = ExitCode.FAILURE


NOT_FOUND_CODES = frozenset(
    {
        "FunctionNotFound",
        "FlowNotExists",
        "ExecutionNotExists",
        "EntityNotExist.Role",
        "EntityNotExist.Policy",
        "EntityNotExist.Role.Policy",
        "NotFound",
        "VersionNotFound",
        "AliasNotFound",
        "FlowVersionNotExists",
        "FlowAliasNotExists",
        "ScheduleNotExists",
    }
)
AUTH_CODES = frozenset(
    {
        "InvalidAccessKeyId.NotFound",
        "InvalidAccessKeyID",
        "SignatureDoesNotMatch",
        "SignatureNotMatch",
        "AccessDenied",
        "Forbidden.RAM",
        "NoPermission",
        "InvalidSecurityToken.Expired",
    }
)


# A 404 that says the *API* is missing (wrong endpoint or version), not the resource: treating it
# as "not found" would make idempotent deletes report success for calls that never ran.
UNSUPPORTED_CODES = frozenset({"InvalidAction.NotFound", "PathNotSupported", "InvalidVersion"})


def _classify(code: str, status: int | None) -> type[CloudError]:
    if code in THROTTLING_CODES or status == 429:
        return CloudThrottledError
    if code in UNSUPPORTED_CODES:
        return CloudClientError
    if code in NOT_FOUND_CODES or (status == 404 and code not in AUTH_CODES):
        return CloudNotFoundError
    if code in AUTH_CODES or status in (401, 403):
        return CloudAuthError
    if status is not None and status >= 500:
        return CloudServerError
    return CloudClientError


def translate(exc: BaseException, *, service: str, operation: str) -> CloudError:
    """Turn any exception raised by an SDK call into the matching :class:`CloudError`."""
    from darabonba.exceptions import ResponseException, UnretryableException
    from Tea.exceptions import TeaException
    from Tea.exceptions import UnretryableException as TeaUnretryable

    where = f"{service} {operation}"
    inner = getattr(exc, "inner_exception", None)
    if (isinstance(exc, (UnretryableException, TeaUnretryable))
            and isinstance(inner, (ResponseException, TeaException))
            and not isinstance(inner, (UnretryableException, TeaUnretryable))):
        # the Log Service gateway SDK wraps every error answer in UnretryableException: the
        # endpoint was reached and answered, so the answer is what to report
        return translate(inner, service=service, operation=operation)
    if isinstance(exc, (ResponseException, TeaException)) and not isinstance(
        exc, (UnretryableException, TeaUnretryable)
    ):
        return _answered(exc, service=service, operation=operation)
    if isinstance(exc, (UnretryableException, TeaUnretryable, ConnectionError, TimeoutError)):
        inner = getattr(exc, "inner_exception", None) or exc
        return CloudConnectionError(
            f"{where} failed: cannot reach the endpoint ({connection_reason(inner)})",
            service=service,
            operation=operation,
            hint="check the endpoint and your network; for the local target run "
            "`deploy emulator status`",
        )
    return CloudError(
        f"{where} failed: {type(exc).__name__}: {_short(str(exc))}", service=service,
        operation=operation,
    )


def _answered(exc: BaseException, *, service: str, operation: str) -> CloudError:
    """The CloudError of an error answer (code, HTTP status, message, request id)."""
    from Tea.exceptions import TeaException

    code = str(getattr(exc, "code", "") or "")
    status = getattr(exc, "status_code", None) or getattr(exc, "statusCode", None)
    request_id = str(getattr(exc, "request_id", "") or "")
    if code == "None":
        code = ""
    if request_id == "None":
        request_id = ""
    data = getattr(exc, "data", None) or {}
    text = ""
    if isinstance(data, dict):
        text = str(data.get("Message") or data.get("message") or "")
        request_id = request_id or str(data.get("requestId") or "")
    if not text and isinstance(exc, TeaException) and exc.message != code:
        text = _short(str(exc.message or ""))  # Log Service: errorMessage is not in data
    detail = text or code or "request failed"
    klass = _classify(code, int(status) if status else None)
    suffix = f" (HTTP {status}" + (f", request id {request_id})" if request_id else ")")
    return klass(
        f"{service} {operation} failed: {code + ': ' if code else ''}{detail}"
        f"{suffix if status else ''}",
        service=service,
        operation=operation,
        code=code,
        status=int(status) if status else None,
        request_id=request_id,
    )


_HOST_PORT = re.compile(r"host=\\*'?([^'\\,\s)]+)\\*'?, port=(\d+)")
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\"()\]]+)")
_TIMED_OUT = re.compile(r"(?i)(read|connect)[ -]?timed? ?out")


def connection_reason(exc: BaseException) -> str:
    """A short, secret-free reason for a failed connection: ``127.0.0.1:9125: Connection
    refused``. urllib3's messages embed the whole request URL (with the signature and, for STS
    credentials, the security token); only the host, port and OS error are kept."""
    text = str(exc)
    where = _HOST_PORT.search(text)
    errno = _ERRNO.search(text)
    timed_out = _TIMED_OUT.search(text)
    reason = (errno.group(1).strip() if errno else
              f"{timed_out.group(1).lower()} timed out" if timed_out else type(exc).__name__)
    return f"{where.group(1)}:{where.group(2)}: {reason}" if where else _short(text) or reason


def _short(text: str, limit: int = 300) -> str:
    """``text`` on one line, secrets redacted, URL query strings dropped, at most ``limit``."""
    line = " ".join(redact(text).split())
    line = re.sub(r"(\burl: \S*?)\?\S+", r"\1?…", line)
    return line if len(line) <= limit else line[: limit - 1] + "…"


@contextlib.contextmanager
def sdk_call(service: str, operation: str) -> Iterator[None]:
    """Run SDK code; re-raise whatever it raises as a :class:`CloudError`."""
    try:
        yield
    except DeployerError:
        raise
    except Exception as exc:
        raise translate(exc, service=service, operation=operation) from exc
