"""CloudFlow on the emulator, end to end (not a test): prints a table.

1. The seed flow (templates/flow.yaml.j2, Wait 10 s, real local functions in the process
   runtime, virtual clock) with 1, 100 and 1,000 concurrent executions started through the
   official SDK: executions/s and transitions/s (a transition = one StepEntered event); once
   with the emulator in this process (``mock_cloud``, client and server share one GIL) and once
   as users run it, a daemon in its own process (``deploy emulator start --clock virtual``).
2. RSS of this process with 10,000 executions parked in a 300 s Wait (started through the
   service layer, no HTTP, to keep the run short).
3. Resume after SIGKILL: a daemon (``python -m deployer.emulator``, real clock) holds 1,000
   executions whose 1 s Wait is overdue; it is SIGKILLed and restarted; time from the restart
   until all 1,000 have finished.
4. The same polling loop on moto's Step Functions (``execute_state_machine``), Pass states
   standing in for the two functions and Wait 0 (moto's Wait blocks for real seconds).
   Both sides run the same 6 transitions per execution: the job succeeds at the first poll
   (input {"delay": -1} here, a try_count >= 1 Choice there).

Targets: >= 10x moto's throughput; 10,000 parked <= 200 MB RSS; resume of 1,000 <= 2 s.
Run: python benchmarks/flows.py [--quick]
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from alibabacloud_fnf20190315 import models as fnf  # noqa: E402

from deployer.testing.environment import LocalCloud, mock_cloud  # noqa: E402
from tests.emulator.cloudflow_support import (  # noqa: E402
    create,
    deploy_seed_functions,
    seed_flow,
    wait_flow,
)


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _transitions(cloud: LocalCloud) -> int:
    with cloud.server.emulator.db.transaction() as conn:
        return int(conn.execute(
            "SELECT COUNT(*) FROM history WHERE type='StepEntered'").fetchone()[0])


def _wait_all_done(cloud: LocalCloud, timeout: float) -> None:
    engine = cloud.server.emulator.flow_engine
    done = engine.wait_ended(lambda: engine.stats().running_executions == 0, timeout)
    if not done:
        raise RuntimeError("executions did not finish in time")


def seed_throughput(concurrency: int, rounds: int) -> tuple[float, float]:
    """Warm-up (10 executions, so function instances exist), then ``rounds`` batches of
    ``concurrency`` executions started together; cold starts are not counted."""
    with mock_cloud(intercept=False) as cloud:
        deploy_seed_functions(cloud)
        client = cloud.fnf_client()
        create(client, "MyWorkFlow", seed_flow(account=cloud.account_id))

        def batch(prefix: str, count: int) -> None:
            with cloud.auto_advance_disabled():  # all of them are in flight together
                for i in range(count):
                    client.start_execution(fnf.StartExecutionRequest(
                        flow_name="MyWorkFlow", execution_name=f"{prefix}{i}",
                        input='{"delay": -1}'))
            _wait_all_done(cloud, 600)

        batch("warm", 10)
        before = _transitions(cloud)
        began = time.perf_counter()
        for r in range(rounds):
            batch(f"r{r}-", concurrency)
        wall = time.perf_counter() - began
        return concurrency * rounds / wall, (_transitions(cloud) - before) / wall


def daemon_throughput(concurrency: int, rounds: int) -> tuple[float, float]:
    """As :func:`seed_throughput`, but with the emulator as users run it: its own process
    (``python -m deployer.emulator --clock virtual``), the SDK client in this one."""
    import sqlite3
    from types import SimpleNamespace

    from alibabacloud_fc20230330.client import Client as FcClient
    from alibabacloud_fnf20190315.client import Client as FnfClient
    from alibabacloud_tea_openapi import models as open_api

    from deployer.emulator.store.identity import load_or_create_identity

    state = Path(tempfile.mkdtemp(prefix="flows-bench-daemon-"))
    port = 19433
    proc = subprocess.Popen(
        [sys.executable, "-m", "deployer.emulator", "--state-dir", str(state), "--port",
         str(port), "--clock", "virtual"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True)
    health = f"http://127.0.0.1:{port}/_emulator/health"
    try:
        for _ in range(1000):
            try:
                urllib.request.urlopen(health, timeout=1)
                break
            except OSError:
                time.sleep(0.01)
        ident = load_or_create_identity(state)
        config = {"access_key_id": ident.access_key_id,
                  "access_key_secret": ident.access_key_secret,
                  "endpoint": f"127.0.0.1:{port}", "protocol": "http",
                  "read_timeout": 60000}
        deploy_seed_functions(SimpleNamespace(
            fc_client=lambda: FcClient(open_api.Config(**config))))
        client = FnfClient(open_api.Config(**config))
        create(client, "MyWorkFlow", seed_flow(account=ident.account_id))

        def running() -> int:
            with urllib.request.urlopen(health) as resp:
                return int(json.load(resp)["cloudflow"]["runningExecutions"])

        def transitions() -> int:
            with sqlite3.connect(f"file:{state / 'emulator.db'}?mode=ro", uri=True) as conn:
                return int(conn.execute(
                    "SELECT COUNT(*) FROM history WHERE type='StepEntered'").fetchone()[0])

        def batch(prefix: str, count: int) -> None:
            for i in range(count):
                client.start_execution(fnf.StartExecutionRequest(
                    flow_name="MyWorkFlow", execution_name=f"{prefix}{i}",
                    input='{"delay": -1}'))
            while running() > 0:
                time.sleep(0.005)

        batch("warm", 10)
        before = transitions()
        began = time.perf_counter()
        for r in range(rounds):
            batch(f"r{r}-", concurrency)
        wall = time.perf_counter() - began
        return concurrency * rounds / wall, (transitions() - before) / wall
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()


def parked_rss(count: int) -> tuple[float, float]:
    before = _rss_mb()
    with mock_cloud(intercept=False) as cloud:
        client = cloud.fnf_client()
        create(client, "w", wait_flow("w", seconds=300))
        svc = cloud.server.emulator.executions
        with cloud.auto_advance_disabled():
            for i in range(count):
                svc.start(cloud.account_id, cloud.region, "w", name=f"p{i}")
            return before, _rss_mb()


def resume_after_sigkill(count: int) -> tuple[float, float]:
    state = Path(tempfile.mkdtemp(prefix="flows-bench-"))

    def spawn(port: int) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "deployer.emulator", "--state-dir", str(state), "--port",
             str(port), "--clock", "real"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)

    def healthy(port: int) -> None:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_emulator/health", timeout=1)
                return
            except OSError:
                time.sleep(0.01)

    def running(port: int) -> int:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_emulator/health") as resp:
            return int(json.load(resp)["cloudflow"]["runningExecutions"])

    proc = spawn(19431)
    healthy(19431)
    from deployer.emulator.store.identity import load_or_create_identity

    ident = load_or_create_identity(state)
    from alibabacloud_fnf20190315.client import Client
    from alibabacloud_tea_openapi import models as open_api

    client = Client(open_api.Config(access_key_id=ident.access_key_id,
                                    access_key_secret=ident.access_key_secret,
                                    endpoint="127.0.0.1:19431", protocol="http"))
    create(client, "r", wait_flow("r", seconds=1))
    for i in range(count):
        client.start_execution(fnf.StartExecutionRequest(flow_name="r", execution_name=f"r{i}"))
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(1.1)  # every Wait is overdue now
    began = time.perf_counter()
    proc = spawn(19432)
    healthy(19432)
    up = time.perf_counter() - began
    while running(19432) > 0:
        time.sleep(0.01)
    total = time.perf_counter() - began
    proc.send_signal(signal.SIGTERM)
    proc.wait()
    return up, total


ASL = {
    "StartAt": "StartJob",
    "States": {
        "StartJob": {"Type": "Pass", "Result": {"job_id": "j-1"}, "ResultPath": "$.Body",
                     "Next": "Init"},
        "Init": {"Type": "Pass", "Parameters": {"try_count": 0, "job_id.$": "$.Body.job_id"},
                 "Next": "Wait"},
        "Wait": {"Type": "Wait", "Seconds": 0, "Next": "GetJobStatus"},
        "GetJobStatus": {"Type": "Pass", "Parameters": {
            "job_id.$": "$.job_id", "try_count.$": "States.MathAdd($.try_count, 1)"},
            "Next": "CheckJobComplete"},
        "CheckJobComplete": {"Type": "Choice", "Choices": [
            {"Variable": "$.try_count", "NumericGreaterThanEquals": 1, "Next": "JobSucceeded"}],
            "Default": "Wait"},
        "JobSucceeded": {"Type": "Succeed"},
    },
}


def moto_throughput(concurrency: int) -> tuple[float, float]:
    import boto3
    from moto import mock_aws

    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        sfn = boto3.client("stepfunctions", region_name="us-east-1")
        arn = sfn.create_state_machine(
            name="poll", definition=json.dumps(ASL),
            roleArn="arn:aws:iam::123456789012:role/sfn")["stateMachineArn"]
        began = time.perf_counter()
        execs = [sfn.start_execution(stateMachineArn=arn, name=f"e{i}", input="{}")
                 ["executionArn"] for i in range(concurrency)]
        pending = set(execs)
        while pending:
            pending = {e for e in pending
                       if sfn.describe_execution(executionArn=e)["status"] == "RUNNING"}
            if pending:
                time.sleep(0.01)
        wall = time.perf_counter() - began
        entered = sum(
            sum(1 for ev in sfn.get_execution_history(executionArn=e, maxResults=1000)["events"]
                if ev["type"].endswith("StateEntered")) for e in execs)
        return concurrency / wall, entered / wall


def main() -> None:
    quick = "--quick" in sys.argv
    sizes = (1, 100) if quick else (1, 100, 1000)
    rows: list[tuple[str, str, str]] = []
    ours: dict[int, float] = {}
    daemon: dict[int, float] = {}
    for n in sizes:
        eps, tps = seed_throughput(n, 20 if n == 1 else 1)
        ours[n] = tps
        rows.append((f"emulator in-process, seed flow, {n} concurrent", f"{eps:,.1f} exec/s",
                     f"{tps:,.0f} transitions/s"))
        eps, tps = daemon_throughput(n, 20 if n == 1 else 1)
        daemon[n] = tps
        rows.append((f"emulator daemon, seed flow, {n} concurrent", f"{eps:,.1f} exec/s",
                     f"{tps:,.0f} transitions/s"))
    for n in (1, 100):
        eps, tps = moto_throughput(n)
        rows.append((f"moto Step Functions, {n} concurrent", f"{eps:,.1f} exec/s",
                     f"{tps:,.0f} transitions/s (ratio emulator/moto: in-process "
                     f"{ours[n] / tps:.1f}x, daemon {daemon[n] / tps:.1f}x)"))
    parked = 1000 if quick else 10_000
    measured = subprocess.run([sys.executable, __file__, "--parked", str(parked)],
                              capture_output=True, text=True, check=True).stdout
    before, after = json.loads(measured.strip().splitlines()[-1])
    rows.append((f"RSS, {parked:,} executions parked in a Wait", f"{after:,.0f} MB",
                 f"(fresh process: {before:,.0f} MB before the emulator; target <= 200 MB)"))
    resume = 100 if quick else 1000
    up, total = resume_after_sigkill(resume)
    rows.append((f"resume {resume:,} executions after SIGKILL", f"{total:.2f} s",
                 f"(daemon answering after {up:.2f} s; target <= 2 s)"))
    width = max(len(r[0]) for r in rows)
    for name, a, b in rows:
        print(f"{name:<{width}}  {a:>16}  {b}")


if __name__ == "__main__":
    if "--parked" in sys.argv:
        print(json.dumps(parked_rss(int(sys.argv[sys.argv.index("--parked") + 1]))))
    else:
        main()
