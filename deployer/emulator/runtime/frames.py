"""The protocol between the parent and a function's worker process, both directions: frames of
``>II`` (header length, body length), a JSON header, then raw body bytes.

Standard library only: the worker (``bootstrap.py``, run by path with ``-S``) loads this module
by path under a private name, the parent (``worker.py``) imports it as usual.
"""

from __future__ import annotations

import json
import os
import struct
from typing import Any

__all__ = ["FRAME", "encode_frame", "read_frame", "write_all"]

FRAME = struct.Struct(">II")


def encode_frame(header: dict[str, Any], body: bytes = b"") -> bytes:
    """One protocol frame: lengths, JSON header, raw body."""
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    return FRAME.pack(len(raw), len(body)) + raw + body


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (os.write may write less)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = os.read(fd, min(size - len(chunks), 1 << 20))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def read_frame(fd: int) -> tuple[dict[str, Any], bytes] | None:
    """Read one frame; None on EOF."""
    lengths = _read_exact(fd, FRAME.size)
    if lengths is None:
        return None
    header_size, body_size = FRAME.unpack(lengths)
    payload = _read_exact(fd, header_size + body_size)
    if payload is None:
        return None
    return json.loads(payload[:header_size]), payload[header_size:]
