"""A local cloud with the console, the seed functions and flow deployed (shared by the console
and browser tests)."""

from __future__ import annotations

import json
import threading
import time
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


def execution_path(cloud: LocalCloud, name: str, flow: str = FLOW) -> str:
    return f"/_console/r/{cloud.region}/flows/{flow}/executions/{name}"


COUNTER = """\
Type: StateMachine
Name: Counter
SpecVersion: v1
StartAt: Init
States:
  - Type: Pass
    Name: Init
    OutputConstructor:
      i: 0
    Next: Tick
  - Type: Wait
    Name: Tick
    Seconds: 1
    Next: Count
  - Type: Pass
    Name: Count
    OutputConstructor:
      i.$: intAdd($Input.i, 1)
    Next: More
  - Type: Choice
    Name: More
    Branches:
      - Condition: $Input.i < 25
        Next: Tick
    Default: Done
  - Type: Succeed
    Name: Done
"""
"""A loop of 25 turns, one step per turn (each a Wait of one second): live-latency samples."""

NESTED = """\
Type: StateMachine
Name: Nested
SpecVersion: v1
StartAt: Prepare
States:
  - Type: Pass
    Name: Prepare
    OutputConstructor:
      xs: [{v: 1}, {v: 2}, {v: 3}]
    Next: Each
  - Type: Map
    Name: Each
    ItemsPath: $Input.xs
    Processor:
      StartAt: Double
      States:
        - Type: Pass
          Name: Double
          OutputConstructor:
            double.$: intAdd($Input.v, $Input.v)
          End: true
    Next: Fan
  - Type: Parallel
    Name: Fan
    Branches:
      - StartAt: Left
        States:
          - Type: Pass
            Name: Left
            Next: Pause
          - Type: Wait
            Name: Pause
            Seconds: 30
            End: true
      - StartAt: Right
        States:
          - Type: Pass
            Name: Right
            End: true
    Next: Done
  - Type: Succeed
    Name: Done
"""
"""A Map over three items, then a Parallel whose first branch waits 30 s."""


def create_flow(cloud: LocalCloud, name: str, definition: str) -> None:
    create(cloud.fnf_client(), name, definition)


def get(cloud: LocalCloud, path: str, token: str | None = None
        ) -> tuple[int, dict[str, str], bytes]:
    """GET ``path``; the console's data (``/_console/api/…``) with a token, as its pages send
    one (``token``: which one, the admin token by default)."""
    headers = {}
    if path.startswith("/_console/api/"):
        headers["X-Emulator-Token"] = cloud.admin_token if token is None else token
    try:
        request = urllib.request.Request(cloud.url + path, headers=headers)
        with urllib.request.urlopen(request, timeout=40) as r:
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


def good_headers(cloud: LocalCloud) -> dict[str, str]:
    """What the console's own script sends with a state-changing request."""
    return {"Content-Type": "application/json", "X-Emulator-Token": cloud.admin_token,
            "Host": cloud.endpoint, "Origin": cloud.url}


class CommitLog:
    """When the engine commits versions ``after + 1`` to ``after + count`` of an execution
    (the notification the live streams wait on): ``at[v]`` is ``(time.time(),
    time.monotonic())`` of the commit of version ``v``."""

    def __init__(self, cloud: LocalCloud, name: str, after: int, count: int = 50,
                 flow: str = FLOW) -> None:
        self.at: dict[int, tuple[float, float]] = {}
        self._changed = threading.Condition()
        for version in range(after, after + count):
            cloud.server.emulator.executions.watch_changes(
                cloud.account_id, cloud.region, flow, name, after_version=version,
                wake=lambda v=version + 1: self._woken(v))

    def _woken(self, version: int) -> None:
        with self._changed:
            self.at.setdefault(version, (time.time(), time.monotonic()))
            self._changed.notify_all()

    def wait(self, version: int, timeout: float = 20.0) -> tuple[float, float]:
        """The commit of ``version`` (waiting for it)."""
        with self._changed:
            assert self._changed.wait_for(lambda: version in self.at, timeout), version
            return self.at[version]
