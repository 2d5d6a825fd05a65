"""examples/order-pipeline: a multi-resource project with ${resources...}, ${yaml(file())},
extend, actions, role: auto and logConfig: auto, deployed and run on the emulator."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from deployer.cli.main import cli
from deployer.testing import mock_cloud

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "order-pipeline"


def deploy(project: Path, *args: str) -> dict:
    result = CliRunner().invoke(cli, ["-C", str(project), *args, "--output", "json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def test_the_order_pipeline_deploys_in_dependency_order_and_runs(tmp_path: Path) -> None:
    project = tmp_path / "order-pipeline"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".deploy", "prices.json"))
    with mock_cloud() as cloud:
        up = deploy(project, "up", "--yes")
        run = deploy(project, "execute")
        logs = deploy(project, "logs", "order-pipeline-price")
        down = deploy(project, "down", "--yes")
    order = [(r["type"], r["name"]) for r in up["resources"]]
    assert order == [("service-role", "aliyunfcdefaultrole"),
                     ("logstore", order[1][1]),
                     ("function", "order-pipeline-validate"),
                     ("function", "order-pipeline-price"),
                     ("role", "order-pipeline-flow-role"),
                     ("policy", "order-pipeline-flow-role-invoke"),
                     ("flow", "order-pipeline")]
    assert up["next"] == ["deploy execute --input '{\"order\": \"A-1\", \"items\": [{\"sku\": "
                          "\"tea\", \"qty\": 2, \"price\": 10}, {\"sku\": \"cup\", \"qty\": 1, "
                          "\"price\": 25}]}'"]
    assert (project / "functions" / "price" / "prices.json").exists()  # the pre-deploy action
    arn = f"acs:fc:cn-hangzhou:{cloud.account_id}:functions/order-pipeline-validate"
    assert run["status"] == "Succeeded"
    assert run["output"] == {"order": "A-1", "net": 45, "gross": 50.85, "currency": "CNY",
                             "validated_by": arn}
    assert logs["invocations"]  # logConfig from validate's output: the auto logstore
    assert {r["outcome"] for r in down["resources"]} == {"deleted"}
