"""``deploy init``: write a new project from a template shipped inside the package.

Templates live in ``deployer/project_templates/<name>/`` (package data), plus ``common/`` for
files every project gets (the CI workflow, ``.gitignore``, ``requirements-dev.txt``). A path
component ``dot-x`` is written as ``.x`` (package data keeps no hidden files), and
``__PROJECT_NAME__`` / ``__DEPLOYER_REQUIREMENT__`` in a file are replaced by the project's
name and the requirement line that installs this deployer from a source that exists
(:mod:`deployer.core.toolkit_source`; with a wheel written into the project when the running
deployer came from a local checkout). Resources are named after the project, so two projects
never share a function, flow or role. Nothing is ever overwritten: when a file to write
already exists, nothing is written at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

from deployer.core.toolkit_source import toolkit_source, write_wheel
from deployer.errors import InvalidInputError, OperationError

__all__ = ["TEMPLATES", "ScaffoldResult", "create_project", "project_name"]

TEMPLATES = ("seed", "blank")
COMMON = "common"
_NAME = re.compile(r"^[a-z][a-z0-9-]{0,40}[a-z0-9]$")
_SKIPPED = ("__pycache__", ".pyc")


@dataclass(frozen=True, slots=True)
class ScaffoldResult:
    """What ``deploy init`` wrote."""

    directory: Path
    template: str
    name: str
    files: tuple[str, ...]

    @property
    def next_steps(self) -> tuple[str, ...]:
        """Commands to run next, from the current directory."""
        return ("deploy validate", "deploy up", "pytest -q")


def project_name(directory: Path) -> str:
    """A valid project name from a directory name: lower case, ``-`` for runs of other
    characters (``My App_2`` -> ``my-app-2``); ``app`` when nothing usable is left."""
    name = re.sub(r"[^a-z0-9]+", "-", directory.resolve().name.lower()).strip("-")
    name = re.sub(r"^[0-9-]+", "", name)[:42].strip("-")
    return name if _NAME.match(name) else "app"


def _files(root: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    found: list[tuple[str, Traversable]] = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(_SKIPPED):
            continue
        name = "." + entry.name[4:] if entry.name.startswith("dot-") else entry.name
        if entry.is_dir():
            found += _files(entry, f"{prefix}{name}/")
        else:
            found.append((f"{prefix}{name}", entry))
    return found



def create_project(directory: Path, *, template: str = "seed", name: str | None = None
                   ) -> ScaffoldResult:
    """Write the ``template`` project into ``directory`` (created when missing).

    ``name`` (default: :func:`project_name` of the directory) becomes the manifest's ``name``
    and prefixes the role (and, in ``blank``, the function and flow) names. Raises
    InvalidInputError (exit 3) for an unknown template or an invalid name and OperationError
    (exit 1) when a file it would write already exists — nothing is written then — or when the
    directory cannot be written.
    """
    if template not in TEMPLATES:
        raise InvalidInputError(f"unknown template {template!r}",
                                hint="choose one of: " + ", ".join(TEMPLATES))
    name = name or project_name(directory)
    if not _NAME.match(name):
        raise InvalidInputError(
            f"invalid project name {name!r}",
            hint="2-42 characters: lower-case letters, digits and '-', starting with a letter")
    base = resources.files("deployer") / "project_templates"
    files = _files(base / COMMON) + _files(base / template)
    toolkit = toolkit_source()
    wheel = f"wheels/{toolkit.wheel_name}" if toolkit.wheel_name else None
    try:
        existing = [rel for rel in [*(r for r, _ in files), *([wheel] if wheel else [])]
                    if (directory / rel).exists()]
    except OSError as exc:  # a name too long for the file system, a file where a folder goes
        raise OperationError(f"cannot write the project into {directory}: {exc.strerror}",
                             hint="choose another directory: deploy init DIR") from None
    if existing:
        raise OperationError(
            f"{directory} already has {', '.join(existing[:5])}"
            + (f" and {len(existing) - 5} more" if len(existing) > 5 else ""),
            hint="choose a new or empty directory: deploy init DIR")
    replacements = {"__PROJECT_NAME__": name, "__DEPLOYER_REQUIREMENT__": toolkit.requirement}
    try:
        for rel, source in files:
            text = source.read_text(encoding="utf-8")
            for placeholder, value in replacements.items():
                text = text.replace(placeholder, value)
            target = directory / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        if wheel:
            write_wheel(directory / wheel)
    except OSError as exc:
        raise OperationError(f"cannot write the project into {directory}: {exc.strerror}",
                             hint="check the directory is writable") from None
    return ScaffoldResult(directory, template, name,
                          tuple([*(rel for rel, _ in files), *([wheel] if wheel else [])]))
