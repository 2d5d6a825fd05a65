"""Numbers written in other scripts' digits ('²', '١', '５'): Python's ``str.isdigit`` says yes
and ``int`` then fails (or reads another number). Every surface answers its usual 4xx or
diagnostic instead of a 500, and the flow checker keeps its promise never to raise."""

from __future__ import annotations

import json

import pytest
from alibabacloud_fnf20190315 import models as fnf
from alibabacloud_tea_openapi import models as open_api
from alibabacloud_tea_util import models as util
from Tea.exceptions import TeaException

from deployer.fdl import check_flow
from tests.emulator.cloudflow_support import create, pass_flow
from tests.emulator.test_http_raw import _call, _signed

DIGIT = "\u00b2"
TASK = ("Type: StateMachine\nSpecVersion: v1\nName: f\n{flow}StartAt: t\nStates:\n"
        "  - Type: Task\n    Name: t\n    Action: FC:InvokeFunction\n{task}"
        "    Parameters:\n      resourceArn: acs:fc:cn-hangzhou:1:functions/x\n"
        "      invocationType: Sync\n    End: true\n")


@pytest.mark.parametrize("definition", [
    TASK.format(flow="", task=f"    Timeout: '{DIGIT}'\n"),
    TASK.format(flow=f"Timeout: '{DIGIT}'\n", task=""),
])
def test_a_timeout_in_other_digits_is_a_diagnostic(cloud, definition) -> None:
    checked = check_flow(definition)
    assert [d.code for d in checked.errors] == ["FDL102"]
    with pytest.raises(TeaException) as info:
        create(cloud.fnf_client(), "f", definition)
    assert (info.value.status_code, info.value.code) == (400, "InvalidArgument")


@pytest.mark.parametrize("path", ["/2023-03-30/functions?limit=%C2%B2",
                                  "/2023-03-30/functions/f/versions?limit=%C2%B2",
                                  "/2023-03-30/functions/f/aliases?limit=%D9%A1"])
def test_fc_limits_in_other_digits(cloud, zip_b64, path) -> None:
    body = json.dumps({"functionName": "f", "runtime": "python3.10", "handler": "index.handler",
                       "code": {"zipFile": zip_b64}}).encode()
    target = "/2023-03-30/functions"
    assert _call(cloud, "POST", target, body, _signed(cloud, "POST", target, body))[0].status \
        == 200
    resp, data = _call(cloud, "GET", path, b"", _signed(cloud, "GET", path))
    assert resp.status == 400 and json.loads(data)["Code"] == "InvalidArgument"


def _rpc(client, action: str, version: str, **query: str) -> TeaException:
    params = open_api.Params(action=action, version=version, protocol="HTTP", method="POST",
                             auth_type="AK", style="RPC", pathname="/",
                             req_body_type="formData", body_type="json")
    with pytest.raises(TeaException) as info:
        client.call_api(params, open_api.OpenApiRequest(query=query), util.RuntimeOptions())
    assert info.value.status_code < 500, info.value
    return info.value


def test_rpc_numbers_in_other_digits(cloud) -> None:
    _rpc(cloud.sts_client(), "AssumeRole", "2015-04-01", RoleSessionName="s",
         RoleArn=f"acs:ram::{cloud.account_id}:role/r", DurationSeconds=DIGIT)
    _rpc(cloud.ram_client(), "CreateRole", "2015-05-01", RoleName="r",
         AssumeRolePolicyDocument=json.dumps({"Version": "1", "Statement": [{
             "Action": "sts:AssumeRole", "Effect": "Allow",
             "Principal": {"Service": ["fc.aliyuncs.com"]}}]}),
         MaxSessionDuration=DIGIT)
    flows = cloud.fnf_client()
    create(flows, "f", pass_flow("f"))
    got = _rpc(flows, "CreateSchedule", "2019-03-15", FlowName="f", ScheduleName="s",
               CronExpression=f"{DIGIT} * * * * *")
    assert got.code == "InvalidArgument"
    with pytest.raises(TeaException):
        flows.describe_schedule(fnf.DescribeScheduleRequest(flow_name="f", schedule_name="s"))


def test_admin_log_limit_in_other_digits(cloud) -> None:
    resp, data = _call(cloud, "GET", "/_emulator/logs?function=f&limit=%C2%B2",
                       headers={"X-Emulator-Token": cloud.admin_token})
    assert resp.status == 400, data


@pytest.mark.parametrize("limit", ["1_0", "\uff19", " 5", "5 ", "+5", "0x10"])
def test_cloudflow_integers_are_plain_decimals(cloud, limit) -> None:
    got = _rpc(cloud.fnf_client(), "ListFlows", "2019-03-15", Limit=limit)
    assert got.code == "InvalidArgument" and "Limit" in got.message
