"""AppContext: the typed object on ``click.Context.obj``, built once by the root group.

It holds the global settings and builds services lazily, so a command that needs no cloud never
imports an SDK. Tests can build their own AppContext.

This is the one place where targets differ: :meth:`AppContext.cloud` turns ``--target``,
``--region``, ``--profile`` and ``--account-id`` into a :class:`CloudSession` — a
``CloudConnection`` (endpoints + credentials), the typed clients and the account id. ``local``
is the emulator under ``.deploy/emulator`` (started in the background when it is not running);
``aliyun`` is the regional endpoints with the ``alibabacloud-credentials`` chain.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

import click

from deployer.cli.render import Renderer
from deployer.config.settings import (
    EMULATOR_PORT_ENV,
    Target,
    TargetSettings,
    check_region,
    emulator_port,
)

if TYPE_CHECKING:
    from deployer.cli.options import TargetOptions
    from deployer.cloud.connection import CloudConnection, StaticKeys
    from deployer.cloud.logs import LogSource
    from deployer.config.specs import Manifest
    from deployer.core.plan import Clients

# The header naming the region of a request to the emulator's single loopback endpoint
# (deployer.emulator.api.router.REGION_HEADER; a cloud endpoint carries it in its host name).
LOCAL_REGION_HEADER = "x-deployer-region"


@dataclasses.dataclass(frozen=True)
class CloudSession:
    """Everything a cloud command needs, whatever the target."""

    settings: TargetSettings
    connection: CloudConnection
    account_id: str
    clients: Clients
    logs: LogSource


@dataclasses.dataclass
class AppContext:
    """Global settings of one CLI invocation."""

    project_dir: Path
    manifest_file: Path
    debug: bool = False
    renderer: Renderer = dataclasses.field(default_factory=Renderer)
    _session: CloudSession | None = dataclasses.field(default=None, repr=False)
    _manifests: dict[str, Manifest] = dataclasses.field(default_factory=dict, repr=False)

    def use_output(self, output: str) -> Renderer:
        """Switch the renderer to the command's ``--output`` format and return it."""
        if output != self.renderer.output:
            self.renderer = Renderer(output)
        return self.renderer

    def render(self, result: object, output: str | None = None) -> None:
        """Print ``result``; exit with ``result.exit_code`` when it is non-zero."""
        renderer = self.use_output(output) if output else self.renderer
        renderer.result(result)
        code = int(getattr(result, "exit_code", 0) or 0)
        if code:
            raise SystemExit(code)

    def resolve(self, path: str | Path) -> Path:
        """A user-given path, relative to the project directory."""
        p = Path(path).expanduser()
        return p if p.is_absolute() else self.project_dir / p

    @property
    def deploy_dir(self) -> Path:
        """``.deploy/`` under the project: build output, rendered flows, records, emulator."""
        return self.project_dir / ".deploy"

    def manifest(self, account_id: str | None = None) -> Manifest:
        """The project's s.yaml, loaded once per account id (ManifestError → exit 3)."""
        from deployer.config.manifest import load_manifest
        from deployer.core.validation import PLACEHOLDER_ACCOUNT_ID

        key = account_id or PLACEHOLDER_ACCOUNT_ID
        if key not in self._manifests:
            manifest = load_manifest(self.manifest_file, account_id=key)
            for warning in manifest.warnings:
                self.renderer.warn(warning.format())
            self._manifests[key] = manifest
        return self._manifests[key]

    def cloud(self, options: TargetOptions) -> CloudSession:
        """Connect to the chosen target (once per invocation) and print where it is.

        The first line on stderr names target, region and account. Raises InvalidInputError for
        a region without CloudFlow, CredentialsError when ``aliyun`` has no credentials, and
        OperationError when the local emulator cannot be started.
        """
        if self._session is None:
            region = check_region(options.region or self._manifest_region())
            self._session = self._connect(options, region)
            self.renderer.progress(self._session.settings.describe(self._session.account_id))
        return self._session

    def _manifest_region(self) -> str:
        from deployer.errors import InvalidInputError

        region = self.manifest().region
        if not region:
            raise InvalidInputError("no region: s.yaml names none",
                                    hint="pass --region (or set ALIBABA_CLOUD_REGION)")
        return region

    def _connect(self, options: TargetOptions, region: str) -> CloudSession:
        from deployer.cloud.cloudflow import CloudFlowClient
        from deployer.cloud.connection import CloudConnection, Endpoints
        from deployer.cloud.fc import FunctionComputeClient
        from deployer.cloud.logs import EmulatorLogs, SlsLogs
        from deployer.cloud.ram import RamClient
        from deployer.cloud.sts import get_caller_identity
        from deployer.core.plan import Clients

        fallback: LogSource | None = None
        if options.target is Target.LOCAL:
            state_dir = self.deploy_dir / "emulator"
            endpoint, keys = self._local_emulator(state_dir, region)
            connection = CloudConnection(region=region, endpoints=Endpoints.single(endpoint),
                                         credential=keys,
                                         headers={LOCAL_REGION_HEADER: region})
            fallback = EmulatorLogs(endpoint, region)  # logs of functions without logConfig
            settings = TargetSettings(options.target, region, None, state_dir)
        else:
            from deployer.cloud.connection import default_credential

            connection = CloudConnection(region=region, endpoints=Endpoints.for_region(region),
                                         credential=default_credential(options.profile))
            settings = TargetSettings(options.target, region, options.profile)
        account_id = options.account_id or get_caller_identity(connection).account_id
        clients = Clients(fc=FunctionComputeClient(connection), ram=RamClient(connection),
                          flows=CloudFlowClient(connection))
        logs = SlsLogs(connection, clients.fc, fallback=fallback)
        return CloudSession(settings, connection, account_id, clients, logs)

    def _local_emulator(self, state_dir: Path, region: str) -> tuple[str, StaticKeys]:
        from deployer.cloud.connection import StaticKeys
        from deployer.emulator import daemon
        from deployer.errors import OperationError

        port = emulator_port()  # checked even when the emulator runs already: no silent typo
        current = daemon.status(state_dir)
        if not current.running:
            self.renderer.progress(f"Starting the local emulator on 127.0.0.1:{port} "
                                   f"(state {_shown(state_dir, self.project_dir)})")
            try:
                current = daemon.start(state_dir, port=port)
            except OperationError as exc:
                exc.hint = (f"set {EMULATOR_PORT_ENV} to a free port, or start the emulator "
                            "yourself: `deploy emulator start --port N`")
                raise
        creds = daemon.credentials(state_dir, region)
        keys = StaticKeys(creds.access_key_id, creds.access_key_secret)
        return current.endpoint or creds.endpoint, keys


def _shown(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


pass_app = click.make_pass_decorator(AppContext)
