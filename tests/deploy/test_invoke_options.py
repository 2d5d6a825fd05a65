"""`deploy invoke` --event-template, --qualifier and --async through the CLI, answered by the
emulator's wire (the cloud target's code path inside mock_cloud())."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from deployer.cli.main import cli
from deployer.testing import mock_cloud

ECHO = ("import json\ndef handler(event, context):\n"
        "    return {'v': VERSION, 'event': json.loads(event or b'null')}\n")


def _zip(version: int) -> str:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("index.py", ECHO.replace("VERSION", str(version)))
    return base64.b64encode(buffer.getvalue()).decode()


def _create(cloud: Any) -> None:
    from alibabacloud_fc20230330 import models

    fc = cloud.fc_client()
    fc.create_function(models.CreateFunctionRequest(body=models.CreateFunctionInput(
        function_name="echo", runtime="python3.10", handler="index.handler",
        code=models.InputCodeLocation(zip_file=_zip(1)))))
    fc.publish_function_version("echo", models.PublishFunctionVersionRequest(
        body=models.PublishVersionInput(description="one")))
    fc.update_function("echo", models.UpdateFunctionRequest(body=models.UpdateFunctionInput(
        code=models.InputCodeLocation(zip_file=_zip(2)))))


def _invoke(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(root), "invoke", "echo", *args, "--target",
                                    "aliyun", "--region", "cn-hangzhou", "--output", "json"],
                              catch_exceptions=False)


def test_event_templates_qualifiers_and_async_tasks(tmp_path: Path) -> None:
    with mock_cloud() as cloud:
        _create(cloud)
        oss = _invoke(tmp_path, "--event-template", "oss:ObjectCreated:PutObject")
        old = _invoke(tmp_path, "--qualifier", "1", "--event", '{"n": 1}')
        latest = _invoke(tmp_path, "--event", '{"n": 2}')
        queued = _invoke(tmp_path, "--async", "--event", '{"n": 3}')
        cloud.wait_for_async_invocations()
        records = cloud.invocations("echo")
        shown = _invoke(tmp_path, "--task", json.loads(queued.stdout)["task_id"])
        unknown = _invoke(tmp_path, "--event-template", "s3:Put")
        both = _invoke(tmp_path, "--event", "{}", "--event-template", "timer")
    assert oss.exit_code == 0, oss.stderr
    (record,) = json.loads(oss.stdout)["response"]["event"]["events"]
    assert record["eventName"] == "ObjectCreated:PutObject"
    assert record["oss"]["bucket"]["arn"] == f"acs:oss:cn-hangzhou:{cloud.account_id}:my-bucket"
    assert json.loads(old.stdout)["response"] == {"v": 1, "event": {"n": 1}}
    assert json.loads(latest.stdout)["response"] == {"v": 2, "event": {"n": 2}}
    task = json.loads(queued.stdout)
    assert queued.exit_code == 0 and task["task_id"].startswith("task-")
    assert any(r.invocation_type == "Async" and r.request_id == task["request_id"]
               for r in records)
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout)["task"]["status"] == "Succeeded", shown.stdout
    assert unknown.exit_code == 3 and "unknown event template 's3:Put'" in unknown.stderr
    assert both.exit_code == 2 and "not both" in both.stderr
