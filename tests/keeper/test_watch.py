"""When the keeper's watcher wakes the keeper (keeper.watch), and the registry it reads
(keeper.registry) on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from airflow_provider_tronenergy.keeper.registry import KeeperRegistry, Watched
from airflow_provider_tronenergy.keeper.watch import KeeperWatch
from airflow_provider_tronenergy.node.models import Resources

A, B, C = ("TJRabPrwbZy45sbavfcjinPJC18kjpRTv8", "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf",
           "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t")


def seen(available: int, used: int = 0) -> Resources:
    """A wallet's figures as the watcher reads them: ``available`` energy left to use."""
    return Resources(A, energy_limit=available + used, energy_used=used)


def test_crossing_below_the_floor_wakes_once_then_again_only_after_a_while():
    watch, wallet = KeeperWatch(rewake_after=600), Watched("hot", A, 200_000, None)
    assert watch.observe(wallet, seen(250_000), chain_now=0, now=0) is None
    wake = watch.observe(wallet, seen(150_000, used=50_000), chain_now=1_700, now=10)
    assert wake is not None and wake.to_dict() == {  # what the run reads back: the figures
        "keeper": "hot", "wallet": A, "available": 150_000, "limit": 200_000,
        "used": 50_000, "read_at": 1_700, "floor": 200_000, "reason": "below the floor"}
    assert watch.observe(wallet, seen(100_000), chain_now=0, now=300) is None  # still below
    again = watch.observe(wallet, seen(100_000), chain_now=0, now=610)
    assert again is not None and again.reason == "below the floor, still, after 600 s"
    assert watch.observe(wallet, seen(300_000), chain_now=0, now=620) is None  # topped up
    assert watch.observe(wallet, seen(100_000), chain_now=0, now=630) is not None  # crossed again


def test_a_rental_nearing_its_end_wakes_once_per_end():
    watch = KeeperWatch()
    wallet = Watched("hot", A, 200_000, wake_at=1_000.0)
    assert watch.observe(wallet, seen(400_000), chain_now=999, now=0) is None
    wake = watch.observe(wallet, seen(400_000), chain_now=1_000, now=1)
    assert wake is not None and wake.reason == "a rental ends soon"
    assert watch.observe(wallet, seen(400_000), chain_now=1_050, now=2) is None
    later = Watched("hot", A, 200_000, wake_at=2_000.0)  # the next rental's end
    assert watch.observe(later, seen(400_000), chain_now=2_000, now=3) is not None


def test_a_restarted_watcher_wakes_again_for_a_wallet_still_below():
    wallet = Watched("hot", A, 200_000, None)
    assert KeeperWatch().observe(wallet, seen(0), chain_now=0, now=0) is not None
    assert KeeperWatch().observe(wallet, seen(0), chain_now=0, now=1) is not None  # no memory


def test_the_request_budget_reads_the_wallets_in_turn():
    watch = KeeperWatch()
    wallets = [Watched("hot", w, 1, None) for w in (A, B, C)]
    rounds = [[w.wallet for w in watch.this_round(wallets, budget=2)] for _ in range(3)]
    assert rounds == [[A, B], [C, A], [B, C]]
    assert watch.this_round(wallets, budget=5) == wallets


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def registry(request, tmp_path):
    if request.param == "sqlite":
        made = KeeperRegistry(f"sqlite:///{tmp_path / 'journal.db'}")
    else:
        made = KeeperRegistry(request.getfixturevalue("postgres_url"),
                              schema=request.getfixturevalue("pg_schema"))
    yield made
    made.close()


def test_a_keeper_registers_its_wallets_and_a_new_run_replaces_them(registry):
    registry.register("hot", [(A, 200_000, None), (B, 100_000, 1_700_000_000.5)])
    registry.register("cold", [(C, 5, None)])
    assert registry.watched("hot") == [Watched("hot", A, 200_000, None),
                                       Watched("hot", B, 100_000, 1_700_000_000.5)]
    registry.register("hot", [(B, 300_000, None)])
    assert registry.watched("hot") == [Watched("hot", B, 300_000, None)]
    assert [w.wallet for w in registry.watched("cold")] == [C]
