"""Soak (not a test): executions at a steady rate for a long time; the database and the
daemon's memory must stay flat once retention deletes what is over.

A daemon (real clock, the cloud-like latency model) with a short retention for ended
executions and logs (``--retention``, default 120 s) runs the seed flow with its real
functions (StartJob, a 10 s Wait, GetJobStatus done at the first poll; about 9 KB of rows per
execution) started at ``--rate`` per second (default 20) by a paced raw-HTTP client. Every
``--interval`` seconds it prints: elapsed time, executions started and refused, running
executions, the database files' size (``emulator.db`` and its WAL), the daemon's RSS and its
function workers' RSS. At the end: the growth of each from the first sample after retention
kicked in (one retention period plus the longest execution) to the last.

Run: python benchmarks/soak.py [--duration 600] [--rate 20] [--retention 120s]
     [--interval 30] [--src DIR]
     (the long run: --duration 7200; --src: another tree's daemon, e.g. main's)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from raw_http import Connection, FnfSigner  # noqa: E402

EXECUTION_SECONDS = 15.0  # the seed flow's run here: a 10 s Wait and a few steps


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (the function workers), whichever thread started them."""
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except OSError:
                continue
            found += kids
            todo += kids
    return found


class Daemon:
    def __init__(self, retention: str, src: str | None) -> None:
        self.state = Path(tempfile.mkdtemp(prefix="soak-"))
        self.port = _free_port()
        env = {**os.environ, "PYTHONPATH": src} if src else dict(os.environ)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "deployer.emulator", "--state-dir", str(self.state),
             "--port", str(self.port), "--clock", "real", "--execution-retention", retention,
             "--log-retention", retention],
            stdout=subprocess.DEVNULL, stderr=open(self.state / "daemon.log", "wb"),  # noqa: SIM115
            start_new_session=True, env=env, cwd=self.state)
        deadline = time.monotonic() + 120
        while True:
            try:
                self.health()
                return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("the daemon did not start: "
                                       + (self.state / "daemon.log").read_text()[-2000:]) from None
                time.sleep(0.1)

    def health(self) -> dict[str, Any]:
        url = f"http://127.0.0.1:{self.port}/_emulator/health"
        with urllib.request.urlopen(url, timeout=10) as answer:
            data: dict[str, Any] = json.loads(answer.read())
            return data

    def db_mb(self) -> float:
        return sum(p.stat().st_size for p in self.state.glob("emulator.db*")) / 2**20

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


def setup(daemon: Daemon) -> FnfSigner:
    from alibabacloud_tea_openapi import models as open_api

    from deployer.emulator.store.identity import load_or_create_identity
    from tests.emulator.cloudflow_support import create, deploy_seed_functions, seed_flow

    ident = load_or_create_identity(daemon.state)
    config = open_api.Config(protocol="http", region_id="cn-hangzhou",
                             access_key_id=ident.access_key_id,
                             access_key_secret=ident.access_key_secret,
                             endpoint=f"127.0.0.1:{daemon.port}", read_timeout=60_000)
    from alibabacloud_fc20230330.client import Client as FcClient
    from alibabacloud_fnf20190315.client import Client as FnfClient

    deploy_seed_functions(type("C", (), {"fc_client": lambda _s: FcClient(config)})())
    create(FnfClient(config), "MyWorkFlow", seed_flow(account=ident.account_id))
    return FnfSigner(f"127.0.0.1:{daemon.port}", ident.access_key_id, ident.access_key_secret)


class Starter(threading.Thread):
    """Starts executions at ``rate`` per second, paced on the monotonic clock."""

    def __init__(self, daemon: Daemon, signer: FnfSigner, rate: float) -> None:
        super().__init__(daemon=True)
        self._conn = Connection("127.0.0.1", daemon.port)
        self._signer = signer
        self._rate = rate
        self.started = self.refused = 0
        self.stop = threading.Event()

    def run(self) -> None:
        began = time.monotonic()
        while not self.stop.is_set():
            due = began + self.started / self._rate
            pause = due - time.monotonic()
            if pause > 0:
                self.stop.wait(pause)
                continue
            body = self._conn.exchange(self._signer.start(
                "MyWorkFlow", f"s{self.started + self.refused}", '{"delay": 1}'))
            if body.get("Status") == "Running":
                self.started += 1
            else:
                self.refused += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=600.0)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--retention", default="120s")
    parser.add_argument("--interval", type=float, default=30.0)
    parser.add_argument("--src", default=None)
    args = parser.parse_args()
    if args.src:
        sys.path.insert(0, args.src)
    sys.path.insert(0, str(ROOT))
    from deployer.emulator.retention import parse_duration

    kept = parse_duration(args.retention, "--retention")
    daemon = Daemon(args.retention, args.src)
    samples: list[tuple[float, float, float, float]] = []
    try:
        starter = Starter(daemon, setup(daemon), args.rate)
        began = time.monotonic()
        starter.start()
        print(f"{'time':>6} {'started':>8} {'refused':>7} {'running':>7} {'db MB':>7} "
              f"{'RSS MB':>7} {'workers MB':>10}", flush=True)
        while (elapsed := time.monotonic() - began) < args.duration:
            time.sleep(min(args.interval, args.duration - elapsed))
            elapsed = time.monotonic() - began
            running = daemon.health()["cloudflow"]["runningExecutions"]
            rss = _rss_mb(daemon.proc.pid)
            workers = sum(_rss_mb(pid) for pid in _children(daemon.proc.pid))
            samples.append((elapsed, daemon.db_mb(), rss, workers))
            print(f"{elapsed:6.0f} {starter.started:8d} {starter.refused:7d} {running:7d} "
                  f"{samples[-1][1]:7.1f} {rss:7.1f} {workers:10.1f}", flush=True)
        starter.stop.set()
        rate = starter.started / (time.monotonic() - began)
    finally:
        daemon.stop()
    settled = [s for s in samples if s[0] >= kept + EXECUTION_SECONDS + args.interval]
    if len(settled) >= 2:
        first, last = settled[0], settled[-1]
        print(f"achieved {rate:.1f} executions/s; from {first[0]:.0f} s (retention "
              f"{kept:g} s in force) to {last[0]:.0f} s: database {first[1]:.1f} -> "
              f"{last[1]:.1f} MB, daemon RSS {first[2]:.1f} -> {last[2]:.1f} MB, workers "
              f"{first[3]:.1f} -> {last[3]:.1f} MB")
    else:
        print(f"achieved {rate:.1f} executions/s; run longer than the retention "
              f"({kept:g} s) to see it in force")


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv):
        print(__doc__)
    else:
        main()
