"""What the README's test command costs: wall time and CPU time of every process it starts.

Run: ``python benchmarks/suite_time.py [--] [COMMAND ...]`` (default: the README's test command,
``ruff check . && mypy && lint-imports && pytest -n 4 --dist worksteal -q``, through
``bash -c``). Extra pytest
options go after ``--pytest``: ``python benchmarks/suite_time.py --pytest --cpu-report
/tmp/cpu.json --durations=60``.

The command runs under this process made a child subreaper (Linux ``PR_SET_CHILD_SUBREAPER``),
so every process it starts — xdist workers, emulator daemons, function workers, nested
``pytest`` and ``deploy`` runs, however detached — is reaped here and its user + system time
counted, once the command has ended and they have too. Processes still alive
``--linger`` seconds after the command ended are listed by pid and command line (a test that
leaks a daemon) and killed. Prints one line per step of the command (ruff, mypy, lint-imports,
pytest: timed separately) and the totals. CPU seconds hold on a loaded machine where wall time
does not; the budget (docs/testing.md) is 4 minutes of wall time on 2 idle cores, i.e. at most
about 480 CPU seconds with both cores busy all the time.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STEPS = (["ruff", "check", "."], ["mypy"], ["lint-imports"],
         ["pytest", "-n", "4", "--dist", "worksteal", "-q"])
PR_SET_CHILD_SUBREAPER = 36


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only-pytest", action="store_true",
                        help="run the pytest step alone")
    parser.add_argument("--linger", type=float, default=20.0,
                        help="seconds to wait for leftover processes after a step")
    parser.add_argument("--pytest", nargs=argparse.REMAINDER, default=[],
                        help="extra arguments for the pytest step (the rest of the line)")
    args = parser.parse_args()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("warning: not a child subreaper; detached processes go uncounted",
              file=sys.stderr)
    steps = [list(s) for s in STEPS[3:] if args.only_pytest] or [list(s) for s in STEPS]
    steps[-1] += args.pytest
    rows = []
    status = 0
    for step in steps:
        wall, cpu, code = _run(step, args.linger)
        rows.append((" ".join(step[:4]), wall, cpu, code))
        status = status or code
    print(f"\n{'step':<24} {'wall s':>8} {'cpu s':>8}  exit")
    for name, wall, cpu, code in rows:
        print(f"{name:<24} {wall:8.1f} {cpu:8.1f}  {code}")
    print(f"{'total':<24} {sum(r[1] for r in rows):8.1f} {sum(r[2] for r in rows):8.1f}  "
          f"{status}   (load average now {os.getloadavg()[0]:.1f})")
    return status


def _run(command: list[str], linger: float) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    proc = subprocess.Popen(command, cwd=ROOT)
    code = proc.wait()
    wall = time.monotonic() - started
    _reap(linger)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu, code


def _reap(linger: float) -> None:
    """Wait for every remaining descendant; after ``linger`` seconds, name and kill them."""
    deadline = time.monotonic() + linger
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid:
            continue
        if time.monotonic() > deadline:
            for child in _children():
                print(f"leftover process {child}: {_cmdline(child)}", file=sys.stderr)
                os.kill(child, signal.SIGKILL)
            deadline = float("inf")
        time.sleep(0.1)


def _children() -> list[int]:
    me = str(os.getpid())
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            if stat[stat.rindex(")") + 2:].split()[1] == me:
                found.append(int(name))
    return found


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace")[:200]


if __name__ == "__main__":
    sys.exit(main())
