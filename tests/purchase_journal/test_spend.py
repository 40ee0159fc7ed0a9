"""What a key spent, as the journal holds it, and ``max_spend_trx`` checked in the claim's
transaction: on SQLite and PostgreSQL, with workers claiming at once."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_tronenergy.money.guard import SpendRefused, Spent, guard_spend
from airflow_provider_tronenergy.purchase_journal import PurchaseJournal, SpendCheck

TARGET = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def make(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], PurchaseJournal]]:
    """Independent journals on one database, as separate workers have."""
    if request.param == "sqlite":
        url, kwargs = f"sqlite:///{tmp_path / 'journal.db'}", {}
    else:
        url = request.getfixturevalue("postgres_url")
        kwargs = {"schema": request.getfixturevalue("pg_schema")}
    made: list[PurchaseJournal] = []

    def factory() -> PurchaseJournal:
        made.append(PurchaseJournal(url, **kwargs))
        return made[-1]

    yield factory
    for journal in made:
        journal.close()


def _claim(journal: PurchaseJournal, identity: str, quoted: str | None, after: Any = None,
           limit: SpendCheck | None = None):
    return journal.claim(identity, after, scope=f"d/r/{identity}/-1", explicit_key=True,
                         mode="buy", target_address=TARGET, description="buy",
                         request={"energy_amount": 65000, "rent_time": "1"},
                         rent_hours=Decimal(1),
                         quoted_cost=Decimal(quoted) if quoted is not None else None,
                         limit=limit)


def _limit(trx: str, root: str = "batch") -> SpendCheck:
    def check(spent: Spent) -> None:
        guard_spend(spent, Decimal(4), limit=Decimal(trx), key=f"purchase key {root}",
                    what="this order")

    return SpendCheck((root,), check)


def test_a_keys_spend_counts_what_bought_or_may_have(make):
    journal = make()
    placed = _claim(journal, "batch:b0", "4.5")
    journal.record_placed(placed, "o-1", {"cost": "4.4", "energy_amount": 100_000})
    _claim(journal, "batch:b0:refill", "1.25")  # unknown outcome: at its quote
    rebought = _claim(journal, "batch:b0:topup", "2")
    journal.abandon(rebought, "on_ambiguous='rebuy'")  # still unknown: at its quote
    for identity in ("batch:b1", "batch:b2", "batch:b3"):  # bought nothing
        entry = _claim(journal, identity, "9")
        if identity == "batch:b1":
            journal.record_refused(entry, "40020")
        elif identity == "batch:b2":
            journal.resolve(identity, not_placed=True, by="alice")
        else:
            journal.record_placed(entry, "o-3", {"cost": "9"})
            journal.mark_ended(journal.latest(identity), "cancelled")
    _claim(journal, "batch", "0.5")
    journal.resolve("batch", order_id="o-4", by="alice")  # placed by hand: at its quote
    for other in ("batch2", "other:batch", "batc"):  # other keys
        _claim(journal, other, "50")
    assert journal.spent(("batch",)) == Spent(total=Decimal("8.15"), orders=4)
    assert journal.spent(("batch:b0",)) == Spent(total=Decimal("7.65"), orders=3)
    assert journal.spent(("batch:b0", "batc")) == Spent(total=Decimal("57.65"), orders=4)
    assert journal.spent(("nothing",)) == Spent()


def test_a_purchase_of_unknown_cost_is_named(make):
    journal = make()
    _claim(journal, "k:b0", None)  # sent unquoted, outcome unknown
    assert journal.spent(("k",)).unpriced == ("k:b0 attempt 1, sending",)
    with pytest.raises(SpendRefused, match="cost the journal does not hold"):
        _claim(journal, "k:b1", "1", limit=_limit("100", "k"))


def test_a_refused_claim_writes_nothing_and_names_what_was_spent(make):
    journal = make()
    first = _claim(journal, "batch:b0", "4", limit=_limit("10"))
    journal.record_placed(first, "o-1", {"cost": "4"})
    _claim(journal, "batch:b1", "4", limit=_limit("10"))
    with pytest.raises(SpendRefused) as refused:
        _claim(journal, "batch:b2", "4", limit=_limit("10"))
    assert str(refused.value) == ("max_spend_trx 10 TRX: 8 TRX already spent under purchase "
                                  "key batch (2 orders), this order would cost 4 TRX; "
                                  "nothing bought")
    assert journal.latest("batch:b2") is None


def test_workers_claiming_at_once_cannot_both_pass_the_limit(make):
    """Six workers (own connections) claim an order each under one key at once; the limit
    leaves room for two: exactly two write ``sending``, the others are refused."""
    journals = [make() for _ in range(6)]
    for journal in journals:
        journal.ensure_schema()
    start, results = threading.Barrier(len(journals)), []

    def worker(index: int, journal: PurchaseJournal) -> None:
        start.wait()
        try:
            _claim(journal, f"batch:b{index}", "4", limit=_limit("10"))
            results.append("claimed")
        except SpendRefused:
            results.append("refused")

    threads = [threading.Thread(target=worker, args=(i, j)) for i, j in enumerate(journals)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(results) == ["claimed"] * 2 + ["refused"] * 4
    assert journals[0].spent(("batch",)) == Spent(total=Decimal(8), orders=2)
