"""No secret (access key secret, security token, request signature) is ever printed: not in
cloud error messages, not in hints, not in ``--debug`` tracebacks."""

from __future__ import annotations

import re
import socket

import pytest
from alibabacloud_tea_openapi.exceptions import ClientException
from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.cloud.cloudflow import CloudFlowClient
from deployer.cloud.connection import CloudConnection, Endpoints, StaticKeys
from deployer.cloud.errors import CloudConnectionError, translate
from deployer.cloud.retry import NO_RETRY

SECRET = "Sup3rSecretKeyValue0123456789"
TOKEN = "CAIS1234TokenValue+/abcdefSECRETTOKEN=="


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_refused_connection_names_the_endpoint_not_the_signed_url():
    port = _closed_port()
    connection = CloudConnection(region="cn-hangzhou",
                                 endpoints=Endpoints.single(f"127.0.0.1:{port}"),
                                 credential=StaticKeys("LTAIexample", SECRET, TOKEN),
                                 retry=NO_RETRY)
    with pytest.raises(CloudConnectionError) as caught:
        CloudFlowClient(connection).describe_execution("MyWorkFlow", "run-1")
    message = caught.value.message
    assert f"127.0.0.1:{port}: Connection refused" in message
    assert "CAIS1234" not in message and "Signature=" not in message
    assert "SecurityToken" not in message and SECRET not in message


def test_a_signature_error_echoing_the_string_to_sign_is_redacted():
    signed = ("GET&%2F&AccessKeyId%3DLTAIexample%26Action%3DDescribeFlow%26SecurityToken%3D"
              "CAIS1234TokenValue%252B%26Signature%3Dabc%253D%26SignatureMethod%3DHMAC-SHA1")
    exc = ClientException(code="SignatureDoesNotMatch", status_code=400,
                          message=f"server string to sign is:{signed}", request_id="r-1",
                          data={"Code": "SignatureDoesNotMatch",
                                "Message": f"Specified signature is not matched. server string "
                                           f"to sign is:{signed}"})
    err = translate(exc, service="CloudFlow", operation="DescribeFlow")
    assert "CAIS1234" not in err.message and "abc%253D" not in err.message
    assert "SecurityToken%3D<redacted>%26" in err.message
    assert "AccessKeyId%3DLTAIexample" in err.message  # an access key id is not a secret


@pytest.fixture
def sts_credentials(monkeypatch):
    """Environment credentials with a security token, as a CI OIDC action exports them."""
    from alibabacloud_credentials.utils import auth_util

    values = {"ALIBABA_CLOUD_ACCESS_KEY_ID": "LTAIexample",
              "ALIBABA_CLOUD_ACCESS_KEY_SECRET": SECRET,
              "ALIBABA_CLOUD_SECURITY_TOKEN": TOKEN}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(auth_util, "environment_access_key_id", values[
        "ALIBABA_CLOUD_ACCESS_KEY_ID"])
    monkeypatch.setattr(auth_util, "environment_access_key_secret", SECRET)
    monkeypatch.setattr(auth_util, "environment_security_token", TOKEN)


def test_debug_traceback_of_a_connection_error_shows_no_secret(project, monkeypatch,
                                                               sts_credentials):
    port = _closed_port()
    monkeypatch.setattr(Endpoints, "for_region",
                        classmethod(lambda cls, region: Endpoints.single(f"127.0.0.1:{port}")))
    monkeypatch.setattr("deployer.cloud.connection.RetryPolicy", lambda: NO_RETRY)
    result = CliRunner().invoke(cli, ["--debug", "-C", str(project), "status", "run-1",
                                      "--target", "aliyun", "--account-id", "1234567890123456",
                                      "--output", "json"])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "Traceback" in result.stderr  # --debug does show it ...
    assert "Connection refused" in result.stderr
    for secret in (SECRET, "CAIS1234"):  # ... without secrets
        assert secret not in result.stderr, secret
    assert not re.search(r"(Signature|SecurityToken)=(?!<redacted>)", result.stderr)
