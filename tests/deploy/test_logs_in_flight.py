"""`deploy logs --follow` and invocations still running when it reads: a Log Service entry
carries the second its invocation began but is written when it ends (a cold start, a slow
handler), so it can turn up behind entries already read. Following re-reads that window
(the function's timeout and a margin) and streams such an entry once."""

from __future__ import annotations

import time

from alibabacloud_fc20230330 import models as fc_models

from deployer.emulator.clock import VirtualClock
from deployer.testing import mock_cloud

LOG_CONFIG = "      logConfig:\n        project: job-poller-logs\n        logstore: fc-logs\n"


def test_an_entry_older_than_what_was_read_is_still_streamed_once(deploy, project,
                                                                   monkeypatch):
    manifest = project / "s.yaml"
    text = manifest.read_text()
    at = text.index("  job_flow:")
    manifest.write_text(text[:at].rstrip("\n") + "\n" + LOG_CONFIG + "\n" + text[at:])
    # the emulator's time is 40 s behind this machine's: every entry it writes is older than
    # the second `--follow` starts from (as an invocation that began before it started)
    with mock_cloud(clock=VirtualClock(start=time.time() - 40)) as cloud:
        deploy.json("up")
        fc = cloud.fc_client()
        steps = iter([
            lambda: fc.invoke_function("GetJobStatus", fc_models.InvokeFunctionRequest(
                body=b'{"job_id": "late", "delay": 0}')),
            lambda: None,  # the next poll reads the same window again
            lambda: fc.delete_function("GetJobStatus"),
        ])
        monkeypatch.setattr("deployer.core.functions._sleep", lambda seconds: next(steps)())
        result = deploy("logs", "GetJobStatus", "--follow")
    assert result.exit_code == 4, result.stderr  # until the function was deleted
    waiting, _, streamed = result.stdout.partition("(Ctrl-C stops).")
    assert "No invocations of GetJobStatus yet" in waiting
    assert streamed.count("Job late, status") == 1
    assert streamed.count("FC Invoke Start") == 1
