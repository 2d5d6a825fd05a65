"""The admin surface refuses what a web page could send: foreign Host or Origin, non-JSON
bodies, missing or wrong tokens (403); numeric inputs refuse NaN, infinities, negatives (400)."""

from __future__ import annotations

import pytest
from alibabacloud_fc20230330 import models as fc

from deployer.emulator.api.errors import ApiError
from deployer.emulator.api.http import Headers, HttpRequest
from deployer.emulator.api.local_guard import LocalGuard
from tests.emulator.wire import assert_cloud_error, exchange, request


def _admin(cloud, path: str, body: bytes = b"{}", **headers: str):
    base = {"Host": cloud.endpoint, "Content-Type": "application/json",
            "X-Emulator-Token": cloud.admin_token}
    for name, value in headers.items():
        name = name.replace("_", "-")
        if value is None:
            base.pop(name, None)
        else:
            base[name] = value
    return exchange(cloud.server.port, request("POST", path, base, body))


@pytest.mark.parametrize("changes", [
    {"Host": "evil.example:9125"},
    {"Host": "127.0.0.1:1"},
    {"Host": None},
    {"Origin": "http://evil.example"},
    {"Origin": "null"},
    {"Content-Type": "text/plain"},
    {"Content-Type": "application/x-www-form-urlencoded"},
    {"Content-Type": None},
    {"X-Emulator-Token": None},
    {"X-Emulator-Token": "not-the-token"},
])
def test_reset_is_refused_without_every_guard(cloud, zip_b64, changes) -> None:
    fn = cloud.fc_client
    fn().create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="survivor", runtime="python3.10", handler="index.handler",
        code=fc.InputCodeLocation(zip_file=zip_b64))))
    headers = {"Host": cloud.endpoint, "Content-Type": "application/json",
               "X-Emulator-Token": cloud.admin_token}
    for name, value in changes.items():
        if value is None:
            headers.pop(name)
        else:
            headers[name] = value
    data = request("POST", "/_emulator/reset", headers, b"{}")
    if "Host" not in headers:  # HTTP/1.1 needs a Host: the parser refuses the request
        assert_cloud_error(exchange(cloud.server.port, data), 400, "InvalidArgument")
    else:
        assert_cloud_error(exchange(cloud.server.port, data), 403, "AccessDenied")
    assert fn().get_function("survivor", fc.GetFunctionRequest()).body.function_name


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]"])
def test_reset_with_every_guard_and_each_loopback_name(cloud, host) -> None:
    port = cloud.server.port
    reply = _admin(cloud, "/_emulator/reset", Host=f"{host}:{port}",
                   Origin=f"http://{host}:{port}")
    assert reply.status == 200 and reply.json() == {"reset": True}


def test_reads_need_the_own_host_but_no_token(cloud) -> None:
    ok = exchange(cloud.server.port, request("GET", "/_emulator/health",
                                             {"Host": f"localhost:{cloud.server.port}"}))
    assert ok.status == 200 and ok.json()["status"] == "ok"
    rebound = exchange(cloud.server.port, request("GET", "/_emulator/health",
                                                  {"Host": "attacker.example"}))
    assert_cloud_error(rebound, 403, "AccessDenied")


@pytest.mark.parametrize("body", [b'{"seconds": NaN}', b'{"seconds": Infinity}',
                                  b'{"seconds": -Infinity}', b'{"seconds": -1}',
                                  b'{"seconds": 1e999}', b'{"seconds": "5"}',
                                  b'{"seconds": true}', b"[5]", b"{nope"])
def test_clock_advance_refuses_bad_numbers_and_the_emulator_stays_up(cloud, body) -> None:
    before = cloud.now()
    assert_cloud_error(_admin(cloud, "/_emulator/clock/advance", body), 400, "InvalidArgument")
    assert cloud.now() == before
    later = _admin(cloud, "/_emulator/clock/advance", b'{"seconds": 2.5}')
    assert later.status == 200 and later.json()["now"] == before + 2.5


def test_the_guard_is_a_reusable_function() -> None:
    guard = LocalGuard("t0ken", 9125)

    def req(method: str, **headers: str) -> HttpRequest:
        return HttpRequest(method, "/_console/x", Headers(tuple(headers.items())), b"{}",
                           "127.0.0.1")

    guard.check(req("GET", host="localhost:9125"))
    guard.check(req("POST", host="[::1]:9125", **{"content-type": "application/json; x=1",
                                                  "x-emulator-token": "t0ken"}))
    for bad in (req("GET", host="localhost:9126"),
                req("POST", host="localhost:9125", **{"content-type": "application/json"}),
                req("GET", host="localhost:9125", origin="http://localhost:9126")):
        with pytest.raises(ApiError) as err:
            guard.check(bad)
        assert err.value.http_status == 403
    remote = HttpRequest("GET", "/", Headers((("host", "localhost:9125"),)), b"", "10.0.0.5")
    with pytest.raises(ApiError):
        guard.check(remote)
