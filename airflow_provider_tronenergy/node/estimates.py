"""The node's energy estimates money depends on, written once for the keeper and payouts."""

from __future__ import annotations

from typing import Protocol

from airflow_provider_tronenergy.protocol.address import random_address


class Estimates(Protocol):
    """A node that estimates a USDT transfer (``TronNodeClient``)."""

    def estimate_transfer_energy(self, owner: str, to: str, units: int) -> int | None:
        """Energy one USDT transfer needs now, or None."""


def first_transfer_energy(node: Estimates, owner: str) -> int | None:
    """What the chain charges now for one USDT unit from ``owner`` to an address holding
    none (a fresh random one: a new storage slot), the most a USDT transfer costs; None
    when the node has no estimate (the owner holds no USDT, say)."""
    return node.estimate_transfer_energy(owner, random_address(), 1)
