"""`deploy logs` from Log Service (official SLS SDK) on both targets, and `--follow`.

The emulator serves GetLogs for its own functions' logstores; `--target aliyun` inside
mock_cloud() reaches it through the real endpoint `<project>.<region>.log.aliyuncs.com`, the
local target through the daemon's loopback endpoint.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading

import pytest

from deployer.emulator import daemon
from deployer.testing import mock_cloud

LOG_CONFIG = "      logConfig:\n        project: job-poller-logs\n        logstore: fc-logs\n"


@pytest.fixture
def logged(project):
    """The project with GetJobStatus logging to job-poller-logs/fc-logs (StartJob does not)."""
    manifest = project / "s.yaml"
    text = manifest.read_text()
    at = text.index("  job_flow:")
    manifest.write_text(text[:at].rstrip("\n") + "\n" + LOG_CONFIG + "\n" + text[at:])
    return project


def test_logs_come_from_the_functions_logstore(deploy, logged):
    with mock_cloud():
        deploy.json("up")
        run = deploy.json("execute", "--delay", "20")
        doc = deploy.json("logs", "GetJobStatus", "--limit", "3")
        text = deploy("logs", "GetJobStatus", "--limit", "1")
        none = deploy("logs", "StartJob")
    assert run["status"] == "Succeeded"
    invocations = doc["invocations"]
    assert len(invocations) == 3
    times = [i["invoked_at"] for i in invocations]
    assert times == sorted(times, reverse=True)  # newest first
    assert {i["status"] for i in invocations} == {"Succeeded"}
    assert all(i["invocation_type"] == "Sync" and i["duration_ms"] is not None
               for i in invocations)
    assert "try_count 4" in invocations[0]["log"] and "try_count 2" in invocations[2]["log"]
    assert invocations[0]["log"].startswith("FC Invoke Start RequestId: "
                                            + invocations[0]["request_id"])
    assert f"{invocations[0]['request_id']} Sync Succeeded" in text.stdout
    assert "try_count 4" in text.stdout and "try_count 3" not in text.stdout
    assert none.exit_code == 4 and "function StartJob has no logConfig" in none.stderr


def _sls(cloud, **overrides):
    from alibabacloud_sls20201230.client import Client

    return Client(cloud.config(endpoint="cn-hangzhou.log.aliyuncs.com", protocol="https",
                               **overrides))


def _get_logs(client, project="job-poller-logs", logstore="fc-logs", **fields):
    from alibabacloud_sls20201230 import models

    fields.setdefault("from_", 0)
    fields.setdefault("to", 4_000_000_000)
    return client.get_logs(project, logstore, models.GetLogsRequest(**fields)).body


def _error(fn):
    from Tea.exceptions import TeaException

    with pytest.raises(TeaException) as caught:
        fn()
    return caught.value


def test_the_emulated_getlogs_through_the_official_sdk(deploy, logged):
    from alibabacloud_fc20230330 import models as fc_models
    from alibabacloud_sls20201230 import models

    with mock_cloud() as cloud:
        deploy.json("up")
        fc = cloud.fc_client()
        for n in range(3):
            cloud.advance(10)
            fc.invoke_function("GetJobStatus", fc_models.InvokeFunctionRequest(
                body=json.dumps({"job_id": f"j{n}", "delay": 0}).encode()))
        client = _sls(cloud)
        everything = _get_logs(client)
        metrics = _get_logs(client, query="operation: InvokeFunction")
        newest = _get_logs(client, query="functionName: GetJobStatus and j2", reverse=True,
                           line=1)
        page = _get_logs(client, query="operation: InvokeFunction", offset=1, line=1)
        now = int(cloud.now())
        window = _get_logs(client, from_=now - 10, to=now, query="operation: InvokeFunction")
        v2 = client.get_logs_v2with_options(
            "job-poller-logs", "fc-logs",
            models.GetLogsV2Request(from_=0, to=4_000_000_000, query="operation: *"),
            models.GetLogsV2Headers(accept_encoding="gzip"),
            __import__("darabonba.runtime", fromlist=["RuntimeOptions"]).RuntimeOptions()).body
        no_project = _error(lambda: _get_logs(client, project="nope-logs"))
        no_store = _error(lambda: _get_logs(client, logstore="other"))
        bad_range = _error(lambda: _get_logs(client, from_=100, to=100))
        bad_query = _error(lambda: _get_logs(client, query="* | select count(*)"))
        forged = _error(lambda: _get_logs(_sls(cloud, access_key_secret="wrong-secret")))
    assert everything.meta.progress == "Complete" and everything.meta.count == len(
        everything.data)
    assert {e["requestId"] for e in everything.data} == {e["requestId"] for e in metrics.data}
    assert all(e["functionName"] == "GetJobStatus" and e["__time__"].isdigit()
               for e in everything.data)
    assert [e["hasFunctionError"] for e in metrics.data] == ["false"] * 3
    times = [int(e["__time__"]) for e in metrics.data]
    assert times == sorted(times) and len(set(times)) == 3  # oldest first, one per invocation
    assert len(newest.data) == 1 and "j2" in newest.data[0]["message"]
    assert page.data == [metrics.data[1]]
    assert times[-2:] == [now - 10, now]
    assert [int(e["__time__"]) for e in window.data] == [now - 10]  # [from, to)
    assert len(v2.data) == 3 and v2.meta.count == 3  # GetLogsV2, gzip-compressed answer
    assert (no_project.code, no_store.code) == ("ProjectNotExist", "LogStoreNotExist")
    assert (bad_range.code, bad_query.code) == ("ParameterInvalid", "ParameterInvalid")
    assert "analytic statement" in bad_query.message
    assert forged.code == "SignatureNotMatch"


def test_follow_streams_new_invocations_until_the_function_is_gone(deploy, logged,
                                                                   monkeypatch):
    """`--follow` on `--target aliyun`: the wait between polls is where the test acts (first
    it invokes the function, then deletes it), so nothing depends on timing."""
    from alibabacloud_fc20230330 import models as fc_models

    with mock_cloud() as cloud:
        deploy.json("up")
        fc = cloud.fc_client()
        fc.invoke_function("GetJobStatus", fc_models.InvokeFunctionRequest(
            body=b'{"job_id": "before", "delay": 0}'))
        steps = iter([
            lambda: fc.invoke_function("GetJobStatus", fc_models.InvokeFunctionRequest(
                body=b'{"job_id": "during", "delay": 0}')),
            lambda: None,  # a poll that finds nothing new
            lambda: fc.delete_function("GetJobStatus"),
        ])
        waits = []

        def between_polls(seconds):
            waits.append(seconds)
            next(steps)()

        monkeypatch.setattr("deployer.core.functions._sleep", between_polls)
        text = deploy("logs", "GetJobStatus", "--limit", "1", "--follow")
    assert waits == [1.0, 1.0, 1.0]
    assert text.exit_code == 4 and "function GetJobStatus does not exist" in text.stderr
    before, _, after = text.stdout.partition("Waiting for new invocations (Ctrl-C stops).")
    assert "Job before" in before and "during" not in before
    assert "Job during" in after and "before" not in after
    assert after.count("FC Invoke Start") == 1  # each line once


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
@pytest.mark.parametrize("function", ["GetJobStatus", "StartJob"])
def test_follow_on_the_local_target_streams_as_it_happens(deploy, logged, monkeypatch,
                                                          function):
    """A real `deploy logs --follow` process against the background emulator: both functions
    (GetJobStatus with a logConfig, StartJob without) are followed on the emulator's log
    stream (its invocation records, pushed as they are recorded; test_logs_stream.py)."""
    monkeypatch.setenv("DEPLOY_EMULATOR_PORT", str(_free_port()))
    state_dir = logged / ".deploy" / "emulator"
    try:
        assert deploy("up", target="local").exit_code == 0
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen(
            [sys.executable, "-c", "from deployer.cli.main import main; main()", "-C",
             str(logged), "logs", function, "--follow", "--output", "json", "--target",
             "local"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        try:
            assert proc.stderr is not None and proc.stdout is not None
            ready = threading.Event()
            errors: list[str] = []

            def watch_stderr():
                for line in proc.stderr:
                    errors.append(line)
                    if line.startswith("Target: local"):
                        ready.set()

            reader = threading.Thread(target=watch_stderr, daemon=True)
            reader.start()
            assert ready.wait(60), errors
            event = '{"job_id": "followed", "delay": 0}'
            invoked = deploy.json("invoke", function, "--event", event, target="local")
            line = ""
            for line in proc.stdout:  # blocks until the invocation is streamed
                if invoked["request_id"] in line:
                    break
            entry = json.loads(line)
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
            reader.join(timeout=30)  # stderr is at its end once the process has exited
        finally:
            if proc.poll() is None:
                proc.kill()
        assert entry["request_id"] == invoked["request_id"] and entry["status"] == "Succeeded"
        assert ("Job followed" if function == "GetJobStatus" else "Started job with ID") in \
            entry["log"]
        assert proc.returncode == 130
        assert any(f"Stopped following the logs of {function}." in e for e in errors)
    finally:
        daemon.stop(state_dir)


ROLE_KEYS = """
import os
def handler(event, context):
    return "\\n".join(os.environ[k] for k in ("ALIBABA_CLOUD_ACCESS_KEY_ID",
                      "ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ALIBABA_CLOUD_SECURITY_TOKEN"))
"""


def _role_session(cloud, role: str, *policies: str) -> dict[str, str]:
    """Keys of a session of a new role with the given system policies (the keys FC gives a
    function running with that role), as the credential chain reads them from the env."""
    import base64
    import io
    import zipfile

    from alibabacloud_fc20230330 import models as fc_models
    from alibabacloud_ram20150501 import models as ram_models

    ram = cloud.ram_client()
    trust = {"Version": "1", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                            "Principal": {"Service": ["fc.aliyuncs.com"]}}]}
    ram.create_role(ram_models.CreateRoleRequest(role_name=role,
                                                 assume_role_policy_document=json.dumps(trust)))
    for policy in policies:
        ram.attach_policy_to_role(ram_models.AttachPolicyToRoleRequest(
            role_name=role, policy_type="System", policy_name=policy))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("index.py", ROLE_KEYS)
    fc = cloud.fc_client()
    fc.create_function(fc_models.CreateFunctionRequest(body=fc_models.CreateFunctionInput(
        function_name=f"keys-{role}", runtime="python3.10", handler="index.handler",
        role=f"acs:ram::{cloud.account_id}:role/{role}",
        code=fc_models.InputCodeLocation(zip_file=base64.b64encode(buffer.getvalue()).decode()))))
    body = fc.invoke_function(f"keys-{role}", fc_models.InvokeFunctionRequest()).body.read()
    key_id, secret, token = body.decode().split("\n")
    return {"ALIBABA_CLOUD_ACCESS_KEY_ID": key_id, "ALIBABA_CLOUD_ACCESS_KEY_SECRET": secret,
            "ALIBABA_CLOUD_SECURITY_TOKEN": token}


def _as(keys: dict[str, str]):
    """The CLI's default credential chain answering with ``keys`` (a role session)."""
    from contextlib import ExitStack
    from unittest import mock

    from alibabacloud_credentials.utils import auth_util

    stack = ExitStack()
    stack.enter_context(mock.patch.dict(os.environ, keys))
    for attr, name in (("environment_access_key_id", "ALIBABA_CLOUD_ACCESS_KEY_ID"),
                       ("environment_access_key_secret", "ALIBABA_CLOUD_ACCESS_KEY_SECRET"),
                       ("environment_security_token", "ALIBABA_CLOUD_SECURITY_TOKEN")):
        stack.enter_context(mock.patch.object(auth_util, attr, keys[name]))
    return stack


def test_logs_of_a_role_session_need_log_get_logstore_logs(deploy, logged):
    from alibabacloud_fc20230330 import models as fc_models

    with mock_cloud() as cloud:
        deploy.json("up")
        cloud.fc_client().invoke_function("GetJobStatus", fc_models.InvokeFunctionRequest(
            body=b'{"job_id": "j1", "delay": 0}'))
        reader = _role_session(cloud, "log-reader", "AliyunFCReadOnlyAccess",
                               "AliyunLogReadOnlyAccess")
        outsider = _role_session(cloud, "outsider", "AliyunFCReadOnlyAccess")
        with _as(reader):
            allowed = deploy.json("logs", "GetJobStatus", "--limit", "1")
        with _as(outsider):
            denied = deploy("logs", "GetJobStatus", "--limit", "1")
    assert [i["status"] for i in allowed["invocations"]] == ["Succeeded"]
    assert denied.exit_code == 1, denied.stderr
    assert ("denied by sts or ram, action: log:GetLogStoreLogs, resource: acs:log:cn-hangzhou:"
            f"{cloud.account_id}:project/job-poller-logs/logstore/fc-logs") in denied.stderr
