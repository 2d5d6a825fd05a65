"""The error names the legacy dialect gives its own failures, and the exception its evaluators
raise (docs/fdl-semantics.md, "The legacy dialect: errors")."""

from __future__ import annotations

__all__ = [
    "INVALID_LOCAL_CODE",
    "RUNTIME_CODE",
    "TASK_TIMEOUT_CODE",
    "LegacyEvaluationError",
    "PathSyntaxError",
]

#: A path, condition or mapping could not be evaluated (a mapping on a value that is not an
#: object, a condition that is not a boolean, a collection that is not a list...).
RUNTIME_CODE = "FnF.RuntimeError"
#: A task's result cannot be its ``$local``: not JSON, or not an object where the step's
#: output must merge into its parent's local.
INVALID_LOCAL_CODE = "FnF.InvalidLocal"
#: A task ran longer than its ``timeoutSeconds``.
TASK_TIMEOUT_CODE = "FnF.TaskTimeout"


class LegacyEvaluationError(Exception):
    """Evaluating a path, condition or mapping failed; ``code`` is the error name the step
    fails with."""

    def __init__(self, message: str, code: str = RUNTIME_CODE) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class PathSyntaxError(ValueError):
    """A path or condition does not parse; ``offset`` is the 0-based character offset."""

    def __init__(self, message: str, text: str, offset: int) -> None:
        super().__init__(f"{message} at offset {offset} of `{text}`")
        self.message = message
        self.text = text
        self.offset = offset
