"""One rule tells a version qualifier from an alias in every service: ASCII digits name a
version; anything else (other scripts' digits included) names an alias."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from deployer.emulator.services.numbers import names_version, parse_number


@given(st.text(max_size=12))
def test_a_qualifier_names_a_version_exactly_when_it_is_ascii_digits(text: str) -> None:
    assert names_version(text) == (text != "" and all("0" <= c <= "9" for c in text))


def test_digits_of_other_scripts_name_an_alias_and_no_number() -> None:
    for text in ("²", "١", "１", "3a", ""):
        assert not names_version(text)
        assert parse_number(text) is None
    assert names_version("12") and parse_number("12") == 12
