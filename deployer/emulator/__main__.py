"""``python -m deployer.emulator``: run the emulator in the foreground until SIGTERM/SIGINT.

Exit status 1 when it cannot start: the port is taken, another emulator holds the state
directory (named with its pid and endpoint), the state directory cannot be written or its
database is damaged (said with the way out), or the runtime files cannot be written (then it
stops again, so no daemon runs without them).
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import signal
import sys
import threading
from pathlib import Path

from deployer.emulator.clock import Clock, SystemClock, VirtualClock
from deployer.emulator.daemon import clear_runtime_files, write_runtime_files
from deployer.emulator.latency import (
    CLOUD_COLD_START,
    CLOUD_STEP_LATENCY,
    LatencyModel,
    latency_model,
)
from deployer.emulator.retention import Retention, parse_duration
from deployer.emulator.server import EmulatorServer, StateDirInUse
from deployer.emulator.services.errors import InvalidValue
from deployer.emulator.state_dir import StateDirUnusable


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    clock: Clock = VirtualClock() if args.clock == "virtual" else SystemClock()
    try:
        latency = latency_model(virtual=clock.is_virtual, cold_start=args.cold_start,
                                step_latency=args.step_latency)
        retention = _retention(args)
    except ValueError as exc:
        parser.error(str(exc).replace("_", "-"))
    server = _open(args, clock, latency, retention)
    return 1 if server is None else _serve(server, args, latency)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m deployer.emulator")
    parser.add_argument("--state-dir", type=Path, default=Path(".deploy/emulator"))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9125)
    parser.add_argument("--clock", choices=("real", "virtual"), default="real")
    parser.add_argument("--region", default="cn-hangzhou")
    parser.add_argument("--step-latency", type=float, default=None, metavar="SECONDS",
                        help="CloudFlow's overhead per step (default: "
                             f"{CLOUD_STEP_LATENCY:g} on the real clock, 0 on the virtual one)")
    parser.add_argument("--cold-start", type=float, default=None, metavar="SECONDS",
                        help="FC's initialisation of a new instance, between importing its "
                             f"module and the first call (default: {CLOUD_COLD_START:g} on the "
                             "real clock, 0 on the virtual one)")
    parser.add_argument("--throttle", choices=("off", "cloud"), default="off",
                        help="cloud: apply the cloud's documented API quotas (docs/emulator.md)")
    parser.add_argument("--mocks", type=Path, action="append", default=[], metavar="FILE",
                        help="mocked task results to load (repeatable; docs/emulator.md "
                             "\"Mocked integrations\")")
    parser.add_argument("--execution-retention", default="30d", metavar="DURATION",
                        help="how long an ended execution and its history are kept, e.g. 30d, "
                             "12h, 90s (default: 30d)")
    parser.add_argument("--log-retention", default="30d", metavar="DURATION",
                        help="how long functions' invocation logs are kept (default: 30d, Log "
                             "Service's default)")
    return parser


def _retention(args: argparse.Namespace) -> Retention:
    return Retention(parse_duration(args.execution_retention, "--execution-retention"),
                     parse_duration(args.log_retention, "--log-retention"))


def _open(args: argparse.Namespace, clock: Clock, latency: LatencyModel,
          retention: Retention) -> EmulatorServer | None:
    """The server listening and holding the state directory; None (said on stderr) when the
    directory is in use or the port cannot be had."""
    try:
        server = EmulatorServer(args.state_dir, args.host, args.port, clock,
                                region=args.region, step_latency=latency.step_latency,
                                cold_start=latency.cold_start, throttle=args.throttle,
                                retention=retention)
    except StateDirInUse as exc:
        print(f"Error: {exc}; stop it first (deploy emulator stop) or use another --state-dir",
              file=sys.stderr)
        return None
    except StateDirUnusable as exc:
        print(exc.line(), file=sys.stderr)
        return None
    except OSError as exc:
        print(f"Error: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
              file=sys.stderr)
        return None
    try:
        for path in args.mocks:
            server.emulator.mocks.load_file(path)
    except InvalidValue as exc:
        print(f"Error: {exc.message}", file=sys.stderr)
        server.stop()
        return None
    return server


def _serve(server: EmulatorServer, args: argparse.Namespace, latency: LatencyModel) -> int:
    """Write the runtime files, serve until SIGTERM/SIGINT, then stop and clear them."""
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    log = logging.getLogger("deployer.emulator")
    try:  # before serving: whoever sees the daemon answer can read its endpoint and token
        write_runtime_files(args.state_dir, server.endpoint, server.admin_token)
    except OSError as exc:
        log.error("cannot write the runtime files in %s (%s): stopping", args.state_dir, exc)
        server.stop()
        clear_runtime_files(args.state_dir)
        return 1
    server.start()
    if not _loopback(args.host):
        log.warning("listening on %s: the cloud APIs are reachable from the network "
                    "(the admin surface still answers loopback clients only)", args.host)
    log.info("listening on %s (state %s); latency: %s", server.url, args.state_dir,
             latency.describe())
    try:
        # wake now and then: a signal delivered to another thread is only handled once the
        # main thread runs Python code again
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
        clear_runtime_files(args.state_dir)
    return 0


def _loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


if __name__ == "__main__":
    sys.exit(main())
