"""The deployment record: what ``deploy up`` created, so ``down`` and pruning touch nothing else.

One JSON file per (project, target, account, region) under ``.deploy/state/``, rewritten
atomically (temporary file + rename) after every creation and removal, so a deploy that fails
half-way still records what it made.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol

from deployer.core.resources import ResourceType
from deployer.errors import OperationError

__all__ = ["CreationLog", "DeploymentRecord", "RecordedResource"]


class CreationLog(Protocol):
    """Where apply reports each creation and removal the moment it happens."""

    def created(self, resource: ResourceType, name: str, arn: str) -> None: ...

    def forget(self, resource: ResourceType, name: str) -> None: ...

    def taken_over(self, resource: ResourceType, name: str, arn: str, owner: str) -> None: ...


@dataclass(frozen=True, slots=True)
class RecordedResource:
    """A resource ``deploy up`` created — or, with ``taken_from``, took over from that
    project with --force (updated, never deleted by ``down``)."""

    resource: ResourceType
    name: str
    arn: str
    created_at: str
    taken_from: str = ""


@dataclass
class DeploymentRecord:
    """What ``deploy up`` created for one (project, target, account, region); a
    :class:`CreationLog`.

    Stored as ``<dir>/<project>-<target>-<account>-<region>.json`` (the project is the
    manifest's ``name``, so two manifests never share a record). ``deploy down`` deletes exactly
    these resources; ``deploy up`` deletes those of them that s.yaml no longer declares.
    """

    path: Path
    project: str
    target: str
    account_id: str
    region: str
    resources: list[RecordedResource] = field(default_factory=list)

    @classmethod
    def location(cls, state_dir: Path, project: str, target: str, account_id: str,
                 region: str) -> Path:
        return state_dir / f"{project}-{target}-{account_id}-{region}.json"

    @classmethod
    def load(cls, state_dir: Path, project: str, target: str, account_id: str, region: str
             ) -> DeploymentRecord:
        """The record, or an empty one when none was written yet (OperationError, exit 1, for
        a file that cannot be read)."""
        path = cls.location(state_dir, project, target, account_id, region)
        record = cls(path, project, target, account_id, region)
        if not path.exists():
            return record
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            record.resources = [
                RecordedResource(ResourceType(r["type"]), r["name"], r.get("arn", ""),
                                 r.get("created_at", ""), r.get("taken_from", ""))
                for r in data["resources"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise OperationError(f"cannot read the deployment record {path}: {exc}",
                                 hint="fix or delete the file; without it `deploy down` "
                                 "removes nothing") from None
        return record

    def has(self, resource: ResourceType, name: str) -> bool:
        return any(r.resource is resource and r.name == name for r in self.resources)

    def created(self, resource: ResourceType, name: str, arn: str) -> None:
        """Record a creation (CreationLog protocol) and save at once."""
        if not self.has(resource, name):
            stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
            self.resources.append(RecordedResource(resource, name, arn, stamp))
        self.save()

    def taken_over(self, resource: ResourceType, name: str, arn: str, owner: str) -> None:
        """Record that --force took ``name`` over from project ``owner`` (save at once)."""
        if not self.has(resource, name):
            stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
            self.resources.append(RecordedResource(resource, name, arn, stamp, owner))
        self.save()

    def forget(self, resource: ResourceType, name: str) -> None:
        """Record a removal (CreationLog protocol) and save at once."""
        self.resources = [r for r in self.resources
                          if not (r.resource is resource and r.name == name)]
        self.save()

    def save(self) -> None:
        data = {"version": 1, "project": self.project, "target": self.target,
                "account_id": self.account_id,
                "region": self.region,
                "resources": [{"type": r.resource.value, "name": r.name, "arn": r.arn,
                               "created_at": r.created_at,
                               **({"taken_from": r.taken_from} if r.taken_from else {})}
                              for r in self.resources]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=self.path.name, suffix=".partial", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=2)
                fh.write("\n")
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
