"""The deposit ledger's bookkeeping (airflow_provider_tronenergy.deposits): each deposit
credited exactly once, keyed by the chain's (tx_hash, log), from the ledger's one offset into
the callback store, on SQLite and PostgreSQL; the ledger's URL resolved when it is opened;
earlier ledgers upgraded, their rows kept (and never credited twice), their offset kept.

The proof itself is tested against the sandbox's chain in test_proof.py; here a stand-in
``Believer`` plays a chain that holds exactly what each callback says (a transfer at log 0),
so the offset, paging, schema version and concurrency are tested on their own."""

from __future__ import annotations

import logging
import sqlite3
import threading
from typing import Any

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy import deposits, sqlstore
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.deposits import Said, Verdict
from airflow_provider_tronenergy.deposits import sweep as sweeping
from airflow_provider_tronenergy.node.transfers import ChainTransfer
from support.callbacks import verified_transfer
from tronenergy_protocol.address import random_address

USDT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"


class Believer:
    """A chain that holds what each callback says: proves it as a transfer at log 0."""

    def prove(self, said: Said, addresses: frozenset[str]) -> Verdict:
        units = said.units or 0
        transfer = ChainTransfer(
            tx_hash=said.tx_hash, index=0, contract=None if said.token == "TRX" else USDT,
            from_address=said.from_address, to_address=said.to_address, units=units,
            block_number=said.block_number, block_timestamp_ms=1)
        return Verdict("proven", "proven", said.token, transfers=(transfer,))


BELIEVER: Any = Believer()


def chain_transfer(to: str, units: int = 1_000_000, index: int = 0,
                   tx_hash: str | None = None) -> ChainTransfer:
    import secrets

    return ChainTransfer(tx_hash=tx_hash or secrets.token_hex(32), index=index, contract=USDT,
                         from_address=random_address(), to_address=to, units=units,
                         block_number=77, block_timestamp_ms=1_700_000_000_000)


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_and_ledger(request, tmp_path):
    """A callback store and a ledger URL on one backend."""
    if request.param == "sqlite":
        store = CallbackStore(f"sqlite:///{tmp_path / 'callbacks.db'}")
        ledger = f"sqlite:///{tmp_path / 'ledger.db'}"
    else:
        url, schema = request.getfixturevalue("postgres_url"), request.getfixturevalue(
            "pg_schema")
        store = CallbackStore(url, schema=schema)
        ledger = sa.engine.make_url(url).update_query_dict(
            {"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
    store.ensure_schema()
    yield store, ledger
    store.close()


def sweep(addresses: list[str], store: Any, url: str,
          credited_by: str | None = None) -> list[str]:
    """One ``credit_from_store`` by a ledger opened for it; the tx hashes it credited."""
    with deposits.DepositLedger(url) as ledger:
        return [t.tx_hash for t in ledger.credit_from_store(
            addresses, prover=BELIEVER, credited_by=credited_by, store=store)]


def _ledger_rows(url: str) -> dict[str, str | None]:
    engine = sqlstore.create_engine(sqlstore.parse_url(url))
    try:
        with engine.connect() as conn:
            return dict(conn.execute(sa.text(
                "SELECT tx_hash, credited_by FROM credited_deposits")).all())  # type: ignore[arg-type]
    finally:
        engine.dispose()


def _offset(url: str) -> int:
    with deposits.DepositLedger(url) as ledger:
        return ledger.offset()


def test_each_stored_deposit_is_credited_exactly_once(tmp_path):
    store = CallbackStore(f"sqlite:///{tmp_path / 'callbacks.db'}")
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    address = random_address()
    first, second = verified_transfer(address, "25.5", "USDT"), verified_transfer(
        address, "0.000001", "USDT")
    store.record_many([first, second])
    assert sweep([address], store, url) == [first.tx_hash, second.tx_hash]
    assert sweep([address], store, url) == []  # swept again: nothing twice
    with deposits.DepositLedger(url) as ledger:  # read again from the start: nothing twice
        assert ledger.credit_earlier([address], prover=BELIEVER, store=store) == []
    with sqlite3.connect(tmp_path / "ledger.db") as db:
        rows = db.execute("SELECT tx_hash, amount, to_address, from_address, token, "
                          "block_number FROM credited_deposits ORDER BY amount").fetchall()
    assert rows == [(t.tx_hash, t.amount, address, t.from_address, "USDT", t.block_number)
                    for t in (second, first)]
    store.close()


def test_the_url_is_resolved_when_the_ledger_opens(tmp_path, monkeypatch):
    monkeypatch.delenv(deposits.ENV_LEDGER_URL, raising=False)
    monkeypatch.setenv("AIRFLOW_HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    assert deposits.DepositLedger().url.database == str(tmp_path / "home" /
                                                        deposits.DEFAULT_FILENAME)
    monkeypatch.setenv("AIRFLOW__TRONENERGY__DEPOSITS_LEDGER", f"sqlite:///{tmp_path}/c.db")
    assert deposits.DepositLedger().url.database == f"{tmp_path}/c.db"
    monkeypatch.setenv(deposits.ENV_LEDGER_URL, f"sqlite:///{tmp_path}/e.db")
    assert deposits.DepositLedger().url.database == f"{tmp_path}/e.db"


def test_the_ledger_repr_hides_a_password():
    ledger = deposits.DepositLedger("postgresql://u:s3cret-pw@127.0.0.1:1/x")
    assert "s3cret-pw" not in repr(ledger)


class Rendezvous:
    """The store, but each sweep's first read waits for the other sweep's: both have read
    the ledger's offset before either commits a credit."""

    def __init__(self, store: CallbackStore, barrier: threading.Barrier) -> None:
        self.store, self.barrier = store, barrier

    def max_id(self) -> int:
        return self.store.max_id()

    def list_transfers(self, **kwargs: Any) -> list[Any]:
        self.barrier.wait(timeout=30)
        return self.store.list_transfers(**kwargs)


def test_two_workers_sweeping_at_once(store_and_ledger):
    """Two ledgers (two workers, two runs) sweep the same transfers from the same offset:
    each is credited once, the key deciding."""
    store, url = store_and_ledger
    address = random_address()
    transfers = [verified_transfer(address, f"{i}.5", "USDT") for i in range(40)]
    store.record(transfers[0])
    assert sweep([address], store, url) == [transfers[0].tx_hash]  # tables exist before
    store.record_many(transfers[1:])
    barrier = threading.Barrier(2)
    results: list[list[str]] = []

    def worker() -> None:
        results.append(sweep([address], Rendezvous(store, barrier), url))

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2
    credited = [h for batch in results for h in batch]
    assert sorted(credited) == sorted(t.tx_hash for t in transfers[1:])
    assert _offset(url) == store.max_id()


def test_a_sweep_credits_what_the_store_has_and_the_ledger_lacks(store_and_ledger):
    """Whatever events woke the runs, each run credits what was stored since the offset,
    naming itself; the offset lives in the ledger (the store is only read)."""
    store, ledger = store_and_ledger
    deposit, other = random_address(), random_address()
    first, elsewhere = verified_transfer(deposit, "1.5"), verified_transfer(other, "3")
    store.record_many([first, elsewhere])
    assert sweep([deposit], store, ledger, "run-1") == [first.tx_hash]

    stranded = verified_transfer(deposit, "2")
    store.record(stranded)
    with deposits.DepositLedger(ledger) as opened:
        swept = opened.credit_from_store([deposit], prover=BELIEVER, credited_by="run-1",
                                         store=store)
    assert [(t.tx_hash, t.units) for t in swept] == [(stranded.tx_hash, 2_000_000)]
    assert _ledger_rows(ledger) == {first.tx_hash: "run-1", stranded.tx_hash: "run-1"}
    # The offset moved, in the ledger (the store is only read): a second sweep credits nothing.
    assert _offset(ledger) == store.max_id()
    assert store.committed_offset(deposits.CONSUMER) is None
    assert sweep([deposit], store, ledger, "run-2") == []
    # Stored later: the next sweep credits it, and only it.
    late = verified_transfer(deposit, "4")
    store.record(late)
    assert sweep([deposit], store, ledger, "run-3") == [late.tx_hash]
    assert _ledger_rows(ledger)[late.tx_hash] == "run-3"


def test_a_sweep_pages_through_a_long_backlog(store_and_ledger, monkeypatch):
    store, ledger = store_and_ledger
    monkeypatch.setattr(sweeping, "SWEEP_PAGE", 7)
    address, other = random_address(), random_address()
    events = [verified_transfer(address, f"{i}.25") for i in range(30)]
    # Transfers into another address between them: pages hold both, the offset passes both.
    store.record_many([e for i, event in enumerate(events) for e in (
        (event, verified_transfer(other, f"{i}.5")) if i % 3 == 0 else (event,))])
    assert sweep([address], store, ledger) == [e.tx_hash for e in events]  # in store order
    assert _offset(ledger) == store.max_id()
    assert set(_ledger_rows(ledger)) == {e.tx_hash for e in events}


def test_the_offset_only_moves_forward(store_and_ledger):
    """A slower sweep (it read the offset and the store's end before a faster one swept
    further) credits nothing twice and never moves the offset back."""
    store, url = store_and_ledger
    address = random_address()
    store.record_many([verified_transfer(address, f"{i}.1") for i in range(25)])
    newer = [verified_transfer(address, f"{i}.2") for i in range(15)]
    fast: list[str] = []

    class Slower:
        """The store as the slow sweep sees it: the fast sweep runs before its first page."""

        def max_id(self) -> int:
            return store.max_id()

        def list_transfers(self, **kwargs: Any) -> list[Any]:
            if not fast:
                store.record_many(newer)
                fast.extend(sweep([address], store, url, "fast"))
            return store.list_transfers(**kwargs)

    with deposits.DepositLedger(url) as ledger:
        slow = ledger.credit_from_store([address], prover=BELIEVER, credited_by="slow",
                                        store=Slower())
        assert slow == []
        assert len(fast) == 40
        assert ledger.offset() == store.max_id()  # 40, not the slow sweep's 25
    assert set(_ledger_rows(url).values()) == {"fast"}


def test_an_address_added_later_gets_earlier_deposits_only_on_purpose(store_and_ledger,
                                                                      caplog):
    """The offset is one position in the store: a sweep passes transfers into addresses it
    was not given, and a later sweep with the address added does not go back for them;
    ``credit_earlier`` does, without moving the offset."""
    store, url = store_and_ledger
    listed, added = random_address(), random_address()
    early = [verified_transfer(added, "5"), verified_transfer(listed, "6"),
             verified_transfer(added, "7")]
    store.record_many(early)
    with caplog.at_level(logging.INFO, logger=sweeping.__name__):
        assert sweep([listed], store, url, "run-1") == [early[1].tx_hash]
    assert "2 stored transfers up to id" in caplog.text
    assert _offset(url) == store.max_id()

    later = verified_transfer(added, "8")
    store.record(later)
    assert sweep([listed, added], store, url, "run-2") == [later.tx_hash]
    with deposits.DepositLedger(url) as ledger:
        offset = ledger.offset()
        earlier = ledger.credit_earlier([added], prover=BELIEVER, credited_by="by-hand",
                                        store=store)
        assert [t.tx_hash for t in earlier] == [early[0].tx_hash, early[2].tx_hash]
        assert ledger.offset() == offset
        assert ledger.credit_earlier([added], prover=BELIEVER, credited_by="again",
                                     store=store) == []
    assert _ledger_rows(url) == {early[1].tx_hash: "run-1", later.tx_hash: "run-2",
                                 early[0].tx_hash: "by-hand", early[2].tx_hash: "by-hand"}


def test_a_sweep_without_addresses_reads_nothing(store_and_ledger):
    """No deposit address configured (yet): the offset stays, so the first sweep that has
    addresses credits what was stored before."""
    store, url = store_and_ledger
    address = random_address()
    deposit = verified_transfer(address, "9.5")
    store.record(deposit)
    assert sweep([], store, url) == []
    assert _offset(url) == 0
    assert sweep([address], store, url) == [deposit.tx_hash]


@pytest.mark.parametrize("store", ["deposit_ledger", "deposit_scan"])
def test_a_new_ledger_is_at_version_1_and_a_newer_one_refuses_to_open(store_and_ledger, store):
    """The ledger's and the scan's tables, created at the first release's version; either
    store migrated by a later release is refused (nothing read or written)."""
    _, url = store_and_ledger
    assert _offset(url) == 0
    engine = sqlstore.create_engine(sqlstore.parse_url(url))
    try:
        with engine.begin() as conn:
            tables = set(sa.inspect(conn).get_table_names())
            assert {"credited_deposits", "deposit_catch_up", "deposit_claims",
                    "deposit_registrations", "deposit_scan_checkpoint",
                    "deposit_scan_backfill"} <= tables
            assert dict(conn.execute(sa.text(
                "SELECT store, version FROM tronenergy_schema_version WHERE store IN "
                "('deposit_ledger', 'deposit_scan')")).all()) == {
                "deposit_ledger": 1, "deposit_scan": 1}
            conn.execute(sa.text("UPDATE tronenergy_schema_version SET version = 99 "
                                 "WHERE store = :store"), {"store": store})
    finally:
        engine.dispose()
    with pytest.raises(sqlstore.StoreError, match=f"{store} schema is version 99, newer than "
                                                  "this code"):
        _offset(url)


def test_credit_once_whichever_path_saw_it_first(store_and_ledger):
    """The scan and the callback path credit through one key: the second credits nothing,
    and the row names the path that saw it first."""
    _, url = store_and_ledger
    address = random_address()
    first, second = chain_transfer(address, 5), chain_transfer(address, 7)
    same_tx_again = chain_transfer(address, 9, index=3, tx_hash=first.tx_hash)
    with deposits.DepositLedger(url) as ledger:
        assert ledger.credit([first, same_tx_again], token="USDT", source="scan",
                             credited_by="scan-1") == [first, same_tx_again]
        assert ledger.credit([first, second], token="usdt", source="callback",
                             credited_by="run-1") == [second]
        assert ledger.credit([first, second, same_tx_again], token="USDT",
                             source="scan", credited_by=None) == []
        rows = {(c.tx_hash, c.log_index): (c.source, c.units, c.amount)
                for c in ledger.credits(to_address=address)}
        assert ledger.totals("USDT") == {address: 21}
    assert rows == {(first.tx_hash, 0): ("scan", 5, "0.000005"),
                    (first.tx_hash, 3): ("scan", 9, "0.000009"),
                    (second.tx_hash, 0): ("callback", 7, "0.000007")}


@pytest.mark.parametrize(("transfer", "token", "source", "message"), [
    (lambda a: chain_transfer(a), "USDT", "webhook", "source must be one of"),
    (lambda a: chain_transfer(a), "TRX", "scan", "a TRX credit has no token contract"),
    (lambda a: chain_transfer(a, 0), "USDT", "scan", "units must be positive"),
    (lambda a: chain_transfer(a), "", "scan", "token must be a symbol"),
])
def test_credit_refuses_what_is_not_a_deposit(tmp_path, transfer, token, source, message):
    with deposits.DepositLedger(f"sqlite:///{tmp_path / 'l.db'}") as ledger, \
            pytest.raises(ValueError, match=message):
        ledger.credit([transfer(random_address())], token=token, source=source,
                      credited_by=None)
