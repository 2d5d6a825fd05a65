"""Role credentials, cloud calls from handlers, RAM authorization and STS token checks, through
the official SDKs against an in-process emulator (``mock_cloud``, virtual clock).

Handlers build SDK clients with their default (cloud) endpoints and the default credential
chain; the worker routes them to the emulator (docs/runtime.md "Cloud calls from handlers")."""

from __future__ import annotations

import base64
import functools
import hashlib
import http.client
import io
import json
import re
import zipfile
from collections.abc import Iterator
from pathlib import Path

import alibabacloud_fc20230330
import pytest
from alibabacloud_fc20230330 import models as fc_models
from alibabacloud_fnf20190315 import models as fnf_models
from alibabacloud_ram20150501 import models as ram_models
from alibabacloud_sts20150401 import models as sts_models
from alibabacloud_tea_openapi.exceptions import ClientException

from deployer.emulator.api.signing import acs3_signature
from deployer.testing.environment import LocalCloud, mock_cloud
from tests.emulator.wire import acs_date

SITE = Path(alibabacloud_fc20230330.__file__).resolve().parents[1]


def _trust(principal: dict) -> str:
    return json.dumps({"Version": "1", "Statement": [
        {"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": principal}]})


@functools.cache
def _zip(source: str, *vendored: str) -> bytes:
    """``index.py`` plus packages copied from this environment (SDKs FC does not ship)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("index.py", source)
        for package in vendored:
            for path in sorted((SITE / package).rglob("*.py")):
                archive.write(path, path.relative_to(SITE).as_posix())
    return buffer.getvalue()


def _create(fc, name: str, code: bytes, **kwargs):
    body = fc_models.CreateFunctionInput(
        function_name=name, runtime=kwargs.pop("runtime", "python3.12"),
        handler="index.handler", timeout=30, memory_size=kwargs.pop("memory_size", 256),
        code=fc_models.InputCodeLocation(zip_file=base64.b64encode(code).decode()), **kwargs)
    return fc.create_function(fc_models.CreateFunctionRequest(body=body))


def _invoke(fc, name: str, event: bytes = b"") -> tuple[dict[str, str], bytes]:
    response = fc.invoke_function(name, fc_models.InvokeFunctionRequest(body=event))
    return response.headers, response.body.read()


@pytest.fixture(scope="module")
def cloud(tmp_path_factory) -> Iterator[LocalCloud]:
    with mock_cloud(intercept=False, state_dir=tmp_path_factory.mktemp("roles")) as c:
        ram = c.ram_client()
        account = c.account_id
        fc_trust = _trust({"Service": ["fc.aliyuncs.com"]})
        for name, trust in (("fc-role", fc_trust),
                            ("flow-role", _trust({"Service": ["fnf.aliyuncs.com"]})),
                            ("weak-flow-role", _trust({"Service": ["fnf.aliyuncs.com"]})),
                            ("assumable", _trust({"RAM": [f"acs:ram::{account}:root"]}))):
            ram.create_role(ram_models.CreateRoleRequest(role_name=name,
                                                         assume_role_policy_document=trust))
        scoped = {"Version": "1", "Statement": [
            {"Effect": "Allow", "Action": "fc:GetFunction",
             "Resource": f"acs:fc:*:{account}:functions/*"},
            {"Effect": "Deny", "Action": "fc:GetFunction",
             "Resource": f"acs:fc:*:{account}:functions/secret"}]}
        ram.create_policy(ram_models.CreatePolicyRequest(
            policy_name="read-functions", policy_document=json.dumps(scoped)))
        for role, kind, policy in (("fc-role", "Custom", "read-functions"),
                                   ("fc-role", "System", "AliyunFnFFullAccess"),
                                   ("fc-role", "System", "AliyunSTSAssumeRoleAccess"),
                                   ("flow-role", "System", "AliyunFCInvocationAccess")):
            ram.attach_policy_to_role(ram_models.AttachPolicyToRoleRequest(
                role_name=role, policy_type=kind, policy_name=policy))
        fc = c.fc_client()
        _create(fc, "secret", _zip("def handler(event, context):\n    return 'secret'\n"),
                runtime="python3.10")
        _create(fc, "victim", _zip("def handler(event, context):\n    return 'victim'\n"),
                runtime="python3.10")
        yield c


@pytest.fixture(scope="module")
def fc(cloud):
    return cloud.fc_client()


def role_arn(cloud: LocalCloud, name: str) -> str:
    return f"acs:ram::{cloud.account_id}:role/{name}"


IDENTITY = """
import json, os
def handler(event, context):
    creds = getattr(context, "credentials", None)
    return {
        "env": {k: os.environ.get(k) for k in ("ALIBABA_CLOUD_ACCESS_KEY_ID",
                "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ALIBABA_CLOUD_SECURITY_TOKEN")},
        "context": None if creds is None else [creds.access_key_id, creds.accessKeySecret,
                                              creds.security_token],
    }
"""


def test_role_must_exist_and_trust_function_compute(cloud, fc):
    for role, why in (("nobody", "does not exist"), ("flow-role", "fc.aliyuncs.com")):
        with pytest.raises(ClientException) as created:
            _create(fc, "bad-role", _zip(IDENTITY), role=role_arn(cloud, role))
        assert created.value.code == "InvalidArgument" and why in created.value.message
        with pytest.raises(ClientException) as updated:
            fc.update_function("victim", fc_models.UpdateFunctionRequest(
                body=fc_models.UpdateFunctionInput(role=role_arn(cloud, role))))
        assert updated.value.code == "InvalidArgument" and why in updated.value.message


@pytest.mark.parametrize("mode, in_env, in_context", [
    ("None", True, True), ("Env", False, True), ("Request", True, False), ("All", False, False),
])
def test_credentials_are_injected_as_fc_does(cloud, fc, mode, in_env, in_context):
    name = f"ident-{mode.lower()}"
    _create(fc, name, _zip(IDENTITY), runtime="python3.10", role=role_arn(cloud, "fc-role"),
            disable_inject_credentials=mode)
    seen = json.loads(_invoke(fc, name)[1])
    env = [seen["env"][k] for k in ("ALIBABA_CLOUD_ACCESS_KEY_ID",
                                    "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
                                    "ALIBABA_CLOUD_SECURITY_TOKEN")]
    assert (env[0] or "").startswith("STS.") is in_env
    assert (seen["context"][0].startswith("STS.")) is in_context
    if in_env and in_context:
        assert env == seen["context"]
    assert cloud.access_key_secret not in json.dumps(seen)


CONTEXT_312 = """
import os
def handler(event, context):
    logger = context.getLogger()
    logger.info("hello from getLogger")
    return {"has": [hasattr(context, a) for a in ("credentials", "service", "logger")],
            "function": [context.function.qualifier, context.function.version_id],
            "logger": context.logger is logger,
            "env": [os.environ.get("FC_FUNCTION_VERSION"), os.environ.get("FC_VER_ID")]}
"""


def test_python312_context_shape_and_version_warning(cloud, fc):
    created = _create(fc, "ctx312", _zip(CONTEXT_312), role=role_arn(cloud, "fc-role"))
    warning = created.headers["x-deployer-warning"]
    assert "python3.12" in warning and "Python 3.11" in warning
    seen = json.loads(_invoke(fc, "ctx312")[1])
    assert seen == {"has": [False, False, True], "function": ["LATEST", "LATEST"],
                    "logger": True, "env": ["LATEST", None]}
    again = fc.update_function("ctx312", fc_models.UpdateFunctionRequest(
        body=fc_models.UpdateFunctionInput(timeout=31)))
    assert "x-deployer-warning" not in again.headers  # said once, when the runtime was set


CALLER = """
import json, os, requests
from alibabacloud_credentials.client import Client as Credentials
from alibabacloud_tea_openapi import models as open_api
from alibabacloud_fc20230330.client import Client as FC
from alibabacloud_fc20230330 import models as fc
from alibabacloud_sts20150401.client import Client as STS
from alibabacloud_sts20150401 import models as sts

def handler(event, context):
    config = open_api.Config(credential=Credentials(), region_id=os.environ["FC_REGION"])
    out = {"caller": STS(config).get_caller_identity().body.to_map()}
    for name in ("victim", "secret"):
        try:
            out[name] = FC(config).get_function(name, fc.GetFunctionRequest()).body.function_name
        except Exception as exc:
            out[name] = [getattr(exc, "code", None), getattr(exc, "data", {}).get(
                "AccessDeniedDetail", {}).get("NoPermissionType")]
    try:
        FC(config).list_functions(fc.ListFunctionsRequest())
        out["list"] = "allowed"
    except Exception as exc:
        out["list"] = getattr(exc, "code", None)
    try:
        requests.get("https://oss-cn-hangzhou.aliyuncs.com/bucket", timeout=5)
    except Exception as exc:
        out["oss"] = str(exc)
    return out
"""


def test_handler_sdk_calls_reach_the_emulator_and_are_authorized(cloud, fc):
    _create(fc, "caller", _zip(CALLER, "alibabacloud_fc20230330"),
            role=role_arn(cloud, "fc-role"))
    headers, body = _invoke(fc, "caller")
    assert "x-fc-error-type" not in headers, body
    seen = json.loads(body)
    assert seen["caller"]["IdentityType"] == "AssumedRoleUser"
    assert seen["caller"]["Arn"] == f"acs:ram::{cloud.account_id}:assumed-role/fc-role/fc-caller"
    assert seen["victim"] == "victim"  # allowed by the custom policy
    assert seen["secret"] == ["AccessDenied", "ExplicitDeny"]
    assert seen["list"] == "AccessDenied"  # nothing allows fc:ListFunctions
    assert "service 'oss'" in seen["oss"] and "not serve" in seen["oss"]


def _credentials(cloud, fc, name: str = "leaker") -> dict[str, str]:
    """The role keys a function instance was given (the function returns its own)."""
    existing = {f.function_name for f in fc.list_functions(
        fc_models.ListFunctionsRequest(limit=100)).body.functions}
    if name not in existing:
        _create(fc, name, _zip(IDENTITY), runtime="python3.10",
                role=role_arn(cloud, "fc-role"))
    env = json.loads(_invoke(fc, name)[1])["env"]
    return {"access_key_id": env["ALIBABA_CLOUD_ACCESS_KEY_ID"],
            "access_key_secret": env["ALIBABA_CLOUD_ACCESS_KEY_SECRET"],
            "security_token": env["ALIBABA_CLOUD_SECURITY_TOKEN"]}


def _error(call) -> ClientException:
    with pytest.raises(ClientException) as info:
        call()
    return info.value


def test_sts_credentials_are_verified_like_the_cloud(cloud, fc):
    creds = _credentials(cloud, fc)
    role_fc = cloud.fc_client(**creds)
    get = fc_models.GetFunctionRequest()
    assert role_fc.get_function("victim", get).body.function_name == "victim"
    denied = _error(lambda: role_fc.delete_function("victim"))
    assert denied.code == "AccessDenied" and denied.status_code == 403
    assert denied.data["AccessDeniedDetail"]["AuthAction"] == "fc:DeleteFunction"
    missing = {**creds, "security_token": None}
    assert _error(lambda: cloud.fc_client(**missing).get_function("victim", get)).code == \
        "MissingSecurityToken"
    other = _credentials(cloud, fc, "leaker-2")  # the same role, another session
    mixed = {**creds, "security_token": other["security_token"]}
    assert _error(lambda: cloud.fc_client(**mixed).get_function("victim", get)).code == \
        "InvalidSecurityToken.MismatchWithAccessKey"
    forged = {**creds, "security_token": creds["security_token"][:-4] + "AAAA"}
    assert _error(lambda: cloud.fc_client(**forged).get_function("victim", get)).code == \
        "InvalidSecurityToken.Malformed"
    on_account_key = {"security_token": creds["security_token"]}
    assert _error(lambda: cloud.fc_client(**on_account_key).get_function("victim", get)).code == \
        "InvalidSecurityToken.MismatchWithAccessKey"
    cloud.fnf_client(**creds).list_flows(fnf_models.ListFlowsRequest())  # RPC v1 + token: ok
    cloud.advance(36 * 3600 + 1)
    assert _error(lambda: role_fc.get_function("victim", get)).code == \
        "InvalidSecurityToken.Expired"
    renewed = _credentials(cloud, fc)  # the instance got renewed credentials
    assert renewed["access_key_id"] != creds["access_key_id"]
    assert cloud.fc_client(**renewed).get_function("victim", get).body.function_name == "victim"


def test_assume_role_follows_the_cloud_rules(cloud, fc):
    sts = cloud.sts_client()
    request = sts_models.AssumeRoleRequest(role_arn=role_arn(cloud, "assumable"),
                                           role_session_name="tester")
    root = _error(lambda: sts.assume_role(request))
    assert root.code == "NoPermission" and "root accounts" in root.message
    session = cloud.sts_client(**_credentials(cloud, fc, "leaker-3"))
    answer = session.assume_role(request).body
    assert answer.credentials.access_key_id.startswith("STS.")
    assert answer.assumed_role_user.arn.endswith(":assumed-role/assumable/tester")
    untrusted = sts_models.AssumeRoleRequest(role_arn=role_arn(cloud, "flow-role"),
                                             role_session_name="tester")
    assert _error(lambda: session.assume_role(untrusted)).code == "NoPermission"
    chained = cloud.fc_client(access_key_id=answer.credentials.access_key_id,
                              access_key_secret=answer.credentials.access_key_secret,
                              security_token=answer.credentials.security_token)
    denied = _error(lambda: chained.get_function("victim", fc_models.GetFunctionRequest()))
    assert denied.code == "AccessDenied"


def _flow(cloud, name: str, role: str | None, function: str, mode: str = "RequestComplete",
          body: str = "{}") -> None:
    definition = (f"Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: call\nStates:\n"
                  f"  - Type: Task\n    Name: call\n    Action: FC:InvokeFunction\n"
                  f"    TaskMode: {mode}\n    Parameters:\n"
                  f"      resourceArn: acs:fc:{cloud.region}:{cloud.account_id}:functions/"
                  f"{function}\n      invocationType: Sync\n      body:\n{body}    End: true\n")
    cloud.fnf_client().create_flow(fnf_models.CreateFlowRequest(
        name=name, definition=definition, type="FDL", description="",
        role_arn=role_arn(cloud, role) if role else None))


def test_flow_role_must_allow_invoking_the_function(cloud):
    fnf = cloud.fnf_client()
    _flow(cloud, "weak", "weak-flow-role", "victim", body="        a: 1\n")
    _flow(cloud, "strong", "flow-role", "victim", body="        a: 1\n")
    for flow in ("weak", "strong"):
        fnf.start_execution(fnf_models.StartExecutionRequest(flow_name=flow, execution_name="e"))
    weak = cloud.wait_for_execution("weak", "e")
    assert weak["Status"] == "Failed"
    events = fnf.get_execution_history(fnf_models.GetExecutionHistoryRequest(
        flow_name="weak", execution_name="e")).body.events
    failed = [json.loads(e.event_detail) for e in events if e.type == "TaskFailed"]
    assert failed and "FC.AccessDenied" in json.dumps(failed[0])
    assert cloud.wait_for_execution("strong", "e")["Status"] == "Succeeded"


REPORTER = """
import json, os
from alibabacloud_credentials.client import Client as Credentials
from alibabacloud_tea_openapi import models as open_api
from alibabacloud_fnf20190315.client import Client as CloudFlow
from alibabacloud_fnf20190315 import models

def handler(event, context):
    token = json.loads(event)["token"]
    client = CloudFlow(open_api.Config(credential=Credentials(),
                                       region_id=os.environ["FC_REGION"]))
    client.report_task_succeeded(models.ReportTaskSucceededRequest(
        task_token=token, output=json.dumps({"reported": "by the function"})))
    return "reported"
"""


def test_callback_round_trip_with_the_default_credential_chain(cloud, fc):
    _create(fc, "reporter", _zip(REPORTER, "alibabacloud_fnf20190315"),
            role=role_arn(cloud, "fc-role"))
    _flow(cloud, "callback", "flow-role", "reporter", mode="WaitForCustomCallback",
          body="        token.$: $Context.Current.TaskToken\n")
    cloud.fnf_client().start_execution(fnf_models.StartExecutionRequest(
        flow_name="callback", execution_name="cb"))
    done = cloud.wait_for_execution("callback", "cb")
    assert done["Status"] == "Succeeded", done
    assert json.loads(done["Output"]) == {"reported": "by the function"}


def _raw_create(cloud: LocalCloud, name: str, region_signed: bool) -> str:
    body = json.dumps({"functionName": name, "runtime": "python3.10", "handler": "index.handler",
                       "code": {"zipFile": base64.b64encode(_zip(IDENTITY)).decode()}}).encode()
    headers = {"host": cloud.endpoint, "x-acs-version": "2023-03-30",
               "x-acs-action": "CreateFunction", "x-acs-date": acs_date(),
               "x-acs-signature-nonce": hashlib.md5(name.encode()).hexdigest(),
               "accept": "application/json", "content-type": "application/json",
               "x-acs-content-sha256": hashlib.sha256(body).hexdigest()}
    if region_signed:
        headers["x-deployer-region"] = "cn-shanghai"
    signed = ";".join(sorted(headers))
    sig = acs3_signature("POST", "/2023-03-30/functions", lambda n: [headers[n]], signed,
                         headers["x-acs-content-sha256"], cloud.access_key_secret)
    headers["Authorization"] = (f"ACS3-HMAC-SHA256 Credential={cloud.access_key_id},"
                                f"SignedHeaders={signed},Signature={sig}")
    headers["x-deployer-region"] = "cn-shanghai"  # unsigned when region_signed is False
    conn = http.client.HTTPConnection("127.0.0.1", cloud.server.port, timeout=30)
    conn.request("POST", "/2023-03-30/functions", body=body, headers=headers)
    answer = json.loads(conn.getresponse().read())
    conn.close()
    return str(answer["functionArn"])


def test_region_comes_only_from_what_the_request_signs(cloud):
    assert _raw_create(cloud, "unsigned-region", False).startswith("acs:fc:cn-hangzhou:")
    assert _raw_create(cloud, "signed-region", True).startswith("acs:fc:cn-shanghai:")


def test_invoke_headers_are_fc30s(cloud, fc):
    headers, body = _invoke(fc, "victim")
    assert body == b"victim"
    assert re.fullmatch(r"c-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{12}", headers["x-fc-instance-id"])
    assert headers["x-fc-invocation-service-version"] == "LATEST"
    assert 1 < float(headers["x-fc-max-memory-usage"]) < 256


def test_cloudflow_on_a_loopback_endpoint_takes_the_region_from_signed_region_id(cloud):
    from deployer.cloud.connection import CloudConnection, Endpoints, StaticKeys

    def connection(region: str) -> CloudConnection:
        return CloudConnection(region=region, endpoints=Endpoints.single(cloud.endpoint),
                               credential=StaticKeys(cloud.access_key_id,
                                                     cloud.access_key_secret),
                               headers={"x-deployer-region": region})

    definition = ("Type: StateMachine\nSpecVersion: v1\nName: regional\nStartAt: p\nStates:\n"
                  "  - Type: Pass\n    Name: p\n    End: true\n")
    connection("cn-shanghai").fnf.create_flow(fnf_models.CreateFlowRequest(
        name="regional", type="FDL", description="", definition=definition))
    describe = fnf_models.DescribeFlowRequest(name="regional")
    assert connection("cn-shanghai").fnf.describe_flow(describe).body.name == "regional"
    assert _error(lambda: connection("cn-hangzhou").fnf.describe_flow(describe)).code == \
        "FlowNotExists"
