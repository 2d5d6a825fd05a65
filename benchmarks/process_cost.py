"""CPU seconds of the processes the test suite starts, with and without shared bytecode.

Run: ``python benchmarks/process_cost.py [--runs 5]``. Compares, interleaved after one warm-up
each, what a process costs (user + system, read from ``RUSAGE_CHILDREN``) under
``PYTHONDONTWRITEBYTECODE=1`` (every process compiles the package from source, as CI's
environment has it) and with ``PYTHONPYCACHEPREFIX`` pointing at a cache outside the checkout
(what ``tests/conftest.py`` gives the processes tests start; docs/testing.md): an emulator
daemon from start until ``/_emulator/health`` answers and SIGTERM ends it, and three ``deploy``
commands. Prints the median of each and the ratio.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = [sys.executable, "-c", "from deployer.cli.main import main; main()"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _daemon(env: dict[str, str], scratch: Path) -> None:
    state = scratch / "state"
    shutil.rmtree(state, ignore_errors=True)
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "deployer.emulator", "--state-dir", str(state), "--port",
         str(port), "--clock", "virtual"], env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/_emulator/health", timeout=1)
            break
        except OSError:
            time.sleep(0.05)
    proc.terminate()
    proc.wait(timeout=60)


def _deploy(*args: str) -> Callable[[dict[str, str], Path], None]:
    def run(env: dict[str, str], scratch: Path) -> None:
        subprocess.run([*DEPLOY, *args], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=False, timeout=120)
    return run


def _measure(run: Callable[[dict[str, str], Path], None], env: dict[str, str],
             scratch: Path) -> float:
    before = _children_cpu()
    run(env, scratch)
    return _children_cpu() - before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="measured runs of each (default 5)")
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    with tempfile.TemporaryDirectory(prefix="process-cost-") as tmp:
        scratch = Path(tmp)
        modes = {"compiled each time": {**base, "PYTHONDONTWRITEBYTECODE": "1"},
                 "shared bytecode": {**base, "PYTHONPYCACHEPREFIX": str(scratch / "pycache")}}
        subjects = {"emulator daemon start..stop": _daemon,
                    "deploy emulator status": _deploy("emulator", "status"),
                    "deploy validate": _deploy("validate"),
                    "deploy dev --help": _deploy("dev", "--help")}
        print(f"{'process':<30} {'compiled s':>11} {'shared s':>9}  ratio")
        for name, run in subjects.items():
            for env in modes.values():  # warm-up (fills the shared cache)
                run(env, scratch)
            samples: dict[str, list[float]] = {mode: [] for mode in modes}
            for _ in range(args.runs):
                for mode, env in modes.items():
                    samples[mode].append(_measure(run, env, scratch))
            old, new = (statistics.median(samples[mode]) for mode in modes)
            print(f"{name:<30} {old:11.2f} {new:9.2f}  {old / new:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
