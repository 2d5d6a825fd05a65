"""The CloudFlow schedule expression parser (services/schedule_cron.py): properties over
generated expressions, and that any text is either accepted or refused with InvalidValue."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import given, settings
from hypothesis import strategies as st

from deployer.emulator.services.errors import InvalidValue
from deployer.emulator.services.schedule_cron import parse_cron


def _field(low: int, high: int) -> st.SearchStrategy[str]:
    value = st.integers(low, high)
    single = value.map(str)
    span = st.tuples(value, value).map(lambda t: f"{min(t)}-{max(t)}")
    step = st.tuples(st.sampled_from(["*", str(low)]), st.integers(1, max(1, high - low)))
    return st.one_of(st.just("*"), single, span, step.map(lambda t: f"{t[0]}/{t[1]}"),
                     st.lists(single, min_size=1, max_size=3).map(",".join))


EXPRESSIONS = st.tuples(
    st.integers(0, 59).map(str), _field(0, 59), _field(0, 23),
    st.one_of(st.just("?"), _field(1, 28)), _field(1, 12),
    st.one_of(st.just("*"), st.just("?"), st.sampled_from(["MON-FRI", "SAT,SUN", "0", "6"])),
).map(" ".join)
INSTANTS = st.integers(946684800, 4102444800).map(float)  # 2000 .. 2100


@given(EXPRESSIONS, INSTANTS)
@settings(max_examples=150, deadline=None)
def test_fire_instants_increase_and_round_trip(text: str, instant: float) -> None:
    expr = parse_cron(text)
    nxt = expr.next_after(instant, anchor=0)
    assert nxt > instant
    assert expr.next_after(nxt, anchor=0) > nxt
    assert expr.latest_at_or_before(nxt, anchor=0) == nxt
    fired = datetime.fromtimestamp(nxt, timezone.utc)
    assert fired.second == int(text.split()[0])  # the Seconds field is a fixed number


@given(st.integers(1, 10_000), INSTANTS, st.integers(0, 10**6))
def test_every_counts_whole_periods_from_the_anchor(minutes: int, anchor: float,
                                                    later: int) -> None:
    expr = parse_cron(f"@every {minutes}m")
    nxt = expr.next_after(anchor + later, anchor=anchor)
    assert nxt > anchor + later and (nxt - anchor) % (minutes * 60) == 0
    assert nxt - (anchor + later) <= minutes * 60


@given(st.text(max_size=60))
def test_any_text_is_accepted_or_refused_with_invalid_argument(text: str) -> None:
    try:
        parse_cron(text)
    except InvalidValue as exc:
        assert exc.field == "CronExpression"
