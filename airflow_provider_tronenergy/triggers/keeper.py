"""The keeper's watcher: follows its wallets' energy on chain and wakes the keeper.

For an ``AssetWatcher`` in the triggerer: each poll reads the chain's head (its clock)
and, within ``max_requests_per_poll``, the wallets' ``EnergyLimit - EnergyUsed`` through the
TRON node, and :class:`~airflow_provider_tronenergy.keeper.watch.KeeperWatch` says when a
wallet's crossing below its floor or a rental's nearing end wakes the keeper (one Asset
event, one run of the keeper DAG). The kwargs are identifiers only: the keeper's name,
the node connection's id, the poll's figures. The wallets and floors come from the
keeper's registry, written by each keeper run; the registry's and the journal's URL from
the triggerer's own configuration. A node or registry that cannot be read wakes nobody:
the watcher logs it and polls again (a keeper woken blind would buy nothing anyway).

What only a person fixes (a ``NotRetryable``: its node on another chain than the connection
says, a connection that names nothing or is malformed, a registry refused as one host's
file) stops the polling, by the rule of every AssetWatcher trigger here
(:mod:`~airflow_provider_tronenergy.triggers.stops`): the watcher wakes the keeper once
with an ``error`` event, whose run fails on it, not retried, then reads its node and
registry again every ``rewake_after_seconds`` seconds, without a second event for the same cause,
and polls again once they pass.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from airflow.triggers.base import BaseEventTrigger, TriggerEvent

from airflow_provider_tronenergy.errors import NotRetryable
from airflow_provider_tronenergy.hooks.blocking import off_loop
from airflow_provider_tronenergy.hooks.tron_node import TronNodeHook
from airflow_provider_tronenergy.keeper.keep import NODE_NEEDED
from airflow_provider_tronenergy.keeper.registry import KeeperRegistry
from airflow_provider_tronenergy.keeper.watch import KeeperWatch, Wake
from airflow_provider_tronenergy.triggers.stops import Stops, stopped, until_fixed


class TronEnergyKeeperTrigger(BaseEventTrigger):
    """Fires an event per wake of the keeper ``keeper`` (see the module's rules).

    :param keeper: the keeper's name (its DAG id in the example).
    :param tron_node_conn_id: the ``tron_node`` connection to read the chain through.
    :param poll_interval_seconds: seconds between polls.
    :param max_requests_per_poll: wallets read per poll, at most (the request budget: one
        ``getaccountresource`` each, plus the head block); more wallets are read in turn.
    :param rewake_after_seconds: seconds before a wallet still below its floor wakes the
        keeper again.
    """

    def __init__(self, *, keeper: str, tron_node_conn_id: str = "tron_node_default",
                 poll_interval_seconds: float = 30.0, max_requests_per_poll: int = 20,
                 rewake_after_seconds: float = 600.0) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.keeper = keeper
        self.tron_node_conn_id = tron_node_conn_id
        self.poll_interval_seconds = float(poll_interval_seconds)
        self.max_requests_per_poll = max(1, int(max_requests_per_poll))
        self.rewake_after_seconds = float(rewake_after_seconds)

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """Identifiers and figures only: never a URL, a key or an address list."""
        return (f"{type(self).__module__}.{type(self).__qualname__}", {
            "keeper": self.keeper, "tron_node_conn_id": self.tron_node_conn_id,
            "poll_interval_seconds": self.poll_interval_seconds,
            "max_requests_per_poll": self.max_requests_per_poll,
            "rewake_after_seconds": self.rewake_after_seconds})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Poll for ever; what only a person fixes wakes the keeper once with an ``error``
        event, and is read again every ``rewake_after_seconds`` seconds (``triggers.stops``): never
        a watcher that polls nothing and wakes nobody, nor a run failed per poll."""
        watch = KeeperWatch(rewake_after=self.rewake_after_seconds)
        async for event in until_fixed(
                lambda stops: self._polls(watch, stops),
                lambda message: TriggerEvent(  # type: ignore[no-untyped-call]
                    stopped(message, keeper=self.keeper)),
                recheck_after=self.rewake_after_seconds, log=self.log,
                what=f"keeper {self.keeper}: the watcher"):
            yield event

    async def _polls(self, watch: KeeperWatch, stops: Stops
                     ) -> AsyncGenerator[TriggerEvent, None]:
        """The node and the registry opened, then a poll every ``poll_interval_seconds`` seconds."""
        node: TronNodeHook | None = None
        registry: KeeperRegistry | None = None
        try:
            node = await TronNodeHook.arequired(self.tron_node_conn_id, needs=NODE_NEEDED)
            registry = KeeperRegistry()
            while True:
                wakes = await off_loop(self._poll, watch, registry, node)
                stops.resumed()  # it reads again: a later stop is told again
                for wake in wakes:
                    self.log.info("waking keeper %s for %s: available %s, floor %s (%s)",
                                  wake.keeper, wake.wallet, f"{wake.available:,}",
                                  f"{wake.floor:,}", wake.reason)
                    yield TriggerEvent(wake.to_dict())  # type: ignore[no-untyped-call]
                await asyncio.sleep(self.poll_interval_seconds)
        finally:
            if registry is not None:
                registry.close()
            if node is not None:
                node.close()

    def _poll(self, watch: KeeperWatch, registry: KeeperRegistry, node: TronNodeHook
              ) -> list[Wake]:
        """One poll, in a thread (the registry and the node are read synchronously)."""
        try:
            return watch.poll(registry.watched(self.keeper), node, self.max_requests_per_poll,
                              time.monotonic())
        except NotRetryable:  # another chain, a connection deleted or broken since: stop
            raise
        except Exception as exc:  # a read failed: wake nobody blind, poll again
            self.log.warning("keeper %s: the chain or the registry could not be read (%s); "
                             "polling again in %g s", self.keeper, exc, self.poll_interval_seconds)
            return []
