"""Function results that are JSON but not valid Unicode: a lone surrogate escape
(``"\\ud800"``) in a function's return value or error message. CloudFlow's JSON decoder (Go's)
reads it as U+FFFD; the execution ends as usual instead of failing to commit its step and
staying Running forever."""

from __future__ import annotations

import base64
import io
import json
import zipfile

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_fnf20190315 import models as fnf

from deployer.testing import mock_cloud
from tests.emulator.cloudflow_support import create

HANDLERS = {
    "returns": ("def handler(event, context):\n"
                "    return {'s': '\\ud800 lone', 'k': ['\\udfff']}\n", "Succeeded"),
    "raises": ("def handler(event, context):\n    raise ValueError('\\udcff bad')\n", "Failed"),
}


def _zip(source: str) -> str:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("index.py", source)
    return base64.b64encode(buf.getvalue()).decode()


@pytest.mark.parametrize("case", sorted(HANDLERS))
def test_a_lone_surrogate_in_a_function_result_ends_the_execution(case) -> None:
    source, status = HANDLERS[case]
    with mock_cloud(intercept=False) as cloud:
        cloud.fc_client().create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
            function_name="fn", runtime="python3.10", handler="index.handler",
            code=fc.InputCodeLocation(zip_file=_zip(source)))))
        flows = cloud.fnf_client()
        create(flows, "f", (
            "Type: StateMachine\nSpecVersion: v1\nName: f\nStartAt: t\nStates:\n"
            "  - Type: Task\n    Name: t\n    Action: FC:InvokeFunction\n    Parameters:\n"
            f"      resourceArn: acs:fc:{cloud.region}:{cloud.account_id}:functions/fn\n"
            "      invocationType: Sync\n    End: true\n"))
        flows.start_execution(fnf.StartExecutionRequest(flow_name="f", execution_name="e"))
        ended = cloud.wait_for_execution("f", "e", timeout=60)
        assert ended["Status"] == status
        events = flows.get_execution_history(fnf.GetExecutionHistoryRequest(
            flow_name="f", execution_name="e")).body.events
        text = flows.describe_execution(fnf.DescribeExecutionRequest(
            flow_name="f", execution_name="e")).body.output if status == "Succeeded" \
            else events[-1].event_detail
        assert "\ufffd" in text and not any("\ud800" <= ch <= "\udfff" for ch in text)
        if status == "Succeeded":
            assert json.loads(text)["Body"] == {"s": "\ufffd lone", "k": ["\ufffd"]}


@pytest.mark.parametrize("expression", ['stringToJson(`"\\ud800"`)',
                                        'stringToJson(`{"\\udc00": ["\\udfff"]}`)',
                                        'format("{}", fromJSON(`"a\\ud800b"`))'])
def test_a_lone_surrogate_decoded_by_an_expression_ends_the_execution(expression) -> None:
    with mock_cloud(intercept=False) as cloud:
        flows = cloud.fnf_client()
        create(flows, "f", "Type: StateMachine\nSpecVersion: v1\nName: f\nStartAt: a\n"
                           "States:\n  - Type: Pass\n    Name: a\n    OutputConstructor:\n"
                           f"      r.$: '{expression}'\n    End: true\n")
        flows.start_execution(fnf.StartExecutionRequest(flow_name="f", execution_name="e"))
        ended = cloud.wait_for_execution("f", "e", timeout=30)
        assert ended["Status"] == "Succeeded" and "\ufffd" in json.dumps(ended["Output"],
                                                                         ensure_ascii=False)
