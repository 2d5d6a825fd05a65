"""Shared helpers of the CloudFlow emulator tests."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import jinja2
from alibabacloud_fnf20190315 import models as fnf

REPO = Path(__file__).resolve().parents[2]


def pass_flow(name: str, *, extra: str = "") -> str:
    """A one-Pass-state flow named ``name``."""
    return (f"Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: p1\n{extra}"
            "States:\n  - Type: Pass\n    Name: p1\n    End: true\n")


def wait_flow(name: str, seconds: int = 100) -> str:
    return (f"Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: w\nStates:\n"
            f"  - Type: Wait\n    Name: w\n    Seconds: {seconds}\n    Next: done\n"
            "  - Type: Pass\n    Name: done\n    End: true\n")


def seed_flow(*, account: str, name: str = "MyWorkFlow", wait: int = 10, max_polls: int = 3,
              region: str = "cn-hangzhou") -> str:
    """The seed's polling flow: templates/flow.yaml.j2 rendered."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    template = env.from_string((REPO / "templates" / "flow.yaml.j2").read_text())
    return template.render(region=region, account_id=account, flow_name=name,
                           start_job_function="StartJob",
                           get_job_status_function="GetJobStatus", wait_seconds=wait,
                           max_polls=max_polls)


def create(client: Any, name: str, definition: str, **kw: Any) -> Any:
    return client.create_flow(fnf.CreateFlowRequest(
        name=name, definition=definition, description=kw.pop("description", ""),
        type="FDL", **kw)).body


def function_zip(directory: Path) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for path in sorted(directory.rglob("*.py")):
            zf.write(path, path.relative_to(directory).as_posix())
    return buf.getvalue()


def deploy_seed_functions(cloud: Any) -> None:
    """Create StartJob and GetJobStatus from /functions through the FC SDK."""
    import base64

    from alibabacloud_fc20230330 import models as fc

    client = cloud.fc_client()
    for name, folder in (("StartJob", "start_job"), ("GetJobStatus", "get_job_status")):
        code = base64.b64encode(function_zip(REPO / "functions" / folder)).decode()
        client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
            function_name=name, runtime="python3.10", handler="index.handler", timeout=30,
            code=fc.InputCodeLocation(zip_file=code))))


def history(client: Any, flow: str, name: str) -> list[Any]:
    """Every history event of an execution, following NextToken."""
    events: list[Any] = []
    token = None
    while True:
        body = client.get_execution_history(fnf.GetExecutionHistoryRequest(
            flow_name=flow, execution_name=name, limit=100, next_token=token)).body
        events += body.events
        token = body.next_token
        if not token:
            return events


def start(client: Any, flow: str, name: str, input: str = "{}") -> Any:
    return client.start_execution(fnf.StartExecutionRequest(
        flow_name=flow, execution_name=name, input=input)).body


def run_seed(delay: int, **mock_options: Any) -> tuple[dict, list[Any], dict]:
    """The seed flow with ``{"delay": delay}`` on a fresh in-process emulator (``mock_cloud``
    with ``mock_options``), so GetJobStatus starts on a fresh instance: the final
    DescribeExecution (plus ``virtual_seconds`` it took), its history and the health document
    from before it ran."""
    import json

    from deployer.testing.environment import mock_cloud

    with mock_cloud(intercept=False, **mock_options) as cloud:
        health = cloud.health()
        deploy_seed_functions(cloud)
        client = cloud.fnf_client()
        create(client, "MyWorkFlow", seed_flow(account=cloud.account_id))
        started = cloud.now()
        start(client, "MyWorkFlow", "run", json.dumps({"delay": delay}))
        final = cloud.wait_for_execution("MyWorkFlow", "run", timeout=30)
        final["virtual_seconds"] = cloud.now() - started
        return final, history(client, "MyWorkFlow", "run"), health


def client_error(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """The ``ClientException`` that ``fn(*args, **kwargs)`` raises (fails the test otherwise)."""
    import pytest
    from alibabacloud_tea_openapi.exceptions import ClientException

    with pytest.raises(ClientException) as info:
        fn(*args, **kwargs)
    return info.value
