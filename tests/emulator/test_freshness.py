"""Request freshness: signed times outside 15 minutes and reused nonces are refused with each
product's code; the official SDKs keep working, on a virtual clock days ahead as well."""

from __future__ import annotations

import base64
import email.utils
import hashlib
import http.client
import json
import secrets
import time
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
from alibabacloud_fc20230330 import models as fc_models
from alibabacloud_fnf20190315 import models as fnf_models
from alibabacloud_ram20150501 import models as ram_models

from deployer.emulator.api.signing import acs3_signature, rpc_v1_signature
from deployer.emulator.api.sls import sls_signature
from deployer.emulator.clock import VirtualClock
from deployer.testing import EchoRuntime, LocalCloud, mock_cloud
from tests.emulator.wire import acs_date

DAYS_AHEAD = 3 * 86400
LIST = "/2023-03-30/functions"


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with mock_cloud(intercept=False, runtime=EchoRuntime()) as c:
        yield c


def _send(cloud: LocalCloud, method: str, target: str, headers: dict[str, str],
          body: bytes = b"") -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", cloud.server.port, timeout=30)
    conn.request(method, target, body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    assert int(resp.getheader("Content-Length")) == len(data)
    return resp.status, json.loads(data) if data else {}


def _acs3(cloud: LocalCloud, target: str = LIST, *, date: str | None = None,
          nonce: str | None = "", version: str = "2023-03-30", action: str = "ListFunctions",
          unsigned: tuple[str, ...] = ()) -> dict[str, str]:
    headers = {"host": cloud.endpoint, "x-acs-version": version, "x-acs-action": action,
               "x-acs-content-sha256": hashlib.sha256(b"").hexdigest()}
    if date is not None:
        headers["x-acs-date"] = date
    if nonce is not None:
        headers["x-acs-signature-nonce"] = nonce or secrets.token_hex(16)
    signed = ";".join(sorted(h for h in headers if h not in unsigned))
    sig = acs3_signature("GET", target, lambda n: [headers[n]], signed,
                         headers["x-acs-content-sha256"], cloud.access_key_secret)
    headers["Authorization"] = (f"ACS3-HMAC-SHA256 Credential={cloud.access_key_id},"
                                f"SignedHeaders={signed},Signature={sig}")
    return headers


def _rpc(cloud: LocalCloud, *, timestamp: str | None, nonce: str | None = "") -> str:
    params = {"Action": "ListFlows", "Format": "json", "Version": "2019-03-15",
              "SignatureMethod": "HMAC-SHA1", "SignatureVersion": "1.0",
              "AccessKeyId": cloud.access_key_id}
    if timestamp is not None:
        params["Timestamp"] = timestamp
    if nonce is not None:
        params["SignatureNonce"] = nonce or secrets.token_hex(16)
    signature, _ = rpc_v1_signature("GET", params, cloud.access_key_secret)
    return "/?" + urlencode({**params, "Signature": signature})


def test_fc_refuses_old_and_future_times_and_accepts_the_window(cloud):
    now = time.time()
    for skew in (-3600, 16 * 60, 86400):
        status, body = _send(cloud, "GET", LIST, _acs3(cloud, date=acs_date(now + skew)))
        assert (status, body["Code"]) == (403, "RequestTimeTooSkewed"), body
        assert "exceeds 15 minutes" in body["Message"] and body["RequestId"]
    for skew in (-14 * 60, 0, 14 * 60):
        status, body = _send(cloud, "GET", LIST, _acs3(cloud, date=acs_date(now + skew)))
        assert status == 200, body


def test_fc_refuses_a_replayed_nonce(cloud):
    headers = _acs3(cloud, date=acs_date(), nonce=secrets.token_hex(16))
    assert _send(cloud, "GET", LIST, headers)[0] == 200
    status, body = _send(cloud, "GET", LIST, headers)  # the same signed request again
    assert (status, body["Code"]) == (403, "SignatureNonceUsed"), body
    assert "already used" in body["Message"]
    assert _send(cloud, "GET", LIST, _acs3(cloud, date=acs_date()))[0] == 200  # a new nonce
    no_nonce = _acs3(cloud, date=acs_date(), nonce=None)  # optional in V3: never a replay
    assert [_send(cloud, "GET", LIST, no_nonce)[0] for _ in range(2)] == [200, 200]


def test_fc_signed_time_must_be_present_signed_and_valid(cloud):
    status, body = _send(cloud, "GET", LIST, _acs3(cloud, date=None))
    assert (status, body["Code"]) == (400, "MissingRequiredHeader")
    assert "x-acs-date" in body["Message"]
    status, body = _send(cloud, "GET", LIST, _acs3(cloud, date=acs_date(),
                                                   unsigned=("x-acs-date",)))
    assert (status, body["Code"]) == (400, "InvalidArgument")
    assert "x-acs-date must be listed in SignedHeaders" in body["Message"]
    for bad in ("2026-13-01T00:00:00Z", "yesterday", "2026-01-01 00:00:00"):
        status, body = _send(cloud, "GET", LIST, _acs3(cloud, date=bad))
        assert (status, body["Code"]) == (400, "InvalidArgument"), bad
        assert "not a valid time" in body["Message"]


def test_cloudflow_rpc_timestamp_and_nonce(cloud):
    status, body = _send(cloud, "GET", _rpc(cloud, timestamp=acs_date(time.time() - 7200)), {})
    assert (status, body["Code"]) == (403, "RequestTimeTooSkewed"), body
    assert body["HostId"] == cloud.endpoint
    status, body = _send(cloud, "GET", _rpc(cloud, timestamp=None), {})
    assert (status, body["Code"]) == (400, "MissingRequiredParams")
    target = _rpc(cloud, timestamp=acs_date(), nonce=secrets.token_hex(16))
    assert _send(cloud, "GET", target, {})[0] == 200
    status, body = _send(cloud, "GET", target, {})
    assert (status, body["Code"]) == (403, "SignatureNonceUsed"), body


def test_ram_and_sts_answer_the_pop_gateway_codes(cloud):
    def sts(**kw):
        headers = _acs3(cloud, "/", version="2015-04-01", action="GetCallerIdentity", **kw)
        return _send(cloud, "GET", "/", headers)

    status, body = sts(date=acs_date(time.time() - 3600))
    assert (status, body["Code"]) == (400, "InvalidTimeStamp.Expired"), body
    status, body = sts(date="01/01/2026")
    assert (status, body["Code"]) == (400, "InvalidTimeStamp.Format"), body
    nonce = secrets.token_hex(16)
    date = acs_date()
    assert sts(date=date, nonce=nonce)[0] == 200
    status, body = sts(date=date, nonce=nonce)
    assert (status, body["Code"]) == (400, "SignatureNonceUsed"), body


def test_log_service_checks_its_signed_date(cloud):
    def get(date: str) -> tuple[int, dict]:
        headers = {"date": date, "x-log-apiversion": "0.6.0",
                   "x-log-signaturemethod": "hmac-sha256", "host": cloud.endpoint,
                   "x-deployer-sls-project": "p"}
        query = {"type": "log", "from": "0", "to": "10"}
        signed = {k: v for k, v in headers.items()}
        sig = sls_signature("GET", "/logstores/s", query, signed, cloud.access_key_secret,
                            "sha256")
        headers["Authorization"] = f"LOG {cloud.access_key_id}:{sig}"
        return _send(cloud, "GET", "/logstores/s?" + urlencode(query), headers)

    old = email.utils.formatdate(time.time() - 3600, usegmt=True)
    status, body = get(old)
    assert (status, body["errorCode"]) == (400, "RequestTimeExpired"), body
    status, body = get("not a date")
    assert (status, body["errorCode"]) == (400, "InvalidRequestTime"), body
    status, body = get(email.utils.formatdate(time.time(), usegmt=True))
    assert (status, body["errorCode"]) == (404, "ProjectNotExist"), body  # fresh: it went on


def test_sdks_work_unchanged_on_a_virtual_clock_days_ahead():
    clock = VirtualClock(start=time.time() + DAYS_AHEAD)
    with mock_cloud(intercept=False, clock=clock, runtime=EchoRuntime()) as cloud:
        fc = cloud.fc_client()
        fc.create_function(fc_models.CreateFunctionRequest(body=fc_models.CreateFunctionInput(
            function_name="echo", runtime="python3.10", handler="index.handler",
            code=fc_models.InputCodeLocation(zip_file=base64.b64encode(
                b"PK\x05\x06" + b"\0" * 18).decode()))))
        assert fc.invoke_function("echo", fc_models.InvokeFunctionRequest(
            body=b"{}")).status_code == 200
        assert cloud.fnf_client().list_flows(fnf_models.ListFlowsRequest()).body.flows == []
        assert cloud.sts_client().get_caller_identity().body.account_id == cloud.account_id
        cloud.ram_client().create_role(ram_models.CreateRoleRequest(
            role_name="r", assume_role_policy_document=json.dumps({
                "Version": "1", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                               "Principal": {"Service": ["fc.aliyuncs.com"]}}]})))
        # what code running on the virtual clock (a handler) signs is fresh as well
        virtual = _acs3(cloud, date=acs_date(cloud.now()))
        assert _send(cloud, "GET", LIST, virtual)[0] == 200
        between = _acs3(cloud, date=acs_date(time.time() + DAYS_AHEAD / 2))
        assert _send(cloud, "GET", LIST, between)[1]["Code"] == "RequestTimeTooSkewed"


CALLER = """
import os
from alibabacloud_credentials.client import Client as Credentials
from alibabacloud_tea_openapi import models as open_api
from alibabacloud_sts20150401.client import Client as STS

def handler(event, context):
    config = open_api.Config(credential=Credentials(), region_id=os.environ["FC_REGION"])
    return STS(config).get_caller_identity().body.arn
"""


def test_a_handler_on_the_virtual_clock_days_ahead_signs_freshly():
    """Handlers see virtual time (docs/runtime.md), so their SDK signs with it."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("index.py", CALLER)
    clock = VirtualClock(start=time.time() + DAYS_AHEAD)
    with mock_cloud(intercept=False, clock=clock) as cloud:
        cloud.ram_client().create_role(ram_models.CreateRoleRequest(
            role_name="caller", assume_role_policy_document=json.dumps({
                "Version": "1", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                               "Principal": {"Service": ["fc.aliyuncs.com"]}}]})))
        fc = cloud.fc_client()
        fc.create_function(fc_models.CreateFunctionRequest(body=fc_models.CreateFunctionInput(
            function_name="caller", runtime="python3.12", handler="index.handler", timeout=30,
            role=f"acs:ram::{cloud.account_id}:role/caller",
            code=fc_models.InputCodeLocation(
                zip_file=base64.b64encode(buffer.getvalue()).decode()))))
        out = fc.invoke_function("caller", fc_models.InvokeFunctionRequest(body=b"{}"))
        body = out.body.read().decode()
    assert "x-fc-error-type" not in out.headers, body
    assert body.endswith(":assumed-role/caller/fc-caller"), body
