"""Shared by the benchmark scripts: a copy of the repository's app and a free loopback port."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def copy_project(parent: Path) -> Path:
    """``parent/app``: a copy of s.yaml, functions/ and templates/."""
    app = parent / "app"
    app.mkdir()
    shutil.copy(ROOT / "s.yaml", app / "s.yaml")
    for name in ("functions", "templates"):
        shutil.copytree(ROOT / name, app / name)
    return app


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
