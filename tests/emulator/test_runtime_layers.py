"""Layers: merged into one /opt tree (the first layer listed wins), mounted on /opt in the
sandbox, and on each runtime's search paths where FC puts them."""

from __future__ import annotations

import io
import shutil
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from runtime_support import call, make_spec, payload_json

from deployer.emulator.clock import SystemClock
from deployer.emulator.runtime import (
    CodePackageError,
    CustomRuntimeSettings,
    LayerSource,
    ProcessRuntime,
)
from deployer.emulator.runtime.model import missing_layer


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ProcessRuntime]:
    rt = ProcessRuntime(tmp_path_factory.mktemp("layers") / "work", SystemClock())
    yield rt
    rt.close()


def layer_dir(root: Path, name: str, files: dict[str, str]) -> LayerSource:
    directory = root / name
    for path, text in files.items():
        (directory / path).parent.mkdir(parents=True, exist_ok=True)
        (directory / path).write_text(text)
    return LayerSource(f"acs:fc:cn-hangzhou:1:layers/{name}/versions/1", f"dir-{name}",
                       directory)


def layer_zip(root: Path, name: str, files: dict[str, str]) -> LayerSource:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{name}.zip"
    path.write_bytes(buf.getvalue())
    return LayerSource(f"acs:fc:cn-hangzhou:1:layers/{name}/versions/2", f"zip-{name}", path)


PYTHON = """
import os, sys
import shared, only_second
def handler(event, context):
    return {"shared": shared.WHO, "second": only_second.WHO,
            "opt": sorted(os.listdir("/opt")), "path": [p for p in sys.path if "opt" in p],
            "bin": os.environ["PATH"].split(":")[0], "lib": os.environ["LD_LIBRARY_PATH"],
            "file": open("/opt/data.txt").read()}
"""


def test_python_layers_on_sys_path_and_mounted_on_opt(runtime, tmp_path):
    first = layer_dir(tmp_path, "first", {"python/shared.py": "WHO = 'first'\n",
                                           "data.txt": "from first"})
    second = layer_zip(tmp_path, "second", {"python/shared.py": "WHO = 'second'\n",
                                            "python/only_second.py": "WHO = 'second'\n",
                                            "data.txt": "from second", "bin/tool": "#!"})
    spec = make_spec(tmp_path, {"index.py": PYTHON}, layers=(first, second))
    result = call(runtime, spec)
    assert result.error_type is None, result.payload
    body = payload_json(result)
    assert (body["shared"], body["second"], body["file"]) == ("first", "second", "from first")
    assert body["opt"] == ["bin", "data.txt", "python"]
    # the runtime's Python version (python3.10), as FC's python runtime puts them
    assert body["path"] == ["/opt/python/lib/python3.10/site-packages", "/opt/python"]
    assert (body["bin"], body["lib"].split(":")[0]) == ("/opt/bin", "/opt/lib")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_nodejs_layers_resolve_from_opt_nodejs_node_modules(runtime, tmp_path):
    layer = layer_dir(tmp_path, "libs", {
        "nodejs/node_modules/greeting/index.js": "module.exports = (n) => `hello ${n}`;\n"})
    code = {"index.js": "const greeting = require('greeting');\n"
                        "exports.handler = async () => ({ text: greeting('layer'),"
                        " nodePath: process.env.NODE_PATH });\n"}
    body = payload_json(call(runtime, make_spec(tmp_path, code, runtime="nodejs20",
                                                layers=(layer,))))
    assert body == {"text": "hello layer", "nodePath": "/opt/nodejs/node_modules"}


def test_custom_runtimes_see_opt_but_get_no_search_paths(runtime, tmp_path):
    layer = layer_dir(tmp_path, "assets", {"bin/helper": "echo"})
    server = """
import json, os
from http.server import BaseHTTPRequestHandler, HTTPServer
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.dumps({"opt": os.listdir("/opt"),
                           "path": os.environ["PATH"].split(":")[0]}).encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body)))
        self.end_headers(); self.wfile.write(body)
HTTPServer(("0.0.0.0", int(os.environ["FC_CUSTOM_LISTEN_PORT"])), H).serve_forever()
"""
    spec = make_spec(tmp_path, {"server.py": server}, runtime="custom.debian11",
                     custom=CustomRuntimeSettings(command=(sys.executable, "server.py"),
                                                  port=19451), layers=(layer,))
    body = payload_json(call(runtime, spec))
    assert body["opt"] == ["bin"] and body["path"] != "/opt/bin"


def test_a_layer_the_emulator_does_not_hold_is_refused_by_its_arn(runtime, tmp_path):
    arn = "acs:fc:cn-hangzhou:official:layers/Python310/versions/2"
    spec = make_spec(tmp_path, {"index.py": PYTHON}, layers=(missing_layer(arn),))
    with pytest.raises(CodePackageError, match=f"layer version {arn} does not exist"):
        call(runtime, spec)


WRITER = """
import os
def handler(event, context):
    try:
        open("/opt/new.txt", "w").write("x")
    except OSError as exc:
        return f"refused: {exc.errno}"
    return "written"
"""


def test_opt_is_read_only_and_each_layer_list_gets_its_own_tree(runtime, tmp_path):
    one = layer_dir(tmp_path, "one", {"python/which.py": "WHO = 1\n"})
    two = layer_dir(tmp_path, "two", {"python/which.py": "WHO = 2\n"})
    assert call(runtime, make_spec(tmp_path, {"index.py": WRITER}, layers=(one,))) \
        .payload.startswith(b"refused: ")
    reader = "import which\ndef handler(e, c):\n    return which.WHO\n"
    assert call(runtime, make_spec(tmp_path, {"index.py": reader}, layers=(one, two))) \
        .payload == b"1"
    assert call(runtime, make_spec(tmp_path, {"index.py": reader}, layers=(two, one))) \
        .payload == b"2"
