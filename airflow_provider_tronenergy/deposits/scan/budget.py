"""The scan's request budget: at most N node requests per second, from any of its threads.

A scan reads blocks in parallel (``max_concurrency`` threads); every request it sends, the
head's included, first takes a slot here, so a day of backlog never bursts past what the
node (or its gateway's key) allows. Starts are spaced ``1 / per_second`` apart in
arrival order, so no one-second window holds more than ``per_second`` of them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class ScanBudget:
    """``slot()`` before each request; ``used`` counts the requests started."""

    def __init__(self, per_second: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if not per_second > 0:
            raise ValueError("requests per second must be above 0")
        self.spacing = 1.0 / per_second
        self._clock, self._sleep = clock, sleep
        self._next = float("-inf")
        self._lock = threading.Lock()
        self.used = 0

    def slot(self) -> None:
        """Return when this request may start (the caller then sends it)."""
        with self._lock:
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self.spacing
            self.used += 1
        if start > now:
            self._sleep(start - now)
