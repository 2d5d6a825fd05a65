"""Asynchronous invocations as tasks (the FC service's side): records, retries, the maximum
event age, destinations to a function, stopping an enqueued task."""

from __future__ import annotations

import base64
import io
import json
import zipfile

from alibabacloud_fc20230330 import models as fc

from deployer.testing import mock_cloud

CODE = ("import json\ndef handler(event, context):\n"
        "    if event == b'boom':\n        raise ValueError('boom')\n"
        "    print('got', event.decode())\n    return event\n")


def _create(cloud, name: str) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("index.py", CODE)
    cloud.fc_client().create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name=name, runtime="python3.10", handler="index.handler",
        code=fc.InputCodeLocation(zip_file=base64.b64encode(buffer.getvalue()).decode()))))


def _async(cloud, name: str, body: bytes, task: str) -> None:
    """What InvokeFunction with x-fc-invocation-type Async and x-fc-async-task-id asks of the
    service (the FC contract passes the header once its routes are declared)."""
    cloud.server.emulator.functions.invoke(cloud.account_id, cloud.region, name, body,
                                           request_id=f"1-req-{task}", asynchronous=True,
                                           task_id=task)


def test_failed_tasks_retry_then_reach_their_failure_destination() -> None:
    with mock_cloud() as cloud:
        _create(cloud, "work")
        _create(cloud, "dead-letters")
        emulator = cloud.server.emulator
        a, r = cloud.account_id, cloud.region
        emulator.async_configs.put(a, r, "work", "LATEST", {
            "maxAsyncRetryAttempts": 2, "destinationConfig": {"onFailure": {
                "destination": f"acs:fc:{r}:{a}:functions/dead-letters"}}})
        _async(cloud, "work", b"boom", "task-boom")
        _async(cloud, "work", b"fine", "task-fine")
        cloud.wait_for_async_invocations()
        cloud.wait_for_async_invocations()  # the destination's invocation
        boom = emulator.async_tasks.get(a, r, "work", "task-boom")
        fine = emulator.async_tasks.get(a, r, "work", "task-fine")
        tasks, _ = emulator.async_tasks.list(a, r, "work")
        letters = cloud.invocations("dead-letters")
        attempts = [x for x in cloud.invocations("work") if x.status == "Failed"]
    assert (boom.status, boom.retries, boom.destination_status) == ("Failed", 2, "Succeeded")
    assert "boom" in boom.error_message and len(attempts) == 3
    assert (fine.status, fine.return_payload, fine.retries) == ("Succeeded", b"fine", 0)
    assert {t.task_id for t in tasks} == {"task-boom", "task-fine"}
    (letter,) = letters
    got = json.loads(next(x for x in letter.log.splitlines() if "got" in x).split("got ", 1)[1])
    assert got["requestContext"]["approximateInvokeCount"] == 3
    assert got["requestContext"]["condition"] == "UnhandledInvocationError"
    assert got["requestPayload"] == "boom"


def test_old_events_expire_and_enqueued_tasks_can_be_stopped() -> None:
    with mock_cloud() as cloud:
        _create(cloud, "work")
        emulator = cloud.server.emulator
        a, r = cloud.account_id, cloud.region
        emulator.async_configs.put(a, r, "work", "", {"maxAsyncEventAgeInSeconds": 60})
        held: list = []
        tasks = emulator.async_tasks
        original = tasks.queue
        tasks.queue = held.append  # hold the queue while the test looks
        try:
            _async(cloud, "work", b"late", "task-late")
            _async(cloud, "work", b"stop", "task-stop")
        finally:
            tasks.queue = original
        emulator.async_tasks.stop(a, r, "work", "task-stop")
        cloud.advance(120)
        for job in held:
            job()
        late = emulator.async_tasks.get(a, r, "work", "task-late")
        stopped = emulator.async_tasks.get(a, r, "work", "task-stop")
        ran = cloud.invocations("work")
    assert late.status == "Expired" and stopped.status == "Stopped" and ran == []
