"""Server-side verification of the two Alibaba Cloud request signatures.

* ``ACS3-HMAC-SHA256`` (header ``Authorization``): used by the FC 3.0 SDK and, in this SDK
  generation, by the RAM and STS clients too (``do_request``; parameters in the query).
  Reference: fc3-api.md §4.
* RPC v1 ``HMAC-SHA1`` (``Signature`` in the query): used by the CloudFlow (fnf 2019-03-15)
  client. Reference: cloudflow-api.md §5.3.

Both return the verified AccessKeyId or raise :class:`SignatureError` with a
:class:`SignatureFailure` reason; the API layer turns the reason into its product's wire code.
Whether the signed time is fresh and the nonce unused is checked after the signature, by
:mod:`deployer.emulator.api.freshness` (the last four reasons).
The RPC verifier works on decoded parameters, never on the raw query text, because the sync and
async clients encode ``:`` differently.
"""

from __future__ import annotations

import base64
import binascii
import enum
import hashlib
import hmac
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import parse_qsl, quote

from deployer.emulator.api.http import HttpRequest

__all__ = ["ACS3_ALGORITHM", "SecretLookup", "SignatureError", "SignatureFailure", "acs3_signature",
           "rpc_v1_signature", "signed_header_names", "verify_acs3", "verify_rpc_v1"]

T = TypeVar("T")
ACS3_ALGORITHM = "ACS3-HMAC-SHA256"
SecretLookup = Callable[[str], "str | None"]


class SignatureFailure(enum.Enum):
    MISSING = "missing"  # no Authorization / Signature at all
    MALFORMED = "malformed"  # unparsable Authorization header or missing signed headers
    UNSUPPORTED = "unsupported"  # another algorithm / signature method
    UNKNOWN_KEY = "unknown_key"
    PAYLOAD_HASH = "payload_hash"  # x-acs-content-sha256 differs from the body's hash
    MISMATCH = "mismatch"
    TIME_MISSING = "time_missing"  # no signed request time (x-acs-date, Timestamp, Date)
    TIME_FORMAT = "time_format"  # a signed request time that does not parse
    EXPIRED = "expired"  # signed outside the freshness window
    NONCE_USED = "nonce_used"  # the signature nonce was seen within the window


class SignatureError(Exception):
    """Verification failed; ``reason`` says why, ``access_key_id`` is set when known."""

    def __init__(self, reason: SignatureFailure, detail: str = "", access_key_id: str = "") -> None:
        super().__init__(detail or reason.value)
        self.reason = reason
        self.detail = detail
        self.access_key_id = access_key_id


# --- ACS3-HMAC-SHA256 -------------------------------------------------------------------------

_REQUIRED_SIGNED = ("host", "x-acs-action", "x-acs-version", "x-acs-content-sha256")


def _canonical_query(raw_query: str) -> str:
    params = dict(parse_qsl(raw_query, keep_blank_values=True))
    return "&".join(f"{k}={quote(params[k], safe='~')}" for k in sorted(params))


def acs3_signature(method: str, raw_target: str, header_values: Callable[[str], list[str]],
                   signed_headers: str, payload_hash: str, secret: str) -> str:
    """The hex ACS3-HMAC-SHA256 signature of a request (fc3-api.md §4.1 steps 3-8)."""
    path, _, query = raw_target.partition("?")
    canon_headers = "".join(
        f"{name}:{','.join(sorted(v.strip() for v in header_values(name)))}\n"
        for name in signed_headers.split(";"))
    canonical = "\n".join([method.upper(), path or "/", _canonical_query(query), canon_headers,
                           signed_headers, payload_hash])
    to_sign = f"{ACS3_ALGORITHM}\n{hashlib.sha256(canonical.encode('utf-8')).hexdigest()}"
    return hmac.new(secret.encode("utf-8"), to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


def _parse_authorization(value: str) -> tuple[str, str, str]:
    algorithm, _, rest = value.strip().partition(" ")
    if algorithm != ACS3_ALGORITHM:
        kind = (SignatureFailure.UNSUPPORTED if algorithm.startswith("ACS3-")
                else SignatureFailure.MALFORMED)
        raise SignatureError(kind, f"unsupported authorization scheme {algorithm!r}")
    parts: dict[str, str] = {}
    for item in rest.split(","):
        key, sep, val = item.strip().partition("=")
        if sep:
            parts[key] = val
    try:
        return parts["Credential"], parts["SignedHeaders"], parts["Signature"]
    except KeyError as exc:
        raise SignatureError(SignatureFailure.MALFORMED,
                             f"Authorization lacks {exc.args[0]}") from None


def signed_header_names(request: HttpRequest) -> frozenset[str]:
    """The header names an ACS3 ``Authorization`` signs (empty for RPC v1 or unsigned)."""
    auth = request.headers.get("authorization") or ""
    _, _, rest = auth.partition(" ")
    for item in rest.split(","):
        key, _, value = item.strip().partition("=")
        if key == "SignedHeaders":
            return frozenset(value.split(";"))
    return frozenset()


def verify_acs3(request: HttpRequest, secret_for: SecretLookup) -> str:
    """Verify an ACS3-HMAC-SHA256 request; return its AccessKeyId. A security token must be
    signed; whether it belongs to the key is checked by ``api.access``, which knows them."""
    auth = request.headers.get("authorization")
    if not auth:
        raise SignatureError(SignatureFailure.MISSING, "the request is not signed")
    access_key_id, signed, signature = _parse_authorization(auth)
    names = signed.split(";")
    missing = [h for h in _REQUIRED_SIGNED if h not in names]
    if "x-acs-security-token" in request.headers and "x-acs-security-token" not in names:
        missing.append("x-acs-security-token")
    if missing or any(n != n.lower() or n not in request.headers for n in names):
        raise SignatureError(SignatureFailure.MALFORMED, "SignedHeaders is incomplete",
                             access_key_id)
    secret = secret_for(access_key_id)
    if secret is None:
        raise SignatureError(SignatureFailure.UNKNOWN_KEY, access_key_id, access_key_id)
    sts_key = request.headers.get("x-acs-accesskey-id")
    if sts_key is not None and sts_key != access_key_id:
        raise SignatureError(SignatureFailure.MISMATCH, "x-acs-accesskey-id differs", access_key_id)
    payload_hash = hashlib.sha256(request.body).hexdigest()
    if request.headers.get("x-acs-content-sha256") != payload_hash:
        raise SignatureError(SignatureFailure.PAYLOAD_HASH, "payload hash mismatch", access_key_id)
    want = acs3_signature(request.method, request.raw_target, request.headers.get_all, signed,
                          payload_hash, secret)
    if not hmac.compare_digest(want, signature.lower()):
        raise SignatureError(SignatureFailure.MISMATCH, "signature mismatch", access_key_id)
    return access_key_id


# --- RPC v1 HMAC-SHA1 -------------------------------------------------------------------------


class BoundedMemo(dict[str, T]):
    """``memo[key]``: ``fn(key)``, remembered for keys of at most ``key_limit`` characters,
    at most ``size`` of them (all forgotten when full). A hit is a plain dict lookup."""

    def __init__(self, fn: Callable[[str], T], size: int, key_limit: int = 1024) -> None:
        super().__init__()
        self._fn, self._size, self._key_limit = fn, size, key_limit

    def __missing__(self, key: str) -> T:
        value = self._fn(key)
        if len(key) <= self._key_limit:
            if len(self) >= self._size:
                self.clear()
            self[key] = value
        return value


_UNRESERVED = re.compile(r"[A-Za-z0-9_.~-]*").fullmatch


def _enc(text: str) -> str:
    """RFC 3986 percent-encoding of ``text`` (UTF-8; ``-_.~`` and alphanumerics kept)."""
    if _UNRESERVED(text):  # nothing to escape (most parameter names and values)
        return text
    return quote(text, safe="-_.~", encoding="utf-8")


def _canonical(params: Mapping[str, str], skip: str = "") -> str:
    """The RPC v1 canonical query of ``params`` (sorted by name, every name and value
    encoded by :func:`_enc`) leaving out the parameter named ``skip``. Encodings are
    memoised: names, and values such as the version, the key id or this second's timestamp,
    repeat from one request to the next."""
    memo = _ENCODED
    parts = []
    for name in sorted(params):
        if name != skip:
            parts.append(f"{memo[name]}={memo[params[name]]}")
    return "&".join(parts)


_ENCODED = BoundedMemo(_enc, 4096, 64)  # longer texts (an Input, a Definition): every time


def _string_to_sign(method: str, canon: str) -> str:
    # canon holds only unreserved characters, "%", "=" and "&": encoding it again is three
    # replacements (the same as _enc(canon), without a per-character loop)
    encoded = canon.replace("%", "%25").replace("=", "%3D").replace("&", "%26")
    return f"{method.upper()}&%2F&{encoded}"


def _rpc_v1_digest(secret: str, to_sign: str) -> bytes:
    """HMAC-SHA1 (RFC 2104) keyed ``secret&``: the hash states after the inner and outer
    key pads are computed once per secret and copied, instead of keying a new HMAC each
    time (OpenSSL 3 looks the algorithm up on every keying); the same bytes as
    ``hmac.digest``."""
    pads = _PADS[secret]
    inner, outer = pads[0].copy(), pads[1].copy()
    inner.update(to_sign.encode("utf-8"))
    outer.update(inner.digest())
    digest: bytes = outer.digest()
    return digest


def _pads(secret: str) -> tuple[Any, Any]:
    key = f"{secret}&".encode()
    if len(key) > 64:  # SHA-1's block size
        key = hashlib.sha1(key).digest()
    key = key.ljust(64, b"\0")
    return (hashlib.sha1(bytes(b ^ 0x36 for b in key)),
            hashlib.sha1(bytes(b ^ 0x5C for b in key)))


_PADS = BoundedMemo(_pads, 64)  # secret -> SHA-1 states after its HMAC pads


def rpc_v1_signature(method: str, params: Mapping[str, str], secret: str) -> tuple[str, str]:
    """``(signature, string_to_sign)`` of RPC v1 over decoded ``params`` (without Signature)."""
    to_sign = _string_to_sign(method, _canonical(params))
    digest = _rpc_v1_digest(secret, to_sign)
    return base64.b64encode(digest).decode("ascii"), to_sign


def verify_rpc_v1(request: HttpRequest, secret_for: SecretLookup) -> str:
    """Verify an RPC v1 (HMAC-SHA1) request (its parameters: the query merged with a form
    body); return its AccessKeyId."""
    params = request.rpc_params()  # parsed once per request; read only
    signature = params.get("Signature")
    if signature is None:
        raise SignatureError(SignatureFailure.MISSING, "the request is not signed")
    if params.get("SignatureMethod") != "HMAC-SHA1" or params.get("SignatureVersion") != "1.0":
        raise SignatureError(SignatureFailure.UNSUPPORTED, "only HMAC-SHA1 1.0 is supported")
    access_key_id = params.get("AccessKeyId", "")
    secret = secret_for(access_key_id) if access_key_id else None
    if secret is None:
        raise SignatureError(SignatureFailure.UNKNOWN_KEY, access_key_id, access_key_id)
    to_sign = _string_to_sign(request.method, _canonical(params, skip="Signature"))
    want = binascii.b2a_base64(_rpc_v1_digest(secret, to_sign), newline=False)
    if not hmac.compare_digest(want, signature.encode()):
        raise SignatureError(SignatureFailure.MISMATCH, "signature mismatch", access_key_id)
    return access_key_id
