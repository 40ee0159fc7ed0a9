"""One wallet, one pre-flight at a time: a lease per sender in the payout journal's database.

Two batches from one hot wallet (an hourly schedule that overlaps, two DAGs sharing a
wallet) would otherwise both read the same balance and energy before either signs, and
both pass: on chain the later transfers REVERT, or burn TRX for energy the first used.
So the pre-flight's reads and the pass's signing are done under a lease on the sender:
a row per sender address naming its holder (the task try and process), a token new at
every acquisition, and an expiry on the database's clock. The holder renews it while it
works (every third of its length); a killed worker's lease lapses by itself. The claim of
the payouts (:meth:`~.journal.PayoutJournal.claim`) renews it in the same transaction and
fails if it is no longer this holder's: a holder that stalled past its lease signs nothing
once another took the wallet. Released once the pass's transactions are journaled as
signed: from then on the next holder's pre-flight counts them as in flight.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.errors import Retryable

DEFAULT_LEASE_S: Final = 60
"""A lease's length; renewed every third of it while held."""
DEFAULT_WAIT_S: Final = 300
"""How long a pass waits for another holder's lease before failing retryably."""
POLL_S: Final = 1.0


class WalletBusy(Retryable, RuntimeError):
    """Another worker holds the sender's lease (its pre-flight and signing); nothing was
    signed here, and a later try reads the chain again."""


class LeaseLost(WalletBusy):
    """This worker's lease lapsed and another took the wallet: the claim wrote nothing."""


@dataclass(frozen=True)
class Lease:
    """One holder's hold on one sender, as acquired (``token`` is new every acquisition)."""

    sender: str
    holder: str
    token: str
    length_ms: int
    expires_at_ms: int


@dataclass(frozen=True)
class Held:
    """Who holds a sender now (for the message naming it)."""

    holder: str
    expires_at_ms: int
    now_ms: int


def lease_table(metadata: sa.MetaData, table_prefix: str) -> sa.Table:
    """``<prefix>payout_lease``: one row per sender while a holder holds it."""
    return sa.Table(
        f"{table_prefix}payout_lease", metadata,
        sa.Column("sender", sa.String(64), primary_key=True),
        sa.Column("holder", sa.String(1024), nullable=False),
        sa.Column("token", sa.String(64), nullable=False),
        sa.Column("acquired_at_ms", sa.BigInteger(), nullable=False),
        sa.Column("expires_at_ms", sa.BigInteger(), nullable=False),
    )


def db_now_ms(conn: Connection) -> int:
    """The database's clock (PostgreSQL's, shared by every host; SQLite lives on one)."""
    if conn.dialect.name == "postgresql":
        return int(conn.execute(sa.text(
            "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)")).scalar_one())
    return int(time.time() * 1000)


class Leases:
    """Acquire, renew, check and release sender leases in one store's database."""

    def __init__(self, db: sqlstore.Database, table: sa.Table,
                 ensure_schema: Callable[[], None]) -> None:
        self.db, self.table, self.ensure_schema = db, table, ensure_schema

    def acquire(self, sender: str, holder: str, length_s: float) -> Lease | Held:
        """The lease, if nobody holds ``sender`` (or its lease lapsed); else who holds it."""
        self.ensure_schema()
        length_ms = int(length_s * 1000)
        token = secrets.token_hex(16)
        t = self.table.c
        with self.db.write() as conn:
            now = db_now_ms(conn)
            values = {"holder": holder[:1024], "token": token, "acquired_at_ms": now,
                      "expires_at_ms": now + length_ms}
            taken = conn.execute(self.table.update().where(
                t.sender == sender, t.expires_at_ms <= now).values(**values)).rowcount == 1
            if not taken:
                taken = conn.execute(self.db.insert(self.table).values(
                    sender=sender, **values).on_conflict_do_nothing()).rowcount == 1
            if taken:
                return Lease(sender, holder[:1024], token, length_ms, now + length_ms)
            row = conn.execute(sa.select(t.holder, t.expires_at_ms).where(
                t.sender == sender)).one_or_none()
        if row is None:  # released between the two statements: look again
            return self.acquire(sender, holder, length_s)
        return Held(row.holder, int(row.expires_at_ms), now)

    def renew_in(self, conn: Connection, lease: Lease) -> bool:
        """In ``conn``'s transaction: extend ``lease`` if it is still held (not lapsed, not
        taken); the row stays locked to this transaction. False: it is not this holder's."""
        t = self.table.c
        now = db_now_ms(conn)
        return conn.execute(self.table.update().where(
            t.sender == lease.sender, t.token == lease.token, t.expires_at_ms > now).values(
            expires_at_ms=now + lease.length_ms)).rowcount == 1

    def renew(self, lease: Lease) -> bool:
        """Extend a held lease (the holder's heartbeat)."""
        with self.db.write() as conn:
            return self.renew_in(conn, lease)

    def release(self, lease: Lease) -> bool:
        """Give the wallet back (only this acquisition's row is removed)."""
        t = self.table.c
        with self.db.write() as conn:
            return conn.execute(self.table.delete().where(
                t.sender == lease.sender, t.token == lease.token)).rowcount == 1

    def holder(self, sender: str) -> str | None:
        """Who holds ``sender`` now (a lapsed lease is nobody's)."""
        self.ensure_schema()
        t = self.table.c
        with self.db.engine.connect() as conn:
            row = conn.execute(sa.select(t.holder).where(
                t.sender == sender, t.expires_at_ms > db_now_ms(conn))).one_or_none()
        return None if row is None else str(row.holder)


def check_settings(length_s: float, wait_s: float) -> None:
    """A lease of 3 s to 1 h (renewed every third of it), a wait of 0 to 24 h."""
    if not 3 <= length_s <= 3600:
        raise ValueError("wallet_lease_seconds must be 3 to 3600")
    if not 0 <= wait_s <= 86_400:
        raise ValueError("wallet_wait_seconds must be 0 to 86400")


@contextmanager
def hold(leases: Leases, sender: str, holder: str, *, length_s: float = DEFAULT_LEASE_S,
         wait_s: float = DEFAULT_WAIT_S, poll_s: float = POLL_S,
         log: Any = None) -> Iterator[Lease]:
    """Hold ``sender``'s lease for the block: wait up to ``wait_s`` for another holder
    (:class:`WalletBusy` after), renew it every third of ``length_s`` meanwhile, release
    it on the way out (also on an error)."""
    check_settings(length_s, wait_s)
    end = time.monotonic() + wait_s
    said = False
    while not isinstance(got := leases.acquire(sender, holder, length_s), Lease):
        if time.monotonic() >= end:
            raise WalletBusy(
                f"the sender {sender} is busy: {got.holder} holds its pre-flight and signing "
                f"(lease for {max(0, got.expires_at_ms - got.now_ms) / 1000:.0f} s more); "
                f"waited {wait_s:g} s, nothing was signed; a retry waits again")
        if log is not None and not said:
            log.info("the sender %s is held by %s (its pre-flight and signing): waiting up "
                     "to %g s", sender, got.holder, wait_s)
            said = True
        time.sleep(min(poll_s, max(0.0, end - time.monotonic())))
    stop = threading.Event()

    def heartbeat() -> None:
        while not stop.wait(length_s / 3):
            try:
                if not leases.renew(got):
                    if log is not None:  # the claim refuses: nothing more is signed
                        log.warning("the lease on %s lapsed and was not renewed", sender)
                    return
            except Exception as exc:  # a missed beat; the claim checks anyway
                if log is not None:
                    log.warning("could not renew the lease on %s: %s", sender,
                                type(exc).__name__)

    beat = threading.Thread(target=heartbeat, name="tronenergy-wallet-lease", daemon=True)
    beat.start()
    try:
        yield got
    finally:
        stop.set()
        beat.join()
        try:
            leases.release(got)
        except Exception:  # it lapses by itself
            if log is not None:
                log.warning("could not release the lease on %s: it lapses in %g s",
                            sender, length_s)
