"""The deposit ledger (airflow_provider_tronenergy.deposits): exactly-once crediting on
SQLite and PostgreSQL, the ledger's URL resolved when it is opened, and event unwrapping."""

from __future__ import annotations

import secrets
import sqlite3
import threading

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy import deposits, sqlstore
from airflow_provider_tronenergy.callbacks.store import CallbackStore
from airflow_provider_tronenergy.protocol.address import random_address
from support.callbacks import verified_transfer


def _transfer(to: str, amount: str = "25.5") -> dict:
    return {"tx_hash": secrets.token_hex(32), "to": to,
            "from": random_address(), "amount": amount, "token": "USDT", "block_number": 7}


def test_credit_is_exactly_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    first, second = _transfer(random_address()), _transfer(random_address(), "0.000001")
    assert deposits.credit([first, second], url) == [first, second]
    assert deposits.credit([second, first], url) == []  # redelivered: nothing twice
    with sqlite3.connect(tmp_path / "ledger.db") as db:
        rows = db.execute(
            "SELECT tx_hash, amount FROM credited_deposits ORDER BY amount").fetchall()
    assert rows == [(second["tx_hash"], "0.000001"), (first["tx_hash"], "25.5")]


def test_event_transfer_unwraps_a_watcher_event():
    deposit = _transfer(random_address())
    # What Airflow stores for an AssetWatcher's trigger event (Trigger.submit_event).
    assert deposits.event_transfer({"from_trigger": True, "payload": deposit}) == deposit
    assert deposits.event_transfer(deposit) == deposit  # a transfer posted as the extra
    assert deposits.event_transfer({"from_trigger": True, "payload": {}}) is None
    assert deposits.event_transfer({}) is None
    assert deposits.event_transfer(None) is None


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


def test_two_workers_crediting_the_same_deposits_on_postgres(postgres_url, pg_schema):
    """Two ledgers (two workers) race over the same transfers: each is credited once."""
    url = sa.engine.make_url(postgres_url).update_query_dict(
        {"options": f"-csearch_path={pg_schema}"}).render_as_string(hide_password=False)
    transfers = [_transfer(random_address(), f"{i}.5") for i in range(40)]
    deposits.credit(transfers[:1], url)  # the table exists before the race
    results: list[list[dict]] = []

    def worker() -> None:
        results.append(deposits.credit(transfers, url))

    threads = [threading.Thread(target=worker) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    credited = [t["tx_hash"] for batch in results for t in batch]
    assert sorted(credited) == sorted(t["tx_hash"] for t in transfers[1:])


# -- credited_by, and catching up from the callback store ------------------------------------


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


def _ledger_rows(url: str) -> dict[str, str | None]:
    engine = sqlstore.create_engine(sqlstore.parse_url(url))
    try:
        with engine.connect() as conn:
            return dict(conn.execute(sa.text(
                "SELECT tx_hash, credited_by FROM credited_deposits")).all())
    finally:
        engine.dispose()


def test_catch_up_credits_what_the_store_has_and_the_ledger_lacks(store_and_ledger):
    """A deposit whose Asset event reached no run is credited from the store, once."""
    store, ledger = store_and_ledger
    deposit, other = random_address(), random_address()
    by_event, stranded, elsewhere = (verified_transfer(deposit, "1.5"),
                                     verified_transfer(deposit, "2"), verified_transfer(other, "3"))
    store.record_many([by_event, stranded, elsewhere])
    event_payload = store.get_transfer(by_event.tx_hash).to_payload()
    assert [t["tx_hash"] for t in deposits.credit([event_payload], ledger, "run-1")] == [
        by_event.tx_hash]

    swept = deposits.catch_up([deposit], credited_by="run-1", store=store, ledger_url=ledger)
    assert [(t["tx_hash"], t["amount"]) for t in swept] == [(stranded.tx_hash, "2")]
    assert _ledger_rows(ledger) == {by_event.tx_hash: "run-1", stranded.tx_hash: "run-1"}
    # The offset moved, in the ledger (the store is only read): a second sweep credits nothing.
    assert deposits.DepositLedger(ledger).caught_up() == store.max_id()
    assert store.committed_offset(deposits.CATCH_UP_CONSUMER) is None
    assert deposits.catch_up([deposit], credited_by="run-2", store=store,
                             ledger_url=ledger) == []
    # Stored later: the next sweep credits it, and only it.
    late = verified_transfer(deposit, "4")
    store.record(late)
    assert [t["tx_hash"] for t in deposits.catch_up(
        [deposit], credited_by="run-3", store=store, ledger_url=ledger)] == [late.tx_hash]
    assert _ledger_rows(ledger)[late.tx_hash] == "run-3"


def test_catch_up_pages_through_a_long_backlog(store_and_ledger, monkeypatch):
    store, ledger = store_and_ledger
    monkeypatch.setattr(deposits, "SWEEP_PAGE", 7)
    address = random_address()
    events = [verified_transfer(address, f"{i}.25") for i in range(30)]
    store.record_many(events)
    swept = deposits.catch_up([address], store=store, ledger_url=ledger)
    assert sorted(t["tx_hash"] for t in swept) == sorted(e.tx_hash for e in events)
    assert deposits.DepositLedger(ledger).caught_up() == store.max_id()


def test_the_catch_up_offset_only_moves_forward(tmp_path):
    ledger = deposits.DepositLedger(f"sqlite:///{tmp_path / 'ledger.db'}")
    deposit = _transfer(random_address())
    ledger.credit([deposit], "run-1", caught_up=("sweep", 40))
    ledger.credit([], "run-2", caught_up=("sweep", 25))  # a slower, older sweep
    assert ledger.caught_up("sweep") == 40
    assert ledger.caught_up("another") == 0
    ledger.close()


def test_a_ledger_made_before_credited_by_is_migrated(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:  # the table as the previous release created it
        db.execute("CREATE TABLE credited_deposits (tx_hash VARCHAR(64) PRIMARY KEY, "
                   "to_address VARCHAR(34) NOT NULL, from_address VARCHAR(34) NOT NULL, "
                   "amount VARCHAR(40) NOT NULL, token VARCHAR(20) NOT NULL, "
                   "block_number BIGINT NOT NULL, credited_at VARCHAR(40) NOT NULL)")
    deposit = _transfer(random_address())
    assert deposits.credit([deposit], f"sqlite:///{path}", "run-9") == [deposit]
    assert _ledger_rows(f"sqlite:///{path}") == {deposit["tx_hash"]: "run-9"}


# The ledger as the release before credited_by and schema versions created it.
PREVIOUS_RELEASE_DDL = (
    "CREATE TABLE credited_deposits (tx_hash VARCHAR(64) NOT NULL, "
    "to_address VARCHAR(34) NOT NULL, from_address VARCHAR(34) NOT NULL, "
    "amount VARCHAR(40) NOT NULL, token VARCHAR(20) NOT NULL, block_number BIGINT NOT NULL, "
    "credited_at VARCHAR(40) NOT NULL, PRIMARY KEY (tx_hash))",
    "CREATE INDEX ix_credited_deposits_to_address ON credited_deposits (to_address)",
)


def test_a_ledger_of_the_previous_release_is_upgraded(store_and_ledger):
    """Migration step 2 adds credited_by; the old rows stay credited, once."""
    _, url = store_and_ledger
    old = _transfer(random_address(), "7.000001")
    engine = sqlstore.create_engine(sqlstore.parse_url(url))
    try:
        with engine.begin() as conn:
            for statement in PREVIOUS_RELEASE_DDL:
                conn.execute(sa.text(statement))
            conn.execute(sa.text(
                "INSERT INTO credited_deposits VALUES (:h, :to, :frm, :amount, 'USDT', 7, "
                "'2025-01-01T00:00:00+00:00')"),
                {"h": old["tx_hash"], "to": old["to"], "frm": old["from"], "amount": "7.000001"})
        new = _transfer(random_address())
        assert deposits.credit([old, new], url, "run-2") == [new]  # the old one stays once
        assert _ledger_rows(url) == {old["tx_hash"]: None, new["tx_hash"]: "run-2"}
        with engine.connect() as conn:
            assert conn.execute(sa.text(
                "SELECT amount FROM credited_deposits WHERE tx_hash = :h"),
                {"h": old["tx_hash"]}).scalar() == "7.000001"
            assert dict(conn.execute(sa.text(
                "SELECT store, version FROM tronenergy_schema_version")).all()) == {
                deposits.SCHEMA: 2}
        # Opened again (another worker, a later run): nothing left to migrate.
        assert deposits.credit([new], url) == []
    finally:
        engine.dispose()


def test_a_ledger_newer_than_the_code_refuses_to_open(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    assert deposits.credit([_transfer(random_address())], url)
    engine = sqlstore.create_engine(sqlstore.parse_url(url))
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE tronenergy_schema_version SET version = 99"))
    engine.dispose()
    with pytest.raises(sqlstore.StoreError, match="version 99, newer than this code"):
        deposits.credit([_transfer(random_address())], url)
