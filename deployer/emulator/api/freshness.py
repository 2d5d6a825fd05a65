"""Request freshness as the cloud enforces it: a signed time within 15 minutes, a nonce used once
(docs/emulator.md "Request freshness": the rules, the wire codes and their sources).

Checked after the signature verifies, so the time and nonce are the signed ones: ACS3's
``x-acs-date`` and ``x-acs-signature-nonce``, RPC v1's ``Timestamp`` and ``SignatureNonce``,
Log Service's ``Date``. The window is measured on the real wall clock, or on the emulator's
virtual one (code on the virtual clock signs with it). Failures raise :class:`SignatureError`
with ``TIME_MISSING``, ``TIME_FORMAT``, ``EXPIRED`` or ``NONCE_USED``, which each product's
:class:`~deployer.emulator.api.router.AuthScheme` words.
"""

from __future__ import annotations

import calendar
import email.utils
import re
import time
from collections.abc import Callable

from deployer.emulator.api.http import HttpRequest
from deployer.emulator.api.signing import (
    BoundedMemo,
    SignatureError,
    SignatureFailure,
    signed_header_names,
)
from deployer.emulator.clock import Clock
from deployer.emulator.services.request_nonces import DEFAULT_CAPACITY, Claim, NonceLedger
from deployer.timestamps import iso_seconds

__all__ = ["WINDOW_SECONDS", "RequestFreshness", "parse_iso_utc"]

WINDOW_SECONDS = 15 * 60
"""How far a signed time may be from "now", either way (Alibaba Cloud's 15 minutes)."""

_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$")


def parse_iso_utc(text: str) -> float | None:
    """``yyyy-MM-ddTHH:mm:ss[.fff]Z`` as epoch seconds; None when it is not that."""
    m = _ISO.match(text.strip())
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and second < 61):
        return None
    try:
        whole = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    except (ValueError, OverflowError):
        return None
    return whole + (float(f"0.{m.group(7)}") if m.group(7) else 0.0)


_parse_stamp = BoundedMemo(parse_iso_utc, 256, 40).__getitem__
"""``parse_iso_utc``, memoised: clients sign many requests within one second."""


def _parse_http_date(text: str) -> float | None:
    try:
        parsed = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed.tzinfo is None:  # "-0000": UTC by RFC 2822
        return float(calendar.timegm(parsed.timetuple()))
    return parsed.timestamp()


def _short(text: str, limit: int = 64) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


class RequestFreshness:
    """The checks above for one emulator: its ``clock``, the wall clock ``wall`` (injectable
    for tests) and the nonce ledger (``capacity`` entries at most)."""

    def __init__(self, clock: Clock, wall: Callable[[], float] = time.time, *,
                 window: float = WINDOW_SECONDS, capacity: int = DEFAULT_CAPACITY) -> None:
        self._clock = clock
        self._wall = wall
        self.window = float(window)
        self.nonces = NonceLedger(self.window, capacity)

    def check_acs3(self, request: HttpRequest, access_key_id: str) -> None:
        """``x-acs-date`` fresh and signed; ``x-acs-signature-nonce`` (if sent) signed, unused."""
        signed = signed_header_names(request)
        date = request.headers.get("x-acs-date")
        if date is None:
            raise SignatureError(SignatureFailure.TIME_MISSING,
                                 "required HTTP header x-acs-date was not specified",
                                 access_key_id)
        nonce = request.headers.get("x-acs-signature-nonce")
        unsigned = [name for name, value in (("x-acs-date", date),
                                             ("x-acs-signature-nonce", nonce))
                    if value is not None and name not in signed]
        if unsigned:
            raise SignatureError(SignatureFailure.MALFORMED,
                                 f"{' and '.join(unsigned)} must be listed in SignedHeaders",
                                 access_key_id)
        self._check(access_key_id, "x-acs-date", date, parse_iso_utc(date),
                    "x-acs-signature-nonce", nonce)

    def check_rpc_v1(self, request: HttpRequest, access_key_id: str) -> None:
        """The ``Timestamp`` parameter fresh; ``SignatureNonce`` (if sent) unused."""
        params = request.rpc_params()  # the query merged with a form body, parsed once
        stamp = params.get("Timestamp")
        if not stamp:
            raise SignatureError(SignatureFailure.TIME_MISSING,
                                 'the input parameter "Timestamp" that is mandatory for '
                                 "processing this request is not supplied", access_key_id)
        self._check(access_key_id, "Timestamp", stamp, _parse_stamp(stamp), "SignatureNonce",
                    params.get("SignatureNonce"))

    def check_sls(self, request: HttpRequest, access_key_id: str) -> None:
        """Log Service: the signed ``Date`` header fresh (SLS signs no nonce)."""
        date = request.headers.get("date")
        if not date:
            raise SignatureError(SignatureFailure.TIME_MISSING,
                                 "the request has no Date header (RFC 1123, GMT)",
                                 access_key_id)
        self._check(access_key_id, "Date", date, _parse_http_date(date), "", None)

    def _check(self, key: str, time_name: str, text: str, signed_at: float | None,
               nonce_name: str, nonce: str | None) -> None:
        if signed_at is None:
            raise SignatureError(SignatureFailure.TIME_FORMAT, (
                f"{time_name} {_short(text)!r} is not a valid time: use "
                + ("RFC 1123 GMT, e.g. 'Mon, 03 Jan 2026 08:33:47 GMT'" if time_name == "Date"
                   else "ISO 8601 UTC, yyyy-MM-ddTHH:mm:ssZ")), key)
        wall = self._wall()
        virtual = self._clock.now() if self._clock.is_virtual else None
        window = self.window
        if abs(signed_at - wall) > window and (virtual is None
                                               or abs(signed_at - virtual) > window):
            raise SignatureError(SignatureFailure.EXPIRED, self._expired(
                time_name, text, wall, virtual), key)
        if not nonce:
            return
        horizon = wall if virtual is None else min(wall, virtual)
        claim = self.nonces.claim(key, nonce, signed_at, horizon)
        if claim is Claim.REUSED:
            raise SignatureError(SignatureFailure.NONCE_USED, (
                f"the signature nonce {_short(nonce)!r} ({nonce_name}) was already used within "
                f"the last {window / 60:g} minutes: every request needs a new nonce"), key)
        if claim is Claim.TOO_OLD:
            raise SignatureError(SignatureFailure.EXPIRED, (
                f"the request was signed at {_short(text)} ({time_name}), at or before "
                f"{iso_seconds(self.nonces.watermark)}: the emulator's replay memory is full "
                f"({self.nonces.capacity} nonces within {window / 60:g} minutes), so it "
                "refuses requests signed that long ago; sign each request when sending it"), key)

    def _expired(self, name: str, text: str, wall: float, virtual: float | None) -> str:
        now = f"the current time is {iso_seconds(wall)}"
        if virtual is not None:
            now += f" (the emulator's virtual time {iso_seconds(virtual)})"
        return (f"the request was signed at {_short(text)} ({name}) but {now}: the difference "
                f"exceeds {self.window / 60:g} minutes; sign requests with the current UTC time "
                "and check the client's clock")
