"""Per-instance process and file limits as FC documents them (1,024 processes and threads,
100,000 open files; docs/runtime.md "Sandbox"): a fork bomb is refused early, in the handler's
own process and in a child process, and the instance keeps working."""

from __future__ import annotations

import base64
import io
import json
import resource
import zipfile
from collections.abc import Iterator

import pytest
from alibabacloud_fc20230330 import models as fc_models

from deployer.testing.environment import LocalCloud, mock_cloud

HANDLER = r'''
import json, os, resource, subprocess, sys, threading

def bomb(limit):
    """Fork children that wait on a pipe, until a fork is refused; then let them go."""
    read, write = os.pipe()
    children, refused = [], ""
    try:
        for _ in range(limit):
            pid = os.fork()
            if pid == 0:
                os.close(write)
                os.read(read, 1)
                os._exit(0)
            children.append(pid)
    except OSError as exc:
        refused = f"{type(exc).__name__}: {exc}"
    finally:
        os.close(write)
        os.close(read)
        for pid in children:
            os.waitpid(pid, 0)
    return len(children), refused

def threads(limit):
    stop = threading.Event()
    started, refused = [], ""
    try:
        for _ in range(limit):
            thread = threading.Thread(target=stop.wait)
            thread.start()
            started.append(thread)
    except RuntimeError as exc:
        refused = str(exc)
    stop.set()
    for thread in started:
        thread.join()
    return len(started), refused

def handler(event, context):
    kind = event.decode()
    if kind == "threads":
        return list(threads(3000))
    if kind == "child":  # a bomb in a process the handler starts counts against the instance
        code = "import index, json; print(json.dumps(index.bomb(3000)))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=os.getcwd(), timeout=100)
        return json.loads(out.stdout) if out.stdout.strip() else [-1, out.stderr[-300:]]
    return [resource.getrlimit(resource.RLIMIT_NOFILE)[0], "ok"]
'''


@pytest.fixture(scope="module")
def cloud(tmp_path_factory) -> Iterator[LocalCloud]:
    with mock_cloud(intercept=False, state_dir=tmp_path_factory.mktemp("limits")) as c:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr("index.py", HANDLER)
        c.fc_client().create_function(fc_models.CreateFunctionRequest(
            body=fc_models.CreateFunctionInput(
                function_name="bomb", runtime="python3.10", handler="index.handler",
                timeout=120, memory_size=1024, code=fc_models.InputCodeLocation(
                    zip_file=base64.b64encode(buffer.getvalue()).decode()))))
        yield c


def _invoke(cloud: LocalCloud, kind: str) -> list:
    response = cloud.fc_client().invoke_function("bomb", fc_models.InvokeFunctionRequest(
        body=kind.encode()))
    body = response.body.read()
    assert "x-fc-error-type" not in response.headers, body
    return json.loads(body)


@pytest.mark.parametrize("kind", ["threads", "child"])
def test_a_fork_bomb_is_refused_at_fcs_process_limit(cloud, kind) -> None:
    made, refused = _invoke(cloud, kind)
    assert 900 < made < 1024, (made, refused)  # FC: 1,024 processes and threads in all
    if kind == "child":  # fork() itself fails, EAGAIN
        assert refused.startswith("BlockingIOError: [Errno 11]"), refused
    if kind == "threads":
        assert refused == "can't start new thread", refused
    assert _invoke(cloud, "files") == [_open_files(), "ok"]  # the instance goes on


def _open_files() -> int:
    """FC's 100,000, unless this host's hard limit (which only a privileged process may
    raise) is lower."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return 100_000 if hard == resource.RLIM_INFINITY else min(100_000, hard)


def test_the_open_file_limit_is_fcs(cloud) -> None:
    assert _invoke(cloud, "files") in ([_open_files(), "ok"], [100_000, "ok"])
