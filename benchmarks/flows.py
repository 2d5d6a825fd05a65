"""CloudFlow on the emulator against moto's Step Functions, like for like (not a test).

Peers, each in its own worker process (so one's patches and threads never touch another's):

* ``emulator in-process``: ``mock_cloud()`` (virtual clock) in the worker process; the SDK
  client on its default endpoint (``cn-hangzhou.fnf.aliyuncs.com``), answered in-process
  without a socket as ``mock_aws`` answers boto3 (the raw client uses the emulator's socket);
* ``emulator daemon``: ``python -m deployer.emulator --clock virtual``;
* ``moto in-process``: ``mock_aws()`` with ``execute_state_machine`` (SDK client), or moto's
  own ``ThreadedMotoServer`` in the worker process (raw client: it needs an HTTP endpoint);
* ``moto_server``: ``moto_server`` in its own process.

Workload: the same 6-transition Pass-only flow on both sides (six Pass states in a row), and
separately, on the emulator only, the seed flow with its real functions (Wait 10 s on the
virtual clock, the job done at the first poll). Client strategy, the same for every peer: at
*N* concurrent, min(N, 8) client threads start their share of N executions, then poll
DescribeExecution over their pending ones, sleeping 2 ms between rounds until all have ended;
each round of N counts when all succeeded. Two clients, each the same for both peers:

* ``sdk``: the official SDK, one client per thread (the Tea fnf SDK / boto3);
* ``raw``: :mod:`raw_http`, every request built and signed with the peer's real scheme
  before the round is timed, then written on keep-alive connections: on two cores the Python
  SDKs cost more CPU than the servers, so only this client measures the servers.

Every worker warms up first (rounds of 20 and 100). Measured runs are interleaved A B A B A B
per pair and the medians of 3 are printed with their ratio, with the server process's CPU
time (utime + stime from /proc, not wall time) and the client's per execution.

Also: RSS with 10,000 executions parked in a Wait, and the time to resume 1,000 executions
after SIGKILL (the daemon restarted on the same state).

Targets (issue 9): daemon >= 10x moto_server at 100 and 1,000 concurrent; in-process >= 10x
moto in-process; emulator daemon CPU per Pass-flow execution <= 0.8 ms. Issue 18: the official
SDK against mock_cloud() >= 6x moto's mock_aws at 1, 100 and 1,000 concurrent.
Run: python benchmarks/flows.py [--quick] [--client raw|sdk|both] [--modes in-process,daemon]
     [--sizes 1,100,1000] [--threads 8] [--no-seed] [--no-durability]
     (needs pip install -e '.[bench]'; --threads: client threads per worker, for both peers)
     python benchmarks/flows.py --before DIR       this tree's daemon against DIR's
     python benchmarks/flows.py --instructions N   callgrind counts of the daemon
     python benchmarks/flows.py --group-commit N   group commit on and off
     python benchmarks/flows.py --fsync R [--client raw|sdk] [--sizes ...]
                                 the daemon with and without fsync before answers, R runs each
     python benchmarks/flows.py --profile N        where the in-process SDK run's CPU goes
"""

from __future__ import annotations

import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# BENCH_SRC: another checkout's tree to measure (e.g. an older commit), the same harness
sys.path.insert(0, os.environ.get("BENCH_SRC", str(ROOT)))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the harness's own modules

from raw_http import Connection, FnfSigner, SfnSigner  # noqa: E402

CLIENT_THREADS = int(os.environ.get("BENCH_THREADS", "8"))  # --threads N sets it
POLL_PAUSE = 0.002

PASS6_FDL = "Type: StateMachine\nSpecVersion: v1\nName: pass6\nStartAt: s1\nStates:\n" + "".join(
    f"  - Type: Pass\n    Name: s{i}\n    " + (f"Next: s{i + 1}\n" if i < 6 else "End: true\n")
    for i in range(1, 7))
PASS6_ASL = {"StartAt": "s1", "States": {
    f"s{i}": {"Type": "Pass", **({"Next": f"s{i + 1}"} if i < 6 else {"End": True})}
    for i in range(1, 7)}}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_http(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"{url} did not answer")


def _daemon_prefix() -> list[str]:
    """BENCH_CALLGRIND=FILE: run the daemon under callgrind, collecting only when told."""
    out = os.environ.get("BENCH_CALLGRIND")
    if not out:
        return []
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]


def _daemon_env() -> dict[str, str]:
    src = os.environ.get("BENCH_SRC")
    return {**os.environ, "PYTHONPATH": src} if src else dict(os.environ)


# The daemon with every commit counted durable at once (no fsync before an answer), as
# ``mock_cloud()``'s throwaway state directory runs: the baseline of ``--fsync``. The daemon
# has no such setting (an answered change is always on disk), so the benchmark patches it in.
_NO_FSYNC = ("import runpy, deployer.emulator.store.durability as d; i = d.WalSyncer.__init__; "
             "d.WalSyncer.__init__ = lambda s, p, durable=True: i(s, p, durable=False); "
             "runpy.run_module('deployer.emulator', run_name='__main__')")


def _daemon_module() -> list[str]:
    """``-m deployer.emulator``, or the same without fsyncs when BENCH_NO_FSYNC is set."""
    return ["-c", _NO_FSYNC] if os.environ.get("BENCH_NO_FSYNC") else ["-m", "deployer.emulator"]


# --- peers (run inside a worker process) -------------------------------------------------------

class EmulatorPeer:
    """The emulator, in this process (``mock_cloud``) or as a daemon; ``flow`` is ``pass6``
    or ``seed``."""

    def __init__(self, mode: str, flow: str) -> None:
        from alibabacloud_tea_openapi import models as open_api

        self.server_pid: int | None = None
        self._stop: Callable[[], None]
        self.address: tuple[str, int]
        if mode == "in-process":
            from deployer.testing.environment import mock_cloud

            cm = mock_cloud()
            cloud = cm.__enter__()
            self._stop = lambda: cm.__exit__(None, None, None)
            config = {"access_key_id": cloud.access_key_id,
                      "access_key_secret": cloud.access_key_secret}
            # no endpoint: the SDK's own (cn-hangzhou.fnf.aliyuncs.com, https), which
            # mock_cloud() answers in-process, as mock_aws answers boto3's
            self.address = ("127.0.0.1", cloud.server.port)  # the raw client's socket
            account = cloud.account_id
        else:
            from deployer.emulator.store.identity import load_or_create_identity

            state, port = Path(tempfile.mkdtemp(prefix="flows-bench-")), _free_port()
            proc = subprocess.Popen(
                [*_daemon_prefix(), sys.executable, *_daemon_module(), "--state-dir",
                 str(state), "--port", str(port), "--clock", "virtual"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                env=_daemon_env())
            # under callgrind the daemon's start is some 50 times slower (more on a loaded
            # machine)
            _wait_http(f"http://127.0.0.1:{port}/_emulator/health",
                       timeout=1200 if "BENCH_CALLGRIND" in os.environ else 300)
            self.server_pid = proc.pid
            self._stop = lambda: (proc.send_signal(signal.SIGTERM), proc.wait())
            ident = load_or_create_identity(state)
            config = {"access_key_id": ident.access_key_id,
                      "access_key_secret": ident.access_key_secret,
                      "endpoint": f"127.0.0.1:{port}", "protocol": "http"}
            self.address = ("127.0.0.1", port)
            account = ident.account_id
        self._config = open_api.Config(region_id="cn-hangzhou", read_timeout=120000,
                                       connect_timeout=10000, **config)
        self._signer = FnfSigner(f"{self.address[0]}:{self.address[1]}",
                                 str(config["access_key_id"]), str(config["access_key_secret"]))
        self.flow = "MyWorkFlow" if flow == "seed" else "pass6"
        self.input = '{"delay": -1}' if flow == "seed" else "{}"
        self._setup(flow, account)

    def _setup(self, flow: str, account: str) -> None:
        from tests.emulator.cloudflow_support import create, deploy_seed_functions, seed_flow

        if flow == "seed":
            from alibabacloud_fc20230330.client import Client as FcClient

            config = self._config
            deploy_seed_functions(type("C", (), {"fc_client": lambda _s: FcClient(config)})())
            create(self.client(), self.flow, seed_flow(account=account))
        else:
            create(self.client(), self.flow, PASS6_FDL)

    def client(self) -> Any:
        from alibabacloud_fnf20190315.client import Client

        return Client(self._config)

    def start(self, client: Any, name: str) -> None:
        from alibabacloud_fnf20190315 import models as fnf

        client.start_execution(fnf.StartExecutionRequest(
            flow_name=self.flow, execution_name=name, input=self.input))

    def status(self, client: Any, name: str) -> str | None:
        """The final status, or None while running."""
        from alibabacloud_fnf20190315 import models as fnf

        status = client.describe_execution(fnf.DescribeExecutionRequest(
            flow_name=self.flow, execution_name=name)).body.status
        return None if status in ("Running", "Starting") else str(status)

    def raw_start(self, name: str) -> bytes:
        return self._signer.start(self.flow, name, self.input)

    def raw_describe(self, name: str) -> bytes:
        return self._signer.describe(self.flow, name)

    raw_status = staticmethod(FnfSigner.status)

    def raw_started(self, body: dict[str, Any]) -> bool:
        return body.get("Status") in ("Running", "Starting", "Succeeded")

    def disk_syncs(self) -> int | None:
        """The daemon's fsyncs so far (its health document), None in this process or from
        a daemon that does not count them (an older tree's, ``--before``)."""
        if self.server_pid is None:
            return None
        url = f"http://{self.address[0]}:{self.address[1]}/_emulator/health"
        with urllib.request.urlopen(url, timeout=30) as resp:
            syncs = json.load(resp).get("store", {}).get("diskSyncs")
        return None if syncs is None else int(syncs)

    def close(self) -> None:
        self._stop()


def _own_scope_stacks() -> None:
    """moto's ASL preprocessor keeps its query-language scope stack in a class attribute that
    every execution thread shares: two executions parsed at once can pop each other's scope
    (``IndexError`` in ``_get_current_query_language``; that execution never ends and the
    round never finishes). Each preprocessor gets a stack of its own, which is what the code
    means; the work done is the same."""
    from moto.stepfunctions.parser.asl.parse.preprocessor import Preprocessor

    if getattr(Preprocessor, "_own_stacks", False):
        return
    init = Preprocessor.__init__

    def own(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self._query_language_per_scope = []

    Preprocessor.__init__ = own  # type: ignore[method-assign]
    Preprocessor._own_stacks = True  # type: ignore[attr-defined]


class MotoPeer:
    """moto's Step Functions (ASL interpreter on), in this process or as ``moto_server``.
    In this process with the raw client: moto's own ``ThreadedMotoServer`` in a thread (the
    raw client needs an HTTP endpoint; ``mock_aws`` has none)."""

    def __init__(self, mode: str, flow: str, client_kind: str = "sdk") -> None:
        import boto3

        self.server_pid: int | None = None
        kwargs: dict[str, Any] = {"region_name": "us-east-1", "aws_access_key_id": "x",
                                  "aws_secret_access_key": "x"}
        port = _free_port()
        base = f"http://127.0.0.1:{port}"
        if mode == "in-process":
            _own_scope_stacks()
        if mode == "in-process" and client_kind == "sdk":
            from moto import mock_aws

            mock = mock_aws(config={"stepfunctions": {"execute_state_machine": True}})
            mock.start()
            self._stop: Callable[[], None] = mock.stop
        elif mode == "in-process":
            import logging

            from moto.server import ThreadedMotoServer

            logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
            server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
            server.start()
            self._stop = server.stop
            self._configure(base)
            kwargs["endpoint_url"] = base
        else:
            proc = subprocess.Popen(["moto_server", "-p", str(port)], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL, start_new_session=True)
            self._configure(base)
            self.server_pid = proc.pid
            self._stop = lambda: (proc.send_signal(signal.SIGTERM), proc.wait())
            kwargs["endpoint_url"] = base
        self.address = ("127.0.0.1", port)
        self._signer = SfnSigner(f"127.0.0.1:{port}")
        self._kwargs = kwargs
        self._boto3 = boto3
        self.arn = self.client().create_state_machine(
            name="pass6", definition=json.dumps(PASS6_ASL),
            roleArn="arn:aws:iam::123456789012:role/sfn")["stateMachineArn"]
        self._prefix = self.arn.replace(":stateMachine:", ":execution:") + ":"

    def client(self) -> Any:
        from botocore.config import Config

        return self._boto3.session.Session().client(
            "stepfunctions", config=Config(max_pool_connections=50, retries={"max_attempts": 0}),
            **self._kwargs)

    def start(self, client: Any, name: str) -> None:
        client.start_execution(stateMachineArn=self.arn, name=name, input="{}")

    def status(self, client: Any, name: str) -> str | None:
        status = client.describe_execution(executionArn=self._prefix + name)["status"]
        return None if status == "RUNNING" else {"SUCCEEDED": "Succeeded"}.get(status, status)

    def raw_start(self, name: str) -> bytes:
        return self._signer.start(self.arn, name, "{}")

    def raw_describe(self, name: str) -> bytes:
        return self._signer.describe(self._prefix + name)

    raw_status = staticmethod(SfnSigner.status)

    def raw_started(self, body: dict[str, Any]) -> bool:
        return "executionArn" in body

    @staticmethod
    def _configure(base: str) -> None:
        _wait_http(f"{base}/moto-api/")
        urllib.request.urlopen(urllib.request.Request(
            f"{base}/moto-api/config", method="POST",
            data=json.dumps({"stepfunctions": {"execute_state_machine": True}}).encode(),
            headers={"Content-Type": "application/json"})).close()

    def close(self) -> None:
        self._stop()


def run_round(peer: Any, clients: list[Any], prefix: str, n: int) -> tuple[dict[str, int], float]:
    """Start ``n`` executions over the client threads, poll until all ended; the statuses
    seen and the wall time from the threads' common start to the last one's end."""
    threads = min(n, len(clients))
    shares = [[f"{prefix}-{i}" for i in range(t, n, threads)] for t in range(threads)]
    outcome: dict[str, int] = {}
    lock = threading.Lock()
    barrier = threading.Barrier(threads + 1)

    def work(client: Any, names: list[str]) -> None:
        barrier.wait()
        for name in names:
            peer.start(client, name)
        _poll_until_ended(names, lambda name: peer.status(client, name), outcome, lock)

    return outcome, _timed(barrier, [threading.Thread(target=work, args=(clients[t], shares[t]))
                                     for t in range(threads)])


def _poll_until_ended(names: list[str], status: Callable[[str], str | None],
                      outcome: dict[str, int], lock: threading.Lock) -> None:
    """Poll the executions ``names`` in turn (a pause between rounds) until each has ended;
    count their end statuses and the polls in ``outcome``: the strategy of every peer."""
    pending, polled = list(names), 0
    while pending:
        still = []
        for name in pending:
            ended = status(name)
            polled += 1
            if ended is None:
                still.append(name)
            else:
                with lock:
                    outcome[ended] = outcome.get(ended, 0) + 1
        pending = still
        if pending:
            time.sleep(POLL_PAUSE)
    with lock:
        outcome["polls"] = outcome.get("polls", 0) + polled


def _timed(barrier: threading.Barrier, workers: list[threading.Thread]) -> float:
    for w in workers:
        w.start()
    barrier.wait()
    began = time.perf_counter()
    for w in workers:
        w.join()
    return time.perf_counter() - began


PRESIGNED_POLLS = 3


def run_raw_round(peer: Any, conns: list[Connection], prefix: str,
                  n: int) -> tuple[dict[str, int], float]:
    """:func:`run_round` with the raw client: the same strategy (start the thread's share,
    then poll the pending ones with 2 ms pauses), every request signed before the clock
    starts (a few polls per execution; more are signed on the spot)."""
    threads = min(n, len(conns))
    shares = [[f"{prefix}-{i}" for i in range(t, n, threads)] for t in range(threads)]
    starts = {name: peer.raw_start(name) for share in shares for name in share}
    polls = {name: [peer.raw_describe(name) for _ in range(PRESIGNED_POLLS)]
             for share in shares for name in share}
    outcome: dict[str, int] = {}
    lock = threading.Lock()
    barrier = threading.Barrier(threads + 1)

    def work(conn: Connection, names: list[str]) -> None:
        barrier.wait()
        for name in names:
            answer = conn.exchange(starts[name])
            if not peer.raw_started(answer):
                raise RuntimeError(f"start refused: {answer}")

        def status(name: str) -> str | None:
            queued = polls[name]
            return peer.raw_status(conn.exchange(
                queued.pop() if queued else peer.raw_describe(name)))

        _poll_until_ended(names, status, outcome, lock)

    return outcome, _timed(barrier, [threading.Thread(target=work, args=(conns[t], shares[t]))
                                     for t in range(threads)])


def worker(kind: str, mode: str, flow: str, client_kind: str = "sdk") -> None:
    """A peer in this process, answering JSON commands on stdin (one per line)."""
    peer = (EmulatorPeer(mode, flow) if kind == "emulator"
            else MotoPeer(mode, flow, client_kind))
    clients: list[Any]
    if client_kind == "raw":
        clients = [Connection(*peer.address) for _ in range(CLIENT_THREADS)]
        rounder = run_raw_round
    else:
        clients = [peer.client() for _ in range(CLIENT_THREADS)]
        rounder = run_round
    rounder(peer, clients, "warm", 20)
    rounder(peer, clients, "warm2", 100)
    print(json.dumps({"ready": True}), flush=True)
    for count, line in enumerate(sys.stdin):
        cmd = json.loads(line)
        if cmd["cmd"] == "stop":
            break
        n, rounds = int(cmd["n"]), int(cmd["rounds"])
        pid = peer.server_pid or os.getpid()
        cpu0, client0 = _cpu_seconds(pid), time.process_time()
        syncs0 = getattr(peer, "disk_syncs", lambda: None)()
        statuses: dict[str, int] = {}
        wall, polls = 0.0, 0
        for r in range(rounds):
            seen, took = rounder(peer, clients, f"m{count}-{r}", n)
            wall += took
            polls += seen.pop("polls", 0)
            for status, k in seen.items():
                statuses[status] = statuses.get(status, 0) + k
        cpu = _cpu_seconds(pid) - cpu0
        client_cpu = time.process_time() - client0
        syncs = None if syncs0 is None else peer.disk_syncs() - syncs0
        print(json.dumps({"executions": n * rounds, "wall": wall, "cpu": cpu, "syncs": syncs,
                          "client_cpu": client_cpu, "polls": polls,
                          "server_cpu": peer.server_pid is not None, "statuses": statuses}),
              flush=True)
    peer.close()


class Worker:
    """The orchestrator's handle on one worker process."""

    def __init__(self, kind: str, mode: str, flow: str = "pass6", client: str = "sdk", *,
                 src: str | None = None, label: str | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.label = label or (
            "moto_server" if (kind, mode) == ("moto", "daemon") else f"{kind} {mode}")
        env = {**os.environ, **(env or {}), **({"BENCH_SRC": src} if src else {})}
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker", kind, mode, flow, client],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self._read()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{self.label}: worker died")
        data: dict[str, Any] = json.loads(line)
        return data

    def run(self, n: int, rounds: int) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"cmd": "run", "n": n, "rounds": rounds}) + "\n")
        self.proc.stdin.flush()
        result = self._read()
        ok = result["statuses"].get("Succeeded", 0)
        if ok != result["executions"]:
            raise RuntimeError(f"{self.label}: {result['statuses']} of {result['executions']}")
        return result

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"cmd": "stop"}) + "\n")
        self.proc.stdin.flush()
        self.proc.wait(timeout=120)


def rounds_for(n: int, quick: bool) -> int:
    if n == 1:
        return 50 if quick else 200
    return max(1, (200 if quick else 1000) // n)


def _cell(label: str, rate: float, rs: list[dict[str, Any]]) -> str:
    polls = statistics.median(r["polls"] / r["executions"] for r in rs)
    cell = f"{label} {rate:,.0f} exec/s, {polls:.2f} polls/exec"
    if rs[0].get("syncs") is not None:
        syncs = statistics.median(r["syncs"] / r["executions"] for r in rs)
        cell += f", {syncs:.2f} fsyncs/exec"
    client = statistics.median(r["client_cpu"] / r["executions"] for r in rs) * 1000
    if rs[0]["server_cpu"]:
        ms = statistics.median(r["cpu"] / r["executions"] for r in rs) * 1000
        per_request = statistics.median(r["cpu"] / (r["executions"] + r["polls"])
                                        for r in rs) * 1e6
        cell += (f" (server CPU {ms:.2f} ms/exec, {per_request:.0f} us/request; "
                 f"client CPU {client:.2f} ms/exec)")
    else:
        cell += f" (process CPU {client:.2f} ms/exec)"
    return cell


def compare(a: Worker, b: Worker, sizes: tuple[int, ...], quick: bool,
            repeats: int = 3, fewer: int = 1) -> list[str]:
    """A against B at each size, runs interleaved, medians; ``fewer`` divides the rounds."""
    lines = []
    for n in sizes:
        runs: dict[str, list[dict[str, Any]]] = {a.label: [], b.label: []}
        for _ in range(repeats):  # interleaved: A B A B A B
            for w in (a, b):
                runs[w.label].append(w.run(n, max(1, rounds_for(n, quick) // fewer)))
        rate = {label: statistics.median(r["executions"] / r["wall"] for r in rs)
                for label, rs in runs.items()}
        cells = [_cell(label, rate[label], rs) for label, rs in runs.items()]
        lines.append(f"{n:>5} concurrent | " + " | ".join(cells)
                     + f" | ratio {rate[a.label] / rate[b.label]:.2f}x")
    return lines


def seed_only(sizes: tuple[int, ...], quick: bool, client: str) -> list[str]:
    lines = []
    for mode in ("in-process", "daemon"):
        w = Worker("emulator", mode, "seed", client)
        try:
            for n in sizes:
                rs = [w.run(n, max(1, rounds_for(n, quick) // 4)) for _ in range(3)]
                rate = statistics.median(r["executions"] / r["wall"] for r in rs)
                lines.append(f"seed flow, real functions, {client} client, "
                             f"{n} concurrent: {_cell(f'emulator {mode}', rate, rs)}")
        finally:
            w.close()
    return lines


def instructions_per_execution(count: int) -> dict[str, float]:
    """Instructions the daemon executes (callgrind, after a warm-up; repeatable where CPU
    time on a shared machine is not), per Pass-flow execution and per request of a few kinds.
    One raw-client connection. ``execution``: StartExecution, a pause long enough for the
    execution to end under valgrind, then DescribeExecution until it has ended (``polls``
    per execution: 1 when the pause sufficed), so the same requests are counted before and
    after a change; ``describe``: DescribeExecution of an ended execution; ``trivial``:
    ``GET /_emulator/clock`` (the front door alone)."""
    out = Path(tempfile.mkdtemp(prefix="flows-callgrind-")) / "callgrind.out"
    os.environ["BENCH_CALLGRIND"] = str(out)
    try:
        peer = EmulatorPeer("daemon", "pass6")
    finally:
        del os.environ["BENCH_CALLGRIND"]
    pid = str(peer.server_pid)
    results: dict[str, float] = {}

    def measured(fn: Callable[[], object]) -> float:
        subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)
        fn()
        subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)
        dumps = sorted(out.parent.glob("callgrind.out.*"), key=lambda f: f.stat().st_mtime)
        for line in dumps[-1].read_text(errors="replace").splitlines():
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1]) / count
        raise RuntimeError("no callgrind totals")

    try:
        conn = Connection(*peer.address)
        host = f"{peer.address[0]}:{peer.address[1]}"
        trivial = f"GET /_emulator/clock HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
        polls = [0]

        def one(name: str) -> None:
            conn.exchange(peer.raw_start(name))
            time.sleep(0.3)
            polls[0] += 1
            while peer.raw_status(conn.exchange(peer.raw_describe(name))) is None:
                time.sleep(0.05)
                polls[0] += 1

        for i in range(20):
            one(f"warm{i}")
            conn.exchange(trivial)
        polls[0] = 0
        def executions() -> None:
            for i in range(count):
                one(f"cg{i}")

        results["execution"] = measured(executions)
        results["polls"] = polls[0] / count
        describes = [peer.raw_describe("cg0") for _ in range(count)]
        results["describe"] = measured(lambda: [conn.exchange(r) for r in describes])
        results["trivial"] = measured(lambda: [conn.exchange(trivial) for _ in range(count)])
    finally:
        peer.close()
    return results


# --- where the in-process CPU goes --------------------------------------------------------------

def profile_in_process(count: int) -> list[str]:
    """The official SDK against ``mock_cloud()``, ``count`` Pass-flow executions at 100
    concurrent after the usual warm-up, with the CPU time (``thread_time``, exact, no
    profiler overhead) of each client thread split at the transport's two boundaries: the
    SDK client itself (building, signing, requests' ``PreparedRequest``, parsing the
    answer), the in-process transport and routing, and the emulator's request handling
    (``Router.dispatch``: signature, freshness, authorization, API, services, store); the
    process's other threads are the flow engine (steps, commits, timers) and the rest."""
    from deployer.testing import transport

    spent = {"router": 0.0, "transport": 0.0}
    lock = threading.Lock()
    answer, send = transport.InProcessTransport.answer, transport.InProcessTransport.send

    def timed_answer(self: Any, request: Any) -> Any:
        began = time.thread_time()
        try:
            return answer(self, request)
        finally:
            with lock:
                spent["router"] += time.thread_time() - began

    def timed_send(self: Any, *args: Any) -> Any:
        began = time.thread_time()
        try:
            return send(self, *args)
        finally:
            with lock:
                spent["transport"] += time.thread_time() - began

    peer = EmulatorPeer("in-process", "pass6")
    clients = [peer.client() for _ in range(CLIENT_THREADS)]
    run_round(peer, clients, "warm", 100)
    transport.InProcessTransport.answer = timed_answer  # type: ignore[method-assign]
    transport.InProcessTransport.send = timed_send  # type: ignore[method-assign]
    client_cpu = [0.0]

    def client(client: Any, names: list[str]) -> None:
        began = time.thread_time()
        for name in names:
            peer.start(client, name)
        _poll_until_ended(names, lambda name: peer.status(client, name), {}, lock)
        with lock:
            client_cpu[0] += time.thread_time() - began

    rounds = max(1, count // 100)
    process0 = time.process_time()
    for r in range(rounds):
        shares = [[f"p{r}-{i}" for i in range(t, 100, len(clients))]
                  for t in range(len(clients))]
        workers = [threading.Thread(target=client, args=(clients[t], shares[t]))
                   for t in range(len(clients))]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    process = time.process_time() - process0
    peer.close()
    executions = rounds * 100
    router, in_transport = spent["router"], spent["transport"] - spent["router"]
    rows = [("SDK client (tea-openapi, darabonba, requests' PreparedRequest, parsing)",
             client_cpu[0] - spent["transport"]),
            ("in-process transport + routing (request value, response, settling)",
             in_transport),
            ("emulator request handling (Router.dispatch: checks, API, services, store)",
             router),
            ("flow engine and the process's other threads", process - client_cpu[0])]
    return [f"{100 * t / process:5.1f} %  {t / executions * 1000:5.2f} ms/exec  {name}"
            for name, t in rows]


# --- group commit (emulator only, in this process) -------------------------------------------

def group_commit_phase(count: int, batch: int, phase: str) -> dict[str, float]:
    """``count`` executions of a Wait(10 s) -> Pass flow on the virtual clock, with at most
    ``batch`` steps per transaction. ``phase`` "timers": all parked in the Wait, then the
    clock moves 10 s and every Wait timer is due at once (measured: until all ended);
    "starts": ``count`` StartExecution calls (through the service) and their first steps."""
    from deployer.testing.environment import mock_cloud
    from tests.emulator.cloudflow_support import create, wait_flow

    with mock_cloud(intercept=False) as cloud:
        engine = cloud.server.emulator.flow_engine
        engine._stepper.queue.max_batch = batch  # the knob under test
        create(cloud.fnf_client(), "w", wait_flow("w", seconds=10))
        svc = cloud.server.emulator.executions
        with cloud.auto_advance_disabled():
            def settled(timers: int) -> None:
                while True:
                    stats = engine.stats()
                    if stats.in_flight == 0 and stats.pending_timers == timers:
                        return
                    time.sleep(0.005)

            began, cpu0 = time.perf_counter(), time.process_time()
            before = engine.stats()
            for i in range(count):
                svc.start(cloud.account_id, cloud.region, "w", name=f"g{i}")
            settled(2 * count)  # each: its Wait timer and its execution timeout
            if phase == "timers":
                began, cpu0 = time.perf_counter(), time.process_time()
                before = engine.stats()
                cloud.advance(10)
                while engine.stats().running_executions:
                    time.sleep(0.005)
            after = engine.stats()
            wall, cpu = time.perf_counter() - began, time.process_time() - cpu0
    steps = after.steps_committed - before.steps_committed
    return {"wall": wall, "cpu": cpu, "steps": steps,
            "transactions": after.step_transactions - before.step_transactions}


def group_commit(count: int) -> list[str]:
    """Group commit on and off (batch 32 vs 1), runs interleaved, medians of 3."""
    lines = []
    for phase in ("starts", "timers"):
        runs: dict[int, list[dict[str, float]]] = {32: [], 1: []}
        for _ in range(3):
            for batch in (32, 1):
                out = subprocess.run([sys.executable, __file__, "--group-commit-phase",
                                      str(count), str(batch), phase],
                                     capture_output=True, text=True, check=True).stdout
                runs[batch].append(json.loads(out.strip().splitlines()[-1]))
        for batch, rs in runs.items():
            med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
            lines.append(f"group commit {'on (32)' if batch > 1 else 'off (1)'}, {phase}: "
                         f"{count / med['wall']:,.0f} steps/s, CPU "
                         f"{med['cpu'] / med['steps'] * 1000:.3f} ms/step, "
                         f"{med['steps'] / med['transactions']:.1f} steps per transaction")
    return lines


# --- durability figures (emulator only) --------------------------------------------------------

def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def parked_rss(count: int) -> tuple[float, float]:
    from deployer.testing.environment import mock_cloud
    from tests.emulator.cloudflow_support import create, wait_flow

    before = _rss_mb()
    with mock_cloud(intercept=False) as cloud:
        create(cloud.fnf_client(), "w", wait_flow("w", seconds=300))
        svc = cloud.server.emulator.executions
        with cloud.auto_advance_disabled():
            for i in range(count):
                svc.start(cloud.account_id, cloud.region, "w", name=f"p{i}")
            return before, _rss_mb()


def resume_after_sigkill(count: int) -> tuple[float, float]:
    from alibabacloud_fnf20190315 import models as fnf
    from alibabacloud_fnf20190315.client import Client
    from alibabacloud_tea_openapi import models as open_api

    from deployer.emulator.store.identity import load_or_create_identity
    from tests.emulator.cloudflow_support import create, wait_flow

    state = Path(tempfile.mkdtemp(prefix="flows-bench-"))

    def spawn(port: int) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "deployer.emulator", "--state-dir", str(state), "--port",
             str(port), "--clock", "real"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)

    def running(port: int) -> int:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_emulator/health") as resp:
            return int(json.load(resp)["cloudflow"]["runningExecutions"])

    port = _free_port()
    proc = spawn(port)
    _wait_http(f"http://127.0.0.1:{port}/_emulator/health")
    ident = load_or_create_identity(state)
    client = Client(open_api.Config(access_key_id=ident.access_key_id,
                                    access_key_secret=ident.access_key_secret,
                                    endpoint=f"127.0.0.1:{port}", protocol="http"))
    create(client, "r", wait_flow("r", seconds=1))
    for i in range(count):
        client.start_execution(fnf.StartExecutionRequest(flow_name="r", execution_name=f"r{i}"))
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(1.1)  # every Wait is overdue now
    began = time.perf_counter()
    port = _free_port()
    proc = spawn(port)
    _wait_http(f"http://127.0.0.1:{port}/_emulator/health")
    up = time.perf_counter() - began
    while running(port) > 0:
        time.sleep(0.01)
    total = time.perf_counter() - began
    proc.send_signal(signal.SIGTERM)
    proc.wait()
    return up, total


def before_after(before: str, sizes: tuple[int, ...], quick: bool) -> None:
    """This tree's daemon against another tree's (``before``: e.g. a ``git archive`` of
    main), the same harness and client, runs interleaved, medians of 3."""
    for client in ("raw", "sdk"):
        a = Worker("emulator", "daemon", client=client, label="after")
        b = Worker("emulator", "daemon", client=client, src=before, label="before")
        try:
            for line in compare(a, b, sizes, quick):
                print(f"{client} client | {line}", flush=True)
        finally:
            a.close()
            b.close()


def fsync_on_off(sizes: tuple[int, ...], quick: bool, client: str, repeats: int) -> None:
    """The daemon as it runs (every acknowledgement waits for its fsync, group commit) against
    the same daemon with no fsync, for the Pass-only and the seed flow, interleaved, medians."""
    for flow, fewer in (("pass6", 1), ("seed", 4)):
        a = Worker("emulator", "daemon", flow, client, label="fsync on")
        b = Worker("emulator", "daemon", flow, client, label="fsync off",
                   env={"BENCH_NO_FSYNC": "1"})
        try:
            for line in compare(a, b, sizes, quick, repeats, fewer):
                load = "/".join(f"{x:.1f}" for x in os.getloadavg())
                print(f"{flow} {client} client | {line} | load {load}", flush=True)
        finally:
            a.close()
            b.close()


def _option(name: str, default: str) -> str:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def main() -> None:
    quick = "--quick" in sys.argv
    sizes = tuple(int(n) for n in _option("--sizes", "1,100,1000").split(","))
    sizes = (1, 100) if quick else sizes
    if "--threads" in sys.argv:  # the client threads of every worker (default 8)
        os.environ["BENCH_THREADS"] = _option("--threads", "8")
    if "--before" in sys.argv:
        before_after(_option("--before", ""), sizes, quick)
        return
    if "--fsync" in sys.argv:
        fsync_on_off(sizes, quick, _option("--client", "raw"), int(_option("--fsync", "3")))
        return
    clients = ("raw", "sdk") if _option("--client", "both") == "both" else (
        _option("--client", "both"),)
    modes = _option("--modes", "in-process,daemon").split(",")
    for client in clients:
        print(f"Pass-only flow (6 Pass states), {client} client, medians of 3 interleaved "
              "runs:", flush=True)
        for mode in modes:
            a, b = Worker("emulator", mode, client=client), Worker("moto", mode, client=client)
            try:
                for line in compare(a, b, sizes, quick):
                    print(f"{mode:>10} | {line}", flush=True)
            finally:
                a.close()
                b.close()
    if "--no-seed" not in sys.argv:
        print("Seed flow with real functions (emulator only, medians of 3):", flush=True)
        for client in clients:
            for line in seed_only(sizes, quick, client):
                print(line, flush=True)
    if "--no-durability" in sys.argv:
        return
    parked = 1000 if quick else 10_000
    measured = subprocess.run([sys.executable, __file__, "--parked", str(parked)],
                              capture_output=True, text=True, check=True).stdout
    before, after = json.loads(measured.strip().splitlines()[-1])
    print(f"RSS with {parked:,} executions parked in a Wait: {after:,.0f} MB "
          f"(fresh process {before:,.0f} MB; target <= 200 MB)")
    resume = 100 if quick else 1000
    up, total = resume_after_sigkill(resume)
    print(f"resume {resume:,} executions after SIGKILL: {total:.2f} s "
          f"(daemon answering after {up:.2f} s; target <= 2 s)")


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv):
        print(__doc__)
    elif "--worker" in sys.argv:
        i = sys.argv.index("--worker")
        worker(*sys.argv[i + 1:i + 5])
    elif "--instructions" in sys.argv:
        n = int(sys.argv[sys.argv.index("--instructions") + 1])
        got = instructions_per_execution(n)
        print(f"daemon instructions (callgrind): {got['execution']:,.0f} per Pass-flow "
              f"execution ({got['polls']:.2f} DescribeExecution each); "
              f"{got['describe']:,.0f} per DescribeExecution; "
              f"{got['trivial']:,.0f} per GET /_emulator/clock")
    elif "--profile" in sys.argv:
        print("in-process CPU (SDK client against mock_cloud(), 100 concurrent, thread "
              "CPU time split at the transport):")
        for line in profile_in_process(int(sys.argv[sys.argv.index("--profile") + 1])):
            print(line, flush=True)
    elif "--group-commit-phase" in sys.argv:
        i = sys.argv.index("--group-commit-phase")
        print(json.dumps(group_commit_phase(int(sys.argv[i + 1]), int(sys.argv[i + 2]),
                                            sys.argv[i + 3])))
    elif "--group-commit" in sys.argv:
        for line in group_commit(int(sys.argv[sys.argv.index("--group-commit") + 1])):
            print(line, flush=True)
    elif "--parked" in sys.argv:
        print(json.dumps(parked_rss(int(sys.argv[sys.argv.index("--parked") + 1]))))
    else:
        main()
