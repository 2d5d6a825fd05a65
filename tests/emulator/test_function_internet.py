"""Internet access of function instances (docs/runtime.md "Network"): a function with
``internetAccess: true`` reaches hosts beyond this machine from its own network namespace, one
without it does not, and neither reaches this machine's loopback or its own addresses.

"Beyond this machine" is a test host the test makes itself: a network namespace joined to this
one by a veth pair, on an address block of its own (198.18.0.0/15, RFC 2544's benchmarking
range), with a small HTTP server. Its address is routed through the veth pair and nowhere else
(asserted before and after), so the packets a handler sends to it stay on this machine.
Creating it needs root and iproute2; without them the tests skip and say why.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from alibabacloud_fc20230330 import models as fc_models
from alibabacloud_ram20150501 import models as ram_models

from deployer.emulator.runtime.internet import InternetLinks
from deployer.emulator.runtime.network import InstanceNetworks
from deployer.testing.environment import LocalCloud, mock_cloud

HANDLER = r'''
import json, os, socket, subprocess, sys, urllib.request
from alibabacloud_credentials.client import Client as Credentials
from alibabacloud_tea_openapi import models as open_api
from alibabacloud_sts20150401.client import Client as STS

def attempt(call):
    try:
        return "reached: " + str(call())[:120]
    except Exception as exc:
        return f"refused: {type(exc).__name__}: {exc}"

def fetch(url):
    with urllib.request.urlopen(url, timeout=15) as answer:
        return answer.read().decode()

def connect(host, port):
    with socket.create_connection((host, port), 15):
        return "connected"

def child(host, port):
    code = f"import socket; socket.create_connection(({host!r}, {port}), 15); print('connected')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30)
    if done.returncode:
        raise OSError(done.stderr.decode().strip().splitlines()[-1])
    return done.stdout.decode().strip()

def gateway():
    for line in open("/proc/net/route").read().splitlines()[1:]:
        fields = line.split()
        if fields[1] == "00000000":
            return socket.inet_ntoa(int(fields[2], 16).to_bytes(4, "little"))
    return ""

def handler(event, context):
    e = json.loads(event)
    host, port, local, main = e["host"], e["port"], e["local"], e["main"]
    stack = gateway()
    seen = {
        "test host": attempt(lambda: fetch(f"http://{host}:{port}/")),
        "test host from a child": attempt(lambda: child(host, port)),
        "this machine's address": attempt(lambda: connect(e["own_address"], local)),
        "this machine's address, child": attempt(lambda: child(e["own_address"], local)),
        "admin API": attempt(lambda: fetch(f"http://127.0.0.1:{main}/_emulator/health")),
        "other local port": attempt(lambda: connect("127.0.0.1", local)),
        "stack gateway": attempt(lambda: connect(stack, local)) if stack else "no route",
        "resolver": open("/etc/resolv.conf").read().split("\n")[0],
    }
    config = open_api.Config(credential=Credentials(), region_id=os.environ["FC_REGION"])
    seen["sdk"] = attempt(lambda: STS(config).get_caller_identity().body.identity_type)
    return seen
'''

NODE_HANDLER = r"""
const net = require('net');
exports.handler = async (event) => {
  const e = JSON.parse(event.toString());
  const connect = (host, port) => new Promise((resolve) => {
    const sock = net.connect({ host, port, timeout: 15000 }, () => {
      sock.destroy(); resolve('reached');
    });
    sock.on('error', (err) => resolve('refused: ' + err.code));
    sock.on('timeout', () => { sock.destroy(); resolve('refused: timeout'); });
  });
  return {
    'test host': await connect(e.host, e.port),
    "this machine's address": await connect(e.own_address, e.local),
    'other local port': await connect('127.0.0.1', e.local),
  };
};
"""

SERVER = r"""
import socket, sys
# every connection is written down (peer address) and answered with one short HTTP response
with socket.create_server((sys.argv[1], 0)) as server, open(sys.argv[2], "a") as log:
    print(server.getsockname()[1], flush=True)
    while True:
        conn, peer = server.accept()
        log.write(f"visit from {peer[0]}\n")
        log.flush()
        with conn:
            conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 24\r\n\r\n"
                         b"hello from the test host")
"""


@dataclass(frozen=True)
class OutsideHost:
    address: str  # the test host's, in its own namespace
    own_address: str  # this machine's end of the veth pair
    port: int  # the test host's server
    device: str
    log: Path

    def visits(self) -> list[str]:
        """The peer address of every connection the server accepted so far."""
        return [line.split()[-1] for line in self.log.read_text().splitlines()]


def _ip(*args: str) -> None:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=20)
    assert done.returncode == 0, f"ip {' '.join(args)}: {done.stderr.strip()}"


def _route_device(address: str) -> str:
    """The device this machine sends packets for ``address`` through."""
    out = subprocess.run(["ip", "-o", "route", "get", address], check=True, text=True,
                         capture_output=True, timeout=20).stdout.split()
    return out[out.index("dev") + 1]


def _requirements() -> None:
    if os.geteuid() != 0:
        pytest.skip("making the test host (a network namespace and a veth pair) needs root")
    if shutil.which("ip") is None:
        pytest.skip("making the test host needs iproute2 (ip)")
    if shutil.which("slirp4netns") is None:
        if os.environ.get("CI"):
            pytest.fail("slirp4netns is missing: .ci/run installs it")
        pytest.skip("slirp4netns is not installed: functions have no internet access here")


@pytest.fixture(scope="module")
def test_host(tmp_path_factory) -> Iterator[OutsideHost]:
    _requirements()
    tag = os.getpid() % 16000
    block = f"198.{18 + tag // 8000}.{tag % 8000 // 32}.{tag % 32 * 8}"
    prefix = block.rsplit(".", 1)[0]
    last = int(block.rsplit(".", 1)[1])
    own, theirs = f"{prefix}.{last + 1}", f"{prefix}.{last + 2}"
    namespace, device, peer = f"fctest{tag}", f"fch{tag}", f"fct{tag}"
    _ip("netns", "add", namespace)
    try:
        _ip("link", "add", device, "type", "veth", "peer", "name", peer, "netns", namespace)
        _ip("addr", "add", f"{own}/29", "dev", device)
        _ip("link", "set", device, "up")
        _ip("-n", namespace, "addr", "add", f"{theirs}/29", "dev", peer)
        _ip("-n", namespace, "link", "set", peer, "up")
        _ip("-n", namespace, "link", "set", "lo", "up")
        assert _route_device(theirs) == device  # nothing for it takes the default route
        log = tmp_path_factory.mktemp("test-host") / "visits"
        log.touch()
        server = subprocess.Popen(
            ["ip", "netns", "exec", namespace, sys.executable, "-c", SERVER, theirs, str(log)],
            stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            port = int(server.stdout.readline())
            yield OutsideHost(theirs, own, port, device, log)
        finally:
            server.kill()
            server.wait()
    finally:
        subprocess.run(["ip", "link", "del", device], capture_output=True, timeout=20)
        subprocess.run(["ip", "netns", "del", namespace], capture_output=True, timeout=20)


@pytest.fixture(scope="module")
def local_service() -> Iterator[int]:
    """A service of this machine listening on every address (0.0.0.0)."""
    with socket.socket() as server:
        server.bind(("0.0.0.0", 0))
        server.listen(8)
        yield server.getsockname()[1]


@pytest.fixture(scope="module")
def cloud(tmp_path_factory, test_host) -> Iterator[LocalCloud]:
    with mock_cloud(intercept=False, state_dir=tmp_path_factory.mktemp("internet")) as c:
        trust = json.dumps({"Version": "1", "Statement": [{
            "Effect": "Allow", "Action": "sts:AssumeRole",
            "Principal": {"Service": ["fc.aliyuncs.com"]}}]})
        c.ram_client().create_role(ram_models.CreateRoleRequest(
            role_name="internet-role", assume_role_policy_document=trust))
        yield c


def _zip(name: str, source: str) -> str:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, source)
    return base64.b64encode(buffer.getvalue()).decode()


def _invoke(cloud: LocalCloud, name: str, event: dict, **fields) -> dict:
    fc = cloud.fc_client()
    fc.create_function(fc_models.CreateFunctionRequest(body=fc_models.CreateFunctionInput(
        function_name=name, timeout=60, memory_size=256, **fields)))
    response = fc.invoke_function(name, fc_models.InvokeFunctionRequest(
        body=json.dumps(event).encode()))
    seen = json.loads(response.body.read())
    assert "x-fc-error-type" not in response.headers, seen
    return seen


def _event(cloud: LocalCloud, host: OutsideHost, local: int) -> dict:
    return {"host": host.address, "port": host.port, "own_address": host.own_address,
            "local": local, "main": cloud.server.port}


def _python(cloud: LocalCloud, internet: bool) -> dict:
    return {"runtime": "python3.12", "handler": "index.handler", "internet_access": internet,
            "code": fc_models.InputCodeLocation(zip_file=_zip("index.py", HANDLER)),
            "role": f"acs:ram::{cloud.account_id}:role/internet-role"}


def test_internet_access_reaches_other_hosts_but_nothing_of_this_machine(
        cloud, test_host, local_service):
    before = len(test_host.visits())
    seen = _invoke(cloud, "online", _event(cloud, test_host, local_service),
                   **_python(cloud, True))
    assert seen["test host"] == "reached: hello from the test host"
    assert seen["test host from a child"] == "reached: connected"
    # this machine's own address (where a 0.0.0.0 service answers) and its loopback: refused
    for path in ("this machine's address", "this machine's address, child"):
        assert "Permission denied" in seen[path] and seen[path].startswith("refused"), seen
    for path in ("admin API", "other local port"):
        assert "Connection refused" in seen[path], (path, seen[path])
    assert "Network is unreachable" in seen["stack gateway"], seen  # no way to the host's lo
    assert seen["resolver"].startswith("nameserver ") and seen["resolver"].endswith(".3")
    assert seen["sdk"] == "reached: AssumedRoleUser"  # the cloud APIs through the gateway
    # the two connections arrived, from this machine's end of the veth pair (the relay's
    # sockets), and the test host's address was routed through the pair all along
    assert test_host.visits()[before:] == [test_host.own_address] * 2
    assert _route_device(test_host.address) == test_host.device


def test_without_internet_access_other_hosts_stay_unreachable(cloud, test_host, local_service):
    before = len(test_host.visits())
    seen = _invoke(cloud, "offline", _event(cloud, test_host, local_service),
                   **_python(cloud, False))
    assert seen["test host"].startswith("refused: ") and \
        "the function has internetAccess disabled" in seen["test host"], seen
    # a child process has no socket guard: its namespace has no route
    assert "Network is unreachable" in seen["test host from a child"], seen
    assert "Network is unreachable" in seen["this machine's address, child"], seen
    for path in ("admin API", "other local port"):
        assert "Connection refused" in seen[path], (path, seen[path])
    assert seen["stack gateway"] == "no route"
    assert seen["sdk"] == "reached: AssumedRoleUser"
    assert test_host.visits()[before:] == []


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_a_nodejs_handler_reaches_the_test_host_and_nothing_of_this_machine(
        cloud, test_host, local_service):
    before = len(test_host.visits())
    seen = _invoke(cloud, "online-node", _event(cloud, test_host, local_service),
                   runtime="nodejs20", handler="index.handler",
                   code=fc_models.InputCodeLocation(zip_file=_zip("index.js", NODE_HANDLER)))
    assert seen == {"test host": "reached", "this machine's address": "refused: EACCES",
                    "other local port": "refused: ECONNREFUSED"}
    assert test_host.visits()[before:] == [test_host.own_address]


OFFLINE_PROBE = """
import socket
def handler(event, context):
    return {"interfaces": [name for _, name in socket.if_nameindex()]}
"""


def test_without_the_relay_an_instance_stays_isolated_and_says_so_once(
        tmp_path, monkeypatch, caplog):
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without slirp4netns
    caplog.set_level(logging.WARNING, logger="deployer.emulator")
    with mock_cloud(intercept=False, state_dir=tmp_path / "state") as cloud:
        for name in ("first", "second"):
            seen = _invoke(cloud, name, {}, runtime="python3.12", handler="index.handler",
                           code=fc_models.InputCodeLocation(zip_file=_zip("index.py",
                                                                          OFFLINE_PROBE)))
            if len(seen["interfaces"]) > 1 and any(
                    "no namespace of its own" in r.getMessage() for r in caplog.records):
                pytest.skip("this host makes no network namespaces for instances")
            assert seen["interfaces"] == ["lo"], seen
    notes = [r.getMessage() for r in caplog.records
             if "internet access unavailable" in r.getMessage()]
    assert len(notes) == 1, notes
    assert notes[0].startswith("function internet access unavailable: install slirp4netns")


def test_the_broker_attaches_no_stack_to_a_process_on_this_machines_network(tmp_path, caplog):
    """A valid ticket from a process that shares this machine's network namespace (here: the
    test itself) gets its answer, but no network stack: one would change this machine's own
    network."""
    marker = tmp_path / "relay-started"
    relay = tmp_path / "relay"
    relay.write_text(f"#!/bin/sh\ntouch {marker}\n")
    relay.chmod(0o755)
    caplog.set_level(logging.WARNING, logger="deployer.emulator")
    networks = InstanceNetworks(tmp_path, InternetLinks(tmp_path, str(relay)))
    try:
        settings = networks.settings(internet_access=True)
        assert settings["internet"] and settings["ticket"]
        with socket.socket(socket.AF_UNIX) as conn:
            conn.settimeout(10)
            conn.connect(str(settings["broker"]))
            conn.sendall(str(settings["ticket"]).encode())
            assert conn.recv(1) == b"\x01"
    finally:
        networks.close()
    assert not marker.exists()
    assert any("has no network namespace of its own" in r.getMessage() for r in caplog.records)
