"""Waiting for a condition in a test: a bound on waiting, never a timing assertion."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(predicate: Callable[[], object], timeout: float = 15.0,
               message: str = "condition") -> None:
    """Return once ``predicate()`` is true; fail after ``timeout`` seconds of trying."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {message}")
        time.sleep(0.02)
