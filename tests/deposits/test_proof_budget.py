"""Proving stored callbacks within a request budget: a flood of forged callbacks (correctly
signed, for transactions that do not exist) larger than a sweep's budget is proven across
sweeps, each within its budget, oldest first; the real deposits behind the flood are
credited once, nothing is lost or credited twice, the flood ends disputed. Real parts: the
sandbox chain and service, the real receiver, the ledger on SQLite and PostgreSQL.

Before the budget a sweep proved every stored callback in one go, one to three node
requests each, with no bound: this flood cost its first sweep 22 requests.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from airflow_provider_tronenergy.deposits import ProofBudget, ProofSettings, Prover
from support.deposits import DEADLINE, DepositWorld

BUDGET = ProofBudget(max_requests=12, concurrency=4)
FLOOD = 10


class Counting:
    """The node, every request counted (as the node's operator would see them)."""

    def __init__(self, node: Any) -> None:
        self.node, self.calls, self.lock = node, 0, threading.Lock()

    def __getattr__(self, name: str) -> Any:
        found = getattr(self.node, name)
        if not callable(found):
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                self.calls += 1
            return found(*args, **kwargs)
        return counted


def budgeted_sweep(world: DepositWorld) -> tuple[list[str], int]:
    """One sweep within :data:`BUDGET`: what it credited, and the node requests it sent."""
    node = Counting(world.node)
    prover = Prover(node, ProofSettings(deadline=DEADLINE), clock=world.chain.clock)  # type: ignore[arg-type]
    with world.ledger() as ledger:
        credited = ledger.credit_from_store([world.address], prover=prover, store=world.store,
                                            credited_by="test", budget=BUDGET)
    return [t.tx_hash for t in credited], node.calls


def flood_then_deposits(world: DepositWorld) -> tuple[list[str], list[str]]:
    forged = [world.forge("5000") for _ in range(FLOOD)]
    world.stored(*forged)
    real = [world.transfer("12.5"), world.transfer("3")]
    world.stored(*real)
    world.solidify()
    return forged, real


def check_flood(world: DepositWorld) -> None:
    forged, real = flood_then_deposits(world)
    credited: list[str] = []
    runs = 0
    while set(credited) != set(real):
        runs += 1
        assert runs <= 5, f"the real deposits were not reached in {runs - 1} sweeps"
        got, requests = budgeted_sweep(world)
        assert requests <= BUDGET.max_requests  # each sweep within its budget
        credited += got
    assert runs > 1  # the flood did not fit one sweep: carried, not dropped
    assert sorted(credited) == sorted(real)  # once each
    world.chain.blocks(20)  # past the deadline: the flood is disputed, sweep by sweep
    for _ in range(10):
        got, requests = budgeted_sweep(world)
        assert got == [] and requests <= BUDGET.max_requests
    states = dict(world.rows("SELECT tx_hash, state FROM deposit_claims"))
    assert {tx: states.get(tx) for tx in forged} == {tx: "disputed" for tx in forged}
    assert world.rows("SELECT tx_hash, amount FROM credited_deposits ORDER BY amount") == \
        sorted([(real[0], "12.5"), (real[1], "3")], key=lambda row: row[1])
    with world.ledger() as ledger:
        assert ledger.offset() == world.store.max_id()  # nothing left behind
        assert ledger.totals("USDT") == {world.address: 15_500_000}


def test_a_flood_larger_than_the_budget_is_proven_across_sweeps(world):
    check_flood(world)


@pytest.mark.postgres
def test_a_flood_larger_than_the_budget_on_postgresql(pg_world):
    check_flood(pg_world)


def test_the_budget_is_checked():
    with pytest.raises(ValueError, match="max_requests"):
        ProofBudget(max_requests=2)
    with pytest.raises(ValueError, match="concurrency"):
        ProofBudget(concurrency=0)
