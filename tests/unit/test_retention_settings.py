"""Retention settings: durations as the daemon's flags and ``deploy emulator start`` take them."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from deployer.cli.main import cli
from deployer.emulator.retention import DAY, Retention, parse_duration

UNITS = {"s": 1, "m": 60, "h": 3600, "d": DAY, "": DAY}


@given(st.integers(min_value=1, max_value=3650), st.sampled_from(sorted(UNITS)))
def test_a_number_with_a_unit_is_that_many_seconds(number: int, unit: str) -> None:
    assert parse_duration(f"{number}{unit}", "--x") == number * UNITS[unit]


@given(st.text(max_size=12).filter(
    lambda t: not __import__("re").fullmatch(r"\s*[0-9]+(\.[0-9]+)?\s*[smhd]?\s*", t)))
def test_anything_else_is_refused_naming_the_setting(text: str) -> None:
    with pytest.raises(ValueError, match="--log-retention"):
        parse_duration(text, "--log-retention")


@pytest.mark.parametrize("text", ["0", "0d", "3651d", "99999999999s"])
def test_zero_and_beyond_ten_years_are_refused(text: str) -> None:
    with pytest.raises(ValueError, match="more than 0 and at most 3650 days"):
        parse_duration(text, "--execution-retention")


def test_retention_values_are_checked_and_sweeps_are_paced() -> None:
    with pytest.raises(ValueError, match="executions retention"):
        Retention(executions=0)
    with pytest.raises(ValueError, match="logs retention"):
        Retention(logs=float("inf"))
    assert Retention().sweep_every == 60.0
    assert Retention(executions=5, logs=600).sweep_every == 1.0


def test_the_cli_refuses_a_bad_duration_before_starting_anything(tmp_path) -> None:
    result = CliRunner().invoke(cli, ["emulator", "start", "--state-dir", str(tmp_path),
                                      "--execution-retention", "3 weeks"])
    assert result.exit_code == 2
    assert "--execution-retention" in result.stderr and "not a duration" in result.stderr
    assert not any(tmp_path.iterdir())
