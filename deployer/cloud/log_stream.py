"""A function's invocations as the local emulator records them, read from its log stream
(``GET /_emulator/logs/stream``, server-sent events) instead of polled.

:meth:`LogStream.open` connects and returns once the emulator has taken the starting point
(its ``ready`` event), or None when the emulator offers no stream (an older daemon): the caller
then polls. :meth:`LogStream.next_batch` blocks until the emulator sends invocations. A lost
connection (the daemon restarted, or was silent for :data:`SILENCE` seconds although it sends
a comment every 15 s) is opened again once, with ``Last-Event-ID`` (the last invocation read),
so nothing is missed; if that fails too, :class:`CloudConnectionError`. A deleted function ends
the stream with :class:`NotFoundError` (exit 4), as the poll does.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import socket
import urllib.parse
from collections.abc import Callable
from typing import Any

from deployer.cloud.errors import CloudConnectionError
from deployer.errors import NotFoundError, OperationError

__all__ = ["SILENCE", "TOKEN_HEADER", "TOKEN_HINT", "LogStream"]

SILENCE = 60.0  # seconds without a byte (heartbeats included) after which the stream is lost
PATH = "/_emulator/logs/stream"
TOKEN_HEADER = "X-Emulator-Token"  # the emulator's log endpoints need its admin token
TOKEN_HINT = ("the emulator's log endpoints need its admin token: run the command from the "
              "project whose emulator it is (its token is in .deploy/emulator/emulator.json)")


class _Refused(Exception):
    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(status)
        self.status, self.body = status, body


class LogStream:
    """One function's log stream from one emulator; see the module docstring."""

    def __init__(self, endpoint: str, region: str, function: str,
                 decode: Callable[[dict[str, Any]], Any], token: str = "") -> None:
        self._endpoint, self._region, self._function = endpoint, region, function
        self._token = token
        self._decode = decode
        self._last = ""  # the id of the last invocation read
        self._conn: http.client.HTTPConnection | None = None
        self._response: http.client.HTTPResponse | None = None

    @classmethod
    def open(cls, endpoint: str, region: str, function: str,
             decode: Callable[[dict[str, Any]], Any], token: str = "") -> LogStream | None:
        """The stream, positioned after everything logged so far (read with the emulator's
        admin ``token``); None when the emulator at ``endpoint`` has no log stream."""
        stream = cls(endpoint, region, function, decode, token)
        try:
            stream._connect()
        except _Refused as refused:
            if refused.status == 404 and b"NotFound" in refused.body:
                raise NotFoundError(f"function {function} does not exist",
                                    hint="deploy it with `deploy up`") from None
            if refused.status in (400, 404):  # PathNotSupported: a daemon without the stream
                return None
            raise OperationError(f"the emulator refused the log stream: HTTP "
                                 f"{refused.status}",
                                 hint=TOKEN_HINT if refused.status == 403 else None) from None
        return stream

    def _connect(self) -> None:
        self.close()
        query = urllib.parse.urlencode({"function": self._function, "region": self._region})
        host, _, port = self._endpoint.rpartition(":")
        conn = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=SILENCE)
        headers = {"Accept": "text/event-stream", TOKEN_HEADER: self._token}
        if self._last:
            headers["Last-Event-ID"] = self._last
        try:
            conn.request("GET", f"{PATH}?{query}", headers=headers)
            response = conn.getresponse()
        except OSError as exc:
            conn.close()
            raise CloudConnectionError(f"cannot follow the logs at the emulator at "
                                       f"{self._endpoint}: {exc}", service="emulator",
                                       operation="logs/stream") from None
        if response.status != 200:
            body = response.read()
            conn.close()
            raise _Refused(response.status, body)
        self._conn, self._response = conn, response
        kind, _ = self._event()
        if kind != "ready":
            self.close()
            raise CloudConnectionError(f"the emulator at {self._endpoint} sent {kind!r} "
                                       "instead of starting the log stream",
                                       service="emulator", operation="logs/stream")

    def _event(self) -> tuple[str, str]:
        """The next event's (kind, data); OSError/EOFError when the connection is lost."""
        assert self._response is not None
        kind, event_id = "message", ""
        data: list[str] = []
        while True:
            raw = self._response.readline()
            if not raw:
                raise EOFError("the emulator closed the log stream")
            line = raw.decode("utf-8").rstrip("\r\n")
            if not line:
                if data:
                    if event_id:
                        self._last = event_id
                    return kind, "\n".join(data)
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                kind = value
            elif name == "data":
                data.append(value)
            elif name == "id":
                event_id = value

    def next_batch(self) -> list[Any]:
        """Block until the emulator records the next invocation; return it (decoded). Raises
        NotFoundError once the function is deleted."""
        for attempt in range(2):
            try:
                kind, data = self._event()
            except (OSError, EOFError):  # a timeout is an OSError too
                if attempt:
                    break
                try:
                    self._connect()
                except (_Refused, CloudConnectionError):
                    break
                continue
            if kind == "invocation":
                return [self._decode(json.loads(data))]
            if kind == "gone":
                self.close()
                raise NotFoundError(f"function {self._function} does not exist",
                                    hint="it was deleted while its logs were followed")
            return []
        self.close()
        raise CloudConnectionError(f"lost the log stream of the emulator at {self._endpoint}",
                                   service="emulator", operation="logs/stream")

    def close(self) -> None:
        """Close the connection (idempotent)."""
        conn, self._conn, self._response = self._conn, None, None
        if conn is not None:
            if conn.sock is not None:
                with contextlib.suppress(OSError):
                    conn.sock.shutdown(socket.SHUT_RDWR)
            conn.close()
