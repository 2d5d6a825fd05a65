"""Helpers of the developer-loop tests: a copy of the repository's app, a free loopback port."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def copy_seed_app(parent: Path, name: str = "app") -> Path:
    """A copy of the repository's application (s.yaml, functions/, templates/) in ``parent``."""
    root = parent / name
    root.mkdir()
    shutil.copy(ROOT / "s.yaml", root / "s.yaml")
    for part in ("functions", "templates"):
        shutil.copytree(ROOT / part, root / part)
    return root.resolve()


def free_port() -> int:
    """A port nothing listens on right now (for a background emulator)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
