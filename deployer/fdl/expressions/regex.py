"""Regular expressions for ``regexMatchString``: RE2, linear in the subject, Go's syntax.

CloudFlow's engine is written in Go, whose ``regexp`` package implements RE2's syntax and
guarantees time linear in the input. Python's ``re`` backtracks: ``(a+)+$`` against a few dozen
characters runs for hours. This module uses Google's RE2 through its official bindings
(``google-re2``, BSD-3-Clause), with RE2's default (Perl-like) syntax, the one Go's
``regexp.MatchString`` uses: no backreferences, no lookaround, ``{n}`` up to 1000.

A match costs ``len(subject) * program size / 16`` steps (RE2 falls back to an automaton whose
time is the product when its cache is exhausted) plus one per 16 characters of the pattern;
they are charged before matching, so the call never runs long. Compiled patterns are cached
(256); the charge is the same whether a pattern was cached or not.
"""

from __future__ import annotations

import functools

import re2

from deployer.fdl.expressions.budget import Meter

__all__ = ["regex_search"]

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 logs every bad pattern to stderr otherwise
_OPTIONS.never_capture = True  # only "does it match" is asked
_PROGRAM_SHIFT = 4  # 16 (character x instruction) per step


def regex_search(meter: Meter, pattern: str, subject: str) -> bool:
    """Whether ``pattern`` matches anywhere in ``subject`` (Go's ``regexp.MatchString``).

    Raises ``ValueError`` naming the problem for an invalid pattern (RE2 syntax) or a subject
    that is not valid Unicode (a lone surrogate)."""
    meter.charge_text(len(pattern))
    compiled = _compile(pattern)
    meter.charge(((len(subject) + 1) * compiled.programsize) >> _PROGRAM_SHIFT)
    try:
        return compiled.search(subject) is not None
    except UnicodeEncodeError as exc:
        raise ValueError(f"the string is not valid Unicode: {exc.reason}") from None


@functools.lru_cache(maxsize=256)
def _compile(pattern: str) -> re2._Regexp:
    try:
        return re2.compile(pattern, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise ValueError(f"invalid pattern {pattern!r:.200}: {reason}") from None
    except UnicodeEncodeError as exc:
        raise ValueError(f"invalid pattern: not valid Unicode: {exc.reason}") from None
