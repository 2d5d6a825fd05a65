"""CloudFlow's schedule expressions: parse, validate, and compute fire instants.

The dialect, from the time-based schedule docs (help.aliyun.com/document_detail/168926.htm,
"调度时间参数说明"; mirrored by Function Compute's time triggers):

* ``@every <N>m`` — every N minutes (N a positive integer; the unit is ``m``). The minimum
  interval is one minute. Instants are counted from when the schedule was created or last
  updated (INFERRED anchor).
* six fields ``Seconds Minutes Hours Day-of-month Month Day-of-week``, in UTC unless prefixed
  ``CRON_TZ=<IANA zone> `` (e.g. ``CRON_TZ=Asia/Shanghai 0 0 4 1 * *``).
  Seconds: ``0-59`` and no special characters (the documented one-minute minimum);
  Minutes ``0-59`` and Hours ``0-23``: ``, - * /``; Day-of-month ``1-31``: ``, - * ? /``;
  Month ``1-12`` or ``JAN-DEC``: ``, - * /``; Day-of-week ``0-6`` or ``SUN-SAT`` (``7`` is
  also Sunday): ``, - * ? /``. ``L``, ``W`` and ``#`` are not in the documented character
  sets and are refused. When both day fields are restricted either may match (standard
  cron), ``?`` means "any".

Evaluation is croniter's (MIT), with seconds as the first field; this module only checks the
documented dialect first and keeps time zones explicit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from deployer.digits import is_decimal
from deployer.emulator.services.errors import InvalidValue

__all__ = ["ScheduleExpression", "parse_cron"]

_EVERY = re.compile(r"^@every\s+(\d+)m$")
_TZ = re.compile(r"^CRON_TZ=(\S+)\s+(.*)$")
_FIELD_CHARS = {
    "Minutes": re.compile(r"^[0-9,\-*/]+$"),
    "Hours": re.compile(r"^[0-9,\-*/]+$"),
    "Day-of-month": re.compile(r"^[0-9,\-*/?]+$"),
    "Month": re.compile(r"^[0-9A-Za-z,\-*/]+$"),
    "Day-of-week": re.compile(r"^[0-9A-Za-z,\-*/?]+$"),
}
_NAMES = re.compile(r"[A-Za-z]+")
_MONTHS = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}
_DAYS = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}
MAX_LENGTH = 256


def _invalid(text: str, why: str) -> InvalidValue:
    return InvalidValue(f"CronExpression '{text}' is invalid: {why}", field="CronExpression")


@dataclass(frozen=True, slots=True)
class ScheduleExpression:
    """A parsed expression; instants are epoch seconds."""

    text: str
    every_seconds: int | None = None  # @every
    fields: str = ""  # the six cron fields, as croniter reads them
    zone: tzinfo = timezone.utc

    def next_after(self, instant: float, *, anchor: float) -> float:
        """The first fire instant strictly after ``instant`` (``anchor``: @every's origin)."""
        if self.every_seconds is not None:
            step = self.every_seconds
            periods = max(0, math.floor((instant - anchor) / step) + 1)
            return anchor + periods * step
        start = datetime.fromtimestamp(instant, self.zone)
        found = croniter(self.fields, start, second_at_beginning=True).get_next(datetime)
        return float(found.timestamp())

    def latest_at_or_before(self, instant: float, *, anchor: float) -> float | None:
        """The last fire instant not after ``instant`` (None when there is none since
        ``anchor``)."""
        if self.every_seconds is not None:
            if instant < anchor + self.every_seconds:
                return None
            return anchor + math.floor((instant - anchor) / self.every_seconds) \
                * self.every_seconds
        start = datetime.fromtimestamp(instant + 1, self.zone)
        found = croniter(self.fields, start, second_at_beginning=True).get_prev(datetime)
        value = float(found.timestamp())
        return value if anchor <= value <= instant else None


def parse_cron(text: str) -> ScheduleExpression:
    """Parse a CronExpression of CreateSchedule/UpdateSchedule; InvalidValue naming the
    problem otherwise."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidValue("The required parameter CronExpression is missing.",
                           field="CronExpression")
    if len(text) > MAX_LENGTH:
        raise _invalid(text[:40] + "...", f"longer than {MAX_LENGTH} characters")
    stripped = text.strip()
    every = _EVERY.match(stripped)
    if every:
        minutes = int(every.group(1))
        if minutes < 1:
            raise _invalid(text, "the minimum interval is 1 minute (@every 1m)")
        return ScheduleExpression(text, every_seconds=minutes * 60)
    if stripped.startswith("@"):
        raise _invalid(text, "use @every <N>m (N minutes) or six cron fields")
    zone: tzinfo = timezone.utc
    tz = _TZ.match(stripped)
    if tz:
        try:
            zone = ZoneInfo(tz.group(1))
        except (ZoneInfoNotFoundError, ValueError):
            raise _invalid(text, f"unknown time zone '{tz.group(1)}' in CRON_TZ") from None
        stripped = tz.group(2).strip()
    fields = stripped.split()
    if len(fields) != 6:
        raise _invalid(text, f"expected 6 fields (Seconds Minutes Hours Day-of-month Month "
                             f"Day-of-week), got {len(fields)}")
    _check_fields(text, fields)
    cron = " ".join(fields)
    if not croniter.is_valid(cron, second_at_beginning=True):
        raise _invalid(text, "a field is out of range or malformed")
    try:
        croniter(cron, datetime(2000, 1, 1, tzinfo=zone), second_at_beginning=True,
                 max_years_between_matches=50).get_next(datetime)
    except Exception:  # croniter raises several types for impossible dates (Feb 30)
        raise _invalid(text, "it never fires") from None
    return ScheduleExpression(text, fields=cron, zone=zone)


def _check_fields(text: str, fields: list[str]) -> None:
    seconds = fields[0]
    if not is_decimal(seconds) or not 0 <= int(seconds) <= 59:
        raise _invalid(text, "the Seconds field must be a number from 0 to 59 (schedules fire "
                             "at most once a minute)")
    names = ("Minutes", "Hours", "Day-of-month", "Month", "Day-of-week")
    for name, value in zip(names, fields[1:], strict=True):
        if not _FIELD_CHARS[name].match(value):
            raise _invalid(text, f"the {name} field '{value}' uses a character that is not "
                                 "allowed there")
        allowed = _MONTHS if name == "Month" else _DAYS if name == "Day-of-week" else set()
        for word in _NAMES.findall(value):
            if word.upper() not in allowed:
                raise _invalid(text, f"'{word}' is not a valid {name} value")
