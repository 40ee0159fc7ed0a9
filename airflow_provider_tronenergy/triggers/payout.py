"""Wait, in the triggerer, for a payout batch's transactions to reach their receipts.

One trigger per batch, not one per payout: each poll is one
:meth:`~airflow_provider_tronenergy.payout.watch.PayoutWatch.step` (whole blocks'
receipts, within ``max_requests_per_poll`` node requests), and what it finds goes to the
payout journal at once. Only identifiers travel: the batch id and the node connection's id; the
triggerer opens the journal where the workers do (``TRONENERGY_PURCHASE_JOURNAL`` or
``[tronenergy] purchase_journal``), and never sees the signer.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.hooks.blocking import off_loop
from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.payout.send import CONFIRM_NODE_NEEDED, NODE_NEEDED
from airflow_provider_tronenergy.payout.trust import DEFAULT_TOLERANCE_S
from airflow_provider_tronenergy.payout.watch import PayoutWatch


class TronPayoutBatchTrigger(BaseTrigger):
    """Fires once a batch has no transaction left that could still change by itself.

    :param batch_id: the batch whose journaled payouts to follow.
    :param follow: other batches holding this batch's payouts in flight (their ids).
    :param tron_node_conn_id: a ``tron_node`` connection.
    :param solidified: confirm on solidified blocks only (final; about a minute later).
    :param poll_interval_seconds: seconds between steps.
    :param end_time: epoch seconds after which it fires with ``timeout``.
    :param max_requests_per_poll: node requests per step.
    :param clock_tolerance_seconds: how far the node's block times may run ahead of the
        triggerer's clock.
    :param confirm_node_conn_id: a second ``tron_node`` connection that must agree before
        a transaction is judged unable to execute.
    """

    def __init__(self, batch_id: str, tron_node_conn_id: str, *, follow: Sequence[str] = (),
                 solidified: bool = True, poll_interval_seconds: float = 3.0, end_time: float,
                 max_requests_per_poll: int = 50,
                 clock_tolerance_seconds: float = DEFAULT_TOLERANCE_S,
                 confirm_node_conn_id: str | None = None) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        if not isinstance(batch_id, str) or not batch_id:
            raise ValueError("TronPayoutBatchTrigger: batch_id must be a non-empty string")
        if not poll_interval_seconds > 0 or not math.isfinite(poll_interval_seconds):
            raise ValueError("TronPayoutBatchTrigger: poll_interval_seconds must be "
                             "positive")
        if not math.isfinite(end_time):
            raise ValueError("TronPayoutBatchTrigger: end_time must be epoch seconds")
        if isinstance(follow, str) or not all(isinstance(b, str) and b for b in follow):
            raise ValueError("TronPayoutBatchTrigger: follow must be a list of batch ids")
        self.batch_id, self.tron_node_conn_id = batch_id, tron_node_conn_id
        self.follow = list(follow)
        self.solidified, self.poll_interval_seconds = bool(solidified), float(poll_interval_seconds)
        self.end_time, self.max_requests_per_poll = float(end_time), int(max_requests_per_poll)
        self.clock_tolerance_seconds = float(clock_tolerance_seconds)
        self.confirm_node_conn_id = confirm_node_conn_id or None

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """Identifiers and timings only (the trust settings when not the defaults)."""
        kwargs: dict[str, Any] = {
            "batch_id": self.batch_id, "tron_node_conn_id": self.tron_node_conn_id,
            "follow": self.follow, "solidified": self.solidified,
            "poll_interval_seconds": self.poll_interval_seconds, "end_time": self.end_time,
            "max_requests_per_poll": self.max_requests_per_poll}
        if self.clock_tolerance_seconds != DEFAULT_TOLERANCE_S:
            kwargs["clock_tolerance_seconds"] = self.clock_tolerance_seconds
        if self.confirm_node_conn_id:
            kwargs["confirm_node_conn_id"] = self.confirm_node_conn_id
        return f"{type(self).__module__}.{type(self).__qualname__}", kwargs

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Step until the batch is settled or the time is up; one event."""
        yield TriggerEvent(await self._wait())  # type: ignore[no-untyped-call]

    async def _wait(self) -> dict[str, Any]:
        from airflow_provider_tronenergy.payout.journal import open_payout_journal
        from airflow_provider_tronenergy.payout.watch import NodeError

        try:  # a node connection that names nothing: the task fails on the event, not retried
            hook = await TronNodeHook.arequired(self.tron_node_conn_id, needs=NODE_NEEDED)
        except NotRetryable as exc:
            return self._refused(exc)
        try:
            second = await TronNodeHook.arequired(
                self.confirm_node_conn_id, needs=CONFIRM_NODE_NEEDED,
                setting="confirm_node_conn_id") if self.confirm_node_conn_id else None
        except NotRetryable as exc:
            hook.close()
            return self._refused(exc)
        try:
            # Each node's block 0, once per run (in a thread), and both on one chain.
            await hook.acheck_chain()
            if second is not None:
                await second.acheck_chain()
                hook.check_same_chain(second)
            watch = PayoutWatch(open_payout_journal(), hook.get_conn(), self.batch_id,
                                follow=self.follow, solidified=self.solidified,
                                budget=self.max_requests_per_poll, log=self.log,
                                tolerance_s=self.clock_tolerance_seconds,
                                confirm_node=second.get_conn() if second else None)
            troubled = False
            while True:
                try:
                    status = await off_loop(watch.step)
                    troubled = False
                except NodeError as exc:  # says nothing about the payouts: go on
                    if not troubled:
                        self.log.warning("payout batch %s: the node did not answer, or is "
                                         "not believed (%s); polling goes on",
                                         self.batch_id, exc)
                    troubled = True
                    status = None
                if status is not None and status.done:
                    return {"status": "done", "batch_id": self.batch_id, **status.to_event()}
                if time.time() >= self.end_time:
                    return {"status": "timeout", "batch_id": self.batch_id,
                            **(status.to_event() if status else {})}
                await asyncio.sleep(self.poll_interval_seconds)
        except Exception as exc:  # an error that will not pass: the task says what
            # Not retryable (a node on another chain, a journal on one host's file under a
            # distributed executor): the task fails without a retry.
            return {"status": "error", "batch_id": self.batch_id,
                    "message": f"{type(exc).__name__}: {exc}",
                    "retryable": not isinstance(exc, NotRetryable)}
        finally:
            hook.close()
            if second is not None:
                second.close()

    def _refused(self, exc: NotRetryable) -> dict[str, Any]:
        """The event of what no retry changes (a connection that names nothing): the task
        fails on it, not retried (a trigger that raised would be retried)."""
        return {"status": "error", "batch_id": self.batch_id, "message": str(exc),
                "retryable": False}
