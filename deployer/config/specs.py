"""Frozen, fully resolved and validated specs read from s.yaml."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Protocol

from deployer.config.actions import Hooks
from deployer.config.problems import ManifestProblem, SourcePosition
from deployer.config.releases import ReleaseSpec, ScheduleSpec

__all__ = ["ConsumedValue", "ExecutionMode", "FlowSpec", "FunctionSpec", "LineMap", "Manifest",
           "Undeployed"]


class LineMap(Protocol):
    """Positions in a deployed flow definition -> positions in the file the user edits."""

    def lookup(self, line: int, column: int) -> tuple[int, int] | None: ...


class ExecutionMode(str, Enum):
    """CloudFlow execution mode of a flow."""

    STANDARD = "Standard"
    EXPRESS = "Express"


def handler_files(handler: str, runtime: str = "python3.10") -> tuple[str, ...]:
    """The package paths that can hold ``handler``'s module, by FC's resolution (fc3-api.md
    §8.1; docs/runtime.md for Node.js): ``index.handler`` -> ``index.py`` (Python),
    ``index.js``/``.mjs``/``.cjs`` (Node.js); ``pkg.mod.handler`` -> ``pkg/mod.py``;
    ``src/main.handler`` -> ``src/main.py`` (or the module's ``__init__.py``). A custom
    runtime runs its own server: no file is implied (empty)."""
    if runtime.startswith("custom"):
        return ()
    module, _, _function = handler.rpartition(".")
    directory, _, dotted = module.rpartition("/")
    if runtime.startswith("nodejs"):
        base = "/".join(part for part in (directory, dotted) if part)
        return (f"{base}.js", f"{base}.mjs", f"{base}.cjs")
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
    code_dir: Path  # a directory, or a .zip file used as the package
    description: str = ""
    memory_size: int = 512
    timeout: int = 3
    cpu: float = 0.35
    disk_size: int = 512
    instance_concurrency: int = 1
    internet_access: bool = True
    environment_variables: Mapping[str, str] = None  # type: ignore[assignment]
    role: str | None = None
    layers: tuple[str, ...] = ()  # layer version ARNs, in priority order
    instance_lifecycle_config: Mapping[str, Any] | None = None  # {initializer, preStop}
    tags: tuple[tuple[str, str], ...] = ()
    #: the other settings sent as they are, by API name (vpcConfig, nasConfig,
    #: customRuntimeConfig, ...; deployer.cloud.fc_config.SETTING_KEYS)
    settings: Mapping[str, Any] = field(default_factory=dict)
    triggers: tuple[Any, ...] = ()  # deployer.config.fc3_triggers.TriggerSpec, in s.yaml order
    async_invoke_config: Mapping[str, Any] | None = None  # PutAsyncInvokeConfig's body
    reserved_concurrency: int | None = None  # concurrencyConfig.reservedConcurrency
    provision_config: Mapping[str, Any] | None = None  # PutProvisionConfig's body (LATEST)
    scaling_config: Mapping[str, Any] | None = None  # PutScalingConfig's body (LATEST)
    custom_domain: Mapping[str, Any] | None = None  # {domainName, protocol, route, ...}
    log_config: Mapping[str, Any] | None = None  # {project, logstore, enableRequestMetrics, ...}
    position: SourcePosition | None = None
    release: ReleaseSpec | None = None  # versions/aliases from actions.success-deploy
    role_auto: bool = False  # role: auto -> the default role fc3 creates (``role`` is its ARN)
    log_auto: bool = False  # logConfig: auto -> the project and logstore fc3 creates
    vpc_auto: bool = False  # vpcConfig: auto (accepted; see docs/manifest.md)
    nas_auto: bool = False  # nasConfig: auto (accepted; see docs/manifest.md)

    def __post_init__(self) -> None:
        if self.environment_variables is None:
            object.__setattr__(self, "environment_variables", {})

    @property
    def code_is_zip(self) -> bool:
        """``code`` names a ready .zip package rather than a directory."""
        return self.code_dir.suffix.lower() == ".zip" and not self.code_dir.is_dir()

    def arn(self, account_id: str, qualifier: str | None = None) -> str:
        """``acs:fc:<region>:<account>:functions/<name>[/<qualifier>]``."""
        base = f"acs:fc:{self.region}:{account_id}:functions/{self.function_name}"
        return f"{base}/{qualifier}" if qualifier else base


@dataclass(frozen=True, slots=True)
class FlowSpec:
    """One ``component: fnf`` (or ``flow``) resource: a CloudFlow flow.

    ``role_name`` names a role the deployer creates; ``role_arn`` is an existing role used as
    is; at most one of them is set. ``definition`` is the file the user edits: a Jinja2
    template (``*.j2``), a plain definition file, or — when ``document`` holds the definition
    (given inline, or by ``${yaml(file(...))}``) — the file it was written in; ``document_map``
    then maps the document's lines to that file's.
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
    document: str | None = None  # the definition itself (inline or yaml(file()))
    document_map: LineMap | None = field(default=None, compare=False, repr=False)
    execution_input: Any = None  # executionInput: what `deploy execute` starts it with

    def __post_init__(self) -> None:
        if self.definition_vars is None:
            object.__setattr__(self, "definition_vars", {})

    @property
    def is_template(self) -> bool:
        """True when the definition is a Jinja2 template (``*.j2``)."""
        return self.document is None and self.definition.suffix == ".j2"


@dataclass(frozen=True, slots=True)
class Undeployed:
    """A resource of s.yaml this toolkit does not deploy, and why (each reason names the
    component, runtime or prop)."""

    resource: str
    component: str
    reasons: tuple[str, ...]
    position: SourcePosition | None = None
    names: tuple[str, ...] = ()  # its function or flow name, when s.yaml gives one

    def text(self) -> str:
        return f"{self.resource} ({self.component}): {'; '.join(self.reasons)}"

    def to_json(self) -> dict[str, Any]:
        return {"resource": self.resource, "component": self.component,
                "reasons": list(self.reasons)}


@dataclass(frozen=True, slots=True)
class ConsumedValue:
    """A value of another resource's output one resource was built with: applying
    ``resource`` must yield it (``deploy up`` checks before it applies the consumer)."""

    consumer: str
    resource: str
    kind: str  # output | info
    keys: tuple[str | int, ...]
    value: Any

    @property
    def reference(self) -> str:
        tail = "".join(f".{k}" for k in self.keys)
        return f"${{resources.{self.resource}.{self.kind}{tail}}}"


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
    undeployed: tuple[Undeployed, ...] = ()
    order: tuple[str, ...] = ()  # the deployed resources (s.yaml keys), dependencies first
    hooks: Hooks = field(default_factory=Hooks)
    consumed: tuple[ConsumedValue, ...] = ()
    outputs: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # as planned
    notes: tuple[str, ...] = ()  # what an accepted setting means on the emulator

    def resource_names(self) -> tuple[str, ...]:
        """The deployed resources in deploy order (file order when none is given)."""
        return self.order or tuple([*(f.resource for f in self.functions),
                                    *(f.resource for f in self.flows)])

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
