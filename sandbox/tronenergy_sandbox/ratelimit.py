"""The node's rate limit, as TronGrid keeps it: requests per second per API key, over the clock.

TronGrid lets a key make about 15 requests a second and answers above that with a 4xx or
5xx and a JSON body naming the limit (developers.tron.network, "Rate Limits":
``{"Success": false, "Error": "The key exceeds the frequency limit(15), and the query
server is suspended for 30s", "StatusCode": 403}``; TRON SDK users report 429 and 503).
Here a token bucket per key (requests without a key share one bucket): ``rate`` tokens a
second up to ``burst``; a node request that finds none is answered 429 with that body and,
unless set to none, ``Retry-After``. The fault registry's ``rate_limit`` fault answers a
number of requests, not above a rate: this is the one that paces.

Every node request is counted per wall-clock second, with the 429s among them, whether
a limit is set or not (a limit naming one key limits and counts that key's only): tests
and benches read the rate the sandbox saw (``GET /sandbox/rate-limit``), not the rate a
client meant to send.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

NO_KEY = ""


@dataclass(frozen=True)
class Limit:
    """What the node allows: ``rate`` requests a second per key, ``burst`` at once."""

    rate: Decimal
    burst: Decimal
    retry_after: int | None = 1
    """Seconds sent as ``Retry-After`` with a 429; None: no header (as TronGrid at times)."""
    status: int = 429
    api_key: str | None = None
    """Only this key is limited, and counted (one connection among other traffic)."""

    def body(self) -> dict[str, Any]:
        """TronGrid's answer over its rate (its documented shape)."""
        return {"Success": False,
                "Error": f"The key exceeds the frequency limit({self.rate.normalize():f}), "
                         "and the query server is suspended for "
                         f"{self.retry_after or 0}s",
                "StatusCode": self.status}

    def to_dict(self) -> dict[str, Any]:
        return {"requests_per_second": str(self.rate), "burst": str(self.burst),
                "retry_after": self.retry_after, "status": self.status,
                "api_key": self.api_key}


class NodeRateLimit:
    """The node API's limit (none until set) and its per-second counts. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.limit: Limit | None = None
        self._tokens: dict[str, tuple[Decimal, float]] = {}
        self._requests: Counter[int] = Counter()
        self._limited: Counter[int] = Counter()

    def set(self, limit: Limit | None) -> None:
        """Start (or change, or with None lift) the limit; every bucket starts full."""
        with self._lock:
            self.limit = limit
            self._tokens.clear()

    def reset_counts(self) -> None:
        with self._lock:
            self._requests.clear()
            self._limited.clear()

    def admit(self, api_key: str | None) -> Limit | None:
        """Count one node request; the limit it is over (answer 429), or None (serve it)."""
        now = time.time()
        second = int(now)
        with self._lock:
            limit = self.limit
            if limit is not None and limit.api_key is not None and limit.api_key != api_key:
                return None  # another key's request: neither limited nor counted
            self._requests[second] += 1
            if limit is None:
                return None
            key = api_key or NO_KEY
            tokens, at = self._tokens.get(key, (limit.burst, now))
            tokens = min(limit.burst, tokens + limit.rate * Decimal(str(max(0.0, now - at))))
            if tokens >= 1:
                self._tokens[key] = (tokens - 1, now)
                return None
            self._tokens[key] = (tokens, now)
            self._limited[second] += 1
            return limit

    def counts(self) -> dict[str, Any]:
        """Requests and 429s per wall-clock second (complete seconds and the current one)."""
        with self._lock:
            seconds = sorted(self._requests)
            return {
                "limit": None if self.limit is None else self.limit.to_dict(),
                "requests": sum(self._requests.values()),
                "limited": sum(self._limited.values()),
                "per_second": [{"second": s, "requests": self._requests[s],
                                "limited": self._limited.get(s, 0)} for s in seconds],
            }
