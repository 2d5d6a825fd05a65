"""The app end to end on an in-process emulator: `mock_cloud()` deploys s.yaml's function, role
and flow as `deploy up` does and runs an execution on a virtual clock. Nothing here leaves the
machine. Run: pytest -q
"""

import importlib.util
import json
from pathlib import Path

import pytest
from alibabacloud_fnf20190315 import models

from deployer.testing import invoke_handler, mock_cloud

PROJECT = Path(__file__).resolve().parents[1]
FLOW = "__PROJECT_NAME__-flow"


@pytest.fixture
def cloud():
    with mock_cloud() as cloud:
        cloud.deploy_project(PROJECT)
        yield cloud


def test_the_flow_returns_the_greeting(cloud):
    request = models.StartExecutionRequest(flow_name=FLOW, execution_name="greet-1",
                                           input=json.dumps({"name": "CloudFlow"}))
    cloud.fnf_client().start_execution(request)
    result = cloud.wait_for_execution(FLOW, "greet-1")
    assert result["Status"] == "Succeeded"
    assert json.loads(result["Output"]) == {"greeting": "Hello, CloudFlow!"}


def test_the_handler_defaults_to_world():
    path = PROJECT / "functions" / "hello" / "index.py"
    spec = importlib.util.spec_from_file_location("hello_index", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert invoke_handler(module.handler, {}) == {"greeting": "Hello, world!"}
