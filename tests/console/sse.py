"""A minimal ``text/event-stream`` client over ``http.client`` for the console's live channel
tests (what a browser's EventSource does, without the automatic reconnect)."""

from __future__ import annotations

import http.client
import json
import socket
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Event:
    kind: str
    id: str
    data: str
    at: float  # time.monotonic() when its last line arrived

    def json(self) -> Any:
        return json.loads(self.data)


class EventStream:
    """One open stream; :meth:`next` returns the next event (comments skipped)."""

    def __init__(self, cloud: Any, path: str, headers: dict[str, str] | None = None,
                 timeout: float = 20.0, token: str | None = None) -> None:
        """``cloud``: a LocalCloud; the stream is asked for with its admin token (``token``:
        another one, ``""`` none)."""
        host, _, port = cloud.endpoint.rpartition(":")
        token = cloud.admin_token if token is None else token
        if token:
            headers = {"X-Emulator-Token": token, **(headers or {})}
        self.conn = http.client.HTTPConnection(host, int(port), timeout=timeout)
        self.conn.request("GET", path, headers={"Accept": "text/event-stream", **(headers or {})})
        self.response = self.conn.getresponse()
        self.status = self.response.status
        self.headers = dict(self.response.getheaders())

    def next(self) -> Event:
        """The next event; raises EOFError when the server ended the stream."""
        kind, event_id, data = "message", "", []
        while True:
            raw = self.response.readline()
            if not raw:
                raise EOFError("the server closed the stream")
            line = raw.decode("utf-8").rstrip("\r\n")
            if not line:
                if data or kind != "message":
                    return Event(kind, event_id, "\n".join(data), time.monotonic())
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                kind = value
            elif field == "id":
                event_id = value
            elif field == "data":
                data.append(value)

    def until(self, kind: str, predicate: Any = None) -> Event:
        """Skip events until one of ``kind`` (for which ``predicate(json)`` holds)."""
        while True:
            event = self.next()
            if event.kind == kind and (predicate is None or predicate(event.json())):
                return event

    def close(self) -> None:
        try:
            if self.conn.sock is not None:
                self.conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()

    def __enter__(self) -> EventStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def node(delta: dict[str, Any], key: str) -> dict[str, Any] | None:
    """The node ``key`` of a ``step`` event's delta (None when it did not change)."""
    return next((n for n in delta["nodes"] if n["key"] == key), None)
