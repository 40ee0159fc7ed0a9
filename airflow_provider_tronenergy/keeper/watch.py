"""When a keeper's watcher wakes the keeper: one rule, kept apart from the trigger's loop.

The watcher (``triggers.keeper``) reads each wallet's available energy through the node,
within a request budget, and asks :class:`KeeperWatch` whether to wake the keeper:

* a wallet that **crosses** below its floor wakes it once; one that stays below wakes it
  again only after ``rewake_after`` seconds (the keeper bought, or could not: either way a
  wake per poll would only be a storm of runs);
* a rental of the keeper's nearing its end (the registry's ``wake_at``, by the chain's
  clock) wakes it once per ``wake_at``.

A wake carries what the watcher read of the wallet (its ``EnergyLimit``, ``EnergyUsed``
and the chain's time of the reading), which the run uses instead of reading it again
while it is fresh (``keeper.reading``).

The state is the watcher's memory: a restarted triggerer wakes the keeper again for a
wallet still below its floor, and the keeper's journal makes that second wake buy
nothing twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from airflow_provider_tronenergy.keeper.reading import Node
from airflow_provider_tronenergy.keeper.reading import chain_now as chain_clock
from airflow_provider_tronenergy.keeper.registry import Watched
from airflow_provider_tronenergy.node.models import Resources


@dataclass(frozen=True)
class Wake:
    """Why the keeper is woken for a wallet, and what the watcher read of it."""

    keeper: str
    wallet: str
    limit: int
    used: int
    read_at: float
    """The chain's clock (head block time, seconds) when the wallet was read."""
    floor: int
    reason: str

    @property
    def available(self) -> int:
        return max(0, self.limit - self.used)

    def to_dict(self) -> dict[str, Any]:
        """The trigger event's payload: identifiers and figures, nothing secret; what the
        run reads back (``keeper.reading.seen_in``)."""
        return {"keeper": self.keeper, "wallet": self.wallet, "available": self.available,
                "limit": self.limit, "used": self.used, "read_at": self.read_at,
                "floor": self.floor, "reason": self.reason}


@dataclass
class KeeperWatch:
    """The watcher's memory of each wallet (``rewake_after``: seconds, the watcher's clock)."""

    rewake_after: float = 600.0
    _below_since_wake: dict[str, float] = field(default_factory=dict)
    _woken_for_end: dict[str, float] = field(default_factory=dict)
    _turn: int = 0

    def poll(self, watched: Sequence[Watched], node: Node, budget: int, now: float
             ) -> list[Wake]:
        """One poll: the chain's head, then this round's wallets (at most ``budget``), each
        observed; ``now`` is the watcher's clock. A read that fails raises: nobody is woken."""
        if not watched:
            return []
        chain_now = chain_clock(node)
        wakes = []
        for wallet in self.this_round(watched, budget):
            wake = self.observe(wallet, node.get_resources(wallet.wallet), chain_now, now)
            if wake is not None:
                wakes.append(wake)
        return wakes

    def this_round(self, watched: Sequence[Watched], budget: int) -> list[Watched]:
        """The wallets to read in this poll: all of them, or ``budget`` in turn."""
        if budget >= len(watched) or not watched:
            return list(watched)
        start = self._turn % len(watched)
        self._turn = start + budget
        return [watched[(start + i) % len(watched)] for i in range(budget)]

    def observe(self, wallet: Watched, read: Resources, chain_now: float, now: float
                ) -> Wake | None:
        """A wake for what was just read (at the chain's ``chain_now``), or None."""
        available = read.energy_available
        if available < wallet.floor:
            last = self._below_since_wake.get(wallet.wallet)
            if last is None or now - last >= self.rewake_after:
                self._below_since_wake[wallet.wallet] = now
                again = "" if last is None else f", still, after {now - last:.0f} s"
                return Wake(wallet.keeper, wallet.wallet, read.energy_limit, read.energy_used,
                            chain_now, wallet.floor, f"below the floor{again}")
        else:
            self._below_since_wake.pop(wallet.wallet, None)
        if (wallet.wake_at is not None and chain_now >= wallet.wake_at
                and self._woken_for_end.get(wallet.wallet) != wallet.wake_at):
            self._woken_for_end[wallet.wallet] = wallet.wake_at
            return Wake(wallet.keeper, wallet.wallet, read.energy_limit, read.energy_used,
                        chain_now, wallet.floor, "a rental ends soon")
        return None
