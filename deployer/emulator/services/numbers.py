"""Resource numbers on the wire: version ids, numeric page tokens, and the one rule telling a
version qualifier from an alias (:func:`names_version`).

A number is accepted only in its plain ASCII decimal spelling ('1', '42'), small enough for the
store's 64-bit integers. Anything else ('²', full-width '１', '01', 40 digits) names nothing, so
a lookup answers "not found" and a page token "invalid", and never reaches another resource
that ``int()`` would have mapped it to.
"""

from __future__ import annotations

import re

from deployer.digits import is_decimal

__all__ = ["names_version", "parse_number"]

_NUMBER = re.compile(r"(?:0|[1-9][0-9]{0,17})\Z")


def parse_number(text: str) -> int | None:
    """The integer ``text`` spells in canonical ASCII decimal (at most 18 digits), else None."""
    return int(text) if _NUMBER.match(text) else None


def names_version(qualifier: str) -> bool:
    """Whether a qualifier (FC's, StartExecution's) names a published version rather than an
    alias: it is ASCII digits ('3'), as alias names never are. Any other spelling names an
    alias ('²' or '１' included), which then answers "not found" if there is none."""
    return is_decimal(qualifier)
