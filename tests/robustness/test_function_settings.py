"""Structured Function settings of the wrong JSON type are refused with a 400 naming the field.

Stored as given, a string where the SDK's models expect an object (``logConfig: "x"``) makes the
official SDK drop the whole response body of GetFunction and of every ListFunctions page that
holds the function: one bad request would blind every client of the account.
"""

from __future__ import annotations

import json

import pytest
from alibabacloud_fc20230330 import models as fc

from tests.emulator.test_http_raw import _call, _signed

BAD_SETTINGS = [
    ("logConfig", "x", "logConfig"),
    ("vpcConfig", 5, "vpcConfig"),
    ("instanceLifecycleConfig", "x", "instanceLifecycleConfig"),
    ("instanceLifecycleConfig", {"preStop": "x"}, "instanceLifecycleConfig.preStop"),
    ("customDNS", [1], "customDNS"),
    ("customDNS", {"dnsOptions": "x"}, "customDNS.dnsOptions"),
    ("nasConfig", {"mountPoints": ["x"]}, "nasConfig.mountPoints[0]"),
    ("customContainerConfig", {"registryConfig": {"authConfig": 1}},
     "customContainerConfig.registryConfig.authConfig"),
    ("disableOndemand", "yes", "disableOndemand"),
    ("idleTimeout", "60", "idleTimeout"),
    ("disableInjectCredentials", "Bogus", "disableInjectCredentials"),
    ("sessionAffinity", 3, "sessionAffinity"),
]


def _raw(cloud, method: str, target: str, body: dict) -> tuple[int, dict]:
    data = json.dumps(body).encode()
    resp, out = _call(cloud, method, target, data, _signed(cloud, method, target, data))
    return resp.status, json.loads(out) if out else {}


@pytest.mark.parametrize(("key", "value", "field"), BAD_SETTINGS)
def test_wrongly_typed_settings_are_refused_and_listing_keeps_working(
        cloud, zip_b64, key, value, field) -> None:
    base = {"functionName": "good", "runtime": "python3.10", "handler": "index.handler",
            "code": {"zipFile": zip_b64}}
    assert _raw(cloud, "POST", "/2023-03-30/functions", base)[0] == 200
    status, err = _raw(cloud, "POST", "/2023-03-30/functions",
                       {**base, "functionName": "bad", key: value})
    assert (status, err["Code"]) == (400, "InvalidArgument") and field in err["Message"]
    status, err = _raw(cloud, "PUT", "/2023-03-30/functions/good", {key: value})
    assert (status, err["Code"]) == (400, "InvalidArgument") and field in err["Message"]
    client = cloud.fc_client()
    listed = client.list_functions(fc.ListFunctionsRequest()).body
    assert [f.function_name for f in listed.functions] == ["good"]
    assert client.get_function("good", fc.GetFunctionRequest()).body.function_name == "good"


def test_well_typed_settings_are_kept_and_echoed(cloud, zip_b64) -> None:
    settings = {"logConfig": {"project": "p", "logstore": "s"},
                "nasConfig": {"mountPoints": [{"serverAddr": "a", "mountDir": "/mnt/a"}]},
                "disableOndemand": False, "idleTimeout": 60,
                "disableInjectCredentials": "Env"}
    body = {"functionName": "f", "runtime": "python3.10", "handler": "index.handler",
            "code": {"zipFile": zip_b64}, **settings}
    status, fn = _raw(cloud, "POST", "/2023-03-30/functions", body)
    assert status == 200 and {k: fn[k] for k in settings} == settings
    got = cloud.fc_client().get_function("f", fc.GetFunctionRequest()).body
    assert got.log_config.logstore == "s" and got.nas_config.mount_points[0].mount_dir == "/mnt/a"
