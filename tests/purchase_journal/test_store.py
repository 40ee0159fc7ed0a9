"""The purchase journal on SQLite and PostgreSQL: attempts, races between workers, resolving."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from airflow_provider_tronenergy.purchase_journal import (
    EntryState,
    JournalError,
    JournalRace,
    PurchaseJournal,
)

TARGET = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def journal_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'journal.db'}"
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def make(journal_url: str,
         request: pytest.FixtureRequest) -> Iterator[Callable[[], PurchaseJournal]]:
    """Independent journals on one database, as separate workers have."""
    kwargs: dict[str, Any] = {}
    if journal_url.startswith("postgresql"):
        kwargs["schema"] = request.getfixturevalue("pg_schema")
    made: list[PurchaseJournal] = []

    def factory() -> PurchaseJournal:
        made.append(PurchaseJournal(journal_url, **kwargs))
        return made[-1]

    yield factory
    for journal in made:
        journal.close()


def _claim(journal: PurchaseJournal, identity: str, after: Any = None, scope: str = "d/r1/t/-1"):
    return journal.claim(identity, after, scope=scope, explicit_key=False, mode="buy",
                         target_address=TARGET, description="buy 65,000 energy",
                         request={"energy_amount": 65000, "rent_time": "1"},
                         rent_hours=Decimal("1"))


def test_attempts_follow_each_other_and_keep_history(make):
    journal = make()
    first = _claim(journal, "k")
    assert (first.attempt, first.state) == (1, EntryState.SENDING)
    assert first.claimed_by == "d/r1/t/-1" and first.valid_until is None
    journal.record_placed(first, "order-1", {"order_id": "order-1", "cost": "2.925"})
    placed = journal.latest("k")
    assert placed is not None and placed.state is EntryState.PLACED
    assert placed.order_id == "order-1" and placed.result == {"order_id": "order-1",
                                                               "cost": "2.925"}
    assert placed.valid_until == pytest.approx(first.sent_at + 3600, abs=0.01)
    second = _claim(journal, "k", placed, scope="d/r2/t/-1")
    journal.record_refused(second, "40020 insufficient balance")
    assert [e.state for e in journal.list(identity="k")] == [EntryState.REFUSED,
                                                              EntryState.PLACED]


def test_a_stale_view_cannot_claim(make):
    journal = make()
    first = _claim(journal, "k")
    with pytest.raises(JournalRace):
        _claim(journal, "k", None)  # attempt 1 exists: the UNIQUE constraint says no
    journal.record_placed(first, "o", {})
    with pytest.raises(JournalRace):
        _claim(journal, "k", first)  # first was sending when read; it is placed now


def _race(url: str, schema: str | None, identity: str, start: float, out: Any) -> None:
    journal = PurchaseJournal(url, **({"schema": schema} if schema else {}))
    journal.ensure_schema()
    while time.time() < start:
        time.sleep(0.001)
    try:
        _claim(journal, identity, None, scope=f"d/r/{os.getpid()}/-1")
        out.put("claimed")
    except JournalRace:
        out.put("race")
    finally:
        journal.close()


def test_eight_workers_racing_for_one_purchase_let_exactly_one_send(make, journal_url, request):
    """Separate processes, separate connections: exactly one writes ``sending``."""
    make().ensure_schema()
    schema = (request.getfixturevalue("pg_schema") if journal_url.startswith("postgresql")
              else None)
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    start = time.time() + 3
    workers = [ctx.Process(target=_race, args=(journal_url, schema, "raced", start, out))
               for _ in range(8)]
    for worker in workers:
        worker.start()
    results = sorted(out.get(timeout=60) for _ in workers)
    for worker in workers:
        worker.join(30)
    assert results == ["claimed"] + ["race"] * 7
    entries = make().list(identity="raced")
    assert len(entries) == 1 and entries[0].state is EntryState.SENDING


def test_resolve_placed_is_claimed_once(make):
    journal = make()
    _claim(journal, "k")
    resolved = journal.resolve("k", order_id="order-9", by="alice", note="seen in console")
    assert resolved.state is EntryState.PLACED and resolved.order_id == "order-9"
    assert resolved.claimed_by is None and resolved.resolved_by == "alice"
    assert resolved.valid_until == pytest.approx(resolved.sent_at + 3600, abs=0.01)
    other = make()
    assert journal.claim_reuse(resolved, "d/r2/t/-1") is True
    assert other.claim_reuse(resolved, "d/r3/t/-1") is False
    assert journal.latest("k").claimed_by == "d/r2/t/-1"


def test_resolve_refuses_what_is_not_unknown(make):
    journal = make()
    with pytest.raises(JournalError, match="no purchase"):
        journal.resolve("missing", not_placed=True)
    entry = _claim(journal, "k")
    with pytest.raises(JournalError, match="either"):
        journal.resolve("k")
    with pytest.raises(JournalError, match="order id"):
        journal.resolve("k", order_id="has space")
    journal.resolve("k", not_placed=True)
    assert journal.latest("k").state is EntryState.NOT_PLACED
    with pytest.raises(JournalError, match="no unknown outcome"):
        journal.resolve("k", order_id="o")
    assert journal.abandon(entry, "late") is False  # no longer sending: nothing changes


def test_one_order_id_is_never_resolved_onto_two_attempts(make):
    """Two purchases resolved with one order would both count on its energy."""
    journal = make()
    first, _, third = (_claim(journal, key) for key in ("a", "b", "c"))
    journal.record_placed(first, "order-1", {})
    with pytest.raises(JournalError, match=r"order order-1 is already held by purchase 'a' "
                                           r"\(attempt 1, placed\)"):
        make().resolve("b", order_id="order-1")
    assert journal.latest("b").state is EntryState.SENDING
    journal.resolve("b", order_id=" order-2 ")
    with pytest.raises(JournalError, match="held by purchase 'b'"):
        journal.resolve("c", order_id="order-2")
    with pytest.raises(JournalError, match="changed while resolving"):
        journal.resolve("c", order_id="order-3", attempt=2)
    forced = journal.resolve("c", order_id="order-2", shared=True, by="ops", note="forced")
    assert [e.identity for e in journal.holders("order-2")] == ["b", "c"]
    assert (forced.state, forced.resolved_by) == (EntryState.PLACED, "ops")
    assert third.id == forced.id


def _cli(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "airflow_provider_tronenergy.purchase_journal.cli", "--journal", url,
         *args], capture_output=True, text=True, timeout=60, check=False)


def test_cli_lists_shows_and_resolves(tmp_path):
    url = f"sqlite:///{tmp_path / 'journal.db'}"
    journal = PurchaseJournal(url)
    _claim(journal, "auto:d.t:abc")
    _claim(journal, "payout:batch-7:0")
    journal.record_placed(journal.latest("payout:batch-7:0"), "o-7", {})
    listed = _cli(url, "list", "--unknown")
    assert listed.returncode == 0, listed.stderr
    assert "UNKNOWN" in listed.stdout and "auto:d.t:abc" in listed.stdout
    assert "payout:batch-7:0" not in listed.stdout
    done = _cli(url, "resolve", "auto:d.t:abc", "--not-placed", "--by", "bob")
    assert done.returncode == 0, done.stderr
    assert "not placed: the next attempt buys, once" in done.stdout
    again = _cli(url, "resolve", "auto:d.t:abc", "--order-id", "o-1")  # (see test_cli.py)
    assert again.returncode == 1 and "no unknown outcome" in again.stderr
    shown = _cli(url, "show", "auto:d.t:abc", "--json")
    assert '"state": "not_placed"' in shown.stdout and '"resolved_by": "bob"' in shown.stdout
    missing = _cli(url, "show", "nope")
    assert missing.returncode == 1
    bad = _cli("mysql://x/y", "list")
    assert bad.returncode == 2 and "unsupported" in bad.stderr
    journal.close()


@pytest.mark.parametrize(("env", "expected"), [
    ({}, "sqlite:///{home}/tronenergy_purchases.db"),
    ({"AIRFLOW__TRONENERGY__PURCHASE_JOURNAL": "sqlite:////srv/j.db"}, "sqlite:////srv/j.db"),
    ({"AIRFLOW__TRONENERGY__PURCHASE_JOURNAL": "sqlite:////srv/j.db",
      "TRONENERGY_PURCHASE_JOURNAL": "sqlite:////srv/env.db"}, "sqlite:////srv/env.db"),
])
def test_journal_location_needs_no_configuration_and_follows_it(tmp_path, env, expected):
    base = {k: v for k, v in os.environ.items()
            if k not in ("TRONENERGY_PURCHASE_JOURNAL", "AIRFLOW__TRONENERGY__PURCHASE_JOURNAL")}
    done = subprocess.run(
        [sys.executable, "-c",
         "from airflow_provider_tronenergy.purchase_journal import journal_url; "
         "print(journal_url())"],
        env={**base, "AIRFLOW_HOME": str(tmp_path), **env}, capture_output=True, text=True,
        timeout=120, check=True)
    assert done.stdout.strip().splitlines()[-1] == expected.format(home=tmp_path)


def test_a_new_journal_is_created_at_version_1_with_its_indexes(journal_url, request):
    """The first release's journal: the table as declared (the figures, the quoted
    energy and cost), its indexes, version 1 recorded; a newer recorded version is refused."""
    import sqlalchemy as sa

    from airflow_provider_tronenergy import sqlstore

    schema = (request.getfixturevalue("pg_schema") if journal_url.startswith("postgresql")
              else None)
    engine = sqlstore.create_engine(sqlstore.parse_url(journal_url))
    journal = PurchaseJournal(journal_url, schema=schema)
    try:
        assert _claim(journal, "first").attempt == 1
        versions = sa.Table("tronenergy_schema_version", sa.MetaData(schema=schema),
                            autoload_with=engine)
        with engine.connect() as conn:
            assert dict(conn.execute(sa.select(versions)).all()) == {"purchase_journal": 1}
            inspector = sa.inspect(conn)
            columns = {c["name"] for c in inspector.get_columns(
                "tronenergy_purchase_journal", schema=schema)}
            indexes = {i["name"]: i["column_names"] for i in inspector.get_indexes(
                "tronenergy_purchase_journal", schema=schema)
                if not i["name"].endswith("_key")}  # PostgreSQL lists the UNIQUE's own
        assert {"energy", "cost_sun", "burn_sun", "activation_sun", "quoted_energy",
                "quoted_sun"} <= columns
        assert indexes == {"tronenergy_purchase_journal_scope": ["scope"],
                           "tronenergy_purchase_journal_state": ["state"],
                           "tronenergy_purchase_journal_sent": [
                               "state", "sent_at_ms", "energy", "cost_sun", "burn_sun",
                               "activation_sun"]}
        with engine.begin() as conn:  # a later release migrated it
            conn.execute(versions.update().values(version=2))
        later = PurchaseJournal(journal_url, schema=schema)
        try:
            with pytest.raises(sqlstore.StoreError, match=r"purchase_journal schema is "
                                                          r"version 2, newer than this code "
                                                          r"\(1\)"):
                later.ensure_schema()
        finally:
            later.close()
    finally:
        journal.close()
        engine.dispose()
