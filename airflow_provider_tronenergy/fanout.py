"""One call per item over a bounded thread pool, for batches of hundreds to thousands.

One Airflow task per item costs seconds of scheduling each; one task that fans out
over a bounded pool costs about one round trip per ``max_concurrency`` items. A 429
from the service pauses every worker (:class:`RateGate`), not just the one that saw
it. Used by the address operators (one service call per address) and the payout's
on-chain pre-flight (one node estimate per recipient); knows no operator.

Two ways, one pool: :func:`run_batch` keeps going past an item that fails (each
failure reported); :func:`side_by_side` is for work where one failure stops the whole
(the payout room's estimates, signatures, judging and broadcasts): results in order,
the first error raised once every call in flight ended.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, TypeVar

from airflow_provider_tronenergy.client.errors import RateLimitedError

T = TypeVar("T")
R = TypeVar("R")
DEFAULT_MAX_CONCURRENCY = 16


@dataclass(frozen=True)
class ItemFailure:
    index: int
    item: str
    reason: str


class RateGate:
    """Shared pause: after a 429, no worker sends before ``Retry-After`` has passed."""

    def __init__(self) -> None:
        self._resume_at = 0.0
        self._lock = threading.Lock()

    def wait(self) -> None:
        delay = self._resume_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def pause(self, seconds: float) -> None:
        with self._lock:
            self._resume_at = max(self._resume_at, time.monotonic() + seconds)

    def call(self, work: Callable[[], T], attempts: int = 5) -> T:
        """Run ``work``, waiting out 429s; a 429 means the call was not processed."""
        for attempt in range(1, attempts + 1):
            self.wait()
            try:
                return work()
            except RateLimitedError as exc:
                if attempt == attempts:
                    raise
                self.pause(exc.retry_after if exc.retry_after is not None else 2.0 ** attempt)
        raise AssertionError("unreachable")


def describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _pool(max_concurrency: int, total: int, name: str) -> ThreadPoolExecutor:
    """A pool of at most ``max_concurrency`` threads, no more than ``total`` items need."""
    return ThreadPoolExecutor(max_workers=max(1, min(max_concurrency, total)),
                              thread_name_prefix=f"tronenergy-{name}")


def side_by_side(call: Callable[[T], R], items: Sequence[T], *, max_concurrency: int,
                 name: str = "batch") -> list[R]:
    """``call`` on each item, up to ``max_concurrency`` at once, results in input order;
    one at a time without a pool when only one may run. The first error (in input
    order) is raised once every call in flight ended: nothing is left running."""
    if not items:
        return []
    if max_concurrency <= 1 or len(items) == 1:
        return [call(item) for item in items]
    with _pool(max_concurrency, len(items), name) as pool:
        return list(pool.map(call, items))


def run_batch(
    items: Sequence[str],
    work: Callable[[str], dict[str, Any]],
    *,
    max_concurrency: int,
    log: logging.Logger | Any,
    verb: str,
) -> tuple[list[dict[str, Any]], list[ItemFailure]]:
    """Results in input order (an ``error`` entry where an item failed), and the failures."""
    total = len(items)
    results: list[dict[str, Any]] = [{} for _ in items]
    failures: list[ItemFailure] = []
    if total == 0:
        return results, failures
    step = max(1, total // 10)
    done = 0
    with _pool(max_concurrency, total, "batch") as pool:
        futures = {pool.submit(work, item): index for index, item in enumerate(items)}
        for future in as_completed(futures):
            index = futures[future]
            try:
                results[index] = future.result()
            except Exception as exc:  # one bad address must not stop the batch
                reason = describe(exc)
                failures.append(ItemFailure(index, str(items[index]), reason))
                results[index] = {"address": items[index], "error": reason}
            done += 1
            if done % step == 0 or done == total:
                log.info("%s %d/%d%s", verb, done, total,
                         f" ({len(failures)} failed)" if failures else "")
    failures.sort(key=lambda failure: failure.index)
    return results, failures


def failure_report(verb: str, total: int, failures: Sequence[ItemFailure], limit: int = 50) -> str:
    lines = [f"{len(failures)} of {total} addresses could not be {verb}:"]
    lines += [f"  {failure.item}: {failure.reason}" for failure in failures[:limit]]
    if len(failures) > limit:
        lines.append(f"  ... and {len(failures) - limit} more (see the task's XCom)")
    return "\n".join(lines)
