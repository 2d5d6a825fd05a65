"""CloudFlow's RPC parameters as its actions read them, with CloudFlow's error codes, and its
list answers (items plus a NextToken only when there is a next page)."""

from __future__ import annotations

import re
from typing import Any

from deployer.emulator.api import errors as e
from deployer.emulator.api.router import RpcCall

__all__ = ["boolean", "integer", "listing", "required"]

_INTEGER = re.compile(r"-?[0-9]{1,18}")


def required(call: RpcCall, name: str) -> str:
    value = call.params.get(name)
    if value is None or value == "":
        # the wording of CloudFlow's error table (API reference, MissingRequiredParams)
        raise e.MissingRequiredParams(f"The HTTP query '{name}' must be specified.")
    return value


def integer(call: RpcCall, name: str, default: int, low: int, high: int) -> int:
    raw = call.params.get(name)
    if raw is None or raw == "":
        return default
    if not _INTEGER.fullmatch(raw):
        raise e.InvalidArgument(f"{name} must be an integer, got {raw!r}.")
    value = int(raw)
    if not low <= value <= high:
        raise e.InvalidArgument(f"{name} must be between {low} and {high}, got {value}.")
    return value


def boolean(call: RpcCall, name: str) -> bool:
    raw = (call.params.get(name) or "").strip().lower()
    if raw in ("", "false", "0"):
        return False
    if raw in ("true", "1"):
        return True
    raise e.InvalidArgument(f"{name} must be true or false, got {raw!r}.")


def listing(key: str, items: list[dict[str, Any]], token: str) -> dict[str, Any]:
    """A list answer: ``{key: items}``, with ``NextToken`` when there is a next page."""
    body: dict[str, Any] = {key: items}
    if token:
        body["NextToken"] = token
    return body
