"""The credited-deposits ledger: what the chain proved, credited once per ``(tx_hash, log)``.

:meth:`DepositLedger.credit` is the one write of a credit, for both paths that find
deposits (a stored callback proven on chain, :mod:`.sweep`; a chain scan): an insert
keyed by the chain's key, ``ON CONFLICT DO NOTHING``, so whichever path, worker or run
comes second credits nothing, without reading first. Amounts, sender, block and time
are the chain's (:class:`~airflow_provider_tronenergy.node.transfers.ChainTransfer`),
never a callback's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from types import TracebackType
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore
from airflow_provider_tronenergy.deposits import claims as claims_of
from airflow_provider_tronenergy.deposits import registrations
from airflow_provider_tronenergy.deposits.registrations import Registration
from airflow_provider_tronenergy.deposits.scan import checkpoint
from airflow_provider_tronenergy.deposits.scan.tokens import MAX_DECIMALS
from airflow_provider_tronenergy.deposits.schema import (
    CONSUMER,
    CREDITED,
    LOCATION,
    MIGRATIONS,
    OFFSETS,
    SCHEMA,
    SOURCES,
    TABLES,
)
from airflow_provider_tronenergy.node.transfers import TRX, ChainTransfer
from tronenergy_protocol.address import is_valid_address
from tronenergy_protocol.numbers import units_text

if TYPE_CHECKING:
    from airflow_provider_tronenergy.callbacks.events import StoredTransfer
    from airflow_provider_tronenergy.callbacks.store import CallbackStore
    from airflow_provider_tronenergy.deposits.proof import Prover, Verdict
    from airflow_provider_tronenergy.deposits.sweep import ProofBudget

DECIMALS = 6
"""TRX (sun) and USDT (micro-units) both have 6; another token's credit is written in the
decimals its contract answers (``deposits.scan.tokens``): ``amount`` is ``units / 10**d``."""


@dataclass(frozen=True)
class Credit:
    """One ledger row: a deposit credited, with where on chain it was read."""

    tx_hash: str
    log_index: int
    """The log's position in its receipt (0 for TRX)."""
    to_address: str
    from_address: str
    amount: str
    units: int
    token: str
    contract: str | None
    block_number: int
    block_timestamp_ms: int
    source: str
    """``callback`` or ``scan``: which path saw it first."""
    credited_at: str
    credited_by: str | None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe; units as text."""
        return {"tx_hash": self.tx_hash, "log_index": self.log_index, "to": self.to_address,
                "from": self.from_address, "amount": self.amount, "token": self.token,
                "units": str(self.units),
                "contract": self.contract, "block_number": self.block_number,
                "block_timestamp_ms": self.block_timestamp_ms, "source": self.source,
                "credited_at": self.credited_at,
                "credited_by": self.credited_by}


class DepositLedger:
    """``DepositLedger(url=None)``: credit each deposit the chain proves, once.

    :param url: a SQLAlchemy URL (SQLite or PostgreSQL); None resolves it as the
        package says. The tables are created (or migrated) on first use; the schema
        version sits in ``tronenergy_schema_version``.
    """

    def __init__(self, url: str | None = None) -> None:
        self.url = LOCATION.open_url(url)

    def __repr__(self) -> str:
        return f"DepositLedger({sqlstore.safe_url(self.url)})"

    def __enter__(self) -> DepositLedger:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @cached_property
    def db(self) -> sqlstore.Database:
        """The ledger's database, its tables and the scan's created or migrated (a
        deployment check that opens the ledger migrates both)."""
        db = sqlstore.Database(self.url, LOCATION, lock_name=CREDITED.name)
        db.migrate(SCHEMA, TABLES, MIGRATIONS)
        db.migrate(checkpoint.STORE, checkpoint.TABLES, checkpoint.MIGRATIONS)
        return db

    @property
    def engine(self) -> sa.engine.Engine:
        return self.db.engine

    def close(self) -> None:
        """Release the engine's connections."""
        if "db" in self.__dict__:
            self.__dict__.pop("db").close()

    # -- the one write -----------------------------------------------------------------------

    def credit(self, transfers: Sequence[ChainTransfer], *, token: str, source: str,
               credited_by: str | None = None, decimals: int = DECIMALS) -> list[ChainTransfer]:
        """Credit each transfer the chain holds, once; return those inserted by this call.

        ``token`` is the symbol credited (``USDT`` for the network's USDT contract, ``TRX``
        for TRX transfers, whose ``contract`` is None, else the symbol the token's contract
        answers: the contract, kept with each row, is its identity); ``decimals`` the
        token's, which its ``amount`` text is written in (``units`` are exact whatever they
        are); ``source`` the path that found them (``callback`` or ``scan``). The key
        ``(tx_hash, index)`` decides, in one transaction: a transfer already credited (by
        the other path, another worker, an earlier run) is skipped.
        """
        if source not in SOURCES:
            raise ValueError(f"source must be one of {', '.join(SOURCES)}, got {source!r}")
        symbol = token.strip().upper()
        if not symbol or len(symbol) > 20:
            raise ValueError(f"token must be a symbol of 1 to 20 characters, got {token!r}")
        for t in transfers:
            if (t.contract is None) != (symbol == TRX):
                need = "has no token contract" if symbol == TRX else "needs its token contract"
                raise ValueError(f"transfer {t.tx_hash}/{t.index}: a {symbol} credit {need}")
            if t.units <= 0:
                raise ValueError(f"transfer {t.tx_hash}/{t.index}: units must be positive")
        if isinstance(decimals, bool) or not isinstance(decimals, int) \
                or not 0 <= decimals <= MAX_DECIMALS:
            raise ValueError(f"decimals must be 0 to {MAX_DECIMALS}, got {decimals!r}")
        if not transfers:
            return []
        with self.db.write() as conn:
            return self.insert_credits(conn, transfers, token=symbol, source=source,
                                       credited_by=credited_by, decimals=decimals)

    def insert_credits(self, conn: sa.engine.Connection, transfers: Sequence[ChainTransfer], *,
                       token: str, source: str, credited_by: str | None,
                       decimals: int = DECIMALS) -> list[ChainTransfer]:
        """Inside a write: :meth:`credit`'s inserts, checked already; those inserted now.
        ``units`` are kept as integer text (a uint256 never overflows a column)."""
        now = datetime.now(timezone.utc).isoformat()
        credited = []
        for t in transfers:
            inserted = conn.execute(self.db.insert(CREDITED).values(
                tx_hash=t.tx_hash, log_index=t.index, to_address=t.to_address,
                from_address=t.from_address, amount=units_text(t.units, decimals),
                units=str(t.units),
                token=token, contract=t.contract, block_number=t.block_number,
                block_timestamp_ms=t.block_timestamp_ms, source=source, credited_at=now,
                credited_by=credited_by,
            ).on_conflict_do_nothing(index_elements=["tx_hash", "log_index"]))
            if inserted.rowcount:
                credited.append(t)
        return credited

    # -- registrations: where the scan starts ------------------------------------------------

    def register(self, addresses: Iterable[str], *, block: int | None = None,
                 at_ms: int | None = None, registered_by: str | None = None) -> None:
        """Record that ``addresses`` were registered at ``block`` (the solidified head read
        then) or, with no node, at ``at_ms`` (epoch ms), the earliest of each kept; the
        deposit scan reads each address from there (:mod:`.registrations`)."""
        registrations.record(self.db, addresses, block=block, at_ms=at_ms,
                             registered_by=registered_by)

    def registrations(self, addresses: Iterable[str]) -> dict[str, Registration]:
        """The registrations of those of ``addresses`` registered through the provider."""
        return registrations.read(self.db, addresses)

    # -- reads -------------------------------------------------------------------------------

    def credits(self, *, tx_hash: str | None = None, to_address: str | None = None,
                limit: int = 1000) -> list[Credit]:
        """Credited rows (newest first), of one transaction or one address if named."""
        query = sa.select(CREDITED).order_by(CREDITED.c.credited_at.desc(),
                                             CREDITED.c.tx_hash, CREDITED.c.log_index)
        if tx_hash is not None:
            query = query.where(CREDITED.c.tx_hash == tx_hash.lower())
        if to_address is not None:
            query = query.where(CREDITED.c.to_address == to_address)
        with self.engine.connect() as conn:
            rows = conn.execute(query.limit(limit)).mappings().all()
        return [_credit(row) for row in rows]

    def totals(self, token: str) -> dict[str, int]:
        """Units credited per address for ``token``: ``TRX``, a symbol, or a contract's
        address (``T...``: that contract's credits alone, whatever their symbol) (exact
        integers)."""
        column = CREDITED.c.contract if is_valid_address(token) else CREDITED.c.token
        query = sa.select(CREDITED.c.to_address, CREDITED.c.units).where(
            column == (token if is_valid_address(token) else token.upper()))
        totals: dict[str, int] = {}
        with self.engine.connect() as conn:
            for address, units in conn.execute(query):
                totals[address] = totals.get(address, 0) + int(units)
        return totals

    def offset(self) -> int:
        """The last callback store id the ledger has read (0: never swept)."""
        with self.engine.connect() as conn:
            value = conn.execute(sa.select(OFFSETS.c.last_id).where(
                OFFSETS.c.consumer == CONSUMER)).scalar()
        return int(value or 0)

    # -- claims: callbacks the chain has not proven ---------------------------------------

    def claims(self, states: Sequence[str] = claims_of.OPEN, *,
               limit: int = 1000) -> list[claims_of.Claim]:
        """Claims in ``states`` (waiting and disputed by default), oldest first."""
        with self.engine.connect() as conn:
            return claims_of.listing(conn, tuple(states), limit)

    def claim(self, tx_hash: str) -> claims_of.Claim | None:
        """The claim of one stored callback, if it has one."""
        with self.engine.connect() as conn:
            return claims_of.one(conn, tx_hash)

    def claim_counts(self) -> dict[str, int]:
        """Claims per state (``waiting``, ``disputed``, ``proven``, ``dismissed``)."""
        with self.engine.connect() as conn:
            return claims_of.counts(conn)

    def dismiss(self, tx_hash: str, *, note: str, by: str) -> bool:
        """A person's decision: this open claim is not credited, and why. Nothing is credited
        by hand: a deposit is credited only by what the chain proves (:meth:`recheck`)."""
        if not note.strip():
            raise ValueError("a dismissal needs a note saying why")
        with self.db.write() as conn:
            return claims_of.dismiss(conn, tx_hash, note.strip(), by)

    def recheck(self, tx_hash: str, *, prover: Prover, addresses: Iterable[str] = (),
                credited_by: str | None = None) -> tuple[Verdict, list[ChainTransfer]]:
        """Prove one open claim against the chain again; credit what it proves now.

        For a claim a person looked into (a node that lied, a deadline too short): the
        chain decides, never the person. ``addresses``: deposit addresses besides the
        claim's own whose transfers in the same transaction are credited too.
        """
        found = self.claim(tx_hash)
        if found is None or found.state not in claims_of.OPEN:
            raise ValueError(f"no waiting or disputed claim for {tx_hash}")
        from airflow_provider_tronenergy.deposits.sweep import Sweep

        verdict = prover.prove(found.said, frozenset(addresses) | {found.said.to_address})
        credited = Sweep(self, prover, credited_by).write([(found.said, verdict)], None)
        return verdict, credited

    # -- from the callback store -------------------------------------------------------------

    def credit_from_store(self, addresses: Iterable[str], *, prover: Prover,
                          credited_by: str | None = None, store: CallbackStore | None = None,
                          budget: ProofBudget | None = None) -> list[ChainTransfer]:
        """Prove each callback stored since the ledger's offset into ``addresses`` on chain
        and credit what the chain holds; retry the claims still waiting; return the
        transfers this call credited. At most ``budget.max_requests`` node requests
        (default :class:`~.sweep.ProofBudget`); the rest waits for the next call. See
        :mod:`.sweep`."""
        from airflow_provider_tronenergy.deposits.sweep import Sweep

        return Sweep(self, prover, credited_by, budget).run(addresses, None, store)

    def credit_earlier(self, addresses: Iterable[str], *, prover: Prover, after: int = 0,
                       credited_by: str | None = None, store: CallbackStore | None = None,
                       budget: ProofBudget | None = None) -> list[ChainTransfer]:
        """As :meth:`credit_from_store` for the stored callbacks with ids above ``after``,
        leaving the offset where it is: for an address made a deposit address after the
        sweeps had read its callbacks (call again for what a budget did not reach)."""
        from airflow_provider_tronenergy.deposits.sweep import Sweep

        return Sweep(self, prover, credited_by, budget).run(addresses, after, store)

    def move_offset(self, conn: sa.engine.Connection, offset: int) -> None:
        """Inside a write: the offset forward to ``offset`` (never back: a slower sweep)."""
        upsert = self.db.insert(OFFSETS).values(consumer=CONSUMER, last_id=offset)
        new = upsert.excluded.last_id
        conn.execute(upsert.on_conflict_do_update(
            index_elements=["consumer"],
            set_={"last_id": sa.case((new > OFFSETS.c.last_id, new), else_=OFFSETS.c.last_id)}))


def _credit(row: Any) -> Credit:
    return Credit(tx_hash=row["tx_hash"], log_index=int(row["log_index"]),
                  to_address=row["to_address"], from_address=row["from_address"],
                  amount=row["amount"], units=int(row["units"]),
                  token=row["token"], contract=row["contract"],
                  block_number=int(row["block_number"]),
                  block_timestamp_ms=int(row["block_timestamp_ms"]),
                  source=row["source"], credited_at=row["credited_at"],
                  credited_by=row["credited_by"])


def stored_summary(t: StoredTransfer) -> str:
    """A stored callback in a log line (never its body or signature)."""
    return f"{t.amount_text} {t.token} to {t.to_address} (tx {t.tx_hash})"
