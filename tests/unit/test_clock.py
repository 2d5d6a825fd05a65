from __future__ import annotations

import time

import pytest

from deployer.emulator.clock import Clock, SystemClock, VirtualClock


def test_system_clock_follows_wall_time():
    clock = SystemClock()
    assert isinstance(clock, Clock)
    assert not clock.is_virtual
    assert abs(clock.now() - time.time()) < 1


def test_virtual_clock_starts_on_whole_second_and_stands_still():
    clock = VirtualClock(1_700_000_000.73)
    assert clock.is_virtual
    assert clock.now() == 1_700_000_000.0
    assert clock.now() == clock.now()


def test_virtual_clock_advances_and_never_goes_back():
    clock = VirtualClock(100)
    assert clock.advance(10) == 110
    assert clock.advance_to(105) == 110
    assert clock.advance_to(130.5) == 130.5
    with pytest.raises(ValueError):
        clock.advance(-1)
