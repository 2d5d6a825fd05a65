"""Plain request/response values passed between the server and the API modules.

The server fills :class:`HttpRequest` from the raw request line, so ``raw_target`` is the path and
query exactly as received (signatures are computed over it); nothing here decodes ``%2F``.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

__all__ = ["Headers", "HttpRequest", "HttpResponse", "json_response"]


@dataclass(frozen=True, slots=True)
class Headers:
    """Case-insensitive, multi-valued request headers in wire order."""

    items: tuple[tuple[str, str], ...] = ()

    def get_all(self, name: str) -> list[str]:
        lname = name.lower()
        return [v for k, v in self.items if k.lower() == lname]

    def get(self, name: str, default: str | None = None) -> str | None:
        values = self.get_all(name)
        return values[0] if values else default

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.get_all(name))


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """One HTTP request as received."""

    method: str
    raw_target: str
    headers: Headers
    body: bytes = b""
    remote_addr: str = "127.0.0.1"

    @property
    def raw_path(self) -> str:
        return self.raw_target.partition("?")[0] or "/"

    @property
    def raw_query(self) -> str:
        return self.raw_target.partition("?")[2]

    def query_params(self) -> dict[str, str]:
        """The query parsed with form rules (``+`` is a space), blank values kept."""
        return _form_dict(self.raw_query)

    def form_params(self) -> dict[str, str]:
        """A form-encoded body's parameters ({} for other content types or bad UTF-8)."""
        ctype = (self.headers.get("content-type") or "").lower()
        if not ctype.startswith("application/x-www-form-urlencoded") or not self.body:
            return {}
        try:
            text = self.body.decode("utf-8")
        except UnicodeDecodeError:
            return {}
        return _form_dict(text)


def _form_dict(text: str) -> dict[str, str]:
    """``parse_qsl`` with blank values kept; texts up to 16 KB are memoised (the router and
    the signature check both parse the same request)."""
    if len(text) > 16384:
        return dict(parse_qsl(text, keep_blank_values=True))
    return dict(_parse_small(text))


@functools.lru_cache(maxsize=64)
def _parse_small(text: str) -> tuple[tuple[str, str], ...]:
    return tuple(parse_qsl(text, keep_blank_values=True))


@dataclass(slots=True)
class HttpResponse:
    """A complete response; the server adds Content-Length and never compresses."""

    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def json_response(
    status: int, payload: Mapping[str, Any], headers: Mapping[str, str]
) -> HttpResponse:
    """A JSON response (UTF-8, compact) with ``headers`` added."""
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return HttpResponse(status, body, {"Content-Type": "application/json", **headers})


def wire_time(ts: float) -> str:
    """Epoch seconds as FC 3.0 / RAM print times: ``YYYY-MM-DDTHH:MM:SSZ`` (UTC)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
