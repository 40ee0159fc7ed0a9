"""A node connection's pace, kept where every sharer reaches it: the purchase journal's database.

A process-local limiter keeps one process under the rate; the tasks on several workers,
the triggerer and the API server that share one ``tron_node`` key would each keep to it
and together go over it. So the slots live in one row per node key, in the database the
purchase journal (and the payout journal) already make every host share, found by the
same rule (``TRONENERGY_PURCHASE_JOURNAL`` / ``[tronenergy] purchase_journal``, else SQLite
in ``$AIRFLOW_HOME``; ``sqlstore.Database`` refuses what it refuses for the journal).

Each request reserves the next slot in one write: ``slot = max(next_at, now)``,
``next_at = slot + 1/rate`` (one ``UPDATE ... RETURNING`` on PostgreSQL, on the database's
clock, which every host shares; ``BEGIN IMMEDIATE`` on SQLite, one host's clock), then
sleeps until its slot. A 429 or 503 moves ``next_at`` to at least ``now + Retry-After``
for everyone. The row's key is a hash of the node URL and the API key: two connection ids
on one key share one pace, and neither the URL (some gateways put their key in it) nor
the key is stored.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from decimal import ROUND_CEILING, Decimal
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.node.pace import PaceTooFar

LOCATION: Final = sqlstore.Location("TRONENERGY_PURCHASE_JOURNAL", "purchase_journal",
                                    "tronenergy_purchases.db",
                                    "purchase journal (the node pace in its database)")
"""The purchase journal's location (``purchase_journal.store.LOCATION``, held equal by a test;
this room sits below the journal's, which imports the hooks)."""
STORE: Final = "node_pace"
MAX_RATE: Final = Decimal(1000)
US: Final = 1_000_000
_PG_NOW: Final = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT)"


def pace_key(url: str, api_key: str | None) -> str:
    """The row of a node URL and key: a SHA-256, from which neither can be read back."""
    raw = b"\0".join((b"tronenergy node pace", url.rstrip("/").encode(),
                      (api_key or "").encode()))
    return hashlib.sha256(raw).hexdigest()


def checked_rate(value: Decimal) -> Decimal:
    """A rate a pace can keep: above 0, at most :data:`MAX_RATE` requests a second."""
    if not isinstance(value, Decimal) or not value.is_finite() or not 0 < value <= MAX_RATE:
        raise ValueError(f"requests_per_second must be above 0 and at most {MAX_RATE}, "
                         f"got {value}")
    return value


def step_us(rate: Decimal) -> int:
    """Microseconds between two slots at ``rate`` (rounded up: never faster)."""
    return int((Decimal(US) / checked_rate(rate)).to_integral_value(ROUND_CEILING))


class PaceStore:
    """The ``<prefix>node_pace`` table: one row per node key. Thread-safe."""

    def __init__(self, url: str | URL | None = None, *,
                 table_prefix: str = "tronenergy_") -> None:
        self.db = sqlstore.Database(url, LOCATION, table_prefix=table_prefix,
                                    lock_name=f"{table_prefix}{STORE}", pool_size=4)
        self.table = sa.Table(
            f"{table_prefix}{STORE}", self.db.metadata,
            sa.Column("pace_key", sa.String(64), primary_key=True),
            sa.Column("next_at_us", sa.BigInteger(), nullable=False),
            sa.Column("slowed_until_us", sa.BigInteger(), nullable=False),
            sa.Column("taken", sa.BigInteger(), nullable=False),
            sa.Column("slowed", sa.BigInteger(), nullable=False),
        )
        self._rows: set[str] = set()
        self._lock = threading.Lock()
        # SQLite's busy handler polls with growing sleeps: threads of one process that
        # contend for its write lock wait up to seconds in the tail. They queue here
        # instead, so only processes meet in SQLite (PostgreSQL queues row locks itself).
        self._serial = threading.Lock() if self.db.backend == "sqlite" else None

    def __repr__(self) -> str:
        return f"PaceStore({self.db.safe_url!r})"

    def close(self) -> None:
        self.db.close()

    def _ready(self, key: str) -> None:
        """The tables, and ``key``'s row, exist (once per process)."""
        if key in self._rows:
            return
        self.db.migrate(STORE, [self.table], {})
        with self.db.write() as conn:
            conn.execute(self.db.insert(self.table).values(
                pace_key=key, next_at_us=0, slowed_until_us=0, taken=0,
                slowed=0).on_conflict_do_nothing())
        with self._lock:
            self._rows.add(key)

    def _now_us(self, conn: Connection) -> int:
        if self.db.backend == "postgresql":
            return int(conn.execute(sa.text(f"SELECT {_PG_NOW}")).scalar_one())
        return time.time_ns() // 1000

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        if self._serial is None:
            with self.db.write() as conn:
                yield conn
            return
        with self._serial, self.db.write() as conn:
            yield conn

    def reserve(self, key: str, step: int, within_us: int) -> tuple[int, bool]:
        """Reserve ``key``'s next slot unless it is more than ``within_us`` away: the
        microseconds until the slot, and whether it was taken."""
        self._ready(key)
        name = self.db.engine.dialect.identifier_preparer.format_table(self.table)
        with self._write() as conn:
            if self.db.backend == "postgresql":
                row = conn.execute(sa.text(
                    f"UPDATE {name} SET next_at_us = GREATEST(next_at_us, {_PG_NOW}) + :step, "
                    "taken = taken + 1 WHERE pace_key = :key AND "
                    f"GREATEST(next_at_us, {_PG_NOW}) <= {_PG_NOW} + :within "
                    f"RETURNING next_at_us - :step - {_PG_NOW}"),
                    {"key": key, "step": step, "within": within_us}).one_or_none()
                if row is not None:
                    return max(0, int(row[0])), True
                now = self._now_us(conn)
            else:
                now = self._now_us(conn)
                t = self.table.c
                next_at = int(conn.execute(sa.select(t.next_at_us).where(
                    t.pace_key == key)).scalar_one())
                slot = max(next_at, now)
                if slot - now <= within_us:
                    conn.execute(self.table.update().where(t.pace_key == key).values(
                        next_at_us=slot + step, taken=t.taken + 1))
                    return slot - now, True
            later = int(conn.execute(sa.select(self.table.c.next_at_us).where(
                self.table.c.pace_key == key)).scalar_one())
            return max(0, later - now), False

    def push(self, key: str, seconds: float) -> None:
        """No slot of ``key`` before ``seconds`` from now (a 429 or 503 answered)."""
        self._ready(key)
        t = self.table.c
        with self._write() as conn:
            until = self._now_us(conn) + int(seconds * US)
            conn.execute(self.table.update().where(t.pace_key == key).values(
                next_at_us=sa.case((t.next_at_us < until, until), else_=t.next_at_us),
                slowed_until_us=sa.case((t.slowed_until_us < until, until),
                                        else_=t.slowed_until_us),
                slowed=t.slowed + 1))

    def row(self, key: str) -> dict[str, int] | None:
        """``key``'s row as stored (tests, benches, a person looking)."""
        self.db.migrate(STORE, [self.table], {})
        with self.db.engine.connect() as conn:
            found = conn.execute(sa.select(self.table).where(
                self.table.c.pace_key == key)).mappings().one_or_none()
        return None if found is None else {k: int(v) for k, v in found.items()
                                           if k != "pace_key"}


class SqlPace:
    """One node key's :class:`~..node.pace.Pace` in a :class:`PaceStore`."""

    def __init__(self, store: PaceStore, key: str, rate: Decimal) -> None:
        self.store, self.key, self.rate = store, key, checked_rate(rate)
        self.step = step_us(rate)

    def __repr__(self) -> str:
        return f"SqlPace(rate={self.rate}, store={self.store!r})"

    def take(self, within: float) -> float:
        """Reserve this request's slot and sleep until it (:class:`PaceTooFar` past
        ``within``: nothing reserved)."""
        wait_us, taken = self.store.reserve(self.key, self.step, int(within * US))
        if not taken:
            raise PaceTooFar(wait_us / US, within)
        if wait_us > 0:
            time.sleep(wait_us / US)
        return wait_us / US

    def slow(self, seconds: float) -> None:
        """Every sharer's next slot at least ``seconds`` from now."""
        self.store.push(self.key, seconds)


_OPEN: dict[str, PaceStore] = {}
_OPEN_LOCK = threading.Lock()


def open_pace_store(url: str | None = None) -> PaceStore:
    """The process's pace store for the journal's URL (one engine per URL per process)."""
    resolved = LOCATION.url(url)
    with _OPEN_LOCK:
        store = _OPEN.get(resolved)
        if store is None:
            store = _OPEN[resolved] = PaceStore(resolved)
        return store


def connection_pace(url: str, api_key: str | None, rate: Decimal,
                    store_url: str | None = None) -> SqlPace:
    """The shared pace of a node connection (its URL and key) at ``rate``."""
    return SqlPace(open_pace_store(store_url), pace_key(url, api_key), rate)
