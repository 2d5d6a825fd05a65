"""The running daemon's files in its state directory, and admin requests with its token.

``emulator.pid`` and ``emulator.json`` (pid, endpoint and the admin token, mode 0600) are
written by the daemon once it listens and removed on a clean stop; ``admin_request`` and the
log readers take the token from ``emulator.json``.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from deployer.errors import OperationError

__all__ = ["INFO_FILE", "PID_FILE", "admin_request", "admin_token", "clear_runtime_files",
           "read_info", "write_runtime_files"]

PID_FILE = "emulator.pid"
INFO_FILE = "emulator.json"


def write_runtime_files(state_dir: Path, endpoint: str, token: str) -> None:
    """Record the running daemon (called by the daemon once it listens). ``emulator.json``
    holds the admin token, so it is readable by its owner only."""
    info = json.dumps({"pid": os.getpid(), "endpoint": endpoint, "token": token}).encode()
    path = state_dir / INFO_FILE
    partial = path.with_suffix(".json.tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, info)
    finally:
        os.close(fd)
    os.replace(partial, path)
    (state_dir / PID_FILE).write_text(str(os.getpid()))


def read_info(state_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((state_dir / INFO_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def admin_token(state_dir: Path) -> str:
    """The running daemon's admin token ("" when none is recorded)."""
    return str(read_info(state_dir).get("token") or "")


def admin_request(state_dir: Path, path: str, payload: dict[str, Any] | None = None, *,
                  timeout: float = 10.0, method: str = "POST") -> dict[str, Any]:
    """Send ``payload`` (JSON; ``method`` POST by default, or GET, PUT, DELETE) to the running
    daemon's admin ``path`` (``/_emulator/...``) with its token; the JSON answer.
    OperationError when it is not running or refuses (with the emulator's message)."""
    from deployer.emulator.api.local_guard import (
        EMULATOR_TOKEN_HEADER,  # not needed to start or ask
    )

    info = read_info(state_dir)
    endpoint, token = info.get("endpoint"), info.get("token")
    if not endpoint or not token:
        raise OperationError(f"no running emulator recorded in {state_dir}",
                             hint="run `deploy emulator start` first")
    req = urllib.request.Request(
        f"http://{endpoint}{path}", method=method,
        data=None if method == "GET" else json.dumps(payload or {}).encode(),
        headers={"Content-Type": "application/json", EMULATOR_TOKEN_HEADER: str(token)})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            answer: dict[str, Any] = json.loads(resp.read() or b"{}")
            return answer
    except urllib.error.HTTPError as exc:
        try:
            message = json.loads(exc.read()).get("Message", "")
        except ValueError:
            message = ""
        raise OperationError(f"the emulator refused {path}: {exc.code} {message}".strip()) \
            from None
    except (OSError, ValueError) as exc:
        raise OperationError(f"the emulator at {endpoint} did not answer {path}: {exc}") \
            from None


def clear_runtime_files(state_dir: Path) -> None:
    for name in (PID_FILE, INFO_FILE):
        (state_dir / name).unlink(missing_ok=True)
