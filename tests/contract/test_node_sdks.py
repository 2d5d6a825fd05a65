"""The official Node.js SDKs against the emulator: runs ``node --test`` on sdk.test.js.

The SDKs come from this directory's package.json + package-lock.json (``npm ci``, which
``.ci/run`` runs). Without Node or the installed packages the test skips locally, and fails
in CI (``CI=true``).
"""

from __future__ import annotations

import base64
import io
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from deployer.emulator.clock import SystemClock
from deployer.testing.environment import mock_cloud

HERE = Path(__file__).resolve().parent
ECHO = "def handler(event, context):\n    return event\n"


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason}: CI must run the Node.js contract tests", pytrace=False)
    pytest.skip(reason)


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        _unavailable("node is not on PATH")
    assert node is not None
    if not (HERE / "node_modules" / "@alicloud" / "fc20230330").is_dir():
        _unavailable(f"the Node.js SDKs are not installed: run `npm ci` in {HERE}")
    return node


NODE_FUNCTION = """
let initialized = false;
exports.initialize = (context, callback) => { initialized = true; callback(null); };
exports.preStop = async () => {};
exports.handler = (event, context, callback) => {
  const { n } = JSON.parse(event);
  console.log('doubling', n);
  callback(null, { doubled: n * 2, initialized, requestId: context.requestId });
};
"""


def _zip(name: str, source: str) -> str:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(name, source)
    return base64.b64encode(buf.getvalue()).decode()


def _echo_zip() -> str:
    return _zip("index.py", ECHO)


@pytest.mark.timeout(300)
def test_node_sdks_against_the_emulator() -> None:
    node = _node()
    with mock_cloud(clock=SystemClock(), intercept=False) as cloud:
        env = {**os.environ, "EMULATOR_ENDPOINT": cloud.endpoint,
               "EMULATOR_ACCESS_KEY_ID": cloud.access_key_id,
               "EMULATOR_ACCESS_KEY_SECRET": cloud.access_key_secret,
               "EMULATOR_ACCOUNT_ID": cloud.account_id, "EMULATOR_REGION": cloud.region,
               "FUNCTION_ZIP_B64": _echo_zip(),
               "NODE_FUNCTION_ZIP_B64": _zip("index.js", NODE_FUNCTION),
               "NO_PROXY": "*", "no_proxy": "*"}
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
            env.pop(name, None)
        probe = cloud.faults.add("fc", action="GetFunction", function="node-retry-probe",
                                 error="ResourceThrottled", times=2)
        done = subprocess.run([node, "--test", "--test-reporter=spec", "sdk.test.js"],
                              cwd=HERE, env=env, capture_output=True, text=True, timeout=240)
        fired = probe.fired
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert fired == 2
    assert "# fail 0" in done.stdout or "ℹ fail 0" in done.stdout, done.stdout[-3000:]
