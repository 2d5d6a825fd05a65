"""nasConfig and ossMountConfig through the official Python SDK against mock_cloud() (process
runtime, sandbox on): each mount point is a directory under the state directory, mounted at
its mountDir; functions naming the same NAS path share it; an OSS mount's readOnly holds."""

from __future__ import annotations

import base64
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from alibabacloud_fc20230330 import models as fc

from deployer.testing import LocalCloud, mock_cloud

HANDLER = """
import json, os

def handler(event, context):
    ask = json.loads(event)
    out = {"read": open(ask["read"]).read() if ask.get("read") else None}
    if ask.get("write"):
        try:
            with open(ask["write"], "w") as f:
                f.write(ask["text"])
            out["wrote"] = True
        except OSError as exc:
            out["wrote"] = exc.strerror
    return json.dumps(out)
"""
NAS = "0a1b2c-xyz.cn-hangzhou.nas.aliyuncs.com"


def _zip(source: str = HANDLER) -> str:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr("index.py", source)
    return base64.b64encode(buf.getvalue()).decode()


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("state")


@pytest.fixture(scope="module")
def cloud(state: Path) -> Iterator[LocalCloud]:
    with mock_cloud(state_dir=state) as local:
        yield local


def _create(cloud: LocalCloud, name: str, **mounts) -> None:
    cloud.fc_client().create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name=name, runtime="python3.10", handler="index.handler", timeout=10,
        code=fc.InputCodeLocation(zip_file=_zip()), **mounts)))


def _invoke(cloud: LocalCloud, name: str, **ask) -> dict:
    body = cloud.fc_client().invoke_function(name, fc.InvokeFunctionRequest(
        body=json.dumps(ask).encode())).body.read()
    return json.loads(body)


def test_a_nas_mount_reads_and_writes_a_shared_local_directory(cloud, state) -> None:
    nas = fc.NASConfig(user_id=10003, group_id=10003, mount_points=[fc.NASMountConfig(
        server_addr=f"{NAS}:/orders", mount_dir="/mnt/orders")])
    _create(cloud, "nas-writer", nas_config=nas)
    _create(cloud, "nas-reader", nas_config=fc.NASConfig(mount_points=[fc.NASMountConfig(
        server_addr=f"{NAS}:/orders", mount_dir="/home/shared/orders")]))
    local = state / "nas" / NAS / "orders"
    local.mkdir(parents=True, exist_ok=True)
    (local / "in.txt").write_text("from the host")

    wrote = _invoke(cloud, "nas-writer", read="/mnt/orders/in.txt",
                    write="/mnt/orders/out.txt", text="from the function")
    shared = _invoke(cloud, "nas-reader", read="/home/shared/orders/out.txt")
    assert wrote == {"read": "from the host", "wrote": True}
    assert (local / "out.txt").read_text() == "from the function"
    assert shared["read"] == "from the function"  # same server and path: the same directory


def test_an_oss_mount_is_per_bucket_path_and_read_only_when_asked(cloud, state) -> None:
    oss = fc.OSSMountConfig(mount_points=[
        fc.OSSMountPoint(bucket_name="assets", bucket_path="/img",
                                     mount_dir="/mnt/img", read_only=True),
        fc.OSSMountPoint(bucket_name="uploads", bucket_path="",
                                     mount_dir="/mnt/up", read_only=False)])
    _create(cloud, "oss-user", oss_mount_config=oss)
    (state / "oss" / "assets" / "img").mkdir(parents=True, exist_ok=True)
    (state / "oss" / "assets" / "img" / "logo.txt").write_text("logo")

    refused = _invoke(cloud, "oss-user", read="/mnt/img/logo.txt", write="/mnt/img/x.txt",
                      text="no")
    stored = _invoke(cloud, "oss-user", write="/mnt/up/a.txt", text="kept")
    assert refused["read"] == "logo" and refused["wrote"] == "Read-only file system"
    assert not (state / "oss" / "assets" / "img" / "x.txt").exists()
    assert stored["wrote"] is True
    assert (state / "oss" / "uploads" / "a.txt").read_text() == "kept"


def test_a_mount_dir_over_the_system_is_refused(cloud) -> None:
    from alibabacloud_tea_openapi.exceptions import ClientException

    for where in ("/opt", "/mnt/../etc"):
        with pytest.raises(ClientException) as refused:
            _create(cloud, "bad-mount", nas_config=fc.NASConfig(mount_points=[
                fc.NASMountConfig(server_addr=f"{NAS}:/x", mount_dir=where)]))
        assert refused.value.status_code == 400
        assert "nasConfig.mountPoints[0].mountDir" in refused.value.message


LINKER = """
import json, os

def handler(event, context):
    ask = json.loads(event)
    os.symlink(ask["to"], ask["at"])
    return "linked"
"""


def test_a_link_written_into_a_shared_mount_mounts_nothing_of_the_host(cloud, state,
                                                                       tmp_path) -> None:
    """Function code may write a symbolic link into a NAS directory; a mount point naming a
    path through it would mount (and make directories in) whatever it points to on the host.
    Such a mount point is not mounted, and nothing is made outside the mount root."""
    nas = fc.NASConfig(mount_points=[fc.NASMountConfig(server_addr=f"{NAS}:/links",
                                                       mount_dir="/mnt/links")])
    cloud.fc_client().create_function(fc.CreateFunctionRequest(body=fc.CreateFunctionInput(
        function_name="linker", runtime="python3.10", handler="index.handler", timeout=10,
        nas_config=nas, code=fc.InputCodeLocation(zip_file=_zip(LINKER)))))
    outside = tmp_path / "host-dir"
    outside.mkdir()
    (outside / "secret.txt").write_text("host file")
    for name, to in (("to-host-dir", str(outside)), ("to-root", "/")):
        body = cloud.fc_client().invoke_function("linker", fc.InvokeFunctionRequest(
            body=json.dumps({"to": to, "at": f"/mnt/links/{name}"}).encode())).body.read()
        assert body == b"linked"
    _create(cloud, "through-links", nas_config=fc.NASConfig(mount_points=[
        fc.NASMountConfig(server_addr=f"{NAS}:/links/to-host-dir", mount_dir="/mnt/a"),
        fc.NASMountConfig(server_addr=f"{NAS}:/links/to-host-dir/new", mount_dir="/mnt/b"),
        fc.NASMountConfig(server_addr=f"{NAS}:/links/to-root", mount_dir="/mnt/c")]))
    for path in ("/mnt/a/secret.txt", "/mnt/c/etc/hostname"):
        failed = _invoke(cloud, "through-links", read=path)  # the handler's error
        assert "No such file" in failed["errorMessage"], failed
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]  # no "new" made there
