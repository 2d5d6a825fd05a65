"""The emulator's HTTP/1.1 front door, on aiohttp's low-level server (llhttp parser).

Pipeline: :mod:`.listener` (socket with a 2,048 backlog, ``SO_REUSEADDR``, ``TCP_NODELAY``,
an accept loop bounded by ``max_connections``, one event-loop thread) → :mod:`.protocol`
(aiohttp's strict parser; header-read and idle timeouts; the cloud's JSON error body for what
the parser refuses; bodies de-chunked, ``Expect: 100-continue``, large bodies within a shared
memory budget) → the synchronous router in a worker pool → a complete response, a chunked
stream (server-sent events) or a deferred answer awaited without a thread (long polls);
small complete answers are written as one pre-built buffer (:mod:`.responses`).
Limits: :class:`ServerLimits`. Why aiohttp: docs/emulator.md "The HTTP server".
"""

from deployer.emulator.httpd.limits import MAX_BODY, BodyBudget, ServerLimits
from deployer.emulator.httpd.listener import HttpServer
from deployer.emulator.httpd.protocol import FrontDoor

__all__ = ["MAX_BODY", "BodyBudget", "FrontDoor", "HttpServer", "ServerLimits"]
