"""Function Compute 3.0 versions and aliases (domain logic, no HTTP).

A published version is an immutable snapshot of the function's code and configuration as
``PublishFunctionVersion`` found it; numbers start at 1, increase by one and are never reused
(docs "Manage versions": "its version number monotonically increases and cannot be
reused"). Publishing always creates a new version, changed or not (the fc3 component's own
end-to-end test publishes twice in a row).

An alias points at a published version (``versionId``) and may send a share of the
invocations to one more version (``additionalVersionWeight`` = ``{"<version>": <0..1>}``, e.g.
``{"2": 0.05}`` sends 5 % to version 2 and 95 % to the main version; fc3-api docs
"CreateAliasInput" / "Alias"). Each invocation through the alias picks its version at random
with those weights.

Decisions (INFERRED, docs/emulator.md): an alias cannot point at ``LATEST``; at most one canary
version, different from the main one; a version an alias uses cannot be deleted
(``InvalidValue``); deleting a function drops its versions and aliases.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deployer.emulator.clock import Clock
from deployer.emulator.services.errors import (
    AlreadyExists,
    InvalidValue,
    Resource,
    ResourceNotFound,
)
from deployer.emulator.services.numbers import names_version, parse_number
from deployer.emulator.store.release_repos import AliasRow, ReleaseRepo, VersionRow
from deployer.emulator.store.repos import FunctionRecord, FunctionRepo

__all__ = ["AliasChanges", "FunctionAlias", "FunctionReleases", "FunctionVersion",
           "ResolvedQualifier"]

ALIAS_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,127}$")
VERSIONS_LIST_LIMIT = (1, 100)
DIRECTIONS = ("BACKWARD", "FORWARD")


@dataclass(frozen=True, slots=True)
class FunctionVersion:
    version_id: str
    description: str
    created_at: float


@dataclass(frozen=True, slots=True)
class FunctionAlias:
    alias_name: str
    version_id: str
    description: str
    additional_version_weight: Mapping[str, float]
    created_at: float
    modified_at: float


@dataclass(frozen=True, slots=True)
class AliasChanges:
    """UpdateAlias's optional fields (None = leave unchanged)."""

    version_id: str | None = None
    description: str | None = None
    additional_version_weight: Mapping[str, float] | None = None


@dataclass(frozen=True, slots=True)
class ResolvedQualifier:
    """What an invocation with a qualifier runs: the record as the version froze it."""

    record: FunctionRecord
    version_id: str
    qualifier: str


def _version(row: VersionRow) -> FunctionVersion:
    return FunctionVersion(str(row.version), row.description, row.created_at)


def _alias(row: AliasRow) -> FunctionAlias:
    weights = row.routing if isinstance(row.routing, dict) else {}
    return FunctionAlias(row.alias, row.version, row.description,
                         {str(k): float(v) for k, v in weights.items()},
                         row.created_at, row.modified_at)


def _snapshot(rec: FunctionRecord) -> dict[str, Any]:
    return {"function_id": rec.function_id, "config": rec.config, "tags": [list(t) for t in
            rec.tags], "code_checksum": rec.code_checksum, "code_size": rec.code_size,
            "created_at": rec.created_at, "modified_at": rec.modified_at}


def _record(rec: FunctionRecord, row: VersionRow) -> FunctionRecord:
    snap = row.snapshot
    return FunctionRecord(rec.account_id, rec.region, rec.name, snap["function_id"],
                          snap["config"], tuple((k, v) for k, v in snap["tags"]),
                          snap["code_checksum"], int(snap["code_size"]), snap["created_at"],
                          snap["modified_at"])


def _limit(limit: int) -> int:
    low, high = VERSIONS_LIST_LIMIT
    if not low <= limit <= high:
        raise InvalidValue(f"limit must be between {low} and {high}, got {limit}",
                           field="limit")
    return limit


class FunctionReleases:
    """Versions and aliases of the functions in ``functions``; thread-safe (every change is
    one database transaction)."""

    def __init__(self, functions: FunctionRepo, repo: ReleaseRepo, clock: Clock, *,
                 rng: random.Random | None = None) -> None:
        self._functions = functions
        self._repo = repo
        self._clock = clock
        self._random = rng or random.Random()

    def _function(self, account_id: str, region: str, name: str) -> FunctionRecord:
        rec = self._functions.get(account_id, region, name)
        if rec is None:
            raise ResourceNotFound(f"function '{name}' does not exist",
                                   Resource.FUNCTION, name=name)
        return rec

    # --- versions -----------------------------------------------------------------------------

    def publish(self, account_id: str, region: str, name: str,
                description: str = "") -> FunctionVersion:
        """Freeze the function's current code and configuration as the next version."""
        if len(description) > 256:
            raise InvalidValue("description must be at most 256 characters",
                               field="description")
        rec = self._function(account_id, region, name)
        row = self._repo.publish(account_id, region, name, description, _snapshot(rec),
                                 self._clock.now())
        return _version(row)

    def list_versions(self, account_id: str, region: str, name: str, *,
                      direction: str = "BACKWARD", limit: int = 20,
                      next_token: str = "") -> tuple[list[FunctionVersion], str, str]:
        """A page of versions (BACKWARD: newest first, the default; FORWARD: oldest first),
        the next page's token (its first version id, '' on the last page) and the
        direction."""
        self._function(account_id, region, name)
        direction = direction or "BACKWARD"
        if direction not in DIRECTIONS:
            raise InvalidValue(f"direction must be BACKWARD or FORWARD, got {direction!r}",
                               field="direction")
        start = parse_number(next_token) if next_token else None
        if next_token and start is None:
            raise InvalidValue(f"nextToken '{next_token}' is invalid", field="nextToken")
        rows = self._repo.versions(account_id, region, name, start=start,
                                   limit=_limit(limit) + 1, descending=direction == "BACKWARD")
        token = str(rows[limit].version) if len(rows) > limit else ""
        return [_version(r) for r in rows[:limit]], token, direction

    def delete_version(self, account_id: str, region: str, name: str, version_id: str) -> None:
        self._function(account_id, region, name)
        number = self._number(name, version_id)
        users = [a.alias for a in self._repo.all_aliases(account_id, region, name)
                 if a.version == version_id or version_id in (a.routing or {})]
        if users:
            raise InvalidValue(
                f"version {version_id} of function '{name}' is used by alias "
                f"{', '.join(users)}: point the alias elsewhere first", field="versionId")
        if not self._repo.delete_version(account_id, region, name, number):
            raise ResourceNotFound(f"version '{version_id}' of function '{name}' does not exist",
                                   Resource.VERSION, name=version_id)

    @staticmethod
    def _number(name: str, version_id: str) -> int:
        number = parse_number(version_id)
        if number is None or number < 1:
            raise ResourceNotFound(f"version '{version_id}' of function '{name}' does not exist",
                                   Resource.VERSION, name=version_id)
        return number

    def _existing_version(self, account_id: str, region: str, name: str,
                          version_id: str) -> VersionRow:
        number = parse_number(version_id)
        row = (self._repo.version(account_id, region, name, number)
               if number is not None else None)
        if row is None:
            raise ResourceNotFound(f"version '{version_id}' of function '{name}' does not exist",
                                   Resource.VERSION, name=version_id)
        return row

    # --- aliases ------------------------------------------------------------------------------

    def create_alias(self, account_id: str, region: str, name: str, alias_name: str, *,
                     version_id: str, description: str = "",
                     additional_version_weight: Mapping[str, float] | None = None
                     ) -> FunctionAlias:
        self._function(account_id, region, name)
        if not ALIAS_NAME_RE.match(alias_name) or alias_name == "LATEST":
            raise InvalidValue(
                f"aliasName '{alias_name}' is invalid: use 1-128 letters, digits, '_' or '-', "
                "starting with a letter or '_' (LATEST is reserved)", field="aliasName")
        weights = self._check_target(account_id, region, name, version_id,
                                     additional_version_weight or {})
        now = self._clock.now()
        row = AliasRow(name, alias_name, version_id, description, weights, now, now)
        if not self._repo.insert_alias(account_id, region, row):
            raise AlreadyExists(f"alias '{alias_name}' of function '{name}' already exists",
                                Resource.ALIAS, name=alias_name)
        return _alias(row)

    def get_alias(self, account_id: str, region: str, name: str,
                  alias_name: str) -> FunctionAlias:
        return _alias(self._alias_row(account_id, region, name, alias_name))

    def _alias_row(self, account_id: str, region: str, name: str, alias_name: str) -> AliasRow:
        self._function(account_id, region, name)
        row = self._repo.alias(account_id, region, name, alias_name)
        if row is None:
            raise ResourceNotFound(f"alias '{alias_name}' of function '{name}' does not exist",
                                   Resource.ALIAS, name=alias_name)
        return row

    def update_alias(self, account_id: str, region: str, name: str, alias_name: str,
                     changes: AliasChanges) -> FunctionAlias:
        row = self._alias_row(account_id, region, name, alias_name)
        version_id = changes.version_id if changes.version_id is not None else row.version
        weights = (changes.additional_version_weight
                   if changes.additional_version_weight is not None else row.routing or {})
        checked = self._check_target(account_id, region, name, version_id, weights)
        new = dataclasses.replace(
            row, version=version_id, routing=checked,
            description=row.description if changes.description is None else changes.description,
            modified_at=max(self._clock.now(), row.modified_at))
        self._repo.update_alias(account_id, region, new)
        return _alias(new)

    def delete_alias(self, account_id: str, region: str, name: str, alias_name: str) -> None:
        self._function(account_id, region, name)
        if not self._repo.delete_alias(account_id, region, name, alias_name):
            raise ResourceNotFound(f"alias '{alias_name}' of function '{name}' does not exist",
                                   Resource.ALIAS, name=alias_name)

    def list_aliases(self, account_id: str, region: str, name: str, *, prefix: str = "",
                     limit: int = 20, next_token: str = "") -> tuple[list[FunctionAlias], str]:
        """A page of aliases ascending by name; the token is the next page's first name."""
        self._function(account_id, region, name)
        rows = self._repo.aliases(account_id, region, name, start=next_token, prefix=prefix,
                                  limit=_limit(limit) + 1)
        token = rows[limit].alias if len(rows) > limit else ""
        return [_alias(r) for r in rows[:limit]], token

    def _check_target(self, account_id: str, region: str, name: str, version_id: str,
                      weights: Mapping[str, Any]) -> dict[str, float]:
        if not version_id or version_id == "LATEST":
            raise InvalidValue("versionId must name a published version (an alias cannot "
                               "point at LATEST)", field="versionId")
        self._existing_version(account_id, region, name, version_id)
        if len(weights) > 1:
            raise InvalidValue("additionalVersionWeight may name at most one canary version",
                               field="additionalVersionWeight")
        out: dict[str, float] = {}
        for canary, weight in weights.items():
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) \
                    or not 0 <= weight <= 1:
                raise InvalidValue(f"additionalVersionWeight of version {canary} must be a "
                                   f"number between 0 and 1, got {weight!r}",
                                   field="additionalVersionWeight")
            if str(canary) == version_id:
                raise InvalidValue("the canary version must differ from versionId",
                                   field="additionalVersionWeight")
            self._existing_version(account_id, region, name, str(canary))
            out[str(canary)] = float(weight)
        return out

    # --- resolution (invocations, GetFunction) ------------------------------------------------

    def resolve(self, account_id: str, region: str, name: str, qualifier: str, *,
                weighted: bool = True) -> ResolvedQualifier:
        """The record a ``qualifier`` (a version id or an alias) runs; an alias with a canary
        picks its version at random with its weights (``weighted=False``: its main version,
        what GetFunction describes). Raises ResourceNotFound (kind ``function``, ``version`` or
        ``alias``)."""
        rec = self._function(account_id, region, name)
        if names_version(qualifier):
            row = self._existing_version(account_id, region, name, qualifier)
            return ResolvedQualifier(_record(rec, row), qualifier, qualifier)
        alias = self._repo.alias(account_id, region, name, qualifier)
        if alias is None:
            raise ResourceNotFound(f"alias '{qualifier}' of function '{name}' does not exist",
                                   Resource.ALIAS, name=qualifier)
        chosen = alias.version
        for canary, weight in (alias.routing or {}).items() if weighted else ():
            if self._random.random() < float(weight):
                chosen = str(canary)
        row = self._existing_version(account_id, region, name, chosen)
        return ResolvedQualifier(_record(rec, row), chosen, qualifier)

    def forget(self, account_id: str, region: str, name: str) -> None:
        """The function was deleted: drop its versions, aliases and version counter."""
        self._repo.drop_all(account_id, region, name)
