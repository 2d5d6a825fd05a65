"""Fault injection on a running local emulator: what ``deploy emulator faults`` does.

Each use case is one request to the daemon's admin endpoint ``/_emulator/faults`` through its
admin client (:func:`deployer.emulator.daemon.admin_request`, which sends the daemon's token);
the emulator validates every fault and its answer is returned as a result for the Renderer.
Faults and their fields: docs/emulator.md, "Fault injection".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from deployer.emulator import daemon

__all__ = ["FaultRequest", "FaultsResult", "add_fault", "clear_faults", "list_faults",
           "set_throttle"]

FAULTS_PATH = "/_emulator/faults"


@dataclass(frozen=True, slots=True)
class FaultRequest:
    """One fault to add; None fields are left out (the emulator's defaults apply)."""

    service: str
    action: str | None = None
    function: str | None = None
    flow: str | None = None
    error: str | None = None
    status: int | None = None
    message: str | None = None
    retry_after_ms: int | None = None
    function_error: str | None = None
    error_type: str | None = None
    timeout: bool = False
    latency: float | None = None
    times: int | None = None
    probability: float | None = None
    seed: int | None = None

    def payload(self) -> dict[str, Any]:
        fields = {**asdict(self), "timeout": self.timeout or None}
        return {key: value for key, value in fields.items() if value is not None}


@dataclass(frozen=True, slots=True)
class FaultsResult:
    """The emulator's faults after a command (``changed``: what the command did)."""

    faults: tuple[Mapping[str, Any], ...]
    throttle: str
    changed: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"faults": [dict(f) for f in self.faults], "throttle": self.throttle,
                "changed": self.changed}


def _current(state_dir: Path, changed: str) -> FaultsResult:
    answer = daemon.admin_request(state_dir, FAULTS_PATH, method="GET")
    return FaultsResult(tuple(answer.get("faults") or ()), str(answer.get("throttle", "off")),
                        changed)


def list_faults(state_dir: Path) -> FaultsResult:
    """The faults of the emulator of ``state_dir`` and its throttle mode."""
    return _current(state_dir, "")


def add_fault(state_dir: Path, request: FaultRequest) -> FaultsResult:
    """Add ``request``; OperationError with the emulator's reason when it refuses it."""
    added = daemon.admin_request(state_dir, FAULTS_PATH, request.payload())["fault"]
    return _current(state_dir, f"added {added['id']}")


def clear_faults(state_dir: Path, fault_id: str | None = None) -> FaultsResult:
    """Remove one fault (``fault_id``) or all of them."""
    if fault_id:
        path = f"{FAULTS_PATH}/{quote(fault_id, safe='')}"
        daemon.admin_request(state_dir, path, method="DELETE")
        return _current(state_dir, f"removed {fault_id}")
    cleared = daemon.admin_request(state_dir, FAULTS_PATH, method="DELETE")["cleared"]
    return _current(state_dir, f"cleared {cleared} fault{'s' if cleared != 1 else ''}")


def set_throttle(state_dir: Path, mode: str) -> FaultsResult:
    """``cloud``: apply the cloud's documented API quotas; ``off``: none."""
    daemon.admin_request(state_dir, f"{FAULTS_PATH}/throttle", {"mode": mode}, method="PUT")
    return _current(state_dir, f"throttle {mode}")
