"""Sending a recorded request through the official SDK client of its product.

Every typed SDK method (``create_function``, ``start_execution``, ...) is the same three
lines: build the operation's ``Params``, call the client's public ``call_api`` with an
``OpenApiRequest``, and map the result onto the ``<Action>Response`` model. This module does
exactly that from the recorded action, method, path, query, headers and body, so the bytes
on the wire (signature included) are the SDK's own, for any action, and the answer is also
read into the typed model the way the typed method reads it.
"""

from __future__ import annotations

import base64
import importlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from alibabacloud_tea_openapi import utils_models as open_api
from alibabacloud_tea_openapi.exceptions import AlibabaCloudException
from darabonba.core import DaraCore
from darabonba.exceptions import UnretryableException
from darabonba.runtime import RuntimeOptions

from tests.parity.recording import Request


@dataclass(frozen=True)
class Product:
    """What the SDK of one product puts in every operation's ``Params``."""

    name: str
    version: str
    style: str
    req_body_type: str
    sdk: str  # the SDK package: its client.Client and models.<Action>Response


PRODUCTS = {
    "fc": Product("fc", "2023-03-30", "ROA", "json", "alibabacloud_fc20230330"),
    "cloudflow": Product("cloudflow", "2019-03-15", "RPC", "formData",
                         "alibabacloud_fnf20190315"),
    "sts": Product("sts", "2015-04-01", "RPC", "formData", "alibabacloud_sts20150401"),
    "ram": Product("ram", "2015-05-01", "RPC", "formData", "alibabacloud_ram20150501"),
}


def body_type(product: str, action: str) -> str:
    """How the SDK reads a successful answer: ``json``, ``binary`` or ``none`` (as the
    generated client declares it; FC's Delete* operations ignore the body)."""
    if product == "fc" and action == "InvokeFunction":
        return "binary"
    if product == "fc" and action.startswith("Delete"):
        return "none"
    return "json"


@dataclass
class Answer:
    """One answer as the SDK caller sees it."""

    status: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    raw: bytes | None = None  # binary answers
    failure: str | None = None  # the SDK could not read the answer at all
    typed_problem: str | None = None  # the typed <Action>Response lost the body

    def as_response(self, decode_body: str = "text") -> dict[str, Any]:
        """The answer in the recording's shape (``status``, ``headers``, ``body`` or
        ``body_text``)."""
        out: dict[str, Any] = {"status": self.status, "headers": dict(self.headers)}
        if self.raw is not None:
            try:
                text = self.raw.decode("utf-8")
            except UnicodeDecodeError:
                out["body_text"] = "base64:" + base64.b64encode(self.raw).decode()
                return out
            if decode_body == "json":
                try:
                    out["body"] = json.loads(text)
                    return out
                except ValueError:
                    pass
            out["body_text"] = text
        elif self.body is not None:
            out["body"] = self.body
        return out


def new_client(product: str, config: Any) -> Any:
    module = importlib.import_module(f"{PRODUCTS[product].sdk}.client")
    return module.Client(config)


def call(client: Any, product: str, request: Request) -> Answer:
    """Send ``request`` (variables already expanded) with ``client``; SDK errors (4xx/5xx)
    come back as answers, transport or parse failures as ``Answer.failure``."""
    spec = PRODUCTS[product]
    kind = body_type(product, request.action)
    params = open_api.Params(
        action=request.action, version=spec.version, protocol="HTTPS",
        pathname=request.path, method=request.method, auth_type="AK", style=spec.style,
        req_body_type=spec.req_body_type, body_type=kind)
    raw = request.body_text.encode("utf-8") if request.body_text is not None else None
    api_request = open_api.OpenApiRequest(
        headers=dict(request.headers), query=dict(request.query) or None,
        body=raw if raw is not None else request.body, stream=raw)
    try:
        result = client.call_api(params, api_request, RuntimeOptions())
    except AlibabaCloudException as exc:
        data = dict(exc.data or {})
        status = int(data.pop("statusCode", exc.status_code or 0))
        return Answer(status=status, body=data)
    except UnretryableException as exc:
        return Answer(failure=f"{type(exc).__name__}: {exc}")
    return _success(spec, request.action, kind, result)


def _success(spec: Product, action: str, kind: str, result: Mapping[str, Any]) -> Answer:
    answer = Answer(status=int(result.get("statusCode") or 0),
                    headers={str(k).lower(): str(v) for k, v in
                             (result.get("headers") or {}).items()})
    body: Any = result.get("body")
    if kind == "binary":
        answer.raw = bytes(body.read() if hasattr(body, "read") else (body or b""))
        return answer
    answer.body = body if kind == "json" else None
    if kind == "json":
        answer.typed_problem = _typed_problem(spec, action, result)
    return answer


def _typed_problem(spec: Product, action: str, result: Mapping[str, Any]) -> str | None:
    models = importlib.import_module(f"{spec.sdk}.models")
    model = getattr(models, f"{action}Response", None)
    if model is None or result.get("body") is None:
        return None
    typed = DaraCore.from_map(model(), dict(result))
    if getattr(typed, "body", None) is None:
        return (f"the SDK's {action}Response could not read this body (the typed "
                f"{action} call would return body=None)")
    return None
