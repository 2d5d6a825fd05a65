"""The replay guard: which signature nonces were seen while their request could still be fresh.

A signed request carries its signing time and a nonce (``x-acs-signature-nonce``,
``SignatureNonce``). The cloud refuses a request signed outside its freshness window and a
nonce it has already seen inside that window, so a nonce need only be remembered while a request
signed at that time could still be accepted: once the signing time is more than ``window``
seconds behind every clock the freshness check compares with (the wall clock and, on a virtual
clock, the emulator's instant; both only move forward), a replay would be refused as expired
anyway and the entry is dropped.

Memory is bounded: at most ``capacity`` entries (about 150 bytes each: a 64-bit digest of key
and nonce, and the signing time). When a flood of distinct, validly signed requests fills it,
the entry with the *oldest* signing time is evicted and the guard stops vouching for anything
signed at or before that time (the *watermark*): such requests are refused as too old rather
than risk accepting a replay. Under pressure the effective window shrinks (to ``capacity`` /
request rate), never the protection; requests signed at the moment they are sent, as SDKs sign
them, are unaffected.

Nothing is persisted: a restarted emulator starts with an empty ledger (docs/emulator.md,
"Request freshness", says why that is enough).
"""

from __future__ import annotations

import enum
import hashlib
import heapq
import threading

__all__ = ["DEFAULT_CAPACITY", "Claim", "NonceLedger"]

DEFAULT_CAPACITY = 100_000


class Claim(enum.Enum):
    """What :meth:`NonceLedger.claim` decided."""

    ACCEPTED = "accepted"  # first use within the window: remembered now
    REUSED = "reused"  # seen before, while its request could still be fresh
    TOO_OLD = "too_old"  # signed at or before the watermark (the ledger was full)


def _digest(key: str, nonce: str) -> int:
    raw = hashlib.blake2b(f"{key}\0{nonce}".encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(raw.digest(), "big")


class NonceLedger:
    """Nonces per access key, kept while their signing time is inside ``window`` seconds of
    the horizon; thread-safe. See the module docstring for the bounds."""

    def __init__(self, window: float, capacity: int = DEFAULT_CAPACITY) -> None:
        if window <= 0 or capacity < 1:
            raise ValueError("window must be positive and capacity at least 1")
        self.window = float(window)
        self.capacity = capacity
        self._seen: dict[int, float] = {}
        self._by_time: list[tuple[float, int]] = []
        self._watermark = float("-inf")
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._seen)

    @property
    def watermark(self) -> float:
        """Requests signed at or before this instant are refused (-inf: never full yet)."""
        with self._lock:
            return self._watermark

    def claim(self, key: str, nonce: str, signed_at: float, horizon: float) -> Claim:
        """Record ``nonce`` of access key ``key`` for a request signed at ``signed_at`` (epoch
        seconds), unless it was seen already. ``horizon`` is the earliest "now" of the clocks
        the freshness check uses: entries signed more than ``window`` before it are forgotten.
        The caller has checked that ``signed_at`` is fresh."""
        digest = _digest(key, nonce)
        with self._lock:
            self._expire(horizon - self.window)
            if digest in self._seen:
                return Claim.REUSED
            if signed_at <= self._watermark:
                return Claim.TOO_OLD
            while len(self._seen) >= self.capacity:
                oldest, evicted = heapq.heappop(self._by_time)
                if self._seen.get(evicted) == oldest:
                    del self._seen[evicted]
                    self._watermark = max(self._watermark, oldest)
            if signed_at <= self._watermark:
                return Claim.TOO_OLD
            self._seen[digest] = signed_at
            heapq.heappush(self._by_time, (signed_at, digest))
            return Claim.ACCEPTED

    def _expire(self, before: float) -> None:
        heap, seen = self._by_time, self._seen
        while heap and heap[0][0] < before:
            signed_at, digest = heapq.heappop(heap)
            if seen.get(digest) == signed_at:
                del seen[digest]

    def clear(self) -> None:
        """Forget every nonce (and the watermark)."""
        with self._lock:
            self._seen.clear()
            self._by_time.clear()
            self._watermark = float("-inf")
