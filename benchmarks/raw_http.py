"""A cheap HTTP client that is the same for every peer of ``benchmarks/flows.py``.

On two cores the official Python SDKs cost more CPU per request than the servers measured
(the Tea SDK about 1.5 ms per call, most of it urllib3 quoting the signed query string), so
they, not the servers, set the throughput. This client removes that cost for both sides
alike: every request of a round is built and signed *before* the round is timed, each with its
peer's real signature scheme (CloudFlow: RPC v1 HMAC-SHA1, unique nonces; Step Functions:
SigV4 by botocore), and the timed part only writes those bytes on keep-alive connections and
reads the answers (``Content-Length`` framing, JSON status). Polls are pre-signed too, a few
per execution; one needing more is signed on the spot (counted in the client's time).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import uuid
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

__all__ = ["Connection", "FnfSigner", "SfnSigner"]


def _pct(text: str) -> str:
    return quote(text, safe="-_.~")


class FnfSigner:
    """CloudFlow RPC requests signed with RPC v1 (HMAC-SHA1), as the fnf SDK sends them:
    common parameters in the query, a POST action's own parameters in a form body."""

    VERSION = "2019-03-15"

    def __init__(self, host: str, key_id: str, secret: str) -> None:
        self.host = host
        self._key_id = key_id
        self._secret = (secret + "&").encode()

    def _request(self, method: str, action: str, params: dict[str, str]) -> bytes:
        common = {"Action": action, "Format": "json", "Version": self.VERSION,
                  "Timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                  "SignatureNonce": uuid.uuid4().hex, "SignatureMethod": "HMAC-SHA1",
                  "SignatureVersion": "1.0", "AccessKeyId": self._key_id}
        signed = {**common, **params}
        canonical = "&".join(f"{_pct(k)}={_pct(v)}" for k, v in sorted(signed.items()))
        to_sign = f"{method}&%2F&{_pct(canonical)}"
        sig = base64.b64encode(hmac.new(self._secret, to_sign.encode(), hashlib.sha1).digest())
        query_params = common if method == "POST" else signed
        query = "&".join(f"{_pct(k)}={_pct(v)}" for k, v in query_params.items())
        query += "&Signature=" + _pct(sig.decode())
        head = [f"{method} /?{query} HTTP/1.1", f"Host: {self.host}",
                f"x-acs-version: {self.VERSION}", f"x-acs-action: {action}"]
        body = b""
        if method == "POST":
            body = "&".join(f"{_pct(k)}={_pct(v)}" for k, v in params.items()).encode()
            head += ["Content-Type: application/x-www-form-urlencoded",
                     f"Content-Length: {len(body)}"]
        return ("\r\n".join(head) + "\r\n\r\n").encode() + body

    def start(self, flow: str, name: str, input_text: str) -> bytes:
        return self._request("POST", "StartExecution",
                             {"FlowName": flow, "ExecutionName": name, "Input": input_text})

    def describe(self, flow: str, name: str) -> bytes:
        return self._request("GET", "DescribeExecution",
                             {"FlowName": flow, "ExecutionName": name})

    @staticmethod
    def status(body: dict[str, Any]) -> str | None:
        status = str(body.get("Status", body.get("Code", "?")))
        return None if status in ("Running", "Starting") else status


class SfnSigner:
    """Step Functions JSON 1.0 requests signed with SigV4 by botocore (what boto3 sends)."""

    def __init__(self, host: str, region: str = "us-east-1") -> None:
        from botocore.auth import SigV4Auth
        from botocore.credentials import Credentials

        self.host = host
        self._auth = SigV4Auth(Credentials("x", "x"), "states", region)

    def _request(self, target: str, payload: dict[str, str]) -> bytes:
        from botocore.awsrequest import AWSRequest

        body = json.dumps(payload).encode()
        req = AWSRequest("POST", f"http://{self.host}/", data=body, headers={
            "X-Amz-Target": f"AWSStepFunctions.{target}",
            "Content-Type": "application/x-amz-json-1.0"})
        self._auth.add_auth(req)
        head = ["POST / HTTP/1.1", f"Host: {self.host}",
                *(f"{k}: {v}" for k, v in req.headers.items()),
                f"Content-Length: {len(body)}"]
        return ("\r\n".join(head) + "\r\n\r\n").encode() + body

    def start(self, arn: str, name: str, input_text: str) -> bytes:
        return self._request("StartExecution",
                             {"stateMachineArn": arn, "name": name, "input": input_text})

    def describe(self, execution_arn: str) -> bytes:
        return self._request("DescribeExecution", {"executionArn": execution_arn})

    @staticmethod
    def status(body: dict[str, Any]) -> str | None:
        status = str(body.get("status", body.get("__type", "?")))
        return None if status == "RUNNING" else {"SUCCEEDED": "Succeeded"}.get(status, status)


class Connection:
    """One keep-alive HTTP/1.1 connection: send pre-built bytes, read one JSON answer."""

    def __init__(self, host: str, port: int) -> None:
        self._addr = (host, port)
        self._sock = self._connect()
        self._buf = b""

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(self._addr, timeout=60)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    def exchange(self, request: bytes) -> dict[str, Any]:
        self._sock.sendall(request)
        while b"\r\n\r\n" not in self._buf:
            self._recv()
        head, _, rest = self._buf.partition(b"\r\n\r\n")
        length, close = 0, False
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            lname = name.strip().lower()
            if lname == b"content-length":
                length = int(value)
            elif lname == b"connection" and value.strip().lower() == b"close":
                close = True
        while len(rest) < length:
            self._buf = rest
            self._recv()
            rest = self._buf
        body, self._buf = rest[:length], rest[length:]
        if close:
            self._sock.close()
            self._sock, self._buf = self._connect(), b""
        answer: dict[str, Any] = json.loads(body) if body else {}
        return answer

    def _recv(self) -> None:
        data = self._sock.recv(65536)
        if not data:
            raise ConnectionError("the server closed the connection")
        self._buf += data

    def close(self) -> None:
        self._sock.close()



