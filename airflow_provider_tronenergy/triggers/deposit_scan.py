"""Wait, in the triggerer, until the chain has blocks a deposit scan has not read.

The scan itself runs in a worker (:class:`~airflow_provider_tronenergy.operators.
deposit_scan.TronNodeDepositScanOperator`); between two scans this trigger reads the head the
scan may trust (the solidified block, or the head less ``confirmations``) every
``poll_interval_seconds`` seconds, one request each, and fires once it is past ``after_block``
(the scan's checkpoint), or at ``end_time``. The rule is
:class:`~airflow_provider_tronenergy.deposits.scan.wait.HeadWatch`, the one the worker's
own loop follows. Only identifiers and figures travel: the node connection's id, the
checkpoint's block number, the timings; never the addresses, a URL or a key (the ledger
is not opened here at all).
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from airflow_provider_tronenergy.deposits.scan.wait import NODE_NEEDED, HeadWatch, await_head
from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook


class TronNodeDepositScanTrigger(BaseTrigger):
    """Fires ``{"status": "moved" | "timeout" | "error", ...}`` (see the module).

    :param tron_node_conn_id: a ``tron_node`` connection.
    :param after_block: the scan's checkpoint: fire once the head is past it.
    :param confirmations: None: the solidified head; N: the head less N.
    :param poll_interval_seconds: seconds between reads of the head.
    :param end_time: epoch seconds after which it fires with ``timeout``.
    :param carried: figures the task hands on to its next pass (passes and credits so far,
        per token), echoed in the event with ``end_time``.
    """

    def __init__(self, *, tron_node_conn_id: str, after_block: int,
                 confirmations: int | None = None, poll_interval_seconds: float = 30.0,
                 end_time: float, carried: dict[str, Any] | None = None) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        if isinstance(after_block, bool) or not isinstance(after_block, int):
            raise ValueError("TronNodeDepositScanTrigger: after_block must be a block number")
        if not poll_interval_seconds > 0 or not math.isfinite(poll_interval_seconds):
            raise ValueError("TronNodeDepositScanTrigger: poll_interval_seconds must be "
                             "positive")
        if not math.isfinite(end_time):
            raise ValueError("TronNodeDepositScanTrigger: end_time must be epoch seconds")
        self.tron_node_conn_id = tron_node_conn_id
        self.after_block = after_block
        self.confirmations = confirmations
        self.poll_interval_seconds = float(poll_interval_seconds)
        self.end_time = float(end_time)
        self.carried = {str(k): [int(n) for n in v] for k, v in (carried or {}).items()}

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """Identifiers and figures only."""
        return (f"{type(self).__module__}.{type(self).__qualname__}", {
            "tron_node_conn_id": self.tron_node_conn_id, "after_block": self.after_block,
            "confirmations": self.confirmations,
            "poll_interval_seconds": self.poll_interval_seconds,
            "end_time": self.end_time, "carried": self.carried})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Read the head until it moves past the checkpoint, or the time is up; one event.
        A node connection that names nothing fires an ``error`` event the task fails on, not
        retried (a trigger that raised would be retried); so does a malformed one, or a node
        on another chain, at the first read (``HeadWatch``)."""
        try:
            hook = await TronNodeHook.arequired(self.tron_node_conn_id, needs=NODE_NEEDED)
        except NotRetryable as exc:
            yield TriggerEvent({"status": "error", "retryable": False,  # type: ignore[no-untyped-call]
                                "message": str(exc), "end_time": self.end_time,
                                "carried": self.carried})
            return
        watch = HeadWatch(self.after_block, poll_interval=self.poll_interval_seconds,
                          end_time=self.end_time, log=self.log)

        def read_head() -> int:
            if self.confirmations is None:
                return hook.get_solid_block().number
            return hook.get_now_block().number - self.confirmations

        try:
            event = await await_head(read_head, watch)
        finally:
            hook.close()
        event.update(end_time=self.end_time, carried=self.carried)
        yield TriggerEvent(event)  # type: ignore[no-untyped-call]
