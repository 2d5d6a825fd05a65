"""End to end: real zips run by the process runtime, through the official SDK."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from pathlib import Path

from alibabacloud_fc20230330 import models as fc
from darabonba.runtime import RuntimeOptions

from deployer.testing import mock_cloud

START_JOB = Path(__file__).resolve().parents[2] / "functions" / "start_job" / "index.py"


def _zip(files: dict[str, str]) -> str:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return base64.b64encode(buf.getvalue()).decode()


def _create(client, name: str, zip_b64: str) -> None:
    client.create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name=name, runtime="python3.10", handler="index.handler", timeout=10,
        code=fc.InputCodeLocation(zip_file=zip_b64))))


def test_start_job_runs_with_tail_logs_and_errors(tmp_path: Path) -> None:
    with mock_cloud(state_dir=tmp_path) as cloud:
        client = cloud.fc_client()
        _create(client, "StartJob", _zip({"index.py": START_JOB.read_text()}))
        resp = client.invoke_function_with_options(
            "StartJob", fc.InvokeFunctionRequest(body=b"{}"),
            fc.InvokeFunctionHeaders(x_fc_log_type="Tail"), RuntimeOptions())
        job_id = json.loads(resp.body.read())["job_id"]
        log = base64.b64decode(resp.headers["x-fc-log-result"]).decode()
        assert f"Started job with ID {job_id}" in log
        assert resp.headers["x-fc-request-id"] in log and "x-fc-error-type" not in resp.headers
        assert cloud.invocations("StartJob")[0].status == "Succeeded"

        broken = "def handler(e, c):\n    raise ValueError('bad')\n"
        _create(client, "Broken", _zip({"index.py": broken}))
        failed = client.invoke_function("Broken", fc.InvokeFunctionRequest(body=b""))
        assert failed.status_code == 200
        assert failed.headers["x-fc-error-type"] == "UnhandledInvocationError"
        assert json.loads(failed.body.read())["errorType"] == "ValueError"

        accepted = client.invoke_function_with_options(
            "StartJob", fc.InvokeFunctionRequest(body=b"{}"),
            fc.InvokeFunctionHeaders(x_fc_invocation_type="Async"), RuntimeOptions())
        assert accepted.status_code == 202
        cloud.wait_for_async_invocations()
        records = cloud.invocations("StartJob")
        assert [r.invocation_type for r in records][:1] == ["Async"]
        assert records[0].status == "Succeeded"
