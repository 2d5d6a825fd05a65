"""A built wheel (not the editable install) serves the console with its templates and assets."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow

SERVE = """
import sys, tempfile, urllib.request
from pathlib import Path
import deployer
assert deployer.__file__.startswith(sys.argv[1]), deployer.__file__
from deployer.emulator.server import EmulatorServer
from deployer.emulator.clock import VirtualClock
from deployer.testing.runtimes import EchoRuntime
with EmulatorServer(Path(tempfile.mkdtemp()), clock=VirtualClock(), runtime=EchoRuntime()) as s:
    for path in ("/_console/r/cn-hangzhou/flows", "/_console/static/console.css",
                 "/_console/static/console.js"):
        with urllib.request.urlopen(s.url + path) as r:
            print(r.status, path, r.headers["Content-Type"], len(r.read()))
"""


def test_wheel_serves_console_pages_and_assets(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, timeout=300)
    wheel = next(tmp_path.glob("cloudflow_deployer-*.whl"))
    unpacked = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        zf.extractall(unpacked)
    assert "deployer/console/static/console.js" in names
    assert "deployer/console/templates/execution.html" in names
    out = subprocess.run([sys.executable, "-c", SERVE, str(unpacked)], capture_output=True,
                         text=True, timeout=120, cwd=tmp_path,
                         env={"PYTHONPATH": str(unpacked), "PATH": "/usr/bin:/bin",
                              "ALIBABA_CLOUD_ECS_METADATA_DISABLED": "true"})
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["200", "200", "200"]
    assert "text/css" in lines[1] and "text/javascript" in lines[2]
