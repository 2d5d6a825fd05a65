"""The single error hierarchy meant for users, and the exit codes it maps to.

Every error a user should see subclasses :class:`DeployerError`: a one-line ``message``, an
optional ``hint`` saying what to do, and an :class:`ExitCode`. The CLI prints
``Error: <message>`` (and ``Hint: <hint>``) on stderr and exits with the code; it never shows a
traceback unless ``--debug`` is given. Anything else escaping a command is a bug (exit 70).
"""

from __future__ import annotations

from enum import IntEnum


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
