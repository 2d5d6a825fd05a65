"""The values Function Compute 3.0's domain logic hands out: a function's settings
(:class:`FunctionSettings`), the function itself (:class:`Function`) and the outcome of an
invocation (:class:`Invocation`). Plain frozen data, no behaviour beyond record mapping.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from deployer.emulator.services.ports import InvocationResult
from deployer.emulator.store.repos import FunctionRecord

__all__ = ["Function", "FunctionSettings", "InvocationOutcome", "function_from_record"]


@dataclass(frozen=True, slots=True)
class FunctionSettings:
    """Settings of a function. ``opaque`` holds settings stored and echoed verbatim."""

    runtime: str
    handler: str
    memory_size: int = 512
    cpu: float = 0.35
    disk_size: int = 512
    timeout: int = 3
    instance_concurrency: int = 1
    environment: Mapping[str, str] = field(default_factory=dict)
    description: str = ""
    role: str = ""
    internet_access: bool = True
    layers: tuple[str, ...] = ()
    initializer_handler: str | None = None
    initializer_timeout: int | None = None
    pre_stop_handler: str | None = None
    pre_stop_timeout: int | None = None
    opaque: Mapping[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["layers"] = list(self.layers)
        return data

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> FunctionSettings:
        known = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["layers"] = tuple(values.get("layers", ()))
        return cls(**values)


@dataclass(frozen=True, slots=True)
class Function:
    account_id: str
    region: str
    name: str
    function_id: str
    config: FunctionSettings
    tags: tuple[tuple[str, str], ...]
    code_checksum: str
    code_size: int
    created_at: float
    modified_at: float
    state: str = "Active"
    last_update_status: str = "Successful"
    warnings: tuple[str, ...] = ()  # said once, by the Create/UpdateFunction that caused them

    @property
    def arn(self) -> str:
        return f"acs:fc:{self.region}:{self.account_id}:functions/{self.name}"


@dataclass(frozen=True, slots=True)
class InvocationOutcome:
    """Outcome of an invocation; ``result`` is None for an accepted async invocation."""

    request_id: str
    asynchronous: bool
    result: InvocationResult | None
    version_id: str = "LATEST"  # the version that ran (or will run)


def function_from_record(rec: FunctionRecord) -> Function:
    """The :class:`Function` a stored record (current settings or a version's snapshot) holds."""
    return Function(rec.account_id, rec.region, rec.name, rec.function_id,
                    FunctionSettings.from_record(rec.config), rec.tags, rec.code_checksum,
                    rec.code_size, rec.created_at, rec.modified_at)
