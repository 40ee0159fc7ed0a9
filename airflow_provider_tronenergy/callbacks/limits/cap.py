"""The standalone receiver's limits (:class:`ConnectionLimits`) and its connection cap:
which connection makes way for a new one.

At the cap, a new connection closes the *slowest* connection whose request is
not yet with the app: the one receiving the fewest bytes per second of its
current request (head and body), counted from the request's first byte. A
connection that is idle, or that has sent nothing yet, receives none. So a
slowloris head or a slow body (a byte every 0.3 s) is closed long before a
callback whose bytes come at the speed of a network; a request with the app
(received in full) is never closed.

Two details keep a genuine callback out of the way:

* a connection that has not sent a byte yet is spared for ``FIRST_BYTE_GRACE``
  seconds while one that has sent something (or has been silent longer) can
  go: a callback's connection is accepted a moment before its bytes are
  read, and an attacker that reconnects at once must not close it then;
* the rate counts the head too, so a callback whose head has come and whose
  body is a few milliseconds behind is fast, not idle; among equally slow
  ones, the one that has waited longest goes first.

Ranking every connection costs O(n); under attack at a cap of thousands the
slowest eighth of a ranking (at most ``RANKED``, at most ``RANKING_TTL`` old)
is reused for the next evictions, each checked again before it is closed.
"""

from __future__ import annotations

import heapq
import logging
import time
from dataclasses import dataclass
from typing import Any, Final

from airflow_provider_tronenergy.callbacks.app import DEFAULT_BODY_TIMEOUT

log = logging.getLogger("airflow_provider_tronenergy.callbacks.limits")

FIRST_BYTE_GRACE: Final = 1.0
"""Seconds a connection that has sent nothing yet is spared while another can go."""
MIN_AGE: Final = 0.001
"""The shortest time a rate is measured over (bytes read in one go are not infinitely fast)."""
RANKED: Final = 32
"""Slowest connections kept from one ranking for the next evictions."""
RANKING_TTL: Final = 0.25
"""Seconds a ranking is reused: slow connections stay slow much longer than that."""


@dataclass(frozen=True)
class ConnectionLimits:
    """The standalone receiver's limits; every one is a ``tronenergy-receiver`` flag."""

    max_header_bytes: int = 16 * 1024
    max_headers: int = 100
    header_timeout: float = 10.0
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    keep_alive_timeout: int = 5
    keep_alive_requests: int = 1000
    max_connections: int = 4096

    def __post_init__(self) -> None:
        for name in ("max_header_bytes", "max_headers", "keep_alive_requests",
                     "max_connections", "keep_alive_timeout"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if not (self.header_timeout > 0 and self.body_timeout > 0):
            raise ValueError("timeouts must be positive")

    def describe(self, descriptors: int) -> str:
        """One line for the receiver's start-up banner."""
        return (f"head <= {self.max_header_bytes} bytes and {self.max_headers} fields in "
                f"{self.header_timeout:g} s, body in {self.body_timeout:g} s, keep-alive "
                f"{self.keep_alive_timeout} s / {self.keep_alive_requests} requests, "
                f"{self.max_connections} connections ({descriptors} descriptors)")


@dataclass
class GuardStats:
    """What the limits refused, for logs and tests."""

    evicted: int = 0
    evicted_receiving: int = 0
    refused: int = 0
    head_too_large: int = 0
    head_timeouts: int = 0
    body_timeouts: int = 0


def _rank(connection: Any, now: float) -> tuple[bool, float, float]:
    """Sort key, slowest first: (spared, bytes per second, since when)."""
    began: float = connection._began
    got: int = connection._got
    age = now - began
    if not got and age < FIRST_BYTE_GRACE:
        return True, 0.0, began
    return False, got / max(age, MIN_AGE), began


class ConnectionGuard:
    """State shared by the connections of one server: those not (yet) with the app."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.candidates: dict[Any, None] = {}
        """Connections that may make way: idle, or receiving a request's head or body."""
        self.stats = GuardStats()
        self._ranking: list[tuple[Any, float]] = []
        self._ranked_at = 0.0
        self._logged_at = 0.0

    def make_room(self) -> bool:
        """Close the slowest candidate; False when every connection has a request with the app."""
        victim = self._next_victim()
        if victim is None:
            return False
        del self.candidates[victim]
        receiving = victim._got > 0
        victim._evict()
        self.stats.evicted += 1
        self.stats.evicted_receiving += receiving
        self._note("connection limit (%d) reached: the slowest connections are being closed "
                   "(%d so far, %d of them receiving a request)", self.limits.max_connections,
                   self.stats.evicted, self.stats.evicted_receiving)
        return True

    def _next_victim(self) -> Any:
        now = time.monotonic()
        if now - self._ranked_at <= RANKING_TTL:
            while self._ranking:
                connection, began = self._ranking.pop()
                # Still where it was ranked: not closed, not with the app, no byte since silence.
                if connection in self.candidates and connection._began == began:
                    return connection
        if not self.candidates:
            return None
        # Kept for later: only the slowest eighth, so that none of them is a fast one.
        kept = min(RANKED, len(self.candidates) // 8)
        ranked = heapq.nsmallest(1 + kept, self.candidates, key=lambda c: _rank(c, now))
        # Spared connections go only when nothing else can, and are never kept for later.
        self._ranking = [(c, c._began) for c in reversed(ranked[1:])
                         if not _rank(c, now)[0]]
        self._ranked_at = now
        return ranked[0]

    def _note(self, message: str, *args: object) -> None:
        """Warn at most every 10 s: under attack a line per connection would flood the log."""
        now = time.monotonic()
        if now - self._logged_at >= 10:
            self._logged_at = now
            log.warning(message, *args)
