"""The payout journal: every payout's signed transaction, written before it is broadcast.

TRON has no nonce: a signed transaction is unique by its txID and can enter a block
only until its ``expiration``. So the journal keeps, per payout attempt, the txID, the
expiration and the signed bytes *before* they leave, and the chain decides the rest
(:mod:`.policy`). One row per attempt at a payout identity, numbered under a UNIQUE
constraint: of two workers that try to start the same attempt, one insert fails, and
that worker follows the winner's transaction instead of signing its own.

It lives in the purchase journal's database (the same URL rule: SQLite in
``$AIRFLOW_HOME`` by default, one shared PostgreSQL for several workers), in a table
and a schema version of its own. Amounts are integer token units kept as text (a
21-digit payout does not fit a BIGINT); no row holds anything secret.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, RowMapping

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.errors import TronEnergyProviderError
from airflow_provider_tronenergy.payout.attempts import Attempt, Claim, PayoutState, Signed
from airflow_provider_tronenergy.payout.lease import Lease, LeaseLost, Leases, lease_table
from airflow_provider_tronenergy.payout.receipts import (
    CONFIRMED_ON,
    KIND_COLUMNS,
    confirmed_on,
    kind_figures,
)
from airflow_provider_tronenergy.purchase_journal.store import LOCATION

__all__ = ["Attempt", "Claim", "PayoutJournal", "PayoutJournalError", "PayoutRace",
           "PayoutState", "Signed", "open_payout_journal"]

SCHEMA: Final = "payout_journal"
CHUNK: Final = 500
"""Rows per statement when reading or writing many payouts: well under SQLite's and
PostgreSQL's bound-parameter limits."""


class PayoutJournalError(TronEnergyProviderError, RuntimeError):
    """The payout journal refuses an operation (nothing to resolve, a changed payout, ...)."""


class PayoutRace(PayoutJournalError):
    """Another worker wrote the same attempt first: read again and follow its transaction."""


RECEIPT_COLUMNS: Final = ("energy_total", "energy_from_stake", "energy_burned",
                          "trx_burned_sun")
"""A judged attempt's receipt figures as integers (``payout.receipts.Outcome``), beside the
receipt's JSON: a period's sums are one indexed ``SUM`` instead of a JSON parse per row."""


def receipt_figures(receipt: dict[str, Any] | None) -> dict[str, int | None]:
    """The receipt columns' values (None for a figure the receipt lacks)."""
    receipt = receipt or {}
    return {name: (value if isinstance(value := receipt.get(name), int)
                   and not isinstance(value, bool) else None) for name in RECEIPT_COLUMNS}


def migrations(attempts: sa.Table, leases: sa.Table) -> dict[int, sqlstore.Step]:
    """``{n: step}`` moving the payout journal from version ``n - 1`` to ``n``: none yet,
    the first release is version 1 (a later release adds its steps here, from 2)."""
    del attempts, leases
    return {}


def _ms(ts: float) -> int:
    return int(ts * 1000)


def _chunks(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for start in range(0, len(items), CHUNK):
        yield items[start:start + CHUNK]


class PayoutJournal:
    """``PayoutJournal(url)``: claim, sign, send and judge payouts. Thread-safe."""

    def __init__(self, url: str | URL | None = None, *, table_prefix: str = "tronenergy_",
                 schema: str | None = None) -> None:
        self.db = sqlstore.Database(url, LOCATION, schema=schema, table_prefix=table_prefix,
                                    lock_name=f"{table_prefix}payout_journal", pool_size=4)
        self.attempts = sa.Table(
            f"{table_prefix}payout_journal", self.db.metadata,
            sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                      primary_key=True, autoincrement=True),
            sa.Column("identity", sa.String(512), nullable=False),
            sa.Column("attempt", sa.Integer(), nullable=False),
            sa.Column("state", sa.String(16), nullable=False),
            sa.Column("batch_id", sa.String(256), nullable=False),
            sa.Column("row", sa.Integer(), nullable=False),
            sa.Column("sender", sa.String(64), nullable=False),
            sa.Column("recipient", sa.String(64), nullable=False),
            sa.Column("token", sa.String(64), nullable=False),
            sa.Column("units", sa.String(40), nullable=False),
            sa.Column("claimed_by", sa.String(1024), nullable=False),
            sa.Column("created_at_ms", sa.BigInteger(), nullable=False),
            sa.Column("updated_at_ms", sa.BigInteger(), nullable=False),
            sa.Column("txid", sa.String(64), nullable=True),
            sa.Column("expiration_ms", sa.BigInteger(), nullable=True),
            sa.Column("ref_block", sa.BigInteger(), nullable=True),
            sa.Column("fee_limit_sun", sa.BigInteger(), nullable=True),
            sa.Column("signed_tx", sa.Text(), nullable=True),
            sa.Column("block_number", sa.BigInteger(), nullable=True),
            sa.Column("receipt", sa.Text(), nullable=True),
            sa.Column("last_answer", sa.Text(), nullable=True),
            sa.Column("resolved_by", sa.String(256), nullable=True),
            sa.Column("note", sa.Text(), nullable=True),
            *(sa.Column(name, sa.BigInteger(), nullable=True) for name in RECEIPT_COLUMNS),
            *(sa.Column(name, sa.BigInteger(), nullable=True) for name in KIND_COLUMNS.values()),
            sa.Column(CONFIRMED_ON, sa.String(16), nullable=True),
            sa.UniqueConstraint("identity", "attempt",
                                name=f"{table_prefix}payout_journal_attempt_key"),
            sa.UniqueConstraint("txid", name=f"{table_prefix}payout_journal_txid_key"),
            sa.Index(f"{table_prefix}payout_journal_batch", "batch_id"),
            sa.Index(f"{table_prefix}payout_journal_state", "state"),
            sa.Index(f"{table_prefix}payout_journal_created", "created_at_ms", "state",
                     *RECEIPT_COLUMNS, "token", "units", *KIND_COLUMNS.values()),
            sa.Index(f"{table_prefix}payout_journal_sender_block", "sender", "block_number"),
        )
        self.lease_table = lease_table(self.db.metadata, table_prefix)
        self.leases = Leases(self.db, self.lease_table, self.ensure_schema)
        self.migrations = migrations(self.attempts, self.lease_table)

    @property
    def safe_url(self) -> str:
        """The URL with any password hidden."""
        return self.db.safe_url

    def __repr__(self) -> str:
        return f"PayoutJournal({self.safe_url!r})"

    def close(self) -> None:
        """Release the connection pool."""
        self.db.close()

    def ensure_schema(self) -> None:
        """Create the table on first use, or migrate it; concurrent first uses do it once."""
        self.db.migrate(SCHEMA, [self.attempts, self.lease_table], self.migrations)

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        self.ensure_schema()
        with self.db.write() as conn:
            yield conn

    def _attempt(self, row: RowMapping) -> Attempt:
        return Attempt(
            id=int(row["id"]), identity=row["identity"], attempt=int(row["attempt"]),
            state=PayoutState(row["state"]), batch_id=row["batch_id"], row=int(row["row"]),
            sender=row["sender"], recipient=row["recipient"], token=row["token"],
            units=int(row["units"]), claimed_by=row["claimed_by"],
            created_at=row["created_at_ms"] / 1000, updated_at=row["updated_at_ms"] / 1000,
            txid=row["txid"], expiration_ms=row["expiration_ms"], ref_block=row["ref_block"],
            fee_limit_sun=row["fee_limit_sun"],
            signed_tx=json.loads(row["signed_tx"]) if row["signed_tx"] else None,
            block_number=row["block_number"],
            receipt=json.loads(row["receipt"]) if row["receipt"] else None,
            last_answer=row["last_answer"], resolved_by=row["resolved_by"], note=row["note"])

    # -- reading -----------------------------------------------------------------------------

    def latest(self, identities: Iterable[str]) -> dict[str, Attempt]:
        """The newest attempt of each identity that has one."""
        return self._newest(identities)

    def _newest(self, identities: Iterable[str]) -> dict[str, Attempt]:  # claim's read-back
        self.ensure_schema()
        wanted = sorted(set(identities))
        newest: dict[str, Attempt] = {}
        with self.db.engine.connect() as conn:
            for chunk in _chunks(wanted):
                rows = conn.execute(sa.select(self.attempts).where(
                    self.attempts.c.identity.in_(chunk))).mappings().all()
                for row in rows:
                    attempt = self._attempt(row)
                    held = newest.get(attempt.identity)
                    if held is None or attempt.attempt > held.attempt:
                        newest[attempt.identity] = attempt
        return newest

    def batch(self, *batch_ids: str) -> list[Attempt]:
        """The newest attempt of every payout journaled under ``batch_ids``, by row."""
        self.ensure_schema()
        with self.db.engine.connect() as conn:
            rows = conn.execute(sa.select(self.attempts).where(
                self.attempts.c.batch_id.in_(sorted(set(batch_ids))))).mappings().all()
        newest: dict[str, Attempt] = {}
        for row in rows:
            attempt = self._attempt(row)
            held = newest.get(attempt.identity)
            if held is None or attempt.attempt > held.attempt:
                newest[attempt.identity] = attempt
        return sorted(newest.values(), key=lambda a: (a.row, a.identity))

    def in_flight(self, sender: str, *, after_block: int | None = None) -> list[Attempt]:
        """Every attempt of ``sender`` signed and not yet judged by the chain, in any batch
        (they may still leave its balance: a batch's pre-flight counts them); with
        ``after_block``, also those judged in a later block (confirmed or failed: a node
        whose answers lag that block does not show them spent yet)."""
        self.ensure_schema()
        c = self.attempts.c
        flying = [s.value for s in PayoutState if s.in_flight()]
        judged = [PayoutState.CONFIRMED.value, PayoutState.FAILED.value]
        queries = [sa.select(self.attempts).where(c.state.in_(flying), c.sender == sender)]
        if after_block is not None:  # two reads, each through its index (state; sender)
            queries.append(sa.select(self.attempts).where(
                c.sender == sender, c.block_number > after_block, c.state.in_(judged)))
        with self.db.engine.connect() as conn:
            rows = {r["id"]: r for q in queries for r in conn.execute(q).mappings().all()}
        return [self._attempt(rows[i]) for i in sorted(rows)]

    def history(self, identity: str) -> list[Attempt]:
        """Every attempt at one payout, oldest first."""
        self.ensure_schema()
        with self.db.engine.connect() as conn:
            rows = conn.execute(sa.select(self.attempts).where(
                self.attempts.c.identity == identity).order_by(self.attempts.c.attempt)
            ).mappings().all()
        return [self._attempt(r) for r in rows]

    def recent(self, *, state: PayoutState | None = None, batch_id: str | None = None,
             limit: int = 100) -> list[Attempt]:
        """Attempts, newest first; ``state`` / ``batch_id`` narrow it down."""
        self.ensure_schema()
        query = sa.select(self.attempts).order_by(self.attempts.c.id.desc()).limit(limit)
        if state is not None:
            query = query.where(self.attempts.c.state == state.value)
        if batch_id is not None:
            query = query.where(self.attempts.c.batch_id == batch_id)
        with self.db.engine.connect() as conn:
            return [self._attempt(r) for r in conn.execute(query).mappings().all()]

    # -- the life of an attempt ----------------------------------------------------------------

    def claim(self, claims: Sequence[Claim], scope: str, *, lease: Lease | None = None
              ) -> tuple[list[Attempt], list[str]]:
        """Write ``signing`` for the next attempt of each claim: ``(won, lost identities)``.

        A claim is lost unless, in the same transaction, the payout's newest attempt is
        still the one it follows (``after``, or none) and, as the database holds it now,
        allows a new signature: a takeover that came too late (the claim's worker
        journaled first) or a newer attempt by another worker makes this claim lose,
        and the worker follows that transaction instead. Two workers inserting the same
        attempt collide on UNIQUE (identity, attempt): one wins.

        With the sender's ``lease`` (:mod:`.lease`), the same transaction renews it, and
        :class:`~.lease.LeaseLost` (nothing written) if it lapsed or another holds it.
        """
        now = _ms(time.time())

        def values(c: Claim) -> dict[str, Any]:
            return {"identity": c.identity, "attempt": (c.after.attempt if c.after else 0) + 1,
                    "state": PayoutState.SIGNING.value, "batch_id": c.batch_id, "row": c.row,
                    "sender": c.sender, "recipient": c.recipient, "token": c.token,
                    "units": str(c.units), "claimed_by": scope[:1024],
                    "created_at_ms": now, "updated_at_ms": now}

        def held(conn: Connection) -> None:
            if lease is not None and not self.leases.renew_in(conn, lease):
                raise LeaseLost(f"the lease on {lease.sender} lapsed and another worker may "
                                "hold it: nothing was signed; a retry reads the chain again")

        lost: list[str] = []
        try:
            with self._write() as conn:
                held(conn)
                for chunk in _chunks(claims):
                    fresh = self._still_next(conn, chunk)
                    lost.extend(c.identity for c in chunk if c not in fresh)
                    if fresh:
                        conn.execute(self.attempts.insert(), [values(c) for c in fresh])
        except sa.exc.IntegrityError:
            lost = []
            for claim in claims:
                try:
                    with self._write() as conn:
                        held(conn)
                        if self._still_next(conn, [claim]):
                            conn.execute(self.attempts.insert().values(**values(claim)))
                        else:
                            lost.append(claim.identity)
                except sa.exc.IntegrityError:
                    lost.append(claim.identity)
        newest = self._newest(c.identity for c in claims if c.identity not in lost)
        won = [a for a in newest.values()
               if a.state is PayoutState.SIGNING and a.claimed_by == scope[:1024]]
        lost.extend(c.identity for c in claims
                    if c.identity not in lost and c.identity not in {a.identity for a in won})
        return won, lost

    def _still_next(self, conn: Connection, claims: Sequence[Claim]) -> list[Claim]:
        """The claims whose ``after`` is still their payout's newest attempt, in a state
        that allows a new signature (read in ``conn``'s transaction)."""
        c = self.attempts.c
        rows = conn.execute(sa.select(c.id, c.identity, c.attempt, c.state).where(
            c.identity.in_([claim.identity for claim in claims]))).all()
        newest: dict[str, Any] = {}
        for row in rows:
            if row.identity not in newest or row.attempt > newest[row.identity].attempt:
                newest[row.identity] = row
        fresh = []
        for claim in claims:
            held = newest.get(claim.identity)
            if claim.after is None:
                ok = held is None
            else:
                ok = (held is not None and held.id == claim.after.id
                      and PayoutState(held.state).may_sign_next())
            if ok:
                fresh.append(claim)
        return fresh

    def record_signed(self, signed: Sequence[Signed]) -> tuple[list[Signed], list[Signed]]:
        """Journal each signed transaction, only while its claim is still this worker's:
        ``(journaled, not journaled)``. Never broadcast one that was not journaled.

        A txID another payout already holds (the same recipient, amount and second) is
        not journaled either: the caller signs it again with another timestamp.
        """
        done: list[Signed] = []
        refused: list[Signed] = []
        for chunk in _chunks(signed):
            try:
                with self._write() as conn:
                    kept = [s for s in chunk if self._record_signed(conn, s)]
                done.extend(kept)  # only once the transaction committed
            except sa.exc.IntegrityError:
                for one in chunk:
                    try:
                        with self._write() as conn:
                            if self._record_signed(conn, one):
                                done.append(one)
                    except sa.exc.IntegrityError:
                        pass
        journaled = {s.attempt.id for s in done}
        refused.extend(s for s in signed if s.attempt.id not in journaled)
        return done, refused

    def _record_signed(self, conn: Connection, s: Signed) -> bool:
        c = self.attempts.c
        return conn.execute(self.attempts.update().where(
            c.id == s.attempt.id, c.state == PayoutState.SIGNING.value,
            c.claimed_by == s.attempt.claimed_by).values(
            state=PayoutState.SIGNED.value, txid=s.txid, expiration_ms=s.expiration_ms,
            ref_block=s.ref_block, fee_limit_sun=s.fee_limit_sun,
            signed_tx=json.dumps(s.signed_tx, sort_keys=True),
            updated_at_ms=_ms(time.time()))).rowcount == 1

    def _move(self, pairs: Sequence[tuple[int, dict[str, Any]]],
              expect: Sequence[PayoutState]) -> int:
        """Apply ``values`` to each attempt id still in one of ``expect``; how many moved."""
        moved = 0
        states = [s.value for s in expect]
        now = _ms(time.time())
        for chunk in _chunks(pairs):
            with self._write() as conn:
                for attempt_id, values in chunk:
                    moved += conn.execute(self.attempts.update().where(
                        self.attempts.c.id == attempt_id, self.attempts.c.state.in_(states))
                        .values(updated_at_ms=now, **values)).rowcount
        return moved

    def mark_sent(self, attempts: Sequence[Attempt], answer: str = "accepted") -> int:
        """The node accepted these (or already had them)."""
        return self._move([(a.id, {"state": PayoutState.SENT.value, "last_answer": answer})
                           for a in attempts], [PayoutState.SIGNED])

    def note_answers(self, answers: Sequence[tuple[Attempt, str]]) -> int:
        """Keep the node's last answer to a broadcast (a refusal, no answer): the attempt
        stays what it was; only the chain decides it."""
        return self._move([(a.id, {"last_answer": text[:1000]}) for a, text in answers],
                          [PayoutState.SIGNED, PayoutState.SENT])

    def record_outcomes(self, outcomes: Sequence[tuple[Attempt, bool, int, dict[str, Any]]]
                        ) -> int:
        """``(attempt, succeeded, block, receipt)``: confirmed or failed on chain; the
        receipt's ``confirmed_on`` (:data:`CONFIRMATIONS`) says on which block. The fee by
        kind (:data:`KIND_COLUMNS`) is split for the attempt as journaled: its token and
        signed transaction read back, not the caller's copy (one claimed before signing
        carries no signatures)."""
        journaled = self._journaled(a for a, *_ in outcomes)
        pairs = []
        for a, ok, block, receipt in outcomes:
            held = journaled.get(a.id, a)
            pairs.append((a.id, {
                "state": (PayoutState.CONFIRMED if ok else PayoutState.FAILED).value,
                "block_number": block, "receipt": json.dumps(receipt, sort_keys=True),
                **receipt_figures(receipt), **kind_figures(receipt, held.token, held.signatures),
                CONFIRMED_ON: confirmed_on(receipt)}))
        return self._move(pairs, [PayoutState.SIGNED, PayoutState.SENT])

    def _journaled(self, attempts: Iterable[Attempt]) -> dict[int, Attempt]:
        """``attempts`` by id with their token and signed transaction as journaled (fixed
        once signed, in every state a judged attempt moves from)."""
        given, c = {a.id: a for a in attempts}, self.attempts.c
        self.ensure_schema()
        with self.db.engine.connect() as conn:
            rows = [r for chunk in _chunks(sorted(given)) for r in conn.execute(
                sa.select(c.id, c.token, c.signed_tx).where(c.id.in_(chunk)))]
        return {r.id: replace(given[r.id], token=r.token, signed_tx=json.loads(r.signed_tx)
                              if r.signed_tx else None) for r in rows}

    def mark_expired(self, attempts: Sequence[Attempt], proof: str) -> int:
        """These can never execute (judged on a solidified block past their expiration)."""
        return self._move([(a.id, {"state": PayoutState.EXPIRED.value, "note": proof[:1000]})
                           for a in attempts], [PayoutState.SIGNED, PayoutState.SENT])

    def take_over(self, attempts: Sequence[Attempt], why: str) -> int:
        """Stale claims that never signed: abandoned (their worker can no longer journal)."""
        return self._move([(a.id, {"state": PayoutState.ABANDONED.value, "note": why[:1000]})
                           for a in attempts], [PayoutState.SIGNING])

    def resolve(self, identity: str, *, resend: bool, by: str | None,
                note: str | None = None, attempt: int | None = None) -> Attempt:
        """A person's answer to a payout that failed on chain: pay it again with a new
        transaction (``resend``), or not at all. Only a ``failed`` newest attempt."""
        history = self.history(identity)
        if not history:
            raise PayoutJournalError(f"no payout {identity!r} in the journal")
        newest = history[-1]
        if newest.state is not PayoutState.FAILED:
            raise PayoutJournalError(
                f"payout {identity!r} has nothing to resolve: its latest attempt "
                f"({newest.attempt}) is {newest.state.value}")
        if attempt is not None and attempt != newest.attempt:
            raise PayoutJournalError(f"payout {identity!r} changed (attempt {newest.attempt}, "
                                     f"not {attempt}); look again")
        values = {"state": (PayoutState.RESEND if resend else PayoutState.CANCELLED).value,
                  "resolved_by": (by or "")[:256] or None, "note": (note or "")[:1000] or None}
        if self._move([(newest.id, values)], [PayoutState.FAILED]) != 1:
            raise PayoutJournalError(f"payout {identity!r} changed while resolving; look again")
        return self.history(identity)[-1]


_OPEN: dict[str, PayoutJournal] = {}


def open_payout_journal(url: str | None = None) -> PayoutJournal:
    """The process's payout journal for the configured URL (one engine per URL)."""
    resolved = LOCATION.url(url)
    journal = _OPEN.get(resolved)
    if journal is None:
        journal = _OPEN[resolved] = PayoutJournal(resolved)
    return journal
