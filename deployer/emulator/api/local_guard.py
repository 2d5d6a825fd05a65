"""Who may use the emulator's local surfaces (``/_emulator/`` admin, ``/_console/`` console):
docs/emulator.md "Admin and console surfaces" gives the rules and why.

They are unsigned, so a web page open in the user's browser (on loopback too) must not drive
them: :meth:`LocalGuard.check` refuses with ``403 AccessDenied`` unless the client is on
loopback, ``Host`` names this daemon (against DNS rebinding) and a present ``Origin`` is that
origin; a state-changing method must also be ``Content-Type: application/json`` with a token in
``X-Emulator-Token``. Two tokens, random per daemon: the **admin token** (``emulator.json``,
``LocalCloud.admin_token``) opens everything; the **console token** (carried by the console's
pages in a ``<meta>`` and a cookie) the console only. Data reads need a token too
(:meth:`LocalGuard.require_token`).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from dataclasses import dataclass, field

from deployer.emulator.api import errors as e
from deployer.emulator.api.http import HttpRequest

__all__ = ["EMULATOR_TOKEN_HEADER", "STATE_CHANGING_METHODS", "LocalGuard", "new_token"]

EMULATOR_TOKEN_HEADER = "X-Emulator-Token"
STATE_CHANGING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def _loopback(address: str) -> bool:
    if address in ("127.0.0.1", "::1"):
        return True
    try:
        return ipaddress.ip_address(address.split("%", 1)[0]).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class LocalGuard:
    """The checks above for one daemon: its ``token``, ``port`` and bound ``host``."""

    token: str
    port: int
    host: str = "127.0.0.1"
    console_token: str = field(default_factory=new_token, repr=False)
    _hosts: frozenset[str] = field(init=False, repr=False, compare=False)

    @property
    def cookie_name(self) -> str:
        """The console cookie's name (per port: cookies do not tell ports apart)."""
        return f"emulator-console-{self.port}"

    def console_cookie(self) -> str:
        """The ``Set-Cookie`` value a console page carries (its streams send it back)."""
        return (f"{self.cookie_name}={self.console_token}; Path=/_console/; HttpOnly; "
                "SameSite=Strict")

    def __post_init__(self) -> None:
        bound = f"[{self.host}]" if ":" in self.host else self.host
        object.__setattr__(self, "_hosts", frozenset(
            f"{name}:{self.port}".lower()
            for name in ("127.0.0.1", "localhost", "[::1]", bound)))

    def check(self, request: HttpRequest, *, console: bool = False) -> None:
        """Raise ``AccessDenied`` (403) unless ``request`` may use a local surface
        (``console``: the console, whose token is good too)."""
        if not _loopback(request.remote_addr):
            raise e.AccessDenied("the emulator's local surfaces answer loopback clients only")
        host = (request.headers.get("host") or "").strip().lower()
        if host not in self._hosts:
            raise e.AccessDenied(
                f"Host {host!r} does not name this emulator; use http://127.0.0.1:{self.port}")
        origin = request.headers.get("origin")
        if origin is not None and origin.strip().lower() != f"http://{host}":
            raise e.AccessDenied(f"cross-origin requests are refused (Origin {origin!r})")
        if request.method not in STATE_CHANGING_METHODS:
            return
        media_type = (request.headers.get("content-type") or "").split(";", 1)[0]
        if media_type.strip().lower() != "application/json":
            raise e.AccessDenied("a state-changing request must be sent as "
                                 "Content-Type: application/json")
        if not self._token_given(request, console=console, cookie=False):
            raise e.AccessDenied(f"a state-changing request needs the {EMULATOR_TOKEN_HEADER} "
                                 "header with this emulator's token (see emulator.json in its "
                                 "state directory, or LocalCloud.admin_token)")

    def require_token(self, request: HttpRequest, *, console: bool = False) -> None:
        """Raise ``AccessDenied`` (403) unless ``request`` carries the admin token in
        ``X-Emulator-Token`` or, for the console (``console``), the console token there or in
        its cookie."""
        if not self._token_given(request, console=console, cookie=console):
            raise e.AccessDenied(
                f"this endpoint needs the {EMULATOR_TOKEN_HEADER} header with this emulator's "
                "token (see emulator.json in its state directory, or LocalCloud.admin_token)"
                + ("; the console's pages carry theirs" if console else ""))

    def _token_given(self, request: HttpRequest, *, console: bool, cookie: bool) -> bool:
        given = [request.headers.get(EMULATOR_TOKEN_HEADER) or ""]
        if cookie:
            given.append(_cookie(request.headers.get("cookie") or "", self.cookie_name))
        accepted = [self.token, self.console_token] if console else [self.token]
        return any(_same(value, token) for value in given if value for token in accepted)


def _same(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


def _cookie(header: str, name: str) -> str:
    """The value of cookie ``name`` in a ``Cookie`` header ("" when absent)."""
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value.strip()
    return ""
