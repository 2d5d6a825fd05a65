"""Log Service GetLogs is RAM-authorized like FC and CloudFlow: a role session needs
``log:GetLogStoreLogs`` on ``acs:log:{region}:{account}:project/{project}/logstore/{logstore}``;
a refusal is SLS's ``401 Unauthorized`` body. Through the official SDKs (FC, RAM, SLS) against
an in-process emulator; the role keys are the ones FC gives a function instance."""

from __future__ import annotations

import base64
import email.utils
import http.client
import io
import json
import zipfile
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest
from alibabacloud_fc20230330 import models as fc_models
from alibabacloud_ram20150501 import models as ram_models

from deployer.emulator.api.sls import sls_signature
from deployer.testing.environment import LocalCloud, mock_cloud

PROJECT = "app-logs"
IDENTITY = """
import os
def handler(event, context):
    return "\\n".join(os.environ.get(k, "") for k in ("ALIBABA_CLOUD_ACCESS_KEY_ID",
                      "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ALIBABA_CLOUD_SECURITY_TOKEN"))
"""


def _zip(source: str) -> str:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("index.py", source)
    return base64.b64encode(buffer.getvalue()).decode()


def _function(fc, name: str, logstore: str, role: str | None = None) -> None:
    fc.create_function(fc_models.CreateFunctionRequest(body=fc_models.CreateFunctionInput(
        function_name=name, runtime="python3.10", handler="index.handler", timeout=30,
        code=fc_models.InputCodeLocation(zip_file=_zip(IDENTITY)), role=role,
        log_config=fc_models.LogConfig(project=PROJECT, logstore=logstore))))


def _role_keys(fc, function: str) -> dict[str, str]:
    """The temporary keys FC gave the function's instance (its role session)."""
    body = fc.invoke_function(function, fc_models.InvokeFunctionRequest()).body.read()
    key_id, secret, token = body.decode().split("\n")
    assert key_id.startswith("STS.") and token
    return {"access_key_id": key_id, "access_key_secret": secret, "security_token": token}


@pytest.fixture(scope="module")
def cloud(tmp_path_factory) -> Iterator[LocalCloud]:
    with mock_cloud(state_dir=tmp_path_factory.mktemp("sls-ram")) as c:
        ram, fc = c.ram_client(), c.fc_client()
        trust = json.dumps({"Version": "1", "Statement": [{
            "Effect": "Allow", "Action": "sts:AssumeRole",
            "Principal": {"Service": ["fc.aliyuncs.com"]}}]})
        for role in ("log-reader", "no-logs", "read-only"):
            ram.create_role(ram_models.CreateRoleRequest(role_name=role,
                                                         assume_role_policy_document=trust))
        one_store = {"Version": "1", "Statement": [{
            "Effect": "Allow", "Action": "log:GetLogStoreLogs",
            "Resource": f"acs:log:*:{c.account_id}:project/{PROJECT}/logstore/fc-logs"}]}
        ram.create_policy(ram_models.CreatePolicyRequest(
            policy_name="read-fc-logs", policy_document=json.dumps(one_store)))
        for role, kind, policy in (("log-reader", "Custom", "read-fc-logs"),
                                   ("no-logs", "System", "AliyunFCReadOnlyAccess"),
                                   ("read-only", "System", "AliyunLogReadOnlyAccess")):
            ram.attach_policy_to_role(ram_models.AttachPolicyToRoleRequest(
                role_name=role, policy_type=kind, policy_name=policy))
        for name, store, role in (("reader", "fc-logs", "log-reader"),
                                  ("outsider", "fc-logs", "no-logs"),
                                  ("auditor", "audit-logs", "read-only")):
            _function(fc, name, store, f"acs:ram::{c.account_id}:role/{role}")
        yield c


def _sls(cloud: LocalCloud, **credentials: str | None):
    from alibabacloud_sls20201230.client import Client

    return Client(cloud.config(endpoint=f"{cloud.region}.log.aliyuncs.com", protocol="https",
                               **credentials))


def _get_logs(client, logstore: str = "fc-logs"):
    from alibabacloud_sls20201230 import models

    return client.get_logs(PROJECT, logstore, models.GetLogsRequest(
        from_=0, to=4_000_000_000)).body


def _get_logs_v2(client, logstore: str = "fc-logs"):
    from alibabacloud_sls20201230 import models

    return client.get_logs_v2(PROJECT, logstore, models.GetLogsV2Request(
        from_=0, to=4_000_000_000, query="*")).body


def _classic_get(cloud: LocalCloud, keys: dict[str, str], logstore: str) -> tuple[int, object]:
    """The classic ``GET /logstores/{logstore}?type=log`` form, signed with role keys."""
    headers = {"date": email.utils.formatdate(cloud.now(), usegmt=True),
               "x-log-apiversion": "0.6.0", "x-log-signaturemethod": "hmac-sha256",
               "x-acs-security-token": keys["security_token"], "host": cloud.endpoint,
               "x-deployer-sls-project": PROJECT, "x-deployer-region": cloud.region}
    query = {"type": "log", "from": "0", "to": "4000000000"}
    signature = sls_signature("GET", f"/logstores/{logstore}", query, headers,
                              keys["access_key_secret"], "sha256")
    headers["Authorization"] = f"LOG {keys['access_key_id']}:{signature}"
    conn = http.client.HTTPConnection("127.0.0.1", cloud.server.port, timeout=30)
    try:
        conn.request("GET", f"/logstores/{logstore}?{urlencode(query)}", headers=headers)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def _refused(call):
    from Tea.exceptions import TeaException

    with pytest.raises(TeaException) as caught:
        call()
    return caught.value


def _resource(cloud: LocalCloud, logstore: str) -> str:
    return f"acs:log:{cloud.region}:{cloud.account_id}:project/{PROJECT}/logstore/{logstore}"


def test_a_role_allowed_on_the_logstore_reads_it_and_nothing_else(cloud):
    fc = cloud.fc_client()
    _role_keys(fc, "auditor")  # audit-logs now holds an invocation too
    keys = _role_keys(fc, "reader")
    reader = _sls(cloud, **keys)
    posted = _get_logs(reader)
    v2 = _get_logs_v2(reader)
    classic = _classic_get(cloud, keys, "fc-logs")
    classic_other = _classic_get(cloud, keys, "audit-logs")
    other = _refused(lambda: _get_logs_v2(reader, "audit-logs"))
    owner = _get_logs_v2(_sls(cloud), "audit-logs")  # the account's own key reads everything
    assert "reader" in {e["functionName"] for e in posted.data} <= {"reader", "outsider"}
    assert v2.meta.count == len(v2.data) > 0
    assert classic[0] == 200 and isinstance(classic[1], list) and classic[1]
    assert classic_other == (401, {"errorCode": "Unauthorized", "errorMessage": (
        "denied by sts or ram, action: log:GetLogStoreLogs, resource: "
        + _resource(cloud, "audit-logs"))})
    assert other.code == "Unauthorized" and other.statusCode == 401
    assert other.message == ("denied by sts or ram, action: log:GetLogStoreLogs, resource: "
                             + _resource(cloud, "audit-logs"))
    assert owner.meta.count > 0 and {e["functionName"] for e in owner.data} == {"auditor"}


def test_a_role_without_the_permission_is_refused_before_the_logstore_is_looked_up(cloud):
    fc = cloud.fc_client()
    outsider = _sls(cloud, **_role_keys(fc, "outsider"))
    refusals = [_refused(lambda: _get_logs(outsider)),
                _refused(lambda: _get_logs_v2(outsider)),
                _refused(lambda: _get_logs_v2(outsider, "no-such-store"))]
    for refusal, store in zip(refusals, ("fc-logs", "fc-logs", "no-such-store"), strict=True):
        assert (refusal.code, refusal.statusCode) == ("Unauthorized", 401)
        assert refusal.message.endswith("action: log:GetLogStoreLogs, resource: "
                                        + _resource(cloud, store))
    read_only = _sls(cloud, **_role_keys(fc, "auditor"))  # AliyunLogReadOnlyAccess: log:Get*
    assert _get_logs_v2(read_only, "audit-logs").meta.count > 0
    assert _get_logs_v2(read_only).meta.count > 0


def test_role_keys_need_their_security_token(cloud):
    keys = _role_keys(cloud.fc_client(), "reader")
    missing = _refused(lambda: _get_logs_v2(_sls(cloud, **{**keys, "security_token": None})))
    forged = _refused(lambda: _get_logs_v2(_sls(cloud, **{
        **keys, "security_token": keys["security_token"][:-4] + "AAAA"})))
    assert (missing.code, missing.statusCode) == ("Unauthorized", 401)
    assert "MissingSecurityToken" in missing.message
    assert forged.code == "Unauthorized" and "InvalidSecurityToken" in forged.message
    cloud.advance(36 * 3600 + 1)
    expired = _refused(lambda: _get_logs_v2(_sls(cloud, **keys)))
    assert expired.code == "Unauthorized" and "Expired" in expired.message
