"""Frozen, fully resolved and validated specs read from s.yaml."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from deployer.config.problems import ManifestProblem, SourcePosition
from deployer.config.releases import ReleaseSpec, ScheduleSpec

__all__ = ["ExecutionMode", "FlowSpec", "FunctionSpec", "Manifest"]


class ExecutionMode(str, Enum):
    """CloudFlow execution mode of a flow."""

    STANDARD = "Standard"
    EXPRESS = "Express"


def handler_files(handler: str) -> tuple[str, str]:
    """The package paths that can hold ``handler``'s module, by FC's resolution (fc3-api.md
    §8.1): ``index.handler`` -> ``index.py``; ``pkg.mod.handler`` -> ``pkg/mod.py``;
    ``src/main.handler`` -> ``src/main.py`` (or the module's ``__init__.py``)."""
    module, _, _function = handler.rpartition(".")
    directory, _, dotted = module.rpartition("/")
    base = "/".join(part for part in (directory, dotted.replace(".", "/")) if part)
    return (f"{base}.py", f"{base}/__init__.py")


@dataclass(frozen=True, slots=True)
class FunctionSpec:
    """One ``component: fc3`` resource: a Function Compute 3.0 function, defaults applied."""

    resource: str
    region: str
    function_name: str
    runtime: str
    handler: str
    code_dir: Path
    description: str = ""
    memory_size: int = 512
    timeout: int = 3
    cpu: float = 0.35
    disk_size: int = 512
    instance_concurrency: int = 1
    internet_access: bool = True
    environment_variables: Mapping[str, str] = None  # type: ignore[assignment]
    role: str | None = None
    layers: tuple[str, ...] = ()
    instance_lifecycle_config: Mapping[str, Any] | None = None
    tags: tuple[tuple[str, str], ...] = ()
    log_config: Mapping[str, Any] | None = None  # {project, logstore, enableRequestMetrics, ...}
    position: SourcePosition | None = None
    release: ReleaseSpec | None = None  # versions/aliases from actions.success-deploy

    def __post_init__(self) -> None:
        if self.environment_variables is None:
            object.__setattr__(self, "environment_variables", {})

    def arn(self, account_id: str, qualifier: str | None = None) -> str:
        """``acs:fc:<region>:<account>:functions/<name>[/<qualifier>]``."""
        base = f"acs:fc:{self.region}:{account_id}:functions/{self.function_name}"
        return f"{base}/{qualifier}" if qualifier else base


@dataclass(frozen=True, slots=True)
class FlowSpec:
    """One ``component: fnf`` (or ``flow``) resource: a CloudFlow flow.

    ``role_name`` names a role the deployer creates; ``role_arn`` is an existing role used as
    is; at most one of them is set.
    """

    resource: str
    region: str
    name: str
    definition: Path
    description: str = ""
    type: str = "FDL"
    execution_mode: ExecutionMode = ExecutionMode.STANDARD
    definition_vars: Mapping[str, Any] = None  # type: ignore[assignment]
    role_name: str | None = None
    role_arn: str | None = None
    position: SourcePosition | None = None
    release: ReleaseSpec | None = None  # publishVersion / aliases (extension props)
    schedules: tuple[ScheduleSpec, ...] | None = None  # None: schedules not managed

    def __post_init__(self) -> None:
        if self.definition_vars is None:
            object.__setattr__(self, "definition_vars", {})

    @property
    def is_template(self) -> bool:
        """True when the definition is a Jinja2 template (``*.j2``)."""
        return self.definition.suffix == ".j2"


@dataclass(frozen=True, slots=True)
class Manifest:
    """A loaded s.yaml: its functions and flows in file order, plus non-fatal warnings."""

    name: str
    edition: str
    access: str | None
    vars: Mapping[str, Any]
    functions: tuple[FunctionSpec, ...]
    flows: tuple[FlowSpec, ...]
    path: Path
    warnings: tuple[ManifestProblem, ...] = ()

    @property
    def project_dir(self) -> Path:
        """The directory relative paths in the manifest are resolved against."""
        return self.path.parent

    @property
    def region(self) -> str | None:
        """The region of the first flow (else function), i.e. the project's default region."""
        if self.flows:
            return self.flows[0].region
        if self.functions:
            return self.functions[0].region
        return None

    def flow(self, name: str | None = None) -> FlowSpec:
        """The flow named ``name`` (or the only flow); raises NotFoundError otherwise."""
        from deployer.errors import NotFoundError

        if name is None and len(self.flows) == 1:
            return self.flows[0]
        names = ", ".join(f.name for f in self.flows) or "none"
        if name is None:
            raise NotFoundError(
                f"{self.path.name} defines {len(self.flows)} flows; choose one with --flow",
                hint=f"flows: {names}",
            )
        for spec in self.flows:
            if name in (spec.name, spec.resource):
                return spec
        raise NotFoundError(f"no flow named {name!r} in {self.path.name}", hint=f"flows: {names}")

    def function_by_name(self, region: str, function_name: str) -> FunctionSpec | None:
        for spec in self.functions:
            if spec.region == region and spec.function_name == function_name:
                return spec
        return None
