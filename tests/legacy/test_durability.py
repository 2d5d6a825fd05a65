"""Legacy executions are as durable as any: the daemon is SIGKILLed twice while legacy polling
executions run (their frames, $local included, live in the committed execution state); after
each restart they resume and end exactly once, as if nothing happened."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from alibabacloud_fnf20190315 import models as fnf

from tests.emulator.cloudflow_support import create, deploy_seed_functions, history
from tests.emulator.test_cloudflow_durability import TERMINAL, Daemon, _free_port
from tests.legacy.corpus import flow_text


class PatientDaemon(Daemon):
    """The durability test's daemon, waiting for it however long a loaded machine makes its
    start take (a slow health answer is waited for, not an error)."""

    def start(self) -> None:
        self.port = _free_port()
        with open(self.state_dir / "daemon.log", "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "deployer.emulator", "--state-dir", str(self.state_dir),
                 "--port", str(self.port), "--clock", self.clock],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True)
        for _ in range(600):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/_emulator/health",
                                            timeout=5):
                    return
            except (urllib.error.URLError, OSError):
                try:
                    self.proc.wait(timeout=0.1)  # doubles as the pause between attempts
                except subprocess.TimeoutExpired:
                    continue
                raise AssertionError((self.state_dir / "daemon.log").read_text()[-2000:]) from None
        raise AssertionError("the daemon did not answer")


@pytest.mark.slow
def test_legacy_executions_survive_sigkill(tmp_path: Path) -> None:
    daemon = PatientDaemon(tmp_path)
    daemon.start()
    try:
        cloud = daemon.cloud()
        deploy_seed_functions(cloud)
        client = cloud.fnf_client()
        create(client, "Poll", flow_text("poll_job", account_id=cloud.account_id,
                                         wait_seconds=1))
        # delay -1: the job is done at the first poll; 1000: never, four polls then timeout
        expected = {f"e{i}": ("Succeeded" if i % 2 else "Failed") for i in range(6)}
        for name, status in expected.items():
            client.start_execution(fnf.StartExecutionRequest(
                flow_name="Poll", execution_name=name,
                input=json.dumps({"delay": -1 if status == "Succeeded" else 1000})))
        for threshold in (40, 120):
            for _ in range(60):
                if sum(len(history(client, "Poll", n)) for n in expected) >= threshold:
                    break
                client.describe_execution(fnf.DescribeExecutionRequest(  # ~1 s
                    flow_name="Poll", execution_name="e0", wait_time_seconds=1))
            daemon.kill()
            daemon.start()
            client = daemon.cloud().fnf_client()
        for name, status in expected.items():
            final = client.describe_execution(fnf.DescribeExecutionRequest(
                flow_name="Poll", execution_name=name, wait_time_seconds=30)).body
            assert final.status == status, name
            events = history(client, "Poll", name)
            assert [e.event_id for e in events] == list(range(1, len(events) + 1))
            assert sum(e.type in TERMINAL for e in events) == 1, name
            if status == "Succeeded":
                output = json.loads(final.output)
                assert (output["job_status"], output["try_count"]) == ("success", 1)
            else:
                assert json.loads(events[-1].event_detail)["Error"] == "timeout"
                assert sum(e.type == "StepExited" and e.step_name == "GetJobStatus"
                           for e in events) == 4
    finally:
        daemon.stop()
