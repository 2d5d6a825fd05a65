"""Start-up and deploy times of the `deploy` CLI on the local emulator.

Run: python benchmarks/deploy.py [--runs N] [--against DIR] [--instructions]
(prints tables; not part of the test suite)

New processes, as a user runs the CLI: `deploy --help`, and `deploy up` against a background
emulator daemon on a free port — the first deploy, then no-op re-deploys. Each figure is the
median of N runs, wall time and the child's CPU time (user + system; steadier on a shared
machine). Children get their bytecode cached (PYTHONPYCACHEPREFIX in a temporary directory,
PYTHONDONTWRITEBYTECODE unset), as an installed package has it. Then where a no-op `deploy up`
spends its import time (`python -X importtime`, self time per top-level package, the least
of three runs), and the same commands in-process against `mock_cloud()`.
Targets: `deploy --help` at most 0.15 s, a no-op `deploy up` at most 0.6 s, 0 write calls.

`--against DIR` compares this checkout with another one of the project (say, main): the no-op
`deploy up` and `deploy --help` of both, run interleaved (A, B, A, B, ...) against the same
daemon, each tree on PYTHONPATH with its own bytecode cache; medians and the ratio.
`--instructions` adds callgrind's instruction counts of one no-op `deploy up` and one
`deploy --help` (deterministic, whatever the load; with --against, of both trees).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

os.environ.setdefault("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true")

from seed_project import ROOT, copy_project, free_port

from deployer.cli.main import cli
from deployer.emulator import daemon
from deployer.testing import mock_cloud

CLI = [sys.executable, "-c", "from deployer.cli.main import main; main()"]
# Under callgrind (some 50x slower) the collector's 1 s start-up pause would end early: keep it
# for the whole run, as in a real run shorter than the pause (deployer.cli.startup).
CLI_CALLGRIND = [sys.executable, "-c",
                 "try:\n    import deployer.cli.startup as s\n    s.PAUSE_SECONDS = 600\n"
                 "except ImportError:\n    pass\n"
                 "from deployer.cli.main import main; main()"]


def _child_env(tmp: Path, tree: Path | None = None) -> dict[str, str]:
    """The environment of a child: bytecode cached under ``tmp``; ``tree`` (another
    checkout) first on the path. Children run in that cache directory (see ``_timed``), so a
    checkout in the current directory does not shadow ``tree``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cache = tmp / "pycache" / (tree.name if tree else "this")
    cache.mkdir(parents=True, exist_ok=True)
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    env["PYTHONPATH"] = str(tree or ROOT)
    return env


def _timed(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(args, capture_output=True, text=True, env=env, check=True,
                          cwd=env.get("PYTHONPYCACHEPREFIX"))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def _medians(args: list[str], env: dict[str, str], runs: int) -> tuple[float, float, int]:
    samples = [_timed(args, env) for _ in range(runs)]
    writes = [int(json.loads(s[2])["write_calls"]) for s in samples if s[2].startswith("{")]
    return (statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples),
            max(writes, default=0))


def _import_costs(args: list[str], env: dict[str, str]) -> list[tuple[str, float]]:
    best: dict[str, int] = collections.defaultdict(lambda: 10**12)
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-X", "importtime", *args[1:]],
                              capture_output=True, text=True, env=env, check=True,
                              cwd=env["PYTHONPYCACHEPREFIX"])
        for line in proc.stderr.splitlines():
            if line.startswith("import time:") and "self [us]" not in line:
                self_us, _cumulative, name = line[len("import time:"):].split("|")
                best[name.strip()] = min(best[name.strip()], int(self_us))
    per_package: collections.Counter[str] = collections.Counter()
    for name, micros in best.items():
        per_package[name.split(".")[0]] += micros
    total = sum(per_package.values())
    return [("(all imports)", total / 1000)] + [
        (name, micros / 1000) for name, micros in per_package.most_common(14)]


def _instructions(args: list[str], env: dict[str, str]) -> int:
    """callgrind's instruction count of one run of ``args`` (a warm bytecode cache)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *args],
                       capture_output=True, text=True, check=True,
                       env={**env, "PYTHONHASHSEED": "0"}, cwd=env.get("PYTHONPYCACHEPREFIX"))
        with open(out) as profile:
            totals = re.search(r"^totals: (\d+)", profile.read(), re.MULTILINE)
    assert totals is not None, "callgrind wrote no totals"
    return int(totals.group(1))


def _compare(app: Path, tmp: Path, other: Path, runs: int, instructions: bool) -> None:
    """This checkout (A) against ``other`` (B), interleaved; see the module docstring."""
    envs = {"A": _child_env(tmp), "B": _child_env(tmp, other.resolve())}
    for env in envs.values():
        env["DEPLOY_EMULATOR_PORT"] = os.environ["DEPLOY_EMULATOR_PORT"]
    commands = {"no-op deploy up": [*CLI, "-C", str(app), "up", "--yes", "--output", "json"],
                "deploy --help": [*CLI, "--help"]}
    for env in envs.values():  # warm-up: bytecode caches
        for args in commands.values():
            _timed(args, env)
    print(f"\nA = {ROOT}, B = {other}; interleaved, medians of {runs} runs")
    print(f"{'command':<18} {'A wall':>8} {'B wall':>8} {'A cpu':>8} {'B cpu':>8} "
          f"{'A/B cpu':>8}")
    for name, args in commands.items():
        samples: dict[str, list[tuple[float, float, str]]] = {"A": [], "B": []}
        for _ in range(runs):
            for key, env in envs.items():
                samples[key].append(_timed(args, env))
        wall = {k: statistics.median(s[0] for s in v) for k, v in samples.items()}
        cpu = {k: statistics.median(s[1] for s in v) for k, v in samples.items()}
        print(f"{name:<18} {wall['A']:>7.3f}s {wall['B']:>7.3f}s {cpu['A']:>7.3f}s "
              f"{cpu['B']:>7.3f}s {cpu['A'] / cpu['B']:>8.3f}")
    if instructions:
        print(f"{'instructions':<18} {'A':>14} {'B':>14} {'A/B':>7}")
        for name, args in commands.items():
            counts = {k: _instructions([*CLI_CALLGRIND, *args[len(CLI):]], env)
                      for k, env in envs.items()}
            print(f"{name:<18} {counts['A']:>14,} {counts['B']:>14,} "
                  f"{counts['A'] / counts['B']:>7.3f}")


def _in_process(app: Path) -> tuple[float, int]:
    start = time.perf_counter()
    result = CliRunner().invoke(cli, ["-C", str(app), "up", "--yes", "--output", "json"])
    elapsed = time.perf_counter() - start
    assert result.exit_code == 0, result.stderr
    return elapsed, int(json.loads(result.stdout)["write_calls"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="another checkout to compare with (interleaved runs)")
    parser.add_argument("--instructions", action="store_true",
                        help="also count instructions with callgrind")
    options = parser.parse_args()
    runs = options.runs
    rows: list[tuple[str, float, float, int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        app = copy_project(Path(tmp))
        env = _child_env(Path(tmp))
        env["DEPLOY_EMULATOR_PORT"] = os.environ["DEPLOY_EMULATOR_PORT"] = str(free_port())
        up = [*CLI, "-C", str(app), "up", "--yes", "--output", "json"]
        try:
            _timed(up, env)  # warm-up: starts the daemon, caches bytecode
            if options.against is not None:
                _compare(app, Path(tmp), options.against, runs, options.instructions)
                return
            _timed([*CLI, "--help"], env)
            daemon.reset(app / ".deploy" / "emulator")
            rows.append(("deploy up, first (new process, local daemon)", *_medians(up, env, 1)))
            rows.append(("deploy up, no-op (new process, local daemon)",
                         *_medians(up, env, runs)))
            rows.append(("deploy up --output text, no-op (new process)",
                         *_medians(up[:-2], env, runs)))
            rows.append(("deploy --help (new process)", *_medians([*CLI, "--help"], env, runs)))
            imports = _import_costs(up, env)
        finally:
            daemon.stop(app / ".deploy" / "emulator")
    with tempfile.TemporaryDirectory() as tmp, mock_cloud():
        app = copy_project(Path(tmp))
        first = _in_process(app)
        noop = statistics.median(_in_process(app)[0] for _ in range(runs))
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} CPUs; medians of {runs} runs")
    width = max(len(r[0]) for r in rows)
    print(f"{'scenario':<{width}}  {'wall':>8}  {'cpu':>8}  {'writes':>6}")
    for name, wall, cpu, writes in rows:
        print(f"{name:<{width}}  {wall:>7.3f}s  {cpu:>7.3f}s  {writes:>6}")
    print(f"{'deploy up in-process, mock_cloud: first':<{width}}  {first[0]:>7.3f}s")
    print(f"{'deploy up in-process, mock_cloud: no-op':<{width}}  {noop:>7.3f}s")
    noop_wall = rows[1][1]
    help_wall = rows[3][1]
    print(f"targets: no-op deploy up <= 0.6 s: {noop_wall:.3f} s; deploy --help <= 0.15 s: "
          f"{help_wall:.3f} s")
    print("\nimport time of a no-op `deploy up` (self time per top-level package, ms):")
    for name, ms in imports:
        print(f"  {ms:7.1f}  {name}")


if __name__ == "__main__":
    main()
