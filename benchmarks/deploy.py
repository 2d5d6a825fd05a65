"""First deploy and no-op re-deploy of the seed application on the local emulator.

Run: python benchmarks/deploy.py   (prints a table; not part of the test suite)

Two ways in: the `deploy` CLI as a user runs it (a new process per command, `--target local`,
against a background emulator daemon on a free port), and the same commands in-process
against `mock_cloud()` (`--target aliyun`, real endpoints intercepted). Target: a no-op
re-deploy in at most 1 s with 0 write calls.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

os.environ.setdefault("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true")

from deployer.cli.main import cli
from deployer.emulator import daemon
from deployer.testing import mock_cloud

ROOT = Path(__file__).resolve().parent.parent


def _project(tmp: Path) -> Path:
    app = tmp / "app"
    app.mkdir()
    shutil.copy(ROOT / "s.yaml", app / "s.yaml")
    for name in ("functions", "templates"):
        shutil.copytree(ROOT / name, app / name)
    return app


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cli_process(app: Path, env: dict[str, str]) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", "from deployer.cli.main import main; main()",
                           "-C", str(app), "up",
                           "--target", "local", "--output", "json"],
                          capture_output=True, text=True, env=env, check=True)
    return time.perf_counter() - start, int(json.loads(proc.stdout)["write_calls"])


def _import_baseline(env: dict[str, str]) -> tuple[float, int]:
    """A new interpreter importing what `deploy up` imports, sending nothing."""
    code = ("import deployer.cli.main, deployer.cli.commands.deploy, deployer.cloud.sts, "
            "alibabacloud_fc20230330.client, alibabacloud_fnf20190315.client, "
            "alibabacloud_ram20150501.client, alibabacloud_sts20150401.client")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, check=True)
    return time.perf_counter() - start, 0


def _cli_in_process(app: Path) -> tuple[float, int]:
    start = time.perf_counter()
    result = CliRunner().invoke(cli, ["-C", str(app), "up", "--target", "aliyun",
                                      "--output", "json"])
    elapsed = time.perf_counter() - start
    assert result.exit_code == 0, result.stderr
    return elapsed, int(json.loads(result.stdout)["write_calls"])


def main() -> None:
    rows: list[tuple[str, float, int]] = []
    with tempfile.TemporaryDirectory() as tmp:
        app = _project(Path(tmp))
        state_dir = app / ".deploy" / "emulator"
        daemon.start(state_dir, port=_free_port())
        env = {**os.environ}
        try:
            _cli_process(app, env)  # warm-up: the first run also compiles bytecode
            daemon.reset(state_dir)
            rows.append(("new process: interpreter + imports only", *_import_baseline(env)))
            rows.append(("deploy up, new process, local daemon: first", *_cli_process(app, env)))
            for i in range(3):
                rows.append((f"deploy up, new process, local daemon: no-op #{i + 1}",
                             *_cli_process(app, env)))
        finally:
            daemon.stop(state_dir)
    with tempfile.TemporaryDirectory() as tmp, mock_cloud():
        app = _project(Path(tmp))
        rows.append(("deploy up, in-process, mock_cloud: first", *_cli_in_process(app)))
        for i in range(3):
            rows.append((f"deploy up, in-process, mock_cloud: no-op #{i + 1}",
                         *_cli_in_process(app)))
    width = max(len(r[0]) for r in rows)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} CPUs")
    print(f"{'scenario':<{width}}  {'wall time':>10}  {'write calls':>11}")
    for name, seconds, writes in rows:
        print(f"{name:<{width}}  {seconds:>9.3f}s  {writes:>11}")


if __name__ == "__main__":
    main()
