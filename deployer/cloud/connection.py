"""SDK configuration for one target: endpoints, credentials, region.

The deploy logic never asks which target it talks to: a :class:`CloudConnection` for Alibaba
Cloud and one for the local emulator differ only in their :class:`Endpoints` and credentials.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from deployer.cloud.errors import CredentialsError, sdk_call
from deployer.cloud.retry import RetryPolicy

T = TypeVar("T")

CREDENTIALS_HELP = (
    "credentials are looked for, in order, in: the environment (ALIBABA_CLOUD_ACCESS_KEY_ID, "
    "ALIBABA_CLOUD_ACCESS_KEY_SECRET, optional ALIBABA_CLOUD_SECURITY_TOKEN); an OIDC role "
    "(ALIBABA_CLOUD_ROLE_ARN, ALIBABA_CLOUD_OIDC_PROVIDER_ARN, ALIBABA_CLOUD_OIDC_TOKEN_FILE); "
    "the Alibaba Cloud CLI profile ~/.aliyun/config.json (--profile or ALIBABA_CLOUD_PROFILE); "
    "~/.alibabacloud/credentials.ini; and the ECS instance RAM role (unless "
    "ALIBABA_CLOUD_ECS_METADATA_DISABLED=true)"
)


@dataclass(frozen=True, slots=True)
class Endpoints:
    """Where each service is reached (``host[:port]``, no scheme)."""

    fc: str
    fnf: str
    ram: str
    sts: str
    protocol: str = "https"
    sls: str = ""  # Log Service; requests go to <project>.<sls> when it is a host name

    @classmethod
    def for_region(cls, region: str) -> Endpoints:
        """The public Alibaba Cloud endpoints of ``region`` (ecosystem.md §3.5)."""
        return cls(
            fc=f"fcv3.{region}.aliyuncs.com",
            fnf=f"{region}.fnf.aliyuncs.com",
            ram="ram.aliyuncs.com",
            sts=f"sts.{region}.aliyuncs.com",
            sls=f"{region}.log.aliyuncs.com",
        )

    @property
    def sls_virtual_hosts(self) -> bool:
        """Whether Log Service is reached as ``<project>.<endpoint>`` (a DNS name); an IP
        address or ``localhost`` endpoint cannot prefix the project to its host."""
        host = self.sls.rsplit(":", 1)[0].strip("[]")
        return not (host == "localhost" or host.replace(".", "").isdigit() or ":" in host)

    @property
    def is_local(self) -> bool:
        """True when every endpoint is a loopback address (the emulator)."""
        return all(e.startswith(("127.", "localhost", "[::1]"))
                   for e in (self.fc, self.fnf, self.ram, self.sts))

    @classmethod
    def single(cls, endpoint: str, protocol: str = "http") -> Endpoints:
        """One endpoint serving every API (the local emulator)."""
        return cls(fc=endpoint, fnf=endpoint, ram=endpoint, sts=endpoint, protocol=protocol,
                   sls=endpoint)


@dataclass(frozen=True, slots=True)
class StaticKeys:
    """An access key pair (optionally with an STS token). Never printed."""

    access_key_id: str
    access_key_secret: str = field(repr=False)
    security_token: str | None = field(default=None, repr=False)


def default_credential(profile: str | None = None) -> Any:
    """The ``alibabacloud-credentials`` default chain, or one CLI profile when given.

    Resolves once, up front, so a missing credential fails here with a message listing where
    credentials are looked for (raises :class:`CredentialsError`), not on the first request.
    """
    from alibabacloud_credentials.client import Client as CredClient

    try:
        if profile:
            from alibabacloud_credentials.provider.cli_profile import (
                CLIProfileCredentialsProvider,
            )

            client = CredClient(provider=CLIProfileCredentialsProvider(profile_name=profile))
        else:
            client = CredClient()
        client.get_credential()
    except Exception as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CredentialsError(
            "no Alibaba Cloud credentials found" + (f" for profile {profile!r}" if profile else ""),
            hint=f"{CREDENTIALS_HELP}. ({reason[:300]})",
        ) from exc
    return client


class CloudConnection:
    """Builds the official SDK clients for one region, endpoint set and credential."""

    def __init__(
        self,
        *,
        region: str,
        endpoints: Endpoints,
        credential: StaticKeys | Any,
        retry: RetryPolicy | None = None,
        read_timeout_ms: int = 70_000,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.region = region
        self.endpoints = endpoints
        self._credential = credential
        self.retry = retry or RetryPolicy()
        self._read_timeout_ms = read_timeout_ms
        self._headers = dict(headers or {})

    def sdk_config(self, endpoint: str) -> Any:
        """An ``open_api`` Config for ``endpoint`` with this connection's credential."""
        from alibabacloud_tea_openapi.utils_models import Config, GlobalParameters

        kwargs: dict[str, Any] = {
            "endpoint": endpoint,
            "protocol": self.endpoints.protocol,
            "region_id": self.region,
            "read_timeout": self._read_timeout_ms,
            "connect_timeout": 5_000,
        }
        if isinstance(self._credential, StaticKeys):
            kwargs["access_key_id"] = self._credential.access_key_id
            kwargs["access_key_secret"] = self._credential.access_key_secret
            if self._credential.security_token:
                kwargs["security_token"] = self._credential.security_token
        else:
            kwargs["credential"] = self._credential
        if self._headers:
            # RPC v1 (CloudFlow) signs parameters, not headers: a loopback endpoint learns the
            # region from the signed RegionId as well as from the (ACS3-signed) header.
            kwargs["global_parameters"] = GlobalParameters(
                headers=dict(self._headers), queries={"RegionId": self.region})
        return Config(**kwargs)

    def config_values(self) -> dict[str, str]:
        """What Serverless Devs' ``${config('<key>')}`` reads besides the account id: the
        credential's AccessKeyID, AccessKeySecret and (temporary keys) SecurityToken."""
        if isinstance(self._credential, StaticKeys):
            key_id, secret = self._credential.access_key_id, self._credential.access_key_secret
            token = self._credential.security_token or ""
        else:
            found = self._credential.get_credential()
            key_id, secret = found.access_key_id or "", found.access_key_secret or ""
            token = found.security_token or ""
        values = {"AccessKeyID": key_id, "AccessKeySecret": secret}
        if token:
            values["SecurityToken"] = token
        return values

    def call(self, service: str, operation: str, fn: Callable[[], T]) -> T:
        """Run one SDK call: SDK errors become CloudErrors; retryable ones are retried."""

        def attempt() -> T:
            with sdk_call(service, operation):
                return fn()

        return self.retry.call(attempt)

    @cached_property
    def fc(self) -> Any:
        from alibabacloud_fc20230330.client import Client

        return Client(self.sdk_config(self.endpoints.fc))

    @cached_property
    def fnf(self) -> Any:
        from alibabacloud_fnf20190315.client import Client

        return Client(self.sdk_config(self.endpoints.fnf))

    @cached_property
    def ram(self) -> Any:
        from alibabacloud_ram20150501.client import Client

        return Client(self.sdk_config(self.endpoints.ram))

    @cached_property
    def sts(self) -> Any:
        from alibabacloud_sts20150401.client import Client

        return Client(self.sdk_config(self.endpoints.sts))


class ServiceClient:
    """What every product client shares: the connection it calls through and ``_call``, one
    SDK call of ``SERVICE`` with the connection's error translation and retries."""

    SERVICE = ""

    def __init__(self, connection: CloudConnection) -> None:
        self._conn = connection

    @property
    def connection(self) -> CloudConnection:
        """The connection this client calls through (shared by the release clients)."""
        return self._conn

    def _call(self, operation: str, fn: Any) -> Any:
        return self._conn.call(self.SERVICE, operation, fn)
