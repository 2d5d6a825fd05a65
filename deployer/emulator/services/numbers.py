"""Resource numbers on the wire: version ids and numeric page tokens.

A number is accepted only in its plain ASCII decimal spelling ('1', '42'), small enough for the
store's 64-bit integers. Anything else ('²', full-width '１', '01', 40 digits) names nothing, so
a lookup answers "not found" and a page token "invalid", and never reaches another resource
that ``int()`` would have mapped it to.
"""

from __future__ import annotations

import re

__all__ = ["parse_number"]

_NUMBER = re.compile(r"(?:0|[1-9][0-9]{0,17})\Z")


def parse_number(text: str) -> int | None:
    """The integer ``text`` spells in canonical ASCII decimal (at most 18 digits), else None."""
    return int(text) if _NUMBER.match(text) else None
