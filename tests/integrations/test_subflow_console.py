"""The console links a parent execution and its sub-flow both ways: the parent's Task shows
the child (a link and its status, on the panel and on the graph node), the child's page names
its parent. Checked on the view-models the pages are rendered from, and on the page HTML."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from alibabacloud_fnf20190315 import models as fnf_models

from deployer.testing import mock_cloud

CHILD = ("Type: StateMachine\nSpecVersion: v1\nName: kid\nStartAt: p\nStates:\n"
         "  - Type: Pass\n    Name: p\n    End: true\n")
PARENT = ("Type: StateMachine\nSpecVersion: v1\nName: mum\nStartAt: Call\nStates:\n"
          "  - Type: Task\n    Name: Call\n    Action: FNF:StartExecution\n"
          "    TaskMode: WaitForSystemCallback\n    Parameters:\n"
          "      resourceArn: acs:fnf:::flow/kid\n      executionName: kid-1\n"
          "    End: true\n")


def _get(url: str, token: str = "") -> Any:
    request = urllib.request.Request(url, headers={"X-Emulator-Token": token} if token else {})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read().decode()


def test_the_console_links_parent_and_child() -> None:
    with mock_cloud(console=True) as cloud:
        fnf = cloud.fnf_client()
        for name, text in (("kid", CHILD), ("mum", PARENT)):
            fnf.create_flow(fnf_models.CreateFlowRequest(name=name, definition=text,
                                                         description="", type="FDL"))
        fnf.start_execution(fnf_models.StartExecutionRequest(flow_name="mum",
                                                             execution_name="m1"))
        assert cloud.wait_for_execution("mum", "m1")["Status"] == "Succeeded"
        base = f"{cloud.url}/_console/api/r/{cloud.region}/flows"
        parent = json.loads(_get(f"{base}/mum/executions/m1?state=Call", cloud.admin_token))
        child = json.loads(_get(f"{base}/kid/executions/kid-1", cloud.admin_token))
        page = _get(f"{cloud.url}/_console/r/{cloud.region}/flows/mum/executions/m1?state=Call")
    link = parent["panel"]["attempts"][0]["children"][0]
    assert (link["flow"], link["name"], link["status"]) == ("kid", "kid-1", "Succeeded")
    assert link["url"] == f"/_console/r/{cloud.region}/flows/kid/executions/kid-1"
    node = next(n for n in parent["graph"]["nodes"] if n["name"] == "Call")
    assert node["child"]["status"] == "Succeeded" and "child" in node["sub"]
    assert child["summary"]["parent"]["name"] == "m1"
    assert f'href="{link["url"]}"' in page


def test_deploy_execute_shows_the_child_and_its_status(project: Any) -> None:
    from click.testing import CliRunner

    from deployer.cli.main import cli

    with mock_cloud() as cloud:
        fnf = cloud.fnf_client()
        for name, text in (("kid", CHILD), ("mum", PARENT)):
            fnf.create_flow(fnf_models.CreateFlowRequest(name=name, definition=text,
                                                         description="", type="FDL"))
        result = CliRunner().invoke(cli, ["-C", str(project), "execute", "--flow", "mum",
                                          "--target", "aliyun"])
    assert result.exit_code == 0, result.stderr
    line = next(x for x in result.stdout.splitlines() if "Call" in x and "Succeeded" in x)
    assert "[sub-flow kid/kid-1: Succeeded]" in line
