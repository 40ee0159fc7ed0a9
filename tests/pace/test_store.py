"""The pace's slots in the store: spaced by the rate, shared by every holder of the row,
pushed back by a 429 for all; on SQLite and PostgreSQL; no URL or key stored."""

from __future__ import annotations

from decimal import Decimal

import pytest
import sqlalchemy as sa

from airflow_provider_tronenergy.node.pace import PaceTooFar
from airflow_provider_tronenergy.pace.store import (
    LOCATION,
    PaceStore,
    SqlPace,
    checked_rate,
    pace_key,
    step_us,
)
from airflow_provider_tronenergy.purchase_journal.store import LOCATION as JOURNAL_LOCATION

URL = "https://api.trongrid.io/key-in-path-7f3e9a"
API_KEY = "node-key-1d2c3b4a-5555-4bd1-9a3e-0badc0ffee00"
SECOND = 1_000_000


def stores(db: tuple[str, str], count: int = 2) -> list[PaceStore]:
    """Independent stores on one database, each its own engine (as separate processes)."""
    url, prefix = db
    return [PaceStore(url, table_prefix=prefix) for _ in range(count)]


def test_the_pace_lives_where_the_purchase_journal_does() -> None:
    """The same rule finds both (its name, what an error calls the store, may differ)."""
    assert (LOCATION.env, LOCATION.conf_key, LOCATION.filename) == (
        JOURNAL_LOCATION.env, JOURNAL_LOCATION.conf_key, JOURNAL_LOCATION.filename)


def test_slots_are_shared_by_every_holder_of_the_row(pace_db: tuple[str, str]) -> None:
    """Two stores (two workers) reserving one key's slots at 1 a second: each slot a
    second after the last, whichever store took it; none further than asked is taken."""
    first, second = stores(pace_db)
    key = pace_key(URL, API_KEY)
    waits = [store.reserve(key, SECOND, 60 * SECOND) for store in (first, second, first)]
    assert [taken for _, taken in waits] == [True, True, True]
    # the calls take far less than a second: the slots are ~0, ~1 and ~2 s away
    assert waits[0][0] < 0.5 * SECOND < waits[1][0] < 1.5 * SECOND < waits[2][0] <= 2 * SECOND
    wait, taken = second.reserve(key, SECOND, SECOND // 2)
    assert not taken and wait > 2 * SECOND  # too far: not taken, nothing spent
    assert first.row(key) == {"next_at_us": first.row(key)["next_at_us"],  # type: ignore[index]
                              "slowed_until_us": 0, "taken": 3, "slowed": 0}
    for store in (first, second):
        store.close()


def test_a_429_pushes_every_sharer_back(pace_db: tuple[str, str]) -> None:
    first, second = stores(pace_db)
    key = pace_key(URL, API_KEY)
    told, other = SqlPace(first, key, Decimal(15)), SqlPace(second, key, Decimal(15))
    assert told.take(5.0) < 1.0
    told.slow(30.0)  # a 429 with Retry-After: 30
    with pytest.raises(PaceTooFar) as info:
        other.take(5.0)
    assert info.value.wait > 25
    row = second.row(key)
    assert row is not None and row["slowed"] == 1 and row["taken"] == 1
    assert row["next_at_us"] == row["slowed_until_us"]
    for store in (first, second):
        store.close()


def test_keys_are_per_url_and_key_and_hold_neither(pace_db: tuple[str, str]) -> None:
    """Two connection ids on one URL and key share a row; another key has its own. The
    table holds a hash: neither the URL (a gateway's key may be in it) nor the key."""
    [store] = stores(pace_db, 1)
    assert pace_key(URL, API_KEY) == pace_key(URL + "/", API_KEY)
    assert pace_key(URL, API_KEY) != pace_key(URL, API_KEY + "x") != pace_key(URL, None)
    for key in (pace_key(URL, API_KEY), pace_key(URL, None)):
        SqlPace(store, key, Decimal(50)).take(5.0)
        store.push(key, 0.01)
    with store.db.engine.connect() as conn:
        dump = repr(conn.execute(sa.select(store.table)).all())
        dump += repr(conn.execute(sa.select(store.db.versions)).all())
    assert "key-in-path" not in dump and "trongrid" not in dump and API_KEY not in dump
    assert "node-key" not in dump and len(dump) > 100
    assert API_KEY not in repr(SqlPace(store, pace_key(URL, API_KEY), Decimal(1)))
    store.close()


@pytest.mark.parametrize("rate", ["0", "-1", "1000.5", "NaN"])
def test_a_rate_out_of_range_is_refused(rate: str) -> None:
    with pytest.raises(ValueError, match="requests_per_second must be above 0"):
        checked_rate(Decimal(rate))


def test_slots_round_up_never_faster() -> None:
    assert step_us(Decimal(15)) == 66_667 and step_us(Decimal("0.5")) == 2_000_000
