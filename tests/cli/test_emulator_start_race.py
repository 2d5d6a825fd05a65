"""Commands started together with no emulator running share one daemon (docs/emulator.md
"Running it"): each CLI process is its own, as when a user runs several ``deploy`` commands at
once, so the race is real."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from deployer.cli.main import cli

STARTERS = 5


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_commands_started_together_share_one_daemon(tmp_path: Path) -> None:
    state = tmp_path / "state"
    port = _free_port()
    command = [sys.executable, "-c", "from deployer.cli.main import main; main()",
               "emulator", "start", "--state-dir", str(state), "--port", str(port),
               "--clock", "virtual", "--output", "json"]
    starters = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                for _ in range(STARTERS)]
    try:
        outcomes = [(p.wait(timeout=90), *p.communicate()) for p in starters]
        for code, _out, err in outcomes:
            assert code == 0, err.decode()
        docs = [json.loads(out) for _, out, _ in outcomes]
        assert {doc["pid"] for doc in docs} == {docs[0]["pid"]}  # one daemon
        assert {doc["endpoint"] for doc in docs} == {f"127.0.0.1:{port}"}
        assert sorted(doc["message"] for doc in docs) == \
            ["already running"] * (STARTERS - 1) + ["started"]
    finally:
        for p in starters:
            if p.poll() is None:
                p.kill()
        CliRunner().invoke(cli, ["emulator", "stop", "--state-dir", str(state)])
