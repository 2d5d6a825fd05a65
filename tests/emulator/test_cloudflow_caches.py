"""The engine's and FC service's in-memory caches never outlive what they mirror: a reset
forgets cached functions, an updated function is invoked with its new code, and DeleteFlow
takes the deleted executions' timers out of the engine."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable

import pytest
from alibabacloud_fc20230330 import models as fc
from alibabacloud_fnf20190315 import models as fnf
from alibabacloud_tea_openapi.exceptions import ClientException

from deployer.testing.environment import LocalCloud
from deployer.testing.runtimes import EchoRuntime
from tests.emulator.cloudflow_support import create, history, start, wait_flow

CALL = """Type: StateMachine
SpecVersion: v1
Name: call
StartAt: invoke
States:
  - Type: Task
    Name: invoke
    Action: FC:InvokeFunction
    TaskMode: RequestComplete
    Parameters:
      resourceArn: acs:fc:::functions/f
      invocationType: Sync
      body: hello
    End: true
"""


def _create_function(cloud: LocalCloud, code: bytes) -> str:
    body = cloud.fc_client().create_function(fc.CreateFunctionRequest(
        body=fc.CreateFunctionInput(function_name="f", runtime="python3.10",
                                    handler="index.handler",
                                    code=fc.InputCodeLocation(
                                        zip_file=base64.b64encode(code).decode())))).body
    return str(body.code_checksum)


def _run(cloud: LocalCloud, name: str) -> tuple[str, str]:
    """(status, error code) of a new execution of ``call``, read through the SDK."""
    client = cloud.fnf_client()
    start(client, "call", name)
    done = cloud.wait_for_execution("call", name)
    failed = [e for e in history(client, "call", name) if e.type == "ExecutionFailed"]
    return done["Status"], json.loads(failed[0].event_detail)["Error"] if failed else ""


def test_reset_forgets_cached_functions(cloud: LocalCloud,
                                        make_zip: Callable[..., bytes]) -> None:
    _create_function(cloud, make_zip())
    create(cloud.fnf_client(), "call", CALL)
    assert _run(cloud, "before") == ("Succeeded", "")

    cloud.reset()
    with pytest.raises(ClientException) as info:
        cloud.fc_client().get_function("f", fc.GetFunctionRequest())
    assert info.value.code == "FunctionNotFound"
    create(cloud.fnf_client(), "call", CALL)
    assert _run(cloud, "after") == ("Failed", "FC.FunctionNotFound")


def test_tasks_invoke_the_updated_function(cloud: LocalCloud, runtime: EchoRuntime,
                                           make_zip: Callable[..., bytes]) -> None:
    first = _create_function(cloud, make_zip())
    create(cloud.fnf_client(), "call", CALL)
    assert _run(cloud, "one") == ("Succeeded", "")
    assert runtime.invoked[-1][0].code_checksum == first

    new_zip = make_zip({"index.py": "def handler(e, c):\n    return 2\n"})
    updated = cloud.fc_client().update_function("f", fc.UpdateFunctionRequest(
        body=fc.UpdateFunctionInput(timeout=9, code=fc.InputCodeLocation(
            zip_file=base64.b64encode(new_zip).decode())))).body
    assert _run(cloud, "two") == ("Succeeded", "")
    spec = runtime.invoked[-1][0]
    assert (spec.code_checksum, spec.timeout) == (updated.code_checksum, 9)

    cloud.fc_client().delete_function("f")
    assert _run(cloud, "three") == ("Failed", "FC.FunctionNotFound")


def test_delete_flow_takes_its_timers_out_of_the_engine(cloud: LocalCloud) -> None:
    client = cloud.fnf_client()
    create(client, "w", wait_flow("w", seconds=100))
    with cloud.auto_advance_disabled():  # parked in its Wait until the flow is deleted
        start(client, "w", "parked")
        cloud.wait_for_engine_idle()  # its first step, which enters the Wait, follows the answer
        assert cloud.health()["cloudflow"]["pendingTimers"] == 2  # the Wait, the timeout
        client.delete_flow(fnf.DeleteFlowRequest(name="w"))
        assert cloud.health()["cloudflow"]["pendingTimers"] == 0

    create(client, "w", wait_flow("w", seconds=5))
    began = cloud.now()
    start(client, "w", "fresh")
    assert cloud.wait_for_execution("w", "fresh")["Status"] == "Succeeded"
    assert cloud.now() == began + 5  # no jump to the deleted execution's timer at +100
