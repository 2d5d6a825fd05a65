"""The seed's `deploy execute --delay 30` on the real clock, with the default latency model.

Run: python benchmarks/latency.py [--runs N] [--parallel P]   (about 45 s a round; not part of
the test suite)

Each run is what a user does on a fresh checkout: a copy of the app, `deploy up` (which
starts a background emulator on the real clock, with the cloud-like defaults of
docs/runtime.md "Latency model"), then `deploy execute --delay 30 --output json` on the fresh
GetJobStatus instance. `--parallel P` runs P of them at once (each its own emulator, port and
project), which also loads the machine. The copy's GetJobStatus additionally logs how many
seconds have passed since its module was imported (`start_time` is taken then), so each poll's
real elapsed time `d` is known to the millisecond:

* the seed ends JobSucceeded with try_count 4 when poll 4's `int(now) - start_time` exceeds
  30, which is certain once `d4 >= 31` (whatever the sub-second phase of `start_time`): the
  margin is `d4 - 31`;
* it would end at poll 3 instead (try_count 3) once `d3 >= 30`: the margin is `30 - d3`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true")

from seed_project import copy_project, free_port

CLI = [sys.executable, "-c", "from deployer.cli.main import main; main()"]
MARK = "seconds since import"
PROBE = ("_imported_at = time.time()  # benchmarks/latency.py\n",
         f"  logging.getLogger().info('{MARK} %.3f' % (time.time() - _imported_at))\n")


@dataclass(frozen=True)
class Run:
    status: str
    try_count: int
    duration: float
    elapsed: list[float]  # d of each poll, seconds since the module was imported


def _instrument(app: Path) -> None:
    """Log ``d`` at the start of each GetJobStatus call (the seed's logic is unchanged)."""
    path = app / "functions" / "get_job_status" / "index.py"
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("start_time"))
    lines.insert(at + 1, PROBE[0])
    call = next(i for i, line in enumerate(lines) if line.startswith("def handler"))
    lines.insert(call + 1, PROBE[1])
    path.write_text("".join(lines))


def _deploy(app: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run([*CLI, "-C", str(app), *args], capture_output=True, text=True,
                          env=env, check=False, timeout=180)
    if done.returncode not in (0, 5):
        raise RuntimeError(f"deploy {' '.join(args)}: exit {done.returncode}: {done.stderr}")
    return done.stdout


def one_run(parent: Path) -> Run:
    app = copy_project(parent)
    _instrument(app)
    env = {**os.environ, "DEPLOY_EMULATOR_PORT": str(free_port())}
    try:
        _deploy(app, env, "up", "--yes")
        result = json.loads(_deploy(app, env, "execute", "--delay", "30", "--output", "json"))
        logs = json.loads(_deploy(app, env, "logs", "GetJobStatus", "--limit", "10",
                                  "--output", "json"))
    finally:
        _deploy(app, env, "emulator", "stop")
    elapsed = sorted(float(m) for inv in logs["invocations"]
                     for m in re.findall(rf"{MARK} ([0-9.]+)", inv["log"]))
    output = result.get("output") or {}
    polls = result["states"].count("GetJobStatus")
    return Run(result["status"], int(output.get("try_count", polls)),
               float(result["duration_seconds"]), elapsed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3, help="runs in all")
    parser.add_argument("--parallel", type=int, default=1, help="runs at the same time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(args.parallel) as pool:
        dirs = [Path(tmp) / str(i) for i in range(args.runs)]
        for d in dirs:
            d.mkdir()
        runs = list(pool.map(one_run, dirs))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on "
          f"{os.cpu_count()} CPUs; {args.runs} runs, {args.parallel} at a time")
    print(f"{'status':<10} {'try':>3} {'duration':>9}  d of polls 1-4 (s)"
          f"{'':<14} {'d4-31':>6} {'30-d3':>6}")
    for run in runs:
        d = run.elapsed
        margins = (f"{d[3] - 31:6.3f} {30 - d[2]:6.3f}" if len(d) >= 4 else "")
        print(f"{run.status:<10} {run.try_count:>3} {run.duration:>8.3f}s  "
              f"{' '.join(f'{x:7.3f}' for x in d):<32} {margins}")
    full = [r.elapsed for r in runs if len(r.elapsed) >= 4]
    if full:
        print(f"margin at poll 4 (d4 - 31): min {min(d[3] - 31 for d in full):.3f} s, median "
              f"{statistics.median(d[3] - 31 for d in full):.3f} s; before poll 3 would "
              f"succeed (30 - d3): min {min(30 - d[2] for d in full):.3f} s")
    ok = sum(r.status == "Succeeded" and r.try_count == 4 for r in runs)
    print(f"JobSucceeded with try_count 4: {ok} of {len(runs)}")


if __name__ == "__main__":
    main()
