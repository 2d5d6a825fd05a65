"""The replay guard's bounds, and the signed-time parser (hypothesis)."""

from __future__ import annotations

import calendar
import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from deployer.emulator.api.freshness import parse_iso_utc
from deployer.emulator.services.request_nonces import Claim, NonceLedger

T0 = 1_800_000_000.0


def test_a_nonce_is_refused_while_its_request_could_be_fresh_then_forgotten():
    ledger = NonceLedger(window=900)
    assert ledger.claim("ak", "n1", T0, T0) is Claim.ACCEPTED
    assert ledger.claim("ak", "n1", T0, T0 + 899) is Claim.REUSED
    assert ledger.claim("other-key", "n1", T0, T0) is Claim.ACCEPTED  # nonces are per key
    assert ledger.claim("ak", "n2", T0 + 1000, T0 + 1000) is Claim.ACCEPTED
    assert len(ledger) == 1  # both n1 (signed 1000 s before the horizon) went with that claim


def test_memory_is_bounded_under_a_flood_and_no_replay_gets_through():
    ledger = NonceLedger(window=900, capacity=100)
    for i in range(1000):  # a flood of distinct, fresh nonces, one per 0.1 s
        assert ledger.claim("ak", f"n{i}", T0 + i / 10, T0 + i / 10) is Claim.ACCEPTED
        assert len(ledger) <= 100
    # every nonce still remembered is refused; the forgotten ones are below the watermark
    for i in range(1000):
        assert ledger.claim("ak", f"n{i}", T0 + i / 10, T0 + 100) is not Claim.ACCEPTED
    assert T0 + 89 < ledger.watermark < T0 + 100
    assert ledger.claim("ak", "late", T0 + 50, T0 + 100) is Claim.TOO_OLD
    assert ledger.claim("ak", "fresh", T0 + 100, T0 + 100) is Claim.ACCEPTED


def test_clear_forgets_everything():
    ledger = NonceLedger(window=900, capacity=1)
    ledger.claim("ak", "a", T0, T0)
    ledger.claim("ak", "b", T0 + 1, T0)
    ledger.clear()
    assert len(ledger) == 0 and ledger.watermark == float("-inf")
    assert ledger.claim("ak", "a", T0, T0) is Claim.ACCEPTED


@given(st.datetimes(min_value=dt.datetime(1970, 1, 1), max_value=dt.datetime(9999, 12, 31)))
def test_iso_times_parse_to_their_instant(moment: dt.datetime):
    text = moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert parse_iso_utc(text) == calendar.timegm(moment.timetuple())


@given(st.text(max_size=40))
def test_any_text_parses_or_is_refused_without_raising(text: str):
    value = parse_iso_utc(text)
    assert value is None or isinstance(value, float | int)
