"""Values exchanged between the FC API layer and the local function runtime."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Protocol

from deployer.errors import OperationError


class FunctionErrorType(str, Enum):
    """Values of the ``x-fc-error-type`` response header (reference fc3-api.md §7.6)."""

    UNHANDLED = "UnhandledInvocationError"
    INITIALIZATION = "InitializationError"


@dataclass(frozen=True, slots=True)
class TemporaryCredentials:
    """Role credentials handed to a function (the STS triple and its expiry, epoch seconds)."""

    access_key_id: str
    access_key_secret: str = field(repr=False)
    security_token: str = field(repr=False)
    expiration: float


CredentialSource = Callable[[], "TemporaryCredentials | None"]
"""Returns the role's current credentials (renewed before they expire), None without a role."""


@dataclass(frozen=True, slots=True)
class LayerSource:
    """One layer version a function mounts: its ARN (named in messages), the checksum of its
    content and where the content is: a zip (unpacked once by the code cache) or a directory
    already unpacked. Layers are listed in the function's order: the first one wins when
    several hold the same file (FC merges them into ``/opt`` in reverse order)."""

    arn: str
    checksum: str
    path: Path


def missing_layer(arn: str) -> LayerSource:
    """A layer version the emulator does not hold: the runtime refuses to start an instance
    with it, naming ``arn``."""
    return LayerSource(arn, "", Path())


@dataclass(frozen=True, slots=True)
class HealthCheck:
    """``customRuntimeConfig.healthCheckConfig``: an HTTP GET probe of a custom runtime's server
    while its instance starts (FC's defaults; without ``http_get_url`` the probe is a TCP
    connect to the port)."""

    http_get_url: str = ""
    initial_delay_seconds: float = 0.0
    period_seconds: float = 3.0
    timeout_seconds: float = 1.0
    failure_threshold: int = 3
    success_threshold: int = 1


@dataclass(frozen=True, slots=True)
class CustomRuntimeSettings:
    """``customRuntimeConfig`` of a custom runtime: the server's start command (``command`` +
    ``args``; empty: the code package's ``bootstrap``), its port and its readiness probe."""

    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    port: int = 9000
    health_check: HealthCheck = field(default_factory=HealthCheck)


@dataclass(frozen=True, slots=True)
class MountPoint:
    """A directory mounted in the instance (``nasConfig`` / ``ossMountConfig``): ``source``
    is its place under the runtime's mount root (``nas/<server>/<path>``,
    ``oss/<bucket>/<path>``; created on demand, shared by every function naming it),
    ``target`` the absolute mount directory the function sees."""

    source: str
    target: str
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class InstanceSpec:
    """Snapshot of one function version: everything an instance is started from.

    Two specs that compare equal may share instances; any difference (code checksum, handler,
    environment, timeout, ...) means new instances. ``credentials`` is not compared: it is asked
    for the role's current keys at instance start and before every request.
    ``disable_inject_credentials`` is FC's ``disableInjectCredentials`` (``None``, ``Env``,
    ``Request``, ``All``). ``cloud_endpoint`` is where SDK calls from the handler are routed.
    """

    account_id: str
    region: str
    function_name: str
    handler: str
    runtime: str
    timeout: int
    memory_size: int
    environment: Mapping[str, str]
    code_checksum: str
    code_zip: Path  # stored zip, content-addressed by checksum
    initializer_handler: str | None = None
    initializer_timeout: int | None = None
    role: str = ""
    disable_inject_credentials: str = "None"
    disk_size: int = 512
    internet_access: bool = True
    cloud_endpoint: str = ""
    credentials: CredentialSource | None = field(default=None, compare=False, repr=False)
    qualifier: str = "LATEST"  # what the caller named: LATEST, a version id or an alias
    version_id: str = "LATEST"  # the version that runs (a published number, or LATEST)
    pre_stop_handler: str | None = None  # instanceLifecycleConfig.preStop
    pre_stop_timeout: int | None = None
    instance_concurrency: int = 1  # requests one instance serves at once (custom runtimes)
    custom: CustomRuntimeSettings | None = None  # customRuntimeConfig (custom runtimes)
    layers: tuple[LayerSource, ...] = ()  # mounted at /opt, first one wins
    idle_timeout: float | None = None  # seconds an idle instance lives (None: the runtime's)
    mounts: tuple[MountPoint, ...] = ()  # nasConfig and ossMountConfig mount points

    @property
    def function_key(self) -> tuple[str, str, str]:
        """(account, region, function name): the scope of instance caps and ``retire``."""
        return (self.account_id, self.region, self.function_name)

    @property
    def instance_key(self) -> tuple[str, str]:
        """(qualifier, version): instances of different versions (or reached through
        different aliases, which FC_QUALIFIER tells apart) live side by side."""
        return (self.qualifier, self.version_id)


@dataclass(frozen=True, slots=True)
class InvocationResult:
    """The outcome of one synchronous invocation, ready for the InvokeFunction response (§7.6)."""

    request_id: str
    payload: bytes  # handler result (§8.3) or error JSON (§8.4)
    error_type: str | None  # None | "UnhandledInvocationError" | "InitializationError"
    log_tail: bytes  # last 4096 bytes of this invocation's log (markers included), b"" unless tail
    log_text: str  # the invocation's full log (kept by the emulator for `deploy logs`)
    instance_id: str
    duration_ms: float
    code_checksum: str
    cold_start: bool
    max_memory_mb: float | None = None  # measured peak of the instance during this request
    http_status: int | None = None  # invoke_http only: the server's status, headers and body
    http_headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class HttpCall:
    """An HTTP request forwarded as is to a custom runtime's server (an HTTP function)."""

    method: str
    path: str  # the request path, percent-encoded as received
    query: str = ""  # the raw query string, without '?'
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""


@dataclass(frozen=True, slots=True)
class HookRun:
    """A lifecycle hook that ran outside any invocation (``PreStop``), for the function's logs."""

    account_id: str
    region: str
    function_name: str
    qualifier: str
    hook: str  # "PreStop", or "Initializer" (a provisioned instance's)
    request_id: str
    instance_id: str
    started_at: float  # the runtime's clock
    ok: bool
    error_type: str | None
    duration_ms: float
    log_text: str


class FunctionRuntime(Protocol):
    """Runs function code; the FC service layer depends on this port only."""

    def invoke(
        self, spec: InstanceSpec, event: bytes, *, request_id: str, tail_logs: bool
    ) -> InvocationResult: ...

    def retire(self, account_id: str, region: str, function_name: str,
               qualifier: str | None = None) -> None: ...

    def close(self) -> None: ...


class RuntimeUnavailableError(OperationError):
    """The runtime cannot run this function at all (closed, unsupported runtime, bad code)."""


class RuntimeNotEmulated(RuntimeUnavailableError):
    """The function's runtime is one the local runtime does not run (Java, Go, PHP, .NET, a
    Node.js newer than this machine's, ...): the message names it and says why."""


class ContainerImageNotSupported(RuntimeNotEmulated):
    """``custom-container``: the function is a container image, which needs a container engine;
    the local runtime runs code packages only."""
