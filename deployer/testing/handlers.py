"""Run a Function Compute Python handler in-process with a fake context."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class FakeCredentials:
    access_key_id: str = ""
    access_key_secret: str = ""
    security_token: str = ""


@dataclass(frozen=True, slots=True)
class FakeFunction:
    name: str = "function"
    handler: str = "index.handler"
    memory: int = 512
    timeout: int = 3


@dataclass(frozen=True, slots=True)
class FakeService:
    name: str = ""
    log_project: str = ""
    log_store: str = ""
    qualifier: str = "LATEST"
    version_id: str = ""


@dataclass(frozen=True, slots=True)
class FakeContext:
    """The attributes of FC's Python 3.10 ``context`` object (reference fc3-api.md §8.5)."""

    request_id: str = field(default_factory=lambda: f"1-{uuid.uuid4().hex[:32]}")
    credentials: FakeCredentials = field(default_factory=FakeCredentials)
    function: FakeFunction = field(default_factory=FakeFunction)
    service: FakeService = field(default_factory=FakeService)
    region: str = "cn-hangzhou"
    account_id: str = "1234567890123456"
    retry_count: int = 0

    @property
    def requestId(self) -> str:
        return self.request_id


def invoke_handler(
    handler: Callable[[bytes, Any], Any], event: Any = b"", context: FakeContext | None = None
) -> Any:
    """Call ``handler(event_bytes, context)`` as FC's Python runtime would.

    ``event`` may be bytes (passed unchanged), a str (UTF-8 encoded) or any JSON value (dumped).
    Returns whatever the handler returns; exceptions propagate.
    """
    if isinstance(event, bytes):
        payload = event
    elif isinstance(event, str):
        payload = event.encode("utf-8")
    else:
        payload = json.dumps(event).encode("utf-8")
    return handler(payload, context or FakeContext())
