"""Helpers for the runtime tests: real code zips and function specs."""

from __future__ import annotations

import hashlib
import json
import textwrap
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from deployer.emulator.runtime import InstanceSpec, InvocationResult, ProcessRuntime

ACCOUNT = "1234567890123456"
REGION = "cn-hangzhou"


def build_zip(directory: Path, files: Mapping[str, str],
              executable: frozenset[str] = frozenset()) -> tuple[Path, str]:
    """Zip ``files`` (dedented sources; the names in ``executable`` with mode 0755) into
    ``directory``; return (path, checksum)."""
    directory.mkdir(parents=True, exist_ok=True)
    contents = {name: textwrap.dedent(source).lstrip("\n") for name, source in files.items()}
    checksum = hashlib.sha256(json.dumps([contents, sorted(executable)], sort_keys=True)
                              .encode()).hexdigest()[:20]
    path = directory / f"{checksum}.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for name, source in sorted(contents.items()):
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o755 if name in executable else 0o644) << 16
            archive.writestr(info, source)
    return path, checksum


def make_spec(tmp_path: Path, files: Mapping[str, str], *,
              executable: frozenset[str] = frozenset(), **overrides: Any) -> InstanceSpec:
    """A InstanceSpec for code ``files`` with test defaults (timeout 3 s)."""
    path, checksum = build_zip(tmp_path / "zips", files, executable)
    fields: dict[str, Any] = {
        "account_id": ACCOUNT,
        "region": REGION,
        "function_name": "fn",
        "handler": "index.handler",
        "runtime": "python3.10",
        "timeout": 3,
        "memory_size": 128,
        "environment": {},
        "code_checksum": checksum,
        "code_zip": path,
    }
    fields.update(overrides)
    return InstanceSpec(**fields)


def call(
    runtime: ProcessRuntime,
    spec: InstanceSpec,
    event: bytes = b"",
    rid: str = "req-1",
    tail: bool = True,
) -> InvocationResult:
    return runtime.invoke(spec, event, request_id=rid, tail_logs=tail)


def payload_json(result: InvocationResult) -> Any:
    return json.loads(result.payload)


def fc_json(value: Any) -> bytes:
    """FC's serialisation of a non-str/bytes value (§8.3)."""
    return json.dumps(value, indent=4, sort_keys=True).encode()
