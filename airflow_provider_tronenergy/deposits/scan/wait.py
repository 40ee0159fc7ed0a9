"""Waiting for the chain to move past a scan's checkpoint: one rule for worker and triggerer.

A scan follows the chain every interval; between two scans nothing is worth doing until
the head it may scan to (the solidified block, or the head less N confirmations) passes
the last block scanned. :class:`HeadWatch` says what each read of that head means,
for the blocking loop in a worker (:func:`wait_for_head`) and the triggerer's
(:func:`await_head`), as ``OrderWatch`` does for an order:

* the head past the checkpoint ends the wait: ``{"status": "moved", ...}``;
* a node that does not answer, or answers what the chain cannot hold (``NodeError``),
  says nothing about the chain: reading goes on, logged once when the trouble starts;
* anything else ends the wait with ``error``, ``"retryable": false`` for a
  ``NotRetryable`` (a node on another chain than its connection says, a malformed
  connection: the task fails once); past ``end_time``, ``timeout``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Protocol

from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.hooks.blocking import off_loop
from airflow_provider_tronenergy.node.errors import NodeError

NODE_NEEDED = "the deposit scan needs a TRON node to read the chain's blocks"
"""What a scan's missing ``tron_node_conn_id`` is refused with (``ConnectionMissing``)."""


class Log(Protocol):
    def info(self, msg: str, /, *args: Any) -> Any: ...

    def warning(self, msg: str, /, *args: Any) -> Any: ...


class HeadWatch:
    """One wait: the checkpoint ``after_block``, the poll interval and the deadline."""

    def __init__(self, after_block: int, *, poll_interval: float, end_time: float | None,
                 log: Log) -> None:
        if not poll_interval > 0:
            raise ValueError("poll_interval must be above 0 seconds")
        self.after_block = after_block
        self.poll_interval = poll_interval
        self.end_time = end_time
        self.log = log
        self.failures = 0
        self.last_head: int | None = None

    def event(self, status: str, message: str) -> dict[str, Any]:
        """The JSON-safe end of a wait."""
        return {"status": status, "after_block": self.after_block, "head": self.last_head,
                "message": message}

    def next_step(self, answer: int | BaseException) -> dict[str, Any] | float:
        """After one read of the head: the event that ends the wait, or seconds to sleep."""
        if isinstance(answer, BaseException):
            if not isinstance(answer, NodeError):
                return {**self.event("error", f"could not read the chain's head: {answer}"),
                        "retryable": not isinstance(answer, NotRetryable)}
            self.failures += 1
            if self.failures == 1:
                self.log.warning("deposit scan: the node did not answer (%s); reading the head "
                                 "again every %g s", answer, self.poll_interval)
        else:
            if self.failures:
                self.log.info("deposit scan: the node answers again after %d failed reads",
                              self.failures)
                self.failures = 0
            self.last_head = answer
            if answer > self.after_block:
                return self.event("moved", f"block {answer} is past block {self.after_block}")
        if self.end_time is None:
            return self.poll_interval
        remaining = self.end_time - time.time()
        if remaining <= 0:
            return self.event("timeout", f"no block past {self.after_block} by the deadline "
                              f"(last head read: {self.last_head})")
        return min(self.poll_interval, remaining)


def wait_for_head(read_head: Callable[[], int], watch: HeadWatch) -> dict[str, Any]:
    """Read the head until the watch has an event (blocking; a worker's loop)."""
    while True:
        answer: int | BaseException
        try:
            answer = read_head()
        except Exception as exc:  # the watch says which failures end the wait
            answer = exc
        step = watch.next_step(answer)
        if isinstance(step, dict):
            return step
        time.sleep(step)


async def await_head(read_head: Callable[[], int], watch: HeadWatch) -> dict[str, Any]:
    """Read the head (in a thread) until the watch has an event (the triggerer's loop)."""
    while True:
        answer: int | BaseException
        try:
            answer = await off_loop(read_head)
        except Exception as exc:  # the watch says which failures end the wait
            answer = exc
        step = watch.next_step(answer)
        if isinstance(step, dict):
            return step
        await asyncio.sleep(step)
