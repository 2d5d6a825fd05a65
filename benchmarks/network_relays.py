"""What attaching a user-mode network stack to a fresh instance namespace costs: slirp4netns
(with and without its own sandbox) against pasta (passt), the candidates for functions'
internet access (docs/runtime.md "Network").

Like for like: each round makes one user + network namespace per candidate (a process that
``unshare``s, as a worker does), then times from starting the relay to the namespace being
ready (slirp4netns writes its ready pipe; pasta's first process exits once it has configured the
namespace and forked to the background) and reads the relay's resident memory. Candidates are
interleaved within a round; the report gives medians over rounds and the ratio to slirp4netns
as the emulator runs it. Nothing is sent anywhere: the namespaces only get their interface.

    python benchmarks/network_relays.py [--rounds 30]

Needs slirp4netns and passt installed (a missing one is skipped) and a host that allows user
namespaces and /dev/net/tun to the user running it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HOLDER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
uid, gid = os.getuid(), os.getgid()
if libc.unshare(0x10000000 | 0x40000000) != 0:
    raise SystemExit("unshare: " + os.strerror(ctypes.get_errno()))
open("/proc/self/setgroups", "w").write("deny")
open("/proc/self/uid_map", "w").write(f"{uid} {uid} 1")
open("/proc/self/gid_map", "w").write(f"{gid} {gid} 1")
print("in", flush=True)
sys.stdin.read()
"""

Started = tuple[float, int, Callable[[], None]]  # ms to ready, relay pid, stop


def _rss_kb(pid: int) -> int:
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def slirp(pid: int, sandbox: bool) -> Started:
    ready_r, ready_w = os.pipe()
    exit_r, exit_w = os.pipe()
    extra = ["--enable-sandbox", "--enable-seccomp"] if sandbox else []
    started = time.perf_counter()
    relay = subprocess.Popen(
        ["slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback",
         f"--ready-fd={ready_w}", f"--exit-fd={exit_r}", *extra, str(pid), "eth0"],
        pass_fds=(ready_w, exit_r), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(ready_w)
    os.close(exit_r)
    ok = os.read(ready_r, 1) == b"1"
    elapsed = (time.perf_counter() - started) * 1000
    os.close(ready_r)
    if not ok:
        raise SystemExit("slirp4netns failed to start")

    def stop() -> None:
        os.close(exit_w)
        relay.wait(5)

    return elapsed, relay.pid, stop


def pasta(pid: int) -> Started:
    pid_file = Path(tempfile.mkdtemp()) / "pasta.pid"
    runas = [] if os.geteuid() else ["--runas", "0:0"]  # as root, join before dropping
    started = time.perf_counter()
    done = subprocess.run(
        ["pasta", "--config-net", "-q", "-t", "none", "-u", "none", "-T", "none", "-U", "none",
         "--no-map-gw", "-4", "-P", str(pid_file), *runas, str(pid)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = (time.perf_counter() - started) * 1000
    if done.returncode:
        raise SystemExit(f"pasta failed: {done.stderr.decode().strip()}")
    daemon = int(pid_file.read_text())

    def stop() -> None:  # pasta (this version) outlives a namespace given by pid
        with contextlib.suppress(ProcessLookupError):
            os.kill(daemon, signal.SIGTERM)
        pid_file.unlink()
        pid_file.parent.rmdir()

    return elapsed, daemon, stop


def measure(start: Callable[[int], Started]) -> tuple[float, int]:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "in"
        elapsed, relay, stop = start(holder.pid)
        rss = _rss_kb(relay)
        stop()
        return elapsed, rss
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(5)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args(argv)
    candidates: dict[str, Callable[[int], Started]] = {}
    if shutil.which("slirp4netns"):
        candidates["slirp4netns, sandbox + seccomp (used)"] = lambda pid: slirp(pid, True)
        candidates["slirp4netns, no sandbox"] = lambda pid: slirp(pid, False)
    if shutil.which("pasta"):
        candidates["pasta"] = pasta
    if not candidates:
        raise SystemExit("neither slirp4netns nor pasta is installed")
    for start in candidates.values():  # warm-up (page cache)
        measure(start)
    times: dict[str, list[float]] = {label: [] for label in candidates}
    memory: dict[str, list[int]] = {label: [] for label in candidates}
    for _ in range(args.rounds):
        for label, start in candidates.items():
            elapsed, rss = measure(start)
            times[label].append(elapsed)
            memory[label].append(rss)
    base = statistics.median(next(iter(times.values())))
    print(f"{args.rounds} rounds, load average {os.getloadavg()[0]:.1f} (medians)")
    print(f"{'relay':<40} {'ready ms':>9} {'x used':>7} {'RSS KiB':>8}")
    for label in candidates:
        ms = statistics.median(times[label])
        print(f"{label:<40} {ms:>9.1f} {ms / base:>7.2f} {statistics.median(memory[label]):>8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
