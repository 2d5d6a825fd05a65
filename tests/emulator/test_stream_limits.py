"""Event streams are bounded per client and in total (docs/emulator.md "What it guarantees"):
10,000 idle stream requests get either a stream or ``429 TooManyStreams`` at once, and API
clients keep being served while the streams stay open."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from alibabacloud_fnf20190315 import models as fnf

from deployer.emulator.clock import VirtualClock
from deployer.emulator.server import EmulatorServer, ServerLimits
from deployer.testing.environment import LocalCloud
from deployer.testing.runtimes import EchoRuntime
from tests.emulator.wire import exchange, request

ATTEMPTS = 10_000
CLIENTS = [f"127.0.0.{n}" for n in range(1, 9)]  # eight loopback client addresses


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[LocalCloud]:
    server = EmulatorServer(tmp_path / "state", clock=VirtualClock(), runtime=EchoRuntime(),
                            limits=ServerLimits()).start()
    try:
        yield LocalCloud(server, "cn-hangzhou")
    finally:
        server.stop()


class Streams:
    """Idle event streams held open by this test (asyncio, in a thread of its own)."""

    def __init__(self, cloud: LocalCloud) -> None:
        self.port, self.endpoint, self.token = cloud.server.port, cloud.endpoint, \
            cloud.admin_token
        self.open: list[asyncio.StreamWriter] = []
        self.refused: list[tuple[str, dict]] = []
        self.loop = asyncio.new_event_loop()

    def request(self) -> bytes:
        return (f"GET /_console/api/engine/stream HTTP/1.1\r\nHost: {self.endpoint}\r\n"
                f"X-Emulator-Token: {self.token}\r\nAccept: text/event-stream\r\n\r\n").encode()

    async def _one(self, client: str, gate: asyncio.Semaphore) -> None:
        async with gate:
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", self.port, local_addr=(client, 0))
            writer.write(self.request())
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 20)
            status = head.split(b" ", 2)[1].decode()
            if status == "200":
                self.open.append(writer)
                return
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            body = json.loads(await asyncio.wait_for(reader.readexactly(length), 20))
            self.refused.append((status, body))
            writer.close()

    def attempt(self, count: int) -> None:
        async def run() -> None:
            gate = asyncio.Semaphore(256)
            await asyncio.gather(*(self._one(CLIENTS[i % len(CLIENTS)], gate)
                                   for i in range(count)))
        self.loop.run_until_complete(run())

    def close(self, count: int | None = None) -> None:
        chosen = self.open[:count] if count is not None else list(self.open)
        for writer in chosen:
            writer.close()
            self.open.remove(writer)
        self.loop.run_until_complete(asyncio.sleep(0.2))  # let the closes go out


@pytest.mark.slow
def test_ten_thousand_idle_streams_are_capped_and_api_clients_are_served(cloud) -> None:
    total, per_client = cloud.server.limits.stream_caps()
    assert (total, per_client) == (1024, 256)
    assert cloud.server.limits.max_connections < ATTEMPTS  # more than it can hold
    streams = Streams(cloud)
    try:
        began = time.monotonic()
        streams.attempt(ATTEMPTS)
        assert len(streams.open) == total  # eight clients of 256 would be 2,048
        assert len(streams.refused) == ATTEMPTS - total
        statuses = {status for status, _ in streams.refused}
        assert statuses == {"429"}
        assert {body["Code"] for _, body in streams.refused} == {"TooManyStreams"}
        assert any("1024 event streams, its limit" in body["Message"]
                   for _, body in streams.refused)
        assert time.monotonic() - began < 120
        # while a thousand streams stay open: the cloud APIs and the admin API answer
        started = time.monotonic()
        flows = cloud.fnf_client().list_flows(fnf.ListFlowsRequest())
        assert flows.status_code == 200
        health = exchange(cloud.server.port, request(
            "GET", "/_emulator/health", {"Host": cloud.endpoint}))
        assert health.status == 200
        assert time.monotonic() - started < 5
        # a closed stream frees its place
        streams.close(10)
        streams.attempt(10)
        assert len(streams.open) == total
    finally:
        streams.close()
        streams.loop.close()


def test_one_client_gets_at_most_its_share(cloud) -> None:
    per_client = cloud.server.limits.stream_caps()[1]
    streams = Streams(cloud)
    try:
        only_one = streams._one

        async def run() -> None:
            gate = asyncio.Semaphore(64)
            await asyncio.gather(*(only_one("127.0.0.1", gate) for _ in range(per_client + 5)))
        streams.loop.run_until_complete(run())
        assert len(streams.open) == per_client
        assert len(streams.refused) == 5
        assert all("the limit per client" in body["Message"] for _, body in streams.refused)
        # another client is still served
        streams.loop.run_until_complete(only_one("127.0.0.2", asyncio.Semaphore(1)))
        assert len(streams.open) == per_client + 1
    finally:
        streams.close()
        streams.loop.close()
