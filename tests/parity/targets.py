"""Where scenarios run: the local emulator (replay) or a cloud reached through the standard
credentials chain (recording).

:class:`ChainTarget` is the ``--real-cloud`` mode's only way out: SDK clients configured
with a region and the ``alibabacloud-credentials`` default chain, exactly as a user's program
builds them. Inside ``mock_cloud()`` that same chain yields the emulator's keys and the
regional endpoints are routed to the emulator, which is how the recorder is tested in CI
(``DEPLOYER_PARITY_TARGET=emulator``).
"""

from __future__ import annotations

import os
import platform
from collections.abc import Mapping
from datetime import datetime, timezone
from importlib import metadata
from typing import Any, Protocol

from tests.parity.calls import new_client

TARGET_ENV = "DEPLOYER_PARITY_TARGET"
SDK_DISTRIBUTIONS = (
    "alibabacloud-fc20230330", "alibabacloud-fnf20190315", "alibabacloud-sts20150401",
    "alibabacloud-ram20150501", "alibabacloud-tea-openapi", "darabonba-core",
    "alibabacloud-credentials",
)
READ_TIMEOUT_MS = 70_000  # DescribeExecution long polls hold the answer up to 60 s


class Target(Protocol):
    region: str
    account_id: str
    against: str  # "emulator" or "cloud"

    def client(self, product: str) -> Any: ...


class LocalTarget:
    """The in-process emulator of ``mock_cloud()``, reached at its endpoint."""

    against = "emulator"

    def __init__(self, cloud: Any) -> None:
        self.cloud = cloud
        self.region: str = cloud.region
        self.account_id: str = cloud.account_id
        self._clients: dict[str, Any] = {}

    def client(self, product: str) -> Any:
        if product not in self._clients:
            config = self.cloud.config(read_timeout=READ_TIMEOUT_MS)
            self._clients[product] = new_client(product, config)
        return self._clients[product]


class ChainTarget:
    """The cloud of ``region`` with the standard credentials chain; the account id comes from
    STS GetCallerIdentity. ``against`` says what answers (the cloud, or ``mock_cloud()``
    standing in for it)."""

    def __init__(self, region: str, against: str = "cloud") -> None:
        from alibabacloud_credentials.client import Client as Credentials

        self.region = region
        self.against = against
        self._credential = Credentials()
        self._clients: dict[str, Any] = {}
        identity = self.client("sts").get_caller_identity().body
        self.account_id = str(identity.account_id)

    def client(self, product: str) -> Any:
        from alibabacloud_tea_openapi import utils_models as open_api

        if product not in self._clients:
            config = open_api.Config(credential=self._credential, region_id=self.region,
                                     read_timeout=READ_TIMEOUT_MS, connect_timeout=10_000)
            self._clients[product] = new_client(product, config)
        return self._clients[product]


def credentials_problem() -> str | None:
    """Why the default credentials chain yields nothing (None when it yields credentials).
    The message names the providers tried, never a secret."""
    from alibabacloud_credentials.client import Client as Credentials

    try:
        credential = Credentials().get_credential()
    except Exception as exc:  # the chain raises CredentialException, providers others
        return f"no Alibaba Cloud credentials configured ({str(exc).splitlines()[0][:300]})"
    if not getattr(credential, "access_key_id", None):
        return "no Alibaba Cloud credentials configured (the chain gave an empty key)"
    return None


def in_ci(env: Mapping[str, str]) -> bool:
    return env.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def skip_reason(enabled: bool, env: Mapping[str, str] = os.environ) -> str | None:
    """Why ``--real-cloud`` does not run here (None: it runs). It never runs in CI against
    the real cloud; ``DEPLOYER_PARITY_TARGET=emulator`` makes ``mock_cloud()`` stand in for
    the cloud, which needs no credentials and sends nothing beyond 127.0.0.1."""
    if not enabled:
        return "the real-cloud mode needs --real-cloud (docs/parity.md)"
    target = env.get(TARGET_ENV, "cloud")
    if target == "emulator":
        return None
    if target != "cloud":
        return f"{TARGET_ENV} must be 'cloud' or 'emulator', got {target!r}"
    if in_ci(env):
        return "CI is set: the real cloud is never used in CI"
    return credentials_problem()


def provenance(target: Target) -> dict[str, Any]:
    """The ``recorded`` block of a file written from ``target``'s answers."""
    versions = {}
    for name in SDK_DISTRIBUTIONS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
        "against": target.against,
        "region": target.region,
        "python": platform.python_version(),
        "sdk": versions,
    }
