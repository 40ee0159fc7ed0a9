"""The purchase journal: every purchase, before it is sent, in a store all workers share.

One row per attempt at a purchase identity, appended, never deleted:

- ``sending``: written *before* the request leaves. If nothing follows, nobody
  knows whether the service took it (the worker died, the answer was lost):
  the identity is blocked, in every run, until a person resolves it.
- ``placed``: the service answered with an order id (or a person said so).
- ``refused`` / ``not_placed`` / ``abandoned`` / ``ended``: nothing is bought
  by this attempt (the service refused or never got it; a person said so; a
  ``rebuy`` superseded it; its order failed or was cancelled).

Attempts are numbered per identity under a UNIQUE constraint, so two workers
that decide to buy the same identity at once cannot both write ``sending``:
the second insert fails, and that worker reads the winner's row instead.
Claiming a person-resolved order for a run is a compare-and-set for the same
reason, and one order id is never resolved onto two entries (unless forced).
Works on SQLite (one host) and PostgreSQL (a whole deployment).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, RowMapping

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.errors import TronEnergyProviderError
from airflow_provider_tronenergy.money.guard import Spent
from airflow_provider_tronenergy.purchase_journal.figures import COLUMNS as FIGURES
from airflow_provider_tronenergy.purchase_journal.figures import columns, figures
from airflow_provider_tronenergy.purchase_journal.quoted import column as quoted_column
from airflow_provider_tronenergy.purchase_journal.spend import (
    SpendCheck,
    quoted_sun,
    spent,
)
from airflow_provider_tronenergy.purchase_journal.spend import column as quoted_cost_column
from tronenergy_protocol.ids import ORDER_ID

DEFAULT_FILENAME: Final = "tronenergy_purchases.db"
# An order id as a person types it: 1 to 128 printable ASCII characters (the column's
# length), no spaces; surrounding blanks are dropped first.
ENV_JOURNAL_URL: Final = "TRONENERGY_PURCHASE_JOURNAL"
CONF_KEY: Final = "purchase_journal"
LOCATION: Final = sqlstore.Location(
    ENV_JOURNAL_URL, CONF_KEY, DEFAULT_FILENAME,
    "purchase journal (with the payout journal and the keepers' registry in its database)")
SCHEMA: Final = "purchase_journal"


def migrations(entries: sa.Table) -> dict[int, sqlstore.Step]:
    """``{n: step}`` moving the journal from version ``n - 1`` to ``n``: none yet, the
    first release is version 1 (a later release adds its steps here, from 2)."""
    del entries
    return {}


class EntryState(str, Enum):
    """Where one attempt at a purchase stands."""

    SENDING = "sending"
    PLACED = "placed"
    REFUSED = "refused"
    NOT_PLACED = "not_placed"
    ABANDONED = "abandoned"
    ENDED = "ended"

    def blocks(self) -> bool:
        """Whether a new attempt at the same identity must wait for a person."""
        return self is EntryState.SENDING


class JournalError(TronEnergyProviderError, RuntimeError):
    """The journal refuses an operation (nothing to resolve, unknown identity, ...)."""


class JournalRace(JournalError):
    """Another worker wrote the same attempt first: read again and decide again."""


def order_id_rule(value: object) -> str:
    """The journal's one rule for an order id a person gives: the id, without surrounding blanks."""
    text = value.strip() if isinstance(value, str) else ""
    if not ORDER_ID.fullmatch(text):
        raise JournalError("an order id is 1 to 128 printable ASCII characters, no spaces")
    return text


@dataclass(frozen=True)
class Entry:
    """One attempt at a purchase, as the journal holds it."""

    id: int
    identity: str
    attempt: int
    state: EntryState
    explicit_key: bool
    mode: str
    target_address: str
    description: str
    request: dict[str, Any]
    scope: str
    claimed_by: str | None
    sent_at: float
    rent_hours: Decimal
    valid_until: float | None
    order_id: str | None
    result: dict[str, Any] | None
    updated_at: float
    resolved_by: str | None
    note: str | None
    quoted_energy: int | None = None
    """The energy the price endpoint quoted just before sending (None: sent unquoted)."""

    def valid_for(self, now: float) -> float:
        """Seconds the rented energy stays valid from ``now`` (0 once expired or unknown)."""
        return max(0.0, self.valid_until - now) if self.valid_until is not None else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, for the CLI and logs (amounts stay text)."""
        return {
            "identity": self.identity, "attempt": self.attempt, "state": self.state.value,
            "explicit_key": self.explicit_key, "mode": self.mode,
            "target_address": self.target_address, "description": self.description,
            "request": self.request, "scope": self.scope, "claimed_by": self.claimed_by,
            "sent_at": iso(self.sent_at), "rent_hours": format(self.rent_hours, "f"),
            "valid_until": iso(self.valid_until) if self.valid_until else None,
            "order_id": self.order_id, "updated_at": iso(self.updated_at),
            "resolved_by": self.resolved_by, "note": self.note,
            "quoted_energy": self.quoted_energy,
        }


def iso(ts: float) -> str:
    """A journal time as ISO 8601 in UTC, to the second."""
    from datetime import datetime, timezone

    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="seconds")


def journal_url(explicit: str | None = None) -> str:
    """``explicit``, else ``$TRONENERGY_PURCHASE_JOURNAL``, else ``[tronenergy]
    purchase_journal``, else a SQLite file in ``$AIRFLOW_HOME``."""
    return LOCATION.url(explicit)


def _ms(ts: float) -> int:
    return int(ts * 1000)


class PurchaseJournal:
    """``PurchaseJournal(url)``: record, read and resolve purchases. Thread-safe."""

    def __init__(self, url: str | URL | None = None, *, table_prefix: str = "tronenergy_",
                 schema: str | None = None) -> None:
        self.db = sqlstore.Database(url, LOCATION, schema=schema, table_prefix=table_prefix,
                                    lock_name=f"{table_prefix}purchase_journal", pool_size=2)
        self.url, self.engine = self.db.url, self.db.engine
        self.entries = sa.Table(
            f"{table_prefix}purchase_journal", self.db.metadata,
            sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                      primary_key=True, autoincrement=True),
            sa.Column("identity", sa.String(512), nullable=False),
            sa.Column("attempt", sa.Integer(), nullable=False),
            sa.Column("state", sa.String(16), nullable=False),
            sa.Column("explicit_key", sa.Boolean(), nullable=False),
            sa.Column("mode", sa.String(32), nullable=False),
            sa.Column("target_address", sa.String(64), nullable=False),
            sa.Column("description", sa.Text(), nullable=False),
            sa.Column("request", sa.Text(), nullable=False),
            sa.Column("scope", sa.String(1024), nullable=False),
            sa.Column("claimed_by", sa.String(1024), nullable=True),
            sa.Column("sent_at_ms", sa.BigInteger(), nullable=False),
            sa.Column("rent_hours", sa.String(32), nullable=False),
            sa.Column("valid_until_ms", sa.BigInteger(), nullable=True),
            sa.Column("order_id", sa.String(128), nullable=True),
            sa.Column("result", sa.Text(), nullable=True),
            sa.Column("updated_at_ms", sa.BigInteger(), nullable=False),
            sa.Column("resolved_by", sa.String(256), nullable=True),
            sa.Column("note", sa.Text(), nullable=True),
            *columns(),
            quoted_column(),
            quoted_cost_column(),
            sa.UniqueConstraint("identity", "attempt",
                                name=f"{table_prefix}purchase_journal_attempt_key"),
            sa.Index(f"{table_prefix}purchase_journal_scope", "scope"),
            sa.Index(f"{table_prefix}purchase_journal_state", "state"),
            sa.Index(f"{table_prefix}purchase_journal_sent", "state", "sent_at_ms",
                     *FIGURES),
        )
        self.migrations = migrations(self.entries)

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden."""
        return self.db.safe_url

    def __repr__(self) -> str:
        return f"PurchaseJournal({self.safe_url!r})"

    def close(self) -> None:
        """Release the connection pool."""
        self.db.close()

    # -- plumbing ------------------------------------------------------------------------

    @contextmanager
    def _write(self, *, locked: bool = False) -> Iterator[Connection]:
        self.ensure_schema()
        with self.db.write(locked=locked) as conn:
            yield conn

    def ensure_schema(self) -> None:
        """Create the table on first use, or migrate it; concurrent first uses do it once."""
        self.db.migrate(SCHEMA, [self.entries], self.migrations)

    def _entry(self, row: RowMapping) -> Entry:
        return Entry(
            id=int(row["id"]), identity=row["identity"], attempt=int(row["attempt"]),
            state=EntryState(row["state"]), explicit_key=bool(row["explicit_key"]),
            mode=row["mode"], target_address=row["target_address"],
            description=row["description"], request=json.loads(row["request"]),
            scope=row["scope"], claimed_by=row["claimed_by"],
            sent_at=row["sent_at_ms"] / 1000, rent_hours=Decimal(row["rent_hours"]),
            valid_until=(row["valid_until_ms"] / 1000
                         if row["valid_until_ms"] is not None else None),
            order_id=row["order_id"],
            result=json.loads(row["result"]) if row["result"] else None,
            updated_at=row["updated_at_ms"] / 1000, resolved_by=row["resolved_by"],
            note=row["note"], quoted_energy=row["quoted_energy"])

    def _one(self, conn: Connection, where: Any) -> Entry | None:
        row = conn.execute(
            sa.select(self.entries).where(where)
            .order_by(self.entries.c.attempt.desc()).limit(1)).mappings().first()
        return self._entry(row) if row is not None else None

    def _update(self, entry: Entry, expect: EntryState | None, **values: Any) -> bool:
        values["updated_at_ms"] = _ms(time.time())
        where = self.entries.c.id == entry.id
        if expect is not None:
            where = sa.and_(where, self.entries.c.state == expect.value)
        with self._write() as conn:
            return conn.execute(self.entries.update().where(where).values(**values)).rowcount == 1

    # -- reading -------------------------------------------------------------------------

    def latest(self, identity: str) -> Entry | None:
        """The newest attempt at ``identity``."""
        self.ensure_schema()
        with self.engine.connect() as conn:
            return self._one(conn, self.entries.c.identity == identity)

    def active_in_scope(self, scope: str) -> list[Entry]:
        """Attempts of one task instance that bought or may have bought."""
        self.ensure_schema()
        states = (EntryState.SENDING.value, EntryState.PLACED.value)
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(self.entries).where(
                self.entries.c.scope == scope, self.entries.c.state.in_(states),
            ).order_by(self.entries.c.id)).mappings().all()
        return [self._entry(r) for r in rows]

    def spent(self, roots: tuple[str, ...]) -> Spent:
        """What the attempts under ``roots`` spent or may have spent (:mod:`.spend`)."""
        self.ensure_schema()
        with self.engine.connect() as conn:
            return spent(conn, self.entries, roots)

    def with_prefix(self, prefix: str, *, since: float = 0.0) -> list[Entry]:
        """Attempts whose identity starts with ``prefix``, sent at or after ``since``
        (epoch seconds), newest first: one keeper's purchases for a wallet, or all of them."""
        self.ensure_schema()
        query = sa.select(self.entries).where(
            self.entries.c.identity.startswith(prefix, autoescape=True),
            self.entries.c.sent_at_ms >= _ms(since)).order_by(self.entries.c.id.desc())
        with self.engine.connect() as conn:
            return [self._entry(r) for r in conn.execute(query).mappings().all()]

    def list(self, *, state: EntryState | None = None, identity: str | None = None,
             limit: int = 100) -> list[Entry]:
        """Newest first; ``state`` / ``identity`` narrow it down."""
        self.ensure_schema()
        query = sa.select(self.entries).order_by(self.entries.c.id.desc()).limit(limit)
        if state is not None:
            query = query.where(self.entries.c.state == state.value)
        if identity is not None:
            query = query.where(self.entries.c.identity == identity)
        with self.engine.connect() as conn:
            return [self._entry(r) for r in conn.execute(query).mappings().all()]

    # -- the life of an attempt ------------------------------------------------------------

    def claim(self, identity: str, after: Entry | None, *, scope: str, explicit_key: bool,
              mode: str, target_address: str, description: str, request: dict[str, Any],
              rent_hours: Decimal, quoted_energy: int | None = None,
              quoted_cost: Decimal | None = None, limit: SpendCheck | None = None) -> Entry:
        """Write ``sending`` for the next attempt after ``after``, just before sending
        (``quoted_energy`` and ``quoted_cost``: what the price endpoint quoted, which a
        resolution and a spend limit read). ``limit`` (a spend limit's check) sees what
        its keys spent in the same transaction, one claim at a time, so two workers
        cannot both pass it.

        Raises :class:`JournalRace` when another worker wrote that attempt first.
        """
        now = time.time()
        attempt = (after.attempt if after is not None else 0) + 1
        try:
            with self._write(locked=limit is not None) as conn:
                if limit is not None:
                    limit.check(spent(conn, self.entries, limit.roots))
                if after is not None:  # the newest attempt must still be ``after``
                    newest = self._one(conn, self.entries.c.identity == identity)
                    if newest is None or newest.id != after.id or newest.state != after.state:
                        raise JournalRace(identity)
                conn.execute(self.entries.insert().values(
                    identity=identity, attempt=attempt, state=EntryState.SENDING.value,
                    explicit_key=explicit_key, mode=mode, target_address=target_address,
                    description=description, request=json.dumps(request, sort_keys=True),
                    scope=scope, claimed_by=scope, sent_at_ms=_ms(now),
                    rent_hours=format(rent_hours, "f"), updated_at_ms=_ms(now),
                    quoted_energy=quoted_energy, quoted_sun=quoted_sun(quoted_cost)))
        except sa.exc.IntegrityError:
            raise JournalRace(identity) from None
        entry = self.latest(identity)
        if entry is None or entry.attempt != attempt or entry.scope != scope:
            raise JournalRace(identity)
        return entry

    def record_placed(self, entry: Entry, order_id: str, result: dict[str, Any]) -> None:
        """The service answered with an order: the energy is rented until sent + rent time."""
        self._update(entry, None, state=EntryState.PLACED.value, order_id=order_id,
                     result=json.dumps(result, sort_keys=True), **figures(result),
                     valid_until_ms=_ms(entry.sent_at + float(entry.rent_hours) * 3600))

    def record_refused(self, entry: Entry, reason: str) -> None:
        """The service refused, or provably never got the request: nothing was bought."""
        self._update(entry, EntryState.SENDING, state=EntryState.REFUSED.value,
                     note=reason[:1000])

    def abandon(self, entry: Entry, reason: str) -> bool:
        """Give up on an unknown outcome because the user chose to buy again."""
        return self._update(entry, EntryState.SENDING, state=EntryState.ABANDONED.value,
                            note=reason[:1000])

    def annotate(self, entry: Entry, note: str) -> bool:
        """Keep a note on an attempt without changing what it says (e.g. a person's abort)."""
        text = f"{entry.note}; {note}" if entry.note else note
        return self._update(entry, entry.state, note=text[:1000])

    def mark_ended(self, entry: Entry, status: str) -> bool:
        """Its order failed or was cancelled: the service released the cost."""
        return self._update(entry, EntryState.PLACED, state=EntryState.ENDED.value,
                            note=f"order {entry.order_id} ended {status}")

    def claim_reuse(self, entry: Entry, scope: str) -> bool:
        """Take a person-resolved order for one task instance (once: compare-and-set)."""
        values = {"claimed_by": scope, "updated_at_ms": _ms(time.time())}
        where = sa.and_(self.entries.c.id == entry.id, self.entries.c.claimed_by.is_(None),
                        self.entries.c.state == EntryState.PLACED.value)
        with self._write() as conn:
            return conn.execute(self.entries.update().where(where).values(**values)).rowcount == 1

    def holders(self, order_id: str) -> tuple[Entry, ...]:
        """Every attempt, of any purchase, that holds ``order_id``."""
        self.ensure_schema()
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(self.entries).where(
                self.entries.c.order_id == order_id).order_by(self.entries.c.id)).mappings().all()
        return tuple(self._entry(r) for r in rows)

    def resolve(self, identity: str, *, order_id: str | None = None, not_placed: bool = False,
                by: str | None = None, note: str | None = None, attempt: int | None = None,
                shared: bool = False) -> Entry:
        """A person's answer to an unknown outcome: placed (with its order id) or not placed.

        Records what it is told: the order itself is checked against the service by
        :func:`~airflow_provider_tronenergy.purchase_journal.verify.resolve_placed` (the CLI and
        the Required Action use it). Here, in the same transaction as the write: the
        newest attempt must be unknown (and be ``attempt`` when given), and an order id
        another attempt already holds is refused unless ``shared`` (a forced resolve).
        """
        if (order_id is None) == (not not_placed):
            raise JournalError("resolve with either an order id or not placed, not both")
        if order_id is not None:
            order_id = order_id_rule(order_id)
        values: dict[str, Any] = {"resolved_by": (by or "")[:256] or None, "note": note,
                                  "updated_at_ms": _ms(time.time())}
        with self._write(locked=True) as conn:  # resolves one at a time
            entry = to_resolve(self._one(conn, self.entries.c.identity == identity),
                                    identity, attempt)
            if order_id is not None:
                holder = None if shared else self._one(conn, sa.and_(
                    self.entries.c.order_id == order_id, self.entries.c.id != entry.id))
                if holder is not None:
                    raise JournalError(f"order {order_id} is already {held_by(holder)}")
                values.update(state=EntryState.PLACED.value, order_id=order_id,
                              claimed_by=None,
                              valid_until_ms=_ms(entry.sent_at + float(entry.rent_hours) * 3600))
            else:
                values.update(state=EntryState.NOT_PLACED.value)
            done = conn.execute(self.entries.update().where(
                self.entries.c.id == entry.id,
                self.entries.c.state == EntryState.SENDING.value).values(**values)).rowcount
        if done != 1:
            raise JournalError(f"purchase {identity!r} changed while resolving; look again")
        resolved = self.latest(identity)
        assert resolved is not None
        return resolved


def to_resolve(entry: Entry | None, identity: str, attempt: int | None = None) -> Entry:
    """``entry``, the newest attempt at ``identity``, if it is an unknown outcome to resolve
    (and is ``attempt`` when given)."""
    if entry is None:
        raise JournalError(f"no purchase {identity!r} in the journal")
    if entry.state is not EntryState.SENDING:
        raise JournalError(f"purchase {identity!r} has no unknown outcome to resolve: its "
                           f"latest attempt ({entry.attempt}) is {entry.state.value}")
    if attempt is not None and entry.attempt != attempt:
        raise JournalError(f"purchase {identity!r} changed while resolving (attempt "
                           f"{entry.attempt}, not {attempt}); look again")
    return entry


def held_by(entry: Entry) -> str:
    """Whose order it is, for a refusal: ``held by purchase 'k' (attempt 2, placed)``."""
    return f"held by purchase {entry.identity!r} (attempt {entry.attempt}, {entry.state.value})"


_OPEN: dict[str, PurchaseJournal] = {}


def open_journal(url: str | None = None) -> PurchaseJournal:
    """The process's journal for the configured URL (one engine per URL per process)."""
    resolved = journal_url(url)
    journal = _OPEN.get(resolved)
    if journal is None:
        journal = _OPEN[resolved] = PurchaseJournal(resolved)
    return journal
