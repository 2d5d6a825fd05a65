"""HTTP server candidates for the emulator's front door, measured on its workload (not a test).

The emulator's services are synchronous (SQLite, a thread-safe engine) and some calls block
(a synchronous InvokeFunction runs a handler for seconds), so a request is handed to a thread
pool; long polls and event streams must wait without a thread each. Each candidate serves the
same tiny app in its own process:

* ``POST /`` with a form body (an RPC call's shape): the body is parsed by a synchronous
  function run in a thread pool (inline for the thread-per-request servers) and answered as
  JSON. Driven by ``wrk`` (keep-alive) at 1 and 64 connections; reported: requests/s, p99
  latency and the server's process CPU time per request (utime + stime from /proc, so other
  load on the machine does not count).
* ``GET /wait``: 1,000 concurrent long polls that each wait 2 s; reported: the wall time until
  all answered and the server's thread count meanwhile.
* Strictness: raw-socket probes (``Content-Length: +3``, ``1_0``, two that disagree, a
  chunked body, ``Expect: 100-continue``, two pipelined requests).
* ``--parsers``: the request-line/header parsers alone, µs per request (run it under
  ``valgrind --tool=callgrind`` with ``--parsers N`` for instruction counts).

Candidates (those installed are measured): stdlib ``http.server`` (today), aiohttp's low-level
server, uvicorn + httptools, hypercorn (h11), granian (Rust, hyper), cheroot.
Install: ``pip install aiohttp uvicorn httptools hypercorn granian cheroot``; needs ``wrk``.
Run: ``python benchmarks/http_servers.py [--parsers [N]]``
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qsl

BODY = ("Action=DescribeExecution&Version=2019-03-15&FlowName=MyWorkFlow&ExecutionName=e-1"
        "&Format=JSON&AccessKeyId=LTAI5tExample&SignatureMethod=HMAC-SHA1"
        "&SignatureVersion=1.0&SignatureNonce=0123456789abcdef&Timestamp=2024-01-01T00%3A00%3A00Z"
        "&Signature=abcdefabcdefabcdefabcdefabc%3D")
HEADERS = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json",
           "User-Agent": "AlibabaCloud (Linux; x86_64) Python/3.11.7 Core/0.3.3 TeaDSL/1",
           "x-acs-version": "2019-03-15", "x-acs-action": "DescribeExecution"}
POOL = ThreadPoolExecutor(32)


def work(body: bytes) -> bytes:
    params = dict(parse_qsl(body.decode()))
    return json.dumps({"RequestId": "r", "Name": params.get("ExecutionName"),
                       "Status": "Running"}).encode()


async def _call(fn, arg):
    """In the thread pool, as the emulator must (``INLINE=1``: on the event loop, to see what
    the hand-off to the pool costs)."""
    if os.environ.get("INLINE"):
        return fn(arg)
    return await asyncio.get_running_loop().run_in_executor(POOL, fn, arg)


# --- the candidates ---------------------------------------------------------------------------

async def asgi_app(scope, receive, send):  # uvicorn, hypercorn, granian
    if scope["type"] != "http":
        return
    body = b""
    more = True
    while more:
        msg = await receive()
        body += msg.get("body", b"")
        more = msg.get("more_body", False)
    if scope["path"] == "/wait":
        await asyncio.sleep(2)
        out = b"{}"
    else:
        out = await _call(work, body)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(out)).encode())]})
    await send({"type": "http.response.body", "body": out})


def wsgi_app(environ, start_response):  # cheroot
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length) if length else environ["wsgi.input"].read()
    if environ["PATH_INFO"] == "/wait":
        time.sleep(2)
        out = b"{}"
    else:
        out = work(body)
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("Content-Length", str(len(out)))])
    return [out]


def serve_stdlib(port: int) -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._send(work(body))

        def do_GET(self):
            time.sleep(2)
            self._send(b"{}")

        def _send(self, out):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 1024

    Server(("127.0.0.1", port), Handler).serve_forever()


def serve_aiohttp(port: int) -> None:
    from aiohttp import web

    async def handler(request):
        body = await request.read()
        if request.path == "/wait":
            await asyncio.sleep(2)
            out = b"{}"
        else:
            out = await _call(work, body)
        return web.Response(body=out, content_type="application/json")

    async def main():
        server = web.Server(handler, access_log=None)
        await asyncio.get_running_loop().create_server(server, "127.0.0.1", port, backlog=1024)
        await asyncio.Event().wait()

    asyncio.run(main())


def serve_uvicorn(port: int) -> None:
    import uvicorn

    uvicorn.run(asgi_app, host="127.0.0.1", port=port, http="httptools", loop="asyncio",
                log_level="error", access_log=False, lifespan="off", backlog=1024)


def serve_hypercorn(port: int) -> None:
    from hypercorn.asyncio import serve
    from hypercorn.config import Config

    config = Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.backlog = 1024
    config.accesslog = None
    config.errorlog = None
    asyncio.run(serve(asgi_app, config))


def serve_granian(port: int) -> None:
    from granian.constants import Interfaces
    from granian.server.embed import Server

    server = Server(asgi_app, address="127.0.0.1", port=port, interface=Interfaces.ASGI,
                    backlog=1024, log_enabled=False)
    asyncio.run(server.serve())


def serve_cheroot(port: int) -> None:
    from cheroot import wsgi

    wsgi.Server(("127.0.0.1", port), wsgi_app, numthreads=32,
                request_queue_size=1024).start()


CANDIDATES = {
    "stdlib http.server": ("http.server", serve_stdlib),
    "aiohttp web.Server": ("aiohttp", serve_aiohttp),
    "uvicorn + httptools": ("httptools", serve_uvicorn),
    "hypercorn (h11)": ("hypercorn", serve_hypercorn),
    "granian (ASGI)": ("granian", serve_granian),
    "cheroot (WSGI)": ("cheroot", serve_cheroot),
}


# --- measuring --------------------------------------------------------------------------------

def _cpu(pid: int) -> float:
    """utime + stime of the whole process (threads that ended included), in seconds."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int) -> None:
    for _ in range(500):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("server did not listen")


LUA = "\n".join(['wrk.method = "POST"', f"wrk.body = {json.dumps(BODY)}",
                 *(f'wrk.headers["{k}"] = "{v}"' for k, v in HEADERS.items())]) + "\n"


def _wrk(port: int, connections: int, seconds: int) -> tuple[float, float, str]:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as fh:
        fh.write(LUA)
    out = subprocess.run(["wrk", "-t", "1", "-c", str(connections), "-d", f"{seconds}s",
                          "--latency", "-s", fh.name, f"http://127.0.0.1:{port}/"],
                         capture_output=True, text=True, check=True).stdout
    os.unlink(fh.name)
    requests = 0
    p99 = "?"
    for line in out.splitlines():
        parts = line.split()
        if "requests in" in line:
            requests = int(parts[0])
        if parts[:1] == ["99%"]:
            p99 = parts[1]
    return requests, float(seconds), p99


def _long_polls(port: int, pid: int, count: int) -> tuple[float, int, int]:
    socks = []
    began = time.perf_counter()
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(b"GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
        socks.append(s)
    time.sleep(1)
    threads = _threads(pid)
    answered = 0
    for s in socks:
        s.settimeout(30)
        try:
            if s.recv(4096).startswith(b"HTTP/1.1 200"):
                answered += 1
        except OSError:
            pass
        s.close()
    return time.perf_counter() - began, threads, answered


PROBES = {
    "CL +3": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +3\r\n\r\nabc",
    "CL 1_0": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1_0\r\n\r\n0123456789",
    "CL 3 and 4": (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4"
                   b"\r\n\r\nabcd"),
    "chunked": (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                b"5\r\nA=b&c\r\n0\r\n\r\n"),
    "pipelined x2": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nA=b" * 2,
}


def _probe(port: int, data: bytes) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
        s.sendall(data)
        got = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
                if got.count(b"HTTP/1.1 ") >= 2:
                    break
        except OSError:
            pass
    statuses = [m.decode() for m in re.findall(rb"HTTP/1\.1 (\d{3}) ", got)]
    return "+".join(statuses) or "closed"


def _probe_continue(port: int) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
        s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
                  b"Expect: 100-continue\r\n\r\n")
        try:
            first = s.recv(4096)
        except OSError:
            return "no answer"
        return "100 sent" if first.startswith(b"HTTP/1.1 100") else "no 100"


def measure(name: str, seconds: int) -> dict[str, str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", name, str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    row: dict[str, str] = {"server": name}
    try:
        _wait_listening(port)
        _wrk(port, 8, 1)  # warm-up
        for conns in (1, 64):
            cpu0 = _cpu(proc.pid)
            requests, wall, p99 = _wrk(port, conns, seconds)
            cpu = _cpu(proc.pid) - cpu0
            row[f"c={conns}"] = (f"{requests / wall:,.0f} req/s, p99 {p99}, "
                                 f"{cpu / max(requests, 1) * 1e6:.0f} µs CPU/req")
        wall, threads, answered = _long_polls(port, proc.pid, 1000)
        row["1,000 long polls"] = f"{answered} answered in {wall:.1f} s, {threads} threads"
        row["probes"] = ", ".join(f"{k}: {_probe(port, v)}" for k, v in PROBES.items())
        row["probes"] += f", Expect: {_probe_continue(port)}"
    finally:
        proc.kill()
        proc.wait()
    return row


# --- parsers alone ----------------------------------------------------------------------------

RAW = (b"POST / HTTP/1.1\r\nHost: 127.0.0.1:9125\r\n"
       + b"".join(f"{k}: {v}\r\n".encode() for k, v in HEADERS.items())
       + f"Content-Length: {len(BODY)}\r\n\r\n{BODY}".encode())


def parsers(n: int) -> None:
    import importlib.util
    from email.parser import BytesFeedParser  # noqa: F401 (what http.client uses)
    from http.client import parse_headers
    from io import BytesIO

    def stdlib() -> None:
        fp = BytesIO(RAW)
        fp.readline()
        parse_headers(fp)

    runs = {"stdlib http.client.parse_headers": stdlib}
    if importlib.util.find_spec("httptools"):
        import httptools

        class P:
            def on_header(self, name, value):
                pass

        def ht() -> None:
            httptools.HttpRequestParser(P()).feed_data(RAW)
        runs["httptools (llhttp)"] = ht
    if importlib.util.find_spec("aiohttp"):
        from aiohttp.http_parser import HttpRequestParser

        class Proto:
            transport = None

        loop = asyncio.new_event_loop()

        def aio() -> None:
            HttpRequestParser(Proto(), loop, 65536).feed_data(RAW)
        runs["aiohttp (llhttp, C)"] = aio
    if importlib.util.find_spec("h11"):
        import h11

        def h() -> None:
            c = h11.Connection(h11.SERVER)
            c.receive_data(RAW)
            c.next_event()
            c.next_event()
        runs["h11"] = h
    only = os.environ.get("PARSER")
    for name, fn in runs.items():
        if only and only not in name:
            continue
        began = time.perf_counter()
        for _ in range(n):
            fn()
        print(f"{name:<34} {(time.perf_counter() - began) / max(n, 1) * 1e6:8.1f} µs/request")


def main() -> None:
    if "--parsers" in sys.argv:
        i = sys.argv.index("--parsers")
        parsers(int(sys.argv[i + 1]) if len(sys.argv) > i + 1 else 20000)
        return
    import importlib.util

    seconds = 3
    rows = []
    for name, (module, _) in CANDIDATES.items():
        if module != "http.server" and importlib.util.find_spec(module) is None:
            print(f"{name}: not installed, skipped")
            continue
        rows.append(measure(name, seconds))
        print(json.dumps(rows[-1], ensure_ascii=False), flush=True)


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv):  # the docstring is the help
        print(__doc__)
        raise SystemExit(0)
    if "--serve" in sys.argv:
        i = sys.argv.index("--serve")
        threading.current_thread().name = "server"
        CANDIDATES[sys.argv[i + 1]][1](int(sys.argv[i + 2]))
    else:
        main()
