"""AppContext: the typed object on ``click.Context.obj``, built once by the root group.

It holds the global settings and builds services lazily, so a command that needs no cloud never
imports an SDK. Tests can build their own AppContext.

This is the one place where targets differ: :meth:`AppContext.cloud` turns ``--target``,
``--region``, ``--profile`` and ``--account-id`` into a :class:`CloudSession` — a
``CloudConnection`` (endpoints + credentials), the typed clients and the account id. ``local``
is the emulator under ``.deploy/emulator`` (started in the background when it is not running);
``aliyun`` is the regional endpoints with the ``alibabacloud-credentials`` chain.

``AppContext.in_process`` is the cloud of an enclosing ``deployer.testing.mock_cloud()`` (or its
pytest fixtures) in the same process, passed in by the root group (:mod:`deployer.cli.in_process`:
the mock hands it over; the CLI never imports ``deployer.testing``). With one, every command
stays in that cloud: ``local`` connects to it (never to a background emulator, and never starts
one), ``aliyun`` goes through the mock's interception of the real endpoints, and what commands
would write under ``<project>/.deploy/`` goes to a per-project directory of the mock's
temporary state.

Start-up time matters (``deploy --help`` and a no-op ``deploy up`` in a new process), so this
module imports only Click at load time; settings, the renderer and the SDK wrappers are imported
when first used.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

import click

from deployer.cli.in_process import InProcessCloud, innermost

if TYPE_CHECKING:
    from deployer.cli.options import TargetOptions
    from deployer.cli.render import Renderer
    from deployer.cloud.connection import CloudConnection, StaticKeys
    from deployer.cloud.logs import LogSource
    from deployer.config.settings import TargetSettings
    from deployer.config.specs import Manifest
    from deployer.config.values import ExternalValues
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


def _text_renderer() -> Renderer:
    from deployer.cli.render import Renderer

    return Renderer()


@dataclasses.dataclass
class AppContext:
    """Global settings of one CLI invocation."""

    project_dir: Path
    manifest_file: Path
    debug: bool = False
    renderer: Renderer = dataclasses.field(default_factory=_text_renderer)
    in_process: InProcessCloud | None = dataclasses.field(default_factory=innermost)
    """The test's in-process cloud every command targets (default: the innermost one a
    ``mock_cloud()`` of this process has activated), or None: the usual targets."""
    values_file: Path | None = None  # --values: outputs of resources not deployed here
    variables: tuple[str, ...] = ()  # --var resources.<name>.output.<key>=VALUE
    strict: bool = False  # --strict: a resource that is not deployed is an error
    _session: CloudSession | None = dataclasses.field(default=None, repr=False)
    _manifests: dict[str, Manifest] = dataclasses.field(default_factory=dict, repr=False)

    def use_output(self, output: str) -> Renderer:
        """Switch the renderer to the command's ``--output`` format and return it."""
        if output != self.renderer.output:
            from deployer.cli.render import Renderer

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
        """``.deploy/`` under the project: build output, rendered flows, records, emulator.

        Inside ``mock_cloud()`` a per-project directory of the mock's temporary state instead,
        so tests leave the project directory as they found it."""
        mock = self.in_process
        if mock is not None:
            return mock.workspace(self.project_dir)
        return self.project_dir / ".deploy"

    def external_values(self) -> ExternalValues:
        """``--values FILE`` with every ``--var`` on top (InvalidInputError, exit 3)."""
        from deployer.config.values import ExternalValues, parse_var, read_values_file

        values = read_values_file(self.resolve(self.values_file)) if self.values_file \
            else ExternalValues()
        for text in self.variables:
            values = values.merged(parse_var(text))
        return values

    def manifest(self, account_id: str | None = None, region: str | None = None, *,
                 complete: bool = False) -> Manifest:
        """The project's s.yaml, loaded once per account id and region override
        (ManifestError → exit 3). Once connected, ``${config(...)}`` reads the session's
        credentials; before, the placeholder account and no keys. ``complete``: every value
        a deploy needs must be known (a missing ``--values`` entry is an error); otherwise
        (commands that only read names and regions) it is a placeholder."""
        from deployer.config.manifest import load_manifest
        from deployer.core.validated import PLACEHOLDER_ACCOUNT_ID

        account = account_id or PLACEHOLDER_ACCOUNT_ID
        key = f"{account}/{region or ''}/{complete}"
        if key not in self._manifests:
            manifest = load_manifest(self.manifest_file, account_id=account, region=region,
                                     values=self.external_values(), config=self._config(),
                                     strict=self.strict, lenient=not complete)
            for warning in manifest.warnings:
                self.renderer.warn(warning.format())
            self._manifests[key] = manifest
        return self._manifests[key]

    def _config(self) -> dict[str, str]:
        """``config()`` keys of the connected session's credentials (none before)."""
        if self._session is None:
            return {}
        return self._session.connection.config_values()

    def cloud(self, options: TargetOptions) -> CloudSession:
        """Connect to the chosen target (once per invocation) and print where it is.

        The first line on stderr names target, region and account. Raises InvalidInputError for
        a region without CloudFlow, CredentialsError when ``aliyun`` has no credentials, and
        OperationError when the local emulator cannot be started.
        """
        if self._session is None:
            from deployer.config.settings import require_cloudflow_region

            region = require_cloudflow_region(options.region or self._manifest_region())
            mock = self.in_process
            self._session = self._connect(options, region, mock)
            self.renderer.progress(self._session.settings.describe(self._session.account_id))
            if mock is not None:
                self.renderer.progress(f"Inside mock_cloud(): the in-process cloud at "
                                       f"{mock.endpoint}; state in {self.deploy_dir}")
        return self._session

    def _manifest_region(self) -> str:
        from deployer.errors import InvalidInputError

        region = self.manifest().region
        if not region:
            raise InvalidInputError("no region: s.yaml names none",
                                    hint="pass --region (or set ALIBABA_CLOUD_REGION)")
        return region

    def _connect(self, options: TargetOptions, region: str, mock: InProcessCloud | None
                 ) -> CloudSession:
        from deployer.cloud.cloudflow import CloudFlowClient
        from deployer.cloud.fc import FunctionComputeClient
        from deployer.cloud.log_admin import LogStoreAdmin
        from deployer.cloud.logs import SlsLogs
        from deployer.cloud.ram import RamClient
        from deployer.config.settings import Target
        from deployer.core.plan import Clients

        # In a test's mock_cloud(), the local target is that cloud, and so is aliyun when the
        # mock does not intercept the real endpoints.
        if mock is not None and (options.target is Target.LOCAL or not mock.intercepts):
            connection, fallback, settings = self._mock_target(options, region, mock)
            known: str | None = mock.account_id
        elif options.target is Target.LOCAL:
            connection, fallback, settings, known = self._local_target(options, region)
        else:
            connection, fallback, settings = self._aliyun_target(options, region)
            known = None  # the credentials chain's account: ask STS
        if options.target is Target.LOCAL and known is not None:
            _check_local_account(options.account_id, known)
        account_id = options.account_id or known or _caller_account(connection)
        clients = Clients(fc=FunctionComputeClient(connection), ram=RamClient(connection),
                          flows=CloudFlowClient(connection), logs=LogStoreAdmin(connection))
        logs = SlsLogs(connection, clients.fc, fallback=fallback)
        return CloudSession(settings, connection, account_id, clients, logs)

    def _mock_target(self, options: TargetOptions, region: str, mock: InProcessCloud
                     ) -> tuple[CloudConnection, LogSource | None, TargetSettings]:
        from deployer.cloud.connection import StaticKeys
        from deployer.config.settings import TargetSettings

        keys = StaticKeys(mock.access_key_id, mock.access_key_secret)
        connection, logs = _emulator_connection(mock.endpoint, keys, region, mock.admin_token)
        return connection, logs, TargetSettings(options.target, region, None, None)

    def _local_target(self, options: TargetOptions, region: str
                      ) -> tuple[CloudConnection, LogSource | None, TargetSettings, str]:
        from deployer.config.settings import TargetSettings

        state_dir = self.deploy_dir / "emulator"
        from deployer.emulator.daemon import admin_token

        endpoint, keys, account_id = self._local_emulator(state_dir)
        connection, logs = _emulator_connection(endpoint, keys, region, admin_token(state_dir))
        return (connection, logs, TargetSettings(options.target, region, None, state_dir),
                account_id)

    def _aliyun_target(self, options: TargetOptions, region: str
                       ) -> tuple[CloudConnection, LogSource | None, TargetSettings]:
        from deployer.cloud.connection import CloudConnection, Endpoints, default_credential
        from deployer.config.settings import TargetSettings

        if self.in_process is None:  # inside mock_cloud() the emulator answers aliyun's hosts
            _check_not_emulator_keys()
        connection = CloudConnection(region=region, endpoints=Endpoints.for_region(region),
                                     credential=default_credential(options.profile))
        return connection, None, TargetSettings(options.target, region, options.profile)

    def _local_emulator(self, state_dir: Path) -> tuple[str, StaticKeys, str]:
        from deployer.cloud.connection import StaticKeys
        from deployer.config.settings import DEFAULT_EMULATOR_PORT, EMULATOR_PORT_ENV, emulator_port
        from deployer.emulator import daemon
        from deployer.emulator.store.identity import load_or_create_identity
        from deployer.errors import OperationError

        port = emulator_port()  # checked even when the emulator runs already: no silent typo
        current = daemon.status(state_dir)
        if not current.running:
            self.renderer.progress(f"Starting the local emulator on 127.0.0.1:{port} "
                                   f"(state {_shown(state_dir, self.project_dir)})")
            try:
                current = daemon.start_daemon(state_dir, port=port)
            except OperationError as exc:
                exc.hint = (f"set {EMULATOR_PORT_ENV} to a free port, or start the emulator "
                            "yourself: `deploy emulator start --port N`")
                raise
        # the identity file, not daemon.credentials(): that asks the daemon for its health again
        ident = load_or_create_identity(state_dir)
        keys = StaticKeys(ident.access_key_id, ident.access_key_secret)
        return current.endpoint or f"127.0.0.1:{DEFAULT_EMULATOR_PORT}", keys, ident.account_id


def _check_local_account(given: str | None, emulator: str) -> None:
    """The emulator decides the account on the local target: another one — typically
    ``ALIBABA_CLOUD_ACCOUNT_ID`` left by ``eval "$(deploy emulator credentials --format
    env)"`` in another project — would put a foreign account in every ARN (and the flow would
    fail to find its functions). Refused before any call."""
    import os

    from deployer.errors import InvalidInputError

    if given is None or given == emulator:
        return
    source = "ALIBABA_CLOUD_ACCOUNT_ID" if os.environ.get("ALIBABA_CLOUD_ACCOUNT_ID") == given \
        else "--account-id"
    raise InvalidInputError(
        f"{source} is {given}, but this project's emulator is account {emulator}; they may "
        "come from another project's `deploy emulator credentials --format env`",
        hint="unset ALIBABA_CLOUD_ACCOUNT_ID (and the other exported ALIBABA_CLOUD_* and "
             "DEPLOY_EMULATOR_ENDPOINT variables) in this shell, or pass --account-id "
             f"{emulator}")


#: The prefix of every emulator's access key id (``emulator/store/identity.py``).
EMULATOR_KEY_PREFIX = "LTAI5tEMU"


def _check_not_emulator_keys() -> None:
    """Keys exported by ``deploy emulator credentials --format env`` only open that emulator:
    refused for ``--target aliyun`` before any request, with the way out."""
    import os

    from deployer.errors import InvalidInputError

    key = os.environ.get("ALIBABA_CLOUD_ACCESS_KEY_ID", "")
    if key.startswith(EMULATOR_KEY_PREFIX):
        raise InvalidInputError(
            f"ALIBABA_CLOUD_ACCESS_KEY_ID ({key}) is a local emulator's key, exported by "
            "`deploy emulator credentials --format env`; Alibaba Cloud does not know it",
            hint="unset ALIBABA_CLOUD_ACCESS_KEY_ID, ALIBABA_CLOUD_ACCESS_KEY_SECRET, "
                 "ALIBABA_CLOUD_ACCOUNT_ID and DEPLOY_EMULATOR_ENDPOINT, or use --target local")


def _caller_account(connection: CloudConnection) -> str:
    """The account of the connection's credentials (STS GetCallerIdentity)."""
    from deployer.cloud.sts import get_caller_identity

    return get_caller_identity(connection).account_id


def _emulator_connection(endpoint: str, keys: StaticKeys, region: str, token: str
                         ) -> tuple[CloudConnection, LogSource]:
    """A connection to an emulator's single loopback endpoint (the region in a header), and
    its invocation records (read with its admin ``token``): the logs of functions that have
    no ``logConfig``."""
    from deployer.cloud.connection import CloudConnection, Endpoints
    from deployer.cloud.logs import EmulatorLogs

    connection = CloudConnection(region=region, endpoints=Endpoints.single(endpoint),
                                 credential=keys, headers={LOCAL_REGION_HEADER: region})
    return connection, EmulatorLogs(endpoint, region, token=token)


def _shown(path: Path, base: Path) -> str:
    try:
        return str(path.relative_to(base))
    except ValueError:
        return str(path)


pass_app = click.make_pass_decorator(AppContext)
