"""Raw HTTP over a socket, for the front-door tests: send bytes as given, read responses."""

from __future__ import annotations

import hashlib
import json
import secrets
import socket
import time
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from deployer.emulator.api.signing import acs3_signature


@dataclass
class Reply:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body)


def read_reply(fp: BinaryIO) -> Reply | None:
    """One response from ``fp`` (None at end of stream); 1xx responses are returned too."""
    line = fp.readline()
    if not line:
        return None
    parts = line.decode("latin-1").split(" ", 2)
    reply = Reply(int(parts[1]))
    while True:
        header = fp.readline().decode("latin-1")
        if header in ("\r\n", "\n", ""):
            break
        name, _, value = header.partition(":")
        reply.headers[name.strip().lower()] = value.strip()
    if 100 <= reply.status < 200 or reply.status in (204, 304):
        return reply
    if reply.headers.get("transfer-encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int(fp.readline().split(b";")[0], 16)
            chunk = fp.read(size + 2)[:size]
            if size == 0:
                break
            chunks.append(chunk)
        reply.body = b"".join(chunks)
    elif "content-length" in reply.headers:
        reply.body = fp.read(int(reply.headers["content-length"]))
    else:
        reply.body = fp.read()
    return reply


class Wire:
    """A client connection sending raw bytes."""

    def __init__(self, port: int, timeout: float = 10.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.fp = self.sock.makefile("rb")

    def send(self, data: bytes) -> Wire:
        self.sock.sendall(data)
        return self

    def reply(self) -> Reply:
        got = read_reply(self.fp)
        assert got is not None, "the server closed the connection without a response"
        return got

    def closed(self) -> bool:
        """Whether the server has closed its side (reads end of stream)."""
        try:
            return self.fp.read(1) == b""
        except (ConnectionResetError, TimeoutError):
            return True

    def close(self) -> None:
        self.fp.close()
        self.sock.close()

    def __enter__(self) -> Wire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def exchange(port: int, data: bytes, timeout: float = 10.0) -> Reply:
    with Wire(port, timeout) as wire:
        return wire.send(data).reply()


def request(method: str, target: str, headers: dict[str, str] | None = None,
            body: bytes = b"", *, length: bool = True) -> bytes:
    lines = [f"{method} {target} HTTP/1.1"]
    for name, value in (headers or {}).items():
        lines.append(f"{name}: {value}")
    if length and body and not any(k.lower() == "content-length" for k in (headers or {})):
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape") + body


def acs_date(at: float | None = None) -> str:
    """``x-acs-date`` / ``Timestamp`` for ``at`` (default: now), as the SDKs write it."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() if at is None else at))


def signed_headers(cloud: Any, method: str, target: str, body: bytes = b"",
                   **extra: str) -> dict[str, str]:
    """ACS3-HMAC-SHA256 headers as the FC SDK sends them (Host = the loopback endpoint)."""
    headers = {"host": cloud.endpoint, "x-acs-version": "2023-03-30", "x-acs-action": "Any",
               "x-acs-date": acs_date(), "x-acs-signature-nonce": secrets.token_hex(16),
               "x-acs-content-sha256": hashlib.sha256(body).hexdigest(), **extra}
    signed = ";".join(sorted(headers))
    sig = acs3_signature(method, target, lambda n: [headers[n]], signed,
                         headers["x-acs-content-sha256"], cloud.access_key_secret)
    headers["Authorization"] = (f"ACS3-HMAC-SHA256 Credential={cloud.access_key_id},"
                                f"SignedHeaders={signed},Signature={sig}")
    return headers


def assert_cloud_error(reply: Reply, status: int, code: str | None = None) -> dict[str, Any]:
    """A JSON error body of the cloud's shape, with an exact Content-Length."""
    assert reply.status == status, (reply.status, reply.body[:300])
    payload: dict[str, Any] = reply.json()
    assert payload["RequestId"] and payload["Message"], payload
    if code is not None:
        assert payload["Code"] == code, payload
    assert "Traceback" not in reply.body.decode("utf-8", "replace")
    assert int(reply.headers["content-length"]) == len(reply.body)
    return payload
