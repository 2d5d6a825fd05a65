"""One guard for both local surfaces: the admin API (``/_emulator/``) and the console
(``/_console/``) refuse, with the same 403, what a web page in the user's browser could send."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from deployer.testing.environment import LocalCloud
from tests.console.support import FLOW, execution_path, seed_cloud, start_seed


def send(cloud: LocalCloud, method: str, path: str, headers: dict[str, str],
         body: Any = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", cloud.server.port, timeout=20)
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for key, value in headers.items():
            conn.putheader(key, value)
        if data is not None:
            conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.fixture(scope="module")
def cloud() -> Any:
    with seed_cloud() as local:
        start_seed(local, "guarded")
        local.wait_for_execution(FLOW, "guarded")
        yield local


def surfaces(cloud: LocalCloud) -> dict[str, tuple[str, tuple[str, Any]]]:
    """Per surface: a page to read, and a state change (path, JSON body)."""
    return {
        "admin": ("/_emulator/health", ("/_emulator/clock/advance", {"seconds": 0})),
        "console": (execution_path(cloud, "guarded"),
                    (f"/_console/api/r/{cloud.region}/flows/{FLOW}/executions",
                     {"name": "", "input": "{}"})),
    }


def good(cloud: LocalCloud) -> dict[str, str]:
    return {"Host": cloud.endpoint, "Origin": cloud.url, "Content-Type": "application/json",
            "X-Emulator-Token": cloud.admin_token}


@pytest.mark.parametrize("surface", ["admin", "console"])
def test_reads_need_this_daemons_host_and_origin(cloud: LocalCloud, surface: str) -> None:
    page, _ = surfaces(cloud)[surface]
    ok = {"Host": cloud.endpoint}
    status, body = send(cloud, "GET", page, ok)
    assert status == 200, body[:200]
    if surface == "console":  # the page carries the console's token, never the admin token
        assert cloud.server.guard.console_token.encode() in body
        assert cloud.admin_token.encode() not in body
    for headers in ({"Host": f"evil.example:{cloud.server.port}"},  # DNS rebinding
                    {"Host": f"127.0.0.1:{cloud.server.port + 1}"},
                    {**ok, "Origin": "http://evil.example"},
                    {**ok, "Origin": "null"}):
        status, body = send(cloud, "GET", page, headers)
        assert status == 403, headers
        assert json.loads(body)["Code"] == "AccessDenied"
        assert cloud.admin_token.encode() not in body


@pytest.mark.parametrize("surface", ["admin", "console"])
def test_state_changes_need_json_and_the_daemons_token(cloud: LocalCloud, surface: str) -> None:
    _, (path, payload) = surfaces(cloud)[surface]
    ok = good(cloud)
    without_token = {k: v for k, v in ok.items() if k != "X-Emulator-Token"}
    refused = {
        "foreign Host": {**ok, "Host": f"evil.example:{cloud.server.port}"},
        "foreign Origin": {**ok, "Origin": "http://evil.example"},
        "missing token": without_token,
        "wrong token": {**ok, "X-Emulator-Token": "0" * len(cloud.admin_token)},
        "the old console token header": {**without_token, "X-Console-Token": cloud.admin_token},
        "text/plain": {**ok, "Content-Type": "text/plain"},
        "a form": {**ok, "Content-Type": "application/x-www-form-urlencoded"},
    }
    for why, headers in refused.items():
        status, body = send(cloud, "POST", path, headers, payload)
        assert status == 403, why
        assert json.loads(body)["Code"] == "AccessDenied", why
    status, body = send(cloud, "POST", path, ok, payload)
    assert status == 200, body[:300]
    status, _ = send(cloud, "POST", path, {**ok, "Host": f"localhost:{cloud.server.port}",
                                           "Origin": f"http://localhost:{cloud.server.port}"},
                     payload)
    assert status == 200  # localhost names this daemon too


def test_the_live_streams_pass_the_guard_too(cloud: LocalCloud) -> None:
    stream = "/_console/api" + execution_path(cloud, "guarded")[len("/_console"):] + "/stream"
    for path in (stream, "/_console/api/engine/stream"):
        status, body = send(cloud, "GET", path, {"Host": "evil.example"})
        assert status == 403 and json.loads(body)["Code"] == "AccessDenied"


def _console_token_of_a_page(cloud: LocalCloud) -> tuple[str, str]:
    """The token a console page carries (its <meta>) and the cookie it sets."""
    conn = http.client.HTTPConnection("127.0.0.1", cloud.server.port, timeout=20)
    try:
        conn.request("GET", execution_path(cloud, "guarded"))
        response = conn.getresponse()
        page = response.read().decode()
        cookie = response.getheader("Set-Cookie") or ""
    finally:
        conn.close()
    meta = page.split('name="emulator-token" content="', 1)[1].split('"', 1)[0]
    return meta, cookie


def test_a_console_page_carries_a_token_that_opens_the_console_only(cloud: LocalCloud) -> None:
    token, cookie = _console_token_of_a_page(cloud)
    assert token and token != cloud.admin_token
    assert cookie.startswith(f"emulator-console-{cloud.server.port}={token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/_console/" in cookie
    with_page_token = {**good(cloud), "X-Emulator-Token": token}
    data = f"/_console/api/r/{cloud.region}/flows"
    assert send(cloud, "GET", data, with_page_token)[0] == 200
    _, (start, payload) = surfaces(cloud)["console"]
    assert send(cloud, "POST", start, with_page_token, payload)[0] == 200
    # the admin surface refuses it: reset, faults, the clock, the logs
    for method, path, body in (("POST", "/_emulator/reset", {}),
                               ("POST", "/_emulator/clock/advance", {"seconds": 0}),
                               ("GET", "/_emulator/logs?function=StartJob", None),
                               ("GET", "/_emulator/logs/stream?function=StartJob", None)):
        status, answer = send(cloud, method, path, with_page_token, body)
        assert status == 403, (path, answer[:200])
        assert json.loads(answer)["Code"] == "AccessDenied"


@pytest.mark.parametrize("path", [
    "/_console/api/r/{region}/flows",
    "/_console/api/r/{region}/functions",
    "/_console/api/r/{region}/flows/" + FLOW + "/executions/guarded",
    "/_console/api/r/{region}/flows/" + FLOW + "/executions/guarded/history.json",
    "/_console/api/r/{region}/flows/" + FLOW + "/executions/guarded/stream",
    "/_console/api/engine/stream",
    "/_emulator/logs?function=StartJob",
    "/_emulator/logs/stream?function=StartJob",
])
def test_every_data_read_needs_a_token(cloud: LocalCloud, path: str) -> None:
    path = path.format(region=cloud.region)
    ok = {"Host": cloud.endpoint}
    status, body = send(cloud, "GET", path, ok)
    assert status == 403, body[:200]
    assert json.loads(body)["Code"] == "AccessDenied"
    assert b"X-Emulator-Token" in body
    wrong = send(cloud, "GET", path, {**ok, "X-Emulator-Token": "0" * 43})
    assert wrong[0] == 403
    if "/stream" in path:
        return  # an open stream: its start is checked by the console and log tests
    assert send(cloud, "GET", path, {**ok, "X-Emulator-Token": cloud.admin_token})[0] == 200
    if path.startswith("/_console/"):  # what a page's stream sends: its cookie
        token, _ = _console_token_of_a_page(cloud)
        cookie = {**ok, "Cookie": f"emulator-console-{cloud.server.port}={token}"}
        assert send(cloud, "GET", path, cookie)[0] == 200
