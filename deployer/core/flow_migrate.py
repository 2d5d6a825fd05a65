"""``deploy flow migrate``: rewrite a legacy-dialect flow (``version``/``type: flow``/``steps``)
as SpecVersion v1.

Steps: read the file (a ``.j2`` template is rendered first, as ``deploy flow test`` renders it),
check it is a valid legacy flow (errors -> :class:`InvalidFlowError`, exit 3; a flow already in
SpecVersion v1 is refused by name), migrate it (:mod:`deployer.fdl.migration`), check the
result with ``check_flow`` as ``deploy validate`` would (an invalid result is a bug, exit 70),
and write it to ``--out`` when given. Every spot that did not carry over mechanically is a note
with its line in the legacy file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deployer.core.flow_test import FlowTestRequest, InvalidFlowError, load_text
from deployer.errors import DeployerError, ExitCode, InvalidInputError
from deployer.fdl import LegacyFlow, check_flow
from deployer.fdl.migration import MigrationNote, migrate_legacy

__all__ = ["MigrateRequest", "MigrateResult", "migrate_flow_file"]

_NAME = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class MigrateRequest:
    """What to migrate: the legacy file, where to write the result (None: only return it),
    the v1 ``Name`` (default: from the file name) and what a template is rendered with."""

    flow_file: Path
    out_file: Path | None = None
    name: str | None = None
    region: str | None = None
    account_id: str | None = None
    manifest_file: Path | None = None


@dataclass(frozen=True, slots=True)
class MigrateResult:
    """The migrated text, its name, where it was written, the notes and the v1 warnings."""

    source: str
    name: str
    text: str
    written: Path | None
    notes: tuple[MigrationNote, ...] = ()
    warnings: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "name": self.name,
                "written": str(self.written) if self.written else None,
                "text": self.text, "notes": [n.to_json() for n in self.notes],
                "warnings": list(self.warnings)}


class MigrationBug(DeployerError):
    """The migrated flow does not validate: a bug of the migration, never the user's."""

    exit_code = ExitCode.INTERNAL


def flow_name_of(path: Path) -> str:
    """A valid flow name from a file name: ``poll_job.yaml.j2`` -> ``poll_job``."""
    stem = path.name.split(".", 1)[0]
    name = _NAME.sub("-", stem).strip("-") or "MigratedFlow"
    return name if name[0].isalpha() or name[0] == "_" else f"flow-{name}"[:128]


def migrate_flow_file(request: MigrateRequest) -> MigrateResult:
    """Migrate the legacy flow in ``request.flow_file``; see the module docstring."""
    path = request.flow_file
    text, line_map = load_text(FlowTestRequest(
        flow_file=path, region=request.region, account_id=request.account_id,
        manifest_file=request.manifest_file))
    check = check_flow(text, source=str(path))
    if check.flow is not None and not isinstance(check.flow, LegacyFlow):
        raise InvalidInputError(f"{path} is already written in SpecVersion v1 "
                                "(Type: StateMachine)", hint="there is nothing to migrate")
    if not check.ok or check.flow is None:
        raise InvalidFlowError(f"{path}: the legacy flow definition is invalid",
                               [d.format() for d in check.errors]
                               or ["the document is not a flow definition"])
    name = request.name or flow_name_of(path)
    migrated = migrate_legacy(check.flow, text, name=name)
    result = check_flow(migrated.text, source=f"{name} (migrated)")
    if not result.ok:
        raise MigrationBug(f"the migration of {path} does not validate: "
                           + "; ".join(d.format() for d in result.errors),
                           hint="please report it with the legacy flow")
    notes = migrated.notes
    if line_map is not None:
        notes = (MigrationNote(1, 1, "", "the template was rendered before migrating: put its "
                               "variables back by hand"), *notes)
    if request.out_file is not None:
        try:
            request.out_file.parent.mkdir(parents=True, exist_ok=True)
            request.out_file.write_text(migrated.text, encoding="utf-8")
        except OSError as exc:
            raise InvalidInputError(f"cannot write {request.out_file}: "
                                    f"{exc.strerror or exc}") from None
    return MigrateResult(str(path), name, migrated.text, request.out_file, notes,
                         tuple(d.format() for d in result.warnings))
