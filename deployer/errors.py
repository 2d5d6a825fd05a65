"""The single error hierarchy meant for users, and the exit codes it maps to.

Every error a user should see subclasses :class:`DeployerError`: a one-line ``message``, an
optional ``hint`` saying what to do, and an :class:`ExitCode`. The CLI prints
``Error: <message>`` (and ``Hint: <hint>``) on stderr and exits with the code; it never shows a
traceback unless ``--debug`` is given. Anything else escaping a command is a bug (exit 70).
"""

from __future__ import annotations

import re
from enum import IntEnum

# Request parameters and headers that carry a secret or something derived from one. SDK
# exceptions embed request URLs (connection errors) and the cloud echoes the string it signed
# (SignatureDoesNotMatch), in plain or percent-encoded form.
_SECRET_NAMES = (
    r"Signature|SecurityToken|AccessKeySecret|access_key_secret|accessKeySecret|"
    r"security_token|securityToken|x-acs-security-token|x-acs-signature|Authorization"
)
_SECRET_VALUE = re.compile(
    rf"(?i)(?<![A-Za-z_-])({_SECRET_NAMES})"  # the name
    r"((?:%(?:25)*3D|=|['\"]?\s*:\s*['\"]?)\s*)"  # = / %3D / %253D / ": " / ":"
    r"(?:acs\s+[^\s,'\"]+|[^\s&,'\"}\]\\]+?)"  # the value (Authorization: acs <id>:<sig>)
    r"(?=%(?:25)*26|[\s&,'\"}\]\\]|$)"  # up to & / %26 / a delimiter
)
REDACTED = "<redacted>"


class ExitCode(IntEnum):
    """Process exit codes; listed in the README."""

    OK = 0
    FAILURE = 1  # a cloud call or an operation failed
    USAGE = 2  # bad command line (Click's own code)
    INVALID_INPUT = 3  # invalid s.yaml, flow definition, mock file or input document
    NOT_FOUND = 4  # a named resource does not exist
    EXECUTION_FAILED = 5  # a watched execution ended Failed, TimedOut or Stopped
    INTERNAL = 70  # a bug in cloudflow-deployer
    INTERRUPTED = 130  # Ctrl-C


class DeployerError(Exception):
    """Root of all user-facing errors."""

    exit_code: ExitCode = ExitCode.FAILURE

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def details(self) -> list[str]:
        """Extra lines printed after the message (e.g. diagnostics); none by default."""
        return []


class InvalidInputError(DeployerError):
    """A file or document the user gave is invalid (manifest, flow, mocks, JSON input)."""

    exit_code = ExitCode.INVALID_INPUT


class NotFoundError(DeployerError):
    """A named resource (function, flow, execution, file) does not exist."""

    exit_code = ExitCode.NOT_FOUND


class ExecutionFailedError(DeployerError):
    """A watched execution ended in a non-success status."""

    exit_code = ExitCode.EXECUTION_FAILED


class OperationError(DeployerError):
    """An operation could not be completed (local I/O, packaging, a remote call)."""

    exit_code = ExitCode.FAILURE


def redact(text: str) -> str:
    """``text`` with the values of secret-bearing parameters and headers (signature, security
    token, access key secret, Authorization) replaced by ``<redacted>``.

    Applied to every cloud error message and, in the CLI, to everything an error prints
    (message, hint, details, ``--debug`` tracebacks). Access key *ids* are not secret and stay.
    """
    return _SECRET_VALUE.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)
