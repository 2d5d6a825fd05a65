"""The app end to end on an in-process emulator: `mock_cloud()` deploys s.yaml's functions, role
and flow as `deploy up` does, and runs executions on a virtual clock (the 10 s Waits take no
time). Nothing here leaves the machine. Run: pytest -q
"""

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


def run(cloud, name, payload):
    request = models.StartExecutionRequest(flow_name=FLOW, execution_name=name,
                                           input=json.dumps(payload))
    cloud.fnf_client().start_execution(request)
    return cloud.wait_for_execution(FLOW, name)


def test_the_job_succeeds_when_it_finishes_within_the_polls(cloud):
    result = run(cloud, "finishes", {"delay": 20})
    assert result["Status"] == "Succeeded"
    output = json.loads(result["Output"])
    assert output["job_status"] == "success"
    assert output["try_count"] >= 1


def test_the_flow_gives_up_after_max_polls(cloud):
    result = run(cloud, "never-finishes", {"delay": 3600})
    assert result["Status"] == "Failed"


def test_start_job_returns_a_job_id():
    import importlib.util

    path = PROJECT / "functions" / "start_job" / "index.py"
    spec = importlib.util.spec_from_file_location("start_job_index", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert invoke_handler(module.handler, {})["job_id"]
