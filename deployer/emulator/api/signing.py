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
import enum
import hashlib
import hmac
import re
from collections.abc import Callable, Mapping
from urllib.parse import parse_qsl, quote

from deployer.emulator.api.http import HttpRequest

__all__ = [
    "ACS3_ALGORITHM",
    "SecretLookup",
    "SignatureError",
    "SignatureFailure",
    "acs3_signature",
    "rpc_v1_signature",
    "signed_header_names",
    "verify_acs3",
    "verify_rpc_v1",
]

ACS3_ALGORITHM = "ACS3-HMAC-SHA256"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
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


def acs3_signature(
    method: str,
    raw_target: str,
    header_values: Callable[[str], list[str]],
    signed_headers: str,
    payload_hash: str,
    secret: str,
) -> str:
    """The hex ACS3-HMAC-SHA256 signature of a request (fc3-api.md §4.1 steps 3-8)."""
    path, _, query = raw_target.partition("?")
    canon_headers = "".join(
        f"{name}:{','.join(sorted(v.strip() for v in header_values(name)))}\n"
        for name in signed_headers.split(";")
    )
    canonical = "\n".join(
        [method.upper(), path or "/", _canonical_query(query), canon_headers, signed_headers,
         payload_hash]
    )
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
    """Verify an ACS3-HMAC-SHA256 request; return its AccessKeyId.

    Checks, in order: header present and well formed, required headers signed, key known,
    body hash equals ``x-acs-content-sha256``, signature (constant-time compare). In STS mode
    (``x-acs-security-token``) the token must be signed and the ``x-acs-accesskey-id`` header
    must name the same key; whether the token belongs to that key is checked by the caller
    (``api.access``), which knows the issued tokens.
    """
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


_UNRESERVED = re.compile(r"[A-Za-z0-9_.~-]*").fullmatch


def _enc(text: str) -> str:
    if _UNRESERVED(text):  # nothing to escape (most parameter names and values)
        return text
    return quote(text, safe="-_.~", encoding="utf-8")


def rpc_v1_signature(method: str, params: Mapping[str, str], secret: str) -> tuple[str, str]:
    """``(signature, string_to_sign)`` of RPC v1 over decoded ``params`` (without Signature)."""
    canon = "&".join(f"{_enc(k)}={_enc(params[k])}" for k in sorted(params))
    # canon holds only unreserved characters, "%", "=" and "&": encoding it again is three
    # replacements (the same as _enc(canon), without a per-character loop)
    encoded = canon.replace("%", "%25").replace("=", "%3D").replace("&", "%26")
    to_sign = f"{method.upper()}&%2F&{encoded}"
    digest = hmac.new(f"{secret}&".encode(), to_sign.encode("utf-8"), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii"), to_sign


def verify_rpc_v1(request: HttpRequest, secret_for: SecretLookup) -> str:
    """Verify an RPC v1 (HMAC-SHA1) request; return its AccessKeyId.

    Parameters are the query merged with a form body (body wins), blank values kept.
    """
    params = {**request.query_params(), **request.form_params()}
    signature = params.pop("Signature", None)
    if signature is None:
        raise SignatureError(SignatureFailure.MISSING, "the request is not signed")
    if params.get("SignatureMethod") != "HMAC-SHA1" or params.get("SignatureVersion") != "1.0":
        raise SignatureError(SignatureFailure.UNSUPPORTED, "only HMAC-SHA1 1.0 is supported")
    access_key_id = params.get("AccessKeyId", "")
    secret = secret_for(access_key_id) if access_key_id else None
    if secret is None:
        raise SignatureError(SignatureFailure.UNKNOWN_KEY, access_key_id, access_key_id)
    want, _ = rpc_v1_signature(request.method, params, secret)
    if not hmac.compare_digest(want.encode(), signature.encode()):
        raise SignatureError(SignatureFailure.MISMATCH, "signature mismatch", access_key_id)
    return access_key_id
