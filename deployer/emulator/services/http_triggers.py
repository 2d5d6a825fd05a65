"""An HTTP trigger's request and response mapping for functions of built-in runtimes (no
HTTP server here: the API layer hands in the request's parts and sends the answer back).

FC 3.0 (FC docs, "Use an HTTP trigger to invoke a function"; CONFIRMED unless marked): the
request becomes the ``v1`` event ``{version, rawPath, body, isBase64Encoded, headers,
queryParameters, requestContext}``; header names are canonicalised (``content-type`` ->
``Content-Type``) and repeated headers and query parameters are joined with commas; a binary
body is base64 with ``isBase64Encoded: true``. The handler's result, when it is a JSON object
with ``statusCode``, is the response ``{statusCode, headers, isBase64Encoded, body}``.

Decided where the docs are silent (INFERRED): a body is text when its content type is
``text/*``, JSON, XML, JavaScript or a form and it decodes as UTF-8 (anything else is
binary); a result that is not such an object is the body of a ``200`` answer
(``application/json`` when it parses as JSON, else ``text/plain; charset=utf-8``); a handler
error is a ``502`` answer with FC's error JSON and ``x-fc-error-type``; a method the trigger
does not list is ``405``. Custom runtimes get the request as it is (their server answers).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any
from urllib.parse import parse_qsl, unquote

__all__ = [
    "HttpTriggerRequest",
    "TriggerAnswer",
    "canonical_header",
    "event_for",
    "is_text",
    "response_for",
]

_TEXT_TYPES = ("application/json", "application/xml", "application/javascript",
               "application/x-www-form-urlencoded", "application/x-ndjson")
#: Headers a handler's answer may not set: the connection is the emulator's.
_HOP_BY_HOP = frozenset({"connection", "content-length", "transfer-encoding", "keep-alive",
                         "upgrade"})


@dataclass(frozen=True, slots=True)
class HttpTriggerRequest:
    """What reached an HTTP trigger's URL: ``raw_path`` after the trigger's own prefix, still
    percent-encoded; ``headers`` as (name, value) pairs in arrival order."""

    method: str
    raw_path: str
    query: str
    headers: Sequence[tuple[str, str]]
    body: bytes
    source_ip: str = "127.0.0.1"
    protocol: str = "HTTP/1.1"


@dataclass(frozen=True, slots=True)
class TriggerAnswer:
    """The HTTP answer: status, headers (name, value) and body."""

    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    errors: tuple[str, ...] = field(default=(), compare=False)  # why the result was not used


def canonical_header(name: str) -> str:
    """``content-type`` -> ``Content-Type`` (each dash-separated part capitalised)."""
    return "-".join(part[:1].upper() + part[1:].lower() for part in name.split("-"))


def is_text(content_type: str) -> bool:
    kind = content_type.split(";", 1)[0].strip().lower()
    return kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith(("+json", "+xml"))


def _joined(pairs: Sequence[tuple[str, str]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in pairs:
        out[name] = f"{out[name]},{value}" if name in out else value
    return out


def event_for(request: HttpTriggerRequest, *, account_id: str, region: str,
              url_prefix: str, request_id: str, now: float, domain: str = "") -> bytes:
    """The ``v1`` event of ``request`` (module docstring); ``domain``: the custom domain it
    was sent to (else the trigger's ``fcapp.run`` name)."""
    headers = _joined([(canonical_header(k), v) for k, v in request.headers])
    content_type = headers.get("Content-Type", "")
    body, encoded = "", False
    if request.body:
        try:
            text = request.body.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and (is_text(content_type) or not content_type):
            body = text
        else:
            body, encoded = base64.b64encode(request.body).decode("ascii"), True
    query = _joined(parse_qsl(request.query, keep_blank_values=True))
    path = request.raw_path or "/"
    when = datetime.fromtimestamp(now, timezone.utc)
    event = {
        "version": "v1", "rawPath": path, "body": body, "isBase64Encoded": encoded,
        "headers": headers, "queryParameters": query,
        "requestContext": {
            "accountId": account_id,
            "domainName": domain or f"{url_prefix}.{region}.fcapp.run",
            "domainPrefix": domain.split(".", 1)[0] if domain else url_prefix,
            "http": {"method": request.method, "path": unquote(path),
                     "protocol": request.protocol, "sourceIp": request.source_ip,
                     "userAgent": headers.get("User-Agent", "")},
            "requestId": request_id, "time": when.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "timeEpoch": str(int(now * 1000))}}
    return json.dumps(event, ensure_ascii=False).encode("utf-8")


def _plain_answer(payload: bytes) -> TriggerAnswer:
    try:
        json.loads(payload)
        kind = "application/json"
    except (ValueError, UnicodeDecodeError):
        kind = "text/plain; charset=utf-8"
    return TriggerAnswer(200, (("Content-Type", kind),), payload)


def response_for(payload: bytes, error_type: str | None) -> TriggerAnswer:
    """The HTTP answer for a handler's result (``payload``) or error (``error_type``)."""
    if error_type:
        return TriggerAnswer(502, (("Content-Type", "application/json"),
                                ("x-fc-error-type", error_type)), payload)
    try:
        result: Any = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return _plain_answer(payload)
    if not isinstance(result, Mapping) or "statusCode" not in result:
        return _plain_answer(payload)
    status = result.get("statusCode")
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        return TriggerAnswer(502, (("Content-Type", "text/plain; charset=utf-8"),),
                          b"the function returned an invalid statusCode",
                          (f"statusCode {status!r} is not an HTTP status",))
    headers = result.get("headers") or {}
    pairs = tuple((str(k), str(v)) for k, v in (headers.items() if isinstance(
        headers, Mapping) else ()) if str(k).lower() not in _HOP_BY_HOP)
    body = result.get("body", "")
    if not isinstance(body, str):
        body = json.dumps(body, ensure_ascii=False)
    if result.get("isBase64Encoded"):
        try:
            data = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            return TriggerAnswer(502, (("Content-Type", "text/plain; charset=utf-8"),),
                              b"the function returned a body that is not valid base64",
                              ("isBase64Encoded with a body that is not base64",))
    else:
        data = body.encode("utf-8")
    return TriggerAnswer(status, pairs, data)
