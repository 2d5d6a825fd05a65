"""The data of a deploy: what s.yaml asks for (:class:`DesiredState`), and what a plan does
to each resource (:class:`Action`, :class:`Plan`). Plain values; :mod:`deployer.core.plan`
builds them with read-only calls and :mod:`deployer.core.apply` carries them out."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deployer.cloud.cloudflow import CloudFlowClient
from deployer.cloud.fc import FunctionComputeClient, FunctionConfig
from deployer.cloud.ram import RamClient
from deployer.config.releases import ReleaseSpec, ScheduleSpec
from deployer.config.specs import ConsumedValue, Undeployed
from deployer.core import roles
from deployer.core.changes import SettingChange
from deployer.core.record import RecordedResource
from deployer.core.resources import ActionKind, ResourceType

if TYPE_CHECKING:
    from deployer.cloud.log_admin import LogStoreAdmin

__all__ = ["Action", "Clients", "DesiredFlow", "DesiredFunction", "DesiredLayer", "DesiredLogStore",
           "DesiredRole", "DesiredServiceRole", "DesiredState", "Plan"]


@dataclass(frozen=True, slots=True)
class DesiredFunction:
    name: str
    config: FunctionConfig
    zip_bytes: bytes = field(repr=False)
    crc64: str
    release: ReleaseSpec | None = None  # versions/aliases to maintain (core/releases.py)
    resource: str = ""  # its key in s.yaml
    tags: tuple[tuple[str, str], ...] = ()  # s.yaml's tags (the project's marker aside)
    triggers: tuple[Any, ...] = ()  # config.fc3_triggers.TriggerSpec, in s.yaml order
    async_invoke_config: Any = None  # PutAsyncInvokeConfig's body (None: not set)
    reserved_concurrency: int | None = None
    provision_config: Any = None  # PutProvisionConfig's body (None: not set)
    scaling_config: Any = None  # PutScalingConfig's body (None: not set)
    custom_domain: Any = None  # s.yaml's customDomain, domainName resolved (None: not set)


@dataclass(frozen=True, slots=True)
class DesiredLayer:
    """A layer version to publish from a local directory (core/layers.py)."""

    name: str
    path: Path
    zip_bytes: bytes = field(repr=False)
    crc64: str
    runtimes: tuple[str, ...]
    version: int  # the version number the plan expects


@dataclass(frozen=True, slots=True)
class DesiredRole:
    """An execution role the deploy owns: trusts CloudFlow, may invoke exactly the functions
    (and qualifiers) its flows call; ``flows`` are the flows that use it (one role may serve
    several: it is created once and its policy covers them all)."""

    name: str
    description: str = "Execution role of a CloudFlow flow, managed by cloudflow-deployer"
    resources: tuple[str, ...] | None = None  # the invoke policy's Resource (None: all
    #                                           functions of the project, any qualifier)
    flows: tuple[str, ...] = ()

    @property
    def policy_name(self) -> str:
        return f"{self.name}-invoke"


@dataclass(frozen=True, slots=True)
class DesiredServiceRole:
    """A documented default role (``role: auto``'s ``aliyunfcdefaultrole``): trusts
    ``service``, holds ``policies`` (system policies). Shared by every project of the
    account, so it is created once and never deleted (as fc3 does)."""

    name: str
    service: str
    policies: tuple[str, ...]
    description: str


@dataclass(frozen=True, slots=True)
class DesiredLogStore:
    """A Log Service project and logstore ``logConfig: auto`` writes to (created once, kept
    by ``deploy down``, as fc3 does)."""

    project: str
    logstore: str

    @property
    def name(self) -> str:
        return f"{self.project}/{self.logstore}"


@dataclass(frozen=True, slots=True)
class DesiredFlow:
    name: str
    definition: str
    description: str
    execution_mode: str
    role: DesiredRole | None = None  # a role to ensure, or
    role_arn: str = ""  # an existing role used as is
    source: str = ""  # the file the definition was rendered from (for diff headers)
    release: ReleaseSpec | None = None  # versions/aliases to maintain (core/releases.py)
    schedules: tuple[ScheduleSpec, ...] | None = None  # None: the flow's schedules unmanaged
    resource: str = ""  # its key in s.yaml
    invokes: tuple[str, ...] = ()  # function ARNs (with qualifier) its Tasks name literally
    dynamic_invokes: bool = False  # a Task computes its resourceArn (resourceArn.$)


@dataclass(frozen=True, slots=True)
class DesiredState:
    region: str
    account_id: str
    functions: tuple[DesiredFunction, ...]
    flows: tuple[DesiredFlow, ...]
    project: str = ""
    flow_roles: tuple[DesiredRole, ...] = ()
    service_roles: tuple[DesiredServiceRole, ...] = ()
    log_stores: tuple[DesiredLogStore, ...] = ()
    order: tuple[str, ...] = ()  # s.yaml resource keys, dependencies first
    consumed: tuple[ConsumedValue, ...] = ()
    undeployed: tuple[Undeployed, ...] = ()
    notes: tuple[str, ...] = ()
    layers: tuple[DesiredLayer, ...] = ()  # to publish from local directories

    def function_arns(self) -> list[str]:
        return [roles.function_arn(self.region, self.account_id, f.name) for f in self.functions]

    def roles(self) -> dict[str, DesiredRole]:
        found = {r.name: r for r in self.flow_roles}
        for flow in self.flows:  # states built by hand name the role on the flow only
            if flow.role is not None:
                found.setdefault(flow.role.name, flow.role)
        return found

    def declares(self, resource: ResourceType, name: str) -> bool:
        """Whether s.yaml (this state) declares the resource ``name`` of type ``resource``."""
        if resource is ResourceType.FUNCTION:
            return any(f.name == name for f in self.functions)
        if resource is ResourceType.FLOW:
            return any(f.name == name for f in self.flows)
        if resource is ResourceType.ROLE:
            return name in self.roles()
        return any(r.policy_name == name for r in self.roles().values())


@dataclass(frozen=True, slots=True)
class Clients:
    """The typed cloud clients a deploy uses (one connection, any target)."""

    fc: FunctionComputeClient
    ram: RamClient
    flows: CloudFlowClient
    logs: LogStoreAdmin | None = None


@dataclass(frozen=True, slots=True)
class Action:
    """What a deploy does to one resource. ``settings`` lists each changed setting (old and new
    value); ``diff`` is a unified diff of the resource's document (flow definition, policy);
    ``notes`` are changes without a value (attaching a policy, the reason for a deletion).
    ``origin`` is the s.yaml resource it serves; ``owner`` another project that owns the
    resource (taking it over needs --force); ``invoked_by`` the flows that still call a
    function this plan deletes."""

    resource: ResourceType
    name: str
    kind: ActionKind
    arn: str
    settings: tuple[SettingChange, ...] = ()
    diff: str = ""
    notes: tuple[str, ...] = ()
    origin: str = ""
    owner: str = ""
    invoked_by: tuple[str, ...] = ()
    url: str = ""  # an HTTP trigger's URL, when it exists already

    @property
    def is_write(self) -> bool:
        return self.kind is not ActionKind.NO_CHANGE

    @property
    def changes(self) -> tuple[str, ...]:
        """The names of what changes (``code``, ``memorySize``, ``definition``, ...)."""
        names = [s.name for s in self.settings]
        if self.diff:
            names.append("definition" if self.resource is ResourceType.FLOW else "document")
        return (*names, *self.notes)

    def changed(self, name: str) -> bool:
        return any(s.name == name or s.name.startswith(f"{name}.") for s in self.settings)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.resource.value, "name": self.name, "arn": self.arn or None,
                "action": self.kind.value, "changes": list(self.changes),
                "settings": [s.to_json() for s in self.settings], "diff": self.diff or None,
                "owner": self.owner or None, "invoked_by": list(self.invoked_by),
                **({"url": self.url} if self.url else {})}


@dataclass(frozen=True, slots=True)
class Plan:
    """The actions of a deploy and the payload applying them needs: the desired state (zips,
    definitions, configurations) and the deployment record's resources at planning time."""

    state: DesiredState
    actions: tuple[Action, ...]
    recorded: tuple[RecordedResource, ...] = ()

    @property
    def region(self) -> str:
        return self.state.region

    @property
    def account_id(self) -> str:
        return self.state.account_id

    @property
    def has_changes(self) -> bool:
        return any(a.is_write for a in self.actions)

    @property
    def deletions(self) -> tuple[Action, ...]:
        return tuple(a for a in self.actions if a.kind is ActionKind.DELETE)

    @property
    def conflicts(self) -> tuple[Action, ...]:
        """Resources another project owns that this plan would take over."""
        return tuple(a for a in self.actions if a.owner)

    @property
    def breaking_deletions(self) -> tuple[Action, ...]:
        """Deletions of functions that a flow of this project still invokes."""
        return tuple(a for a in self.deletions if a.invoked_by)

    def action(self, resource: ResourceType, name: str) -> Action:
        return next(a for a in self.actions if a.resource is resource and a.name == name)
