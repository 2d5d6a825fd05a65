"""Shared helpers of the CloudFlow emulator tests."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import jinja2
from alibabacloud_fnf20190315 import models as fnf

REPO = Path(__file__).resolve().parents[2]


def pass_flow(name: str, *, extra: str = "") -> str:
    """A one-Pass-state flow named ``name``."""
    return (f"Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: p1\n{extra}"
            "States:\n  - Type: Pass\n    Name: p1\n    End: true\n")


def wait_flow(name: str, seconds: int = 100) -> str:
    return (f"Type: StateMachine\nSpecVersion: v1\nName: {name}\nStartAt: w\nStates:\n"
            f"  - Type: Wait\n    Name: w\n    Seconds: {seconds}\n    Next: done\n"
            "  - Type: Pass\n    Name: done\n    End: true\n")


def seed_flow(*, account: str, name: str = "MyWorkFlow", wait: int = 10, max_polls: int = 3,
              region: str = "cn-hangzhou") -> str:
    """The seed's polling flow: templates/flow.yaml.j2 rendered."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    template = env.from_string((REPO / "templates" / "flow.yaml.j2").read_text())
    return template.render(region=region, account_id=account, flow_name=name,
                           start_job_function="StartJob",
                           get_job_status_function="GetJobStatus", wait_seconds=wait,
                           max_polls=max_polls)


def create(client: Any, name: str, definition: str, **kw: Any) -> Any:
    return client.create_flow(fnf.CreateFlowRequest(
        name=name, definition=definition, description=kw.pop("description", ""),
        type="FDL", **kw)).body


def function_zip(directory: Path) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for path in sorted(directory.rglob("*.py")):
            zf.write(path, path.relative_to(directory).as_posix())
    return buf.getvalue()
