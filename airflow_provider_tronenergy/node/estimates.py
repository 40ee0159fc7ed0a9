"""The node's energy estimates money depends on, written once for the keeper and payouts."""

from __future__ import annotations

from airflow_provider_tronenergy.node.protocol import Estimates
from tronenergy_protocol.address import random_address

__all__ = ["Estimates", "first_transfer_energy"]


def first_transfer_energy(node: Estimates, owner: str) -> int | None:
    """What the chain charges now for one USDT unit from ``owner`` to an address holding
    none (a fresh random one: a new storage slot), the most a USDT transfer costs; None
    when the node has no estimate (the owner holds no USDT, say)."""
    return node.estimate_transfer_energy(owner, random_address(), 1)
