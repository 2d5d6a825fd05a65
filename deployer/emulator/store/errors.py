"""Errors the store raises; callers never see ``sqlite3`` exceptions for expected conflicts."""

from __future__ import annotations

__all__ = ["DatabaseDamaged", "ExecutionNameTaken", "StaleStep", "StoreError"]


class StoreError(Exception):
    """Base of the store's own errors."""


class StaleStep(StoreError):
    """The execution changed (or vanished) since the step was computed."""


class ExecutionNameTaken(StoreError):
    """An execution of that name exists already for the flow (it may have been started
    concurrently): re-read it."""


class DatabaseDamaged(StoreError):
    """The database file cannot be read as one (not a database, or a malformed image)."""
