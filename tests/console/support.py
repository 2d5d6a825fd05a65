"""A local cloud with the console, the seed functions and flow deployed (shared by the console
and browser tests)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from deployer.testing.environment import LocalCloud, mock_cloud
from tests.emulator.cloudflow_support import create, deploy_seed_functions, seed_flow, start

FLOW = "MyWorkFlow"


@contextmanager
def seed_cloud() -> Iterator[LocalCloud]:
    with mock_cloud(intercept=False, console=True) as cloud:
        deploy_seed_functions(cloud)
        create(cloud.fnf_client(), FLOW, seed_flow(account=cloud.account_id))
        yield cloud


def start_seed(cloud: LocalCloud, name: str, delay: int = 20, **extra: Any) -> None:
    start(cloud.fnf_client(), FLOW, name, json.dumps({"delay": delay, **extra}))


def execution_path(cloud: LocalCloud, name: str) -> str:
    return f"/_console/r/{cloud.region}/flows/{FLOW}/executions/{name}"


def get(cloud: LocalCloud, path: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(cloud.url + path, timeout=40) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def get_json(cloud: LocalCloud, path: str) -> Any:
    status, _, body = get(cloud, path)
    assert status == 200, body[:300]
    return json.loads(body)


def post(cloud: LocalCloud, path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(cloud.url + path, data=json.dumps(body).encode(),
                                     method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=20) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def token(cloud: LocalCloud) -> str:
    api = cloud.server.console
    assert api is not None
    return str(api.token)  # type: ignore[attr-defined]


def good_headers(cloud: LocalCloud) -> dict[str, str]:
    return {"Content-Type": "application/json", "X-Console-Token": token(cloud),
            "Host": cloud.endpoint, "Origin": cloud.url}
