"""Whole numbers written as text, the way the cloud's parsers read them: ASCII digits only
(``str.isdigit`` alone also accepts '²', '١' and '１', which ``int`` then rejects or reads
as another number)."""

from __future__ import annotations

__all__ = ["is_decimal"]


def is_decimal(text: str) -> bool:
    """``text`` is one or more ASCII digits, nothing else."""
    return text.isascii() and text.isdigit()
