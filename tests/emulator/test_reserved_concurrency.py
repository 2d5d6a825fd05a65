"""Reserved concurrency: synchronous requests beyond it are throttled (QuotaExceeded
ResourceExhausted from the service; its 429 on the wire comes with the FC contract's error
table), asynchronous ones wait for a slot; 0 stops the function."""

from __future__ import annotations

import base64
import io
import threading
import zipfile

import pytest
from alibabacloud_fc20230330 import models as fc

from deployer.emulator.services.errors import InvalidValue, Quota, QuotaExceeded
from deployer.testing import mock_cloud

SLOW = ("import time\ndef handler(event, context):\n"
        "    if event == b'slow':\n        time.sleep(1.5)\n    return 'done'\n")


def _create(cloud) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("index.py", SLOW)
    cloud.fc_client().create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="capped", runtime="python3.10", handler="index.handler", timeout=10,
        code=fc.InputCodeLocation(zip_file=base64.b64encode(buffer.getvalue()).decode()))))


def _invoke(cloud, body: bytes) -> bytes:
    return cloud.fc_client().invoke_function(
        "capped", fc.InvokeFunctionRequest(body=body)).body.read()


def _direct(cloud, body: bytes, asynchronous: bool = False):
    return cloud.server.emulator.functions.invoke(
        cloud.account_id, cloud.region, "capped", body, request_id=f"r-{body!r}",
        asynchronous=asynchronous)


def test_sync_requests_beyond_the_reservation_are_throttled() -> None:
    with mock_cloud() as cloud:
        _create(cloud)
        limits = cloud.server.emulator.concurrency
        limits.put(cloud.account_id, cloud.region, "capped", 1)
        started = threading.Event()
        results: list[bytes] = []

        def slow() -> None:
            started.set()
            results.append(_invoke(cloud, b"slow"))

        worker = threading.Thread(target=slow)
        worker.start()
        started.wait()
        while not limits._running:  # the slow request holds the one slot
            threading.Event().wait(0.01)
        with pytest.raises(QuotaExceeded) as throttled:
            _direct(cloud, b"fast")
        queued = _direct(cloud, b"fast", asynchronous=True)  # waits for the slot
        worker.join()
        cloud.wait_for_async_invocations()
        statuses = [r.status for r in cloud.invocations("capped")]
        after = _invoke(cloud, b"fast")
        limits.put(cloud.account_id, cloud.region, "capped", 0)
        with pytest.raises(QuotaExceeded) as stopped:
            _direct(cloud, b"fast")
        limits.delete(cloud.account_id, cloud.region, "capped")
        free = _invoke(cloud, b"fast")
        with pytest.raises(InvalidValue):
            limits.put(cloud.account_id, cloud.region, "capped", -1)
        listed, _ = limits.list(cloud.account_id, cloud.region)
    assert throttled.value.quota is Quota.RESERVED_CONCURRENCY
    assert "reserved concurrency is 1" in throttled.value.message
    assert queued.asynchronous and statuses == ["Succeeded", "Succeeded"]
    assert results == [b"done"] and after == b"done" and free == b"done"
    assert "reserved concurrency is 0" in stopped.value.message
    assert listed == []
