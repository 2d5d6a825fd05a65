"""Escape attempts from handler code, one handler per attempt, through the official FC SDK
against an in-process emulator (``mock_cloud``). Each must fail the documented way
(docs/runtime.md "Sandbox") and leave the emulator and the other functions untouched."""

from __future__ import annotations

import base64
import io
import json
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from alibabacloud_fc20230330 import models
from alibabacloud_tea_openapi.exceptions import ClientException
from darabonba.runtime import RuntimeOptions

from deployer.testing.environment import LocalCloud, mock_cloud

VICTIM = "def handler(event, context):\n    return 'victim-ok'\n"


def _zip(files: dict[str, str | bytes], *, mode: dict[str, int] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (mode or {}).get(name, 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, content)
    return buffer.getvalue()


def _create(fc, name: str, code: bytes, **kwargs) -> models.CreateFunctionResponse:
    body = models.CreateFunctionInput(
        function_name=name, runtime=kwargs.pop("runtime", "python3.10"),
        handler=kwargs.pop("handler", "index.handler"),
        timeout=kwargs.pop("timeout", 10), memory_size=kwargs.pop("memory_size", 128),
        code=models.InputCodeLocation(zip_file=base64.b64encode(code).decode()), **kwargs)
    return fc.create_function(models.CreateFunctionRequest(body=body))


def _invoke(fc, name: str, event: bytes = b"", *, tail: bool = False):
    headers = models.InvokeFunctionHeaders(x_fc_log_type="Tail" if tail else None)
    response = fc.invoke_function_with_options(
        name, models.InvokeFunctionRequest(body=event), headers, RuntimeOptions())
    return response, response.body.read()


@pytest.fixture(scope="module")
def cloud(tmp_path_factory) -> Iterator[LocalCloud]:
    with mock_cloud(intercept=False, state_dir=tmp_path_factory.mktemp("sandbox")) as c:
        fc = c.fc_client()
        _create(fc, "victim", _zip({"index.py": VICTIM}))
        yield c


@pytest.fixture(scope="module")
def fc(cloud):
    return cloud.fc_client()


def _untouched(cloud: LocalCloud, fc) -> None:
    """The victim still answers as deployed, and the emulator's identity still works."""
    response, body = _invoke(fc, "victim")
    assert body == b"victim-ok" and "x-fc-error-type" not in response.headers
    identity = json.loads((cloud.state_dir / "identity.json").read_text())
    assert identity["access_key_secret"] == cloud.access_key_secret


def _probe(fc, name: str, source: str, event: bytes = b"", **kwargs) -> dict:
    _create(fc, name, _zip({"index.py": source}), **kwargs)
    response, body = _invoke(fc, name, event)
    assert "x-fc-error-type" not in response.headers, body
    return json.loads(body)


ATTEMPT = """
import json, os
def handler(event, context):
    try:
        result = ATTEMPT
    except Exception as exc:
        return {"blocked": type(exc).__name__, "errno": getattr(exc, "errno", None)}
    return {"done": repr(result)[:200]}
"""


def _attempt(fc, name: str, expression: str, event: bytes = b"") -> dict:
    return _probe(fc, name, ATTEMPT.replace("ATTEMPT", expression), event)


def test_code_directory_is_read_only_and_shared_code_cache_is_untouched(cloud, fc):
    source = "def handler(event, context):\n    return 'original'\n"
    attacker = ATTEMPT.replace("ATTEMPT", "open(os.path.join(os.getcwd(), 'index.py'), 'w')"
                               ".write(\"def handler(e, c):\\n    return 'changed'\\n\")")
    shared = {"index.py": source, "attack.py": attacker}
    _create(fc, "same-zip-a", _zip(shared), handler="attack.handler")
    _create(fc, "same-zip-b", _zip(shared))
    _, body = _invoke(fc, "same-zip-a")
    assert json.loads(body)["blocked"] in ("PermissionError", "OSError")
    assert _invoke(fc, "same-zip-b")[1] == b"original"
    _untouched(cloud, fc)


@pytest.mark.parametrize("target", ["identity.json", "emulator.db"])
def test_emulator_state_is_not_readable(cloud, fc, target):
    path = str(cloud.state_dir / target)
    result = _attempt(fc, f"read-{target.replace('.', '-')}",
                      "open(event.decode(), 'rb').read()", path.encode())
    assert result["blocked"] in ("PermissionError", "FileNotFoundError")
    _untouched(cloud, fc)


def test_emulator_state_is_not_writable(cloud, fc):
    path = str(cloud.state_dir / "planted.txt")
    # Refused, or (state under the host's /tmp) written into the instance's own private /tmp:
    # either way the emulator's state directory does not change.
    _attempt(fc, "plant", "open(event.decode(), 'w').write('x')", path.encode())
    assert not (cloud.state_dir / "planted.txt").exists()
    _untouched(cloud, fc)


def test_other_functions_code_is_not_readable(cloud, fc):
    _untouched(cloud, fc)  # the victim has run: its code is unpacked
    victim = fc.get_function("victim", models.GetFunctionRequest()).body.code_checksum
    roots = list((cloud.state_dir / "runtime" / "code").glob(f"*{victim}*"))
    assert roots, "the victim's code is unpacked"
    target = str(roots[0] / "index.py")
    result = _attempt(fc, "peek", "open(event.decode()).read()", target.encode())
    assert result["blocked"] in ("PermissionError", "FileNotFoundError")
    _untouched(cloud, fc)


def test_sys_path_holds_only_code_stdlib_and_builtins_and_missing_dependency_fails(cloud, fc):
    paths = _probe(fc, "paths", "import sys, os\ndef handler(event, context):\n"
                   "    return {'path': sys.path, 'cwd': os.getcwd()}\n")
    assert paths["path"][0] == paths["cwd"]
    site = [p for p in paths["path"] if "site-packages" in p]
    assert site == [], paths["path"]
    _create(fc, "missing-dep", _zip({"index.py": "import alibabacloud_tea_openapi\n"
                                     "def handler(event, context):\n    return 1\n"}))
    response, body = _invoke(fc, "missing-dep")
    assert response.headers["x-fc-error-type"] == "UnhandledInvocationError"
    error = json.loads(body)
    assert (error["errorType"], error["errorMessage"]) == (
        "ImportModuleError", "Unable to import module 'index'")
    _create(fc, "emulator-dep", _zip({"index.py": "import deployer\n"
                                      "def handler(event, context):\n    return 1\n"}))
    assert json.loads(_invoke(fc, "emulator-dep")[1])["errorType"] == "ImportModuleError"
    _create(fc, "builtin-dep", _zip({"index.py": "import requests\n"
                                     "def handler(event, context):\n    return 'ok'\n"}))
    assert _invoke(fc, "builtin-dep")[1] == b"ok"  # FC ships requests with python3.10
    _untouched(cloud, fc)


def test_memory_size_is_enforced_and_peak_reported(cloud, fc):
    _create(fc, "hog", _zip({"index.py": "def handler(event, context):\n"
                             "    if event == b'big':\n"
                             "        block = bytearray(1024 * 1024 * 1024)\n"
                             "        return len(block)\n"
                             "    return 'small'\n"}), memory_size=128)
    response, body = _invoke(fc, "hog", b"big", tail=True)
    assert response.headers["x-fc-error-type"] == "UnhandledInvocationError"
    assert json.loads(body)["errorMessage"].startswith(
        "Process exited unexpectedly before completing request")
    assert float(response.headers["x-fc-max-memory-usage"]) >= 128
    log = base64.b64decode(response.headers["x-fc-log-result"]).decode()
    assert "Function ran out of memory" in log
    response, body = _invoke(fc, "hog", b"small")
    assert body == b"small"
    assert 0 < float(response.headers["x-fc-max-memory-usage"]) < 128
    _untouched(cloud, fc)


def _bomb() -> bytes:
    """A zip whose central directory declares a 1 GiB member (1 KiB on the wire)."""
    data = bytearray(_zip({"index.py": "x" * 1024}))
    size = (1 << 30).to_bytes(4, "little")
    central = data.rfind(b"PK\x01\x02")
    data[central + 24:central + 28] = size  # uncompressed size in the central directory
    return bytes(data)


@pytest.mark.parametrize("code, reason", [
    (_bomb(), "to 1073741824 bytes"),
    (_zip({"index.py": "", "big.bin": b"\0" * (8 * 1024 * 1024)}), "zip bomb"),
    (_zip({"index.py": "", "../escape.py": "x"}), "outside the code directory"),
    (_zip({"index.py": "", "/etc/escape.py": "x"}), "outside the code directory"),
    (_zip({"index.py": "", "link": "/etc/passwd"}, mode={"link": stat.S_IFLNK | 0o777}),
     "symbolic link"),
])
def test_unsafe_packages_are_refused_at_create_and_update(fc, code, reason):
    encoded = base64.b64encode(code).decode()
    with pytest.raises(ClientException) as created:
        fc.create_function(models.CreateFunctionRequest(body=models.CreateFunctionInput(
            function_name="unsafe", runtime="python3.10", handler="index.handler",
            code=models.InputCodeLocation(zip_file=encoded))))
    assert created.value.code == "InvalidArgument" and reason in created.value.message
    with pytest.raises(ClientException) as updated:
        fc.update_function("victim", models.UpdateFunctionRequest(body=models.UpdateFunctionInput(
            code=models.InputCodeLocation(zip_file=encoded))))
    assert updated.value.code == "InvalidArgument" and reason in updated.value.message
    assert _invoke(fc, "victim")[1] == b"victim-ok"


def test_huge_log_is_bounded_and_tail_is_the_last_4_kb(cloud, fc):
    _create(fc, "chatty", _zip({"index.py": "import sys\ndef handler(event, context):\n"
                                "    chunk = 'x' * (128 * 1024 - 1) + '\\n'\n"
                                "    for _ in range(800):\n        sys.stdout.write(chunk)\n"
                                "    print('LAST LINE')\n    return 'done'\n"}))
    response, body = _invoke(fc, "chatty", tail=True)
    assert body == b"done"
    tail = base64.b64decode(response.headers["x-fc-log-result"])
    assert len(tail) == 4096 and b"LAST LINE" in tail
    stored = cloud.invocations("chatty", limit=1)[0].log
    assert len(stored) < 2 * 1024 * 1024
    assert "[log truncated:" in stored and "LAST LINE" in stored
    _untouched(cloud, fc)


def _alive(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


DAEMONIZE = """
import os, subprocess, sys, time
CHILD = "import os, time\\nif os.fork() == 0:\\n    os.setsid()\\ntime.sleep(300)\\n"
def running(marker):
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                count += marker.encode() in fh.read()
        except OSError:
            pass
    return count
def handler(event, context):
    marker = event.decode()
    subprocess.Popen([sys.executable, "-S", "-c", CHILD, marker], start_new_session=True)
    deadline = time.monotonic() + 5
    while running(marker) < 2 and time.monotonic() < deadline:  # both sleeps started
        time.sleep(0.01)
    if context.function.timeout > 5:  # report whether the children were seen running
        return "started" if running(marker) >= 2 else "not started"
    time.sleep(30)
"""


def test_timeout_and_stop_kill_the_whole_tree_including_setsid_children(cloud, fc):
    _create(fc, "daemonizer", _zip({"index.py": DAEMONIZE}), timeout=1)
    _, body = _invoke(fc, "daemonizer", b"marker-timeout-7f3a")
    assert json.loads(body)["errorMessage"] == "Function timed out after 1 seconds"
    assert _alive("marker-timeout-7f3a") == []
    _create(fc, "lingering", _zip({"index.py": DAEMONIZE}), timeout=10)
    assert _invoke(fc, "lingering", b"marker-stop-9c1d")[1] == b"started"
    fc.delete_function("lingering")  # instance stop
    assert _alive("marker-stop-9c1d") == []
    _untouched(cloud, fc)


def test_emulator_process_cannot_be_signalled(cloud, fc):
    result = _attempt(fc, "signal", "os.kill(os.getppid(), 0)")
    assert result["blocked"] == "PermissionError"
    _untouched(cloud, fc)


def test_each_instance_has_its_own_tmp(cloud, fc):
    writer = _attempt(fc, "tmp-writer", "open('/tmp/note', 'w').write('secret')")
    assert writer == {"done": "6"}
    reader = _attempt(fc, "tmp-reader", "open('/tmp/note').read()")
    assert reader["blocked"] == "FileNotFoundError"
    assert not Path("/tmp/note").exists() or Path("/tmp/note").read_text() != "secret"
    _untouched(cloud, fc)


def test_process_environment_of_the_emulator_is_not_readable(cloud, fc):
    result = _attempt(fc, "environ", "open(f'/proc/{os.getppid()}/environ', 'rb').read()")
    assert result["blocked"] == "PermissionError"
    _untouched(cloud, fc)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_daemon_state_outside_tmp_is_out_of_reach_and_calls_route_to_the_daemon():
    """Against the background daemon, with its state outside /tmp (so Landlock, not the private
    /tmp, keeps it out of reach)."""
    import shutil
    import tempfile

    from alibabacloud_fc20230330.client import Client
    from alibabacloud_ram20150501 import models as ram
    from alibabacloud_tea_openapi import models as open_api

    from deployer.emulator import daemon

    state = Path(tempfile.mkdtemp(prefix="deployer-daemon-", dir="/var/tmp"))
    try:
        daemon.start_daemon(state, port=_free_port())
        creds = daemon.credentials(state)
        config = dict(access_key_id=creds.access_key_id,
                      access_key_secret=creds.access_key_secret, endpoint=creds.endpoint,
                      protocol="http", region_id="cn-hangzhou", read_timeout=60000)
        fc = Client(open_api.Config(**config))
        from alibabacloud_ram20150501.client import Client as Ram

        Ram(open_api.Config(**config)).create_role(ram.CreateRoleRequest(
            role_name="fc-role", assume_role_policy_document=json.dumps(
                {"Version": "1", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                "Principal": {"Service": "fc.aliyuncs.com"}}]})))
        identity = str(state / "identity.json")
        result = _attempt(fc, "thief", "open(event.decode()).read()", identity.encode())
        assert result["blocked"] == "PermissionError"
        result = _attempt(fc, "writer", "open(event.decode(), 'w').write('x')",
                          str(state / "planted").encode())
        assert result["blocked"] == "PermissionError" and not (state / "planted").exists()
        source = ("import urllib.request, os\n"
                  "def handler(event, context):\n"
                  "    return os.environ['ALIBABA_CLOUD_ACCESS_KEY_ID'][:4]\n")
        _create(fc, "with-role", _zip({"index.py": source}),
                role=f"acs:ram::{creds.account_id}:role/fc-role")
        assert _invoke(fc, "with-role")[1] == b"STS."
    finally:
        daemon.stop(state)
        shutil.rmtree(state, ignore_errors=True)
