"""Crediting deposits exactly once, from the callback store: the ledger a deposit DAG writes.

The callback store is the record of what arrived: the receiver stores a transfer only
once its signature verified, once per ``tx_hash``. The ledger credits from it and from
nothing else. :meth:`DepositLedger.credit_from_store` reads the store from the ledger's
offset (the last store id it has read), credits each transfer into a deposit address,
and moves the offset forward in the transaction of each page's credits. The Asset event
a stored transfer fires (``TronEnergyTransferWatchTrigger``) only wakes the credit DAG:
an event can be redelivered (a triggerer crash before its offset commit) or reach its
run late (Airflow 3.3's scheduler can leave the last events of a burst in no run until
a later event, see docs/deployment.md), and its payload is a copy, not the record. A run
credits every deposit stored before it started, whichever events woke it.

Crediting is an insert keyed by the transaction hash: the key decides, not an earlier
read, so a second worker or two runs at once credit nothing twice. Each row names the
run that credited it.

The offset is a position in the store, not one per address: each stored transfer is
judged once, against the deposit addresses the sweep reading it was given, and the
offset passes transfers into other addresses too. A transfer into an address that
becomes a deposit address later is not credited by a later sweep;
:meth:`DepositLedger.credit_earlier` credits such transfers on purpose. A sweep given
no addresses reads nothing and leaves the offset where it is.

Where the ledger lives: ``$TRONENERGY_DEPOSITS_DB``, else ``[tronenergy]
deposits_ledger``, else a SQLite file in ``$AIRFLOW_HOME``; read when the ledger
is opened in a task, never when a DAG file is parsed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from functools import cached_property
from types import TracebackType
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from airflow_provider_tronenergy import sqlstore

if TYPE_CHECKING:
    from airflow_provider_tronenergy.callbacks.events import StoredTransfer
    from airflow_provider_tronenergy.callbacks.store import CallbackStore

log = logging.getLogger(__name__)

ENV_LEDGER_URL = "TRONENERGY_DEPOSITS_DB"
CONF_KEY = "deposits_ledger"
DEFAULT_FILENAME = "credited_deposits.db"
SWEEP_PAGE = 1000
"""Stored transfers read, and credited in one transaction, per page of a sweep."""
LOCATION = sqlstore.Location(ENV_LEDGER_URL, CONF_KEY, DEFAULT_FILENAME)

_META = sa.MetaData()
CREDITED = sa.Table(
    "credited_deposits", _META,
    sa.Column("tx_hash", sa.String(64), primary_key=True),
    sa.Column("to_address", sa.String(34), nullable=False, index=True),
    sa.Column("from_address", sa.String(34), nullable=False),
    sa.Column("amount", sa.String(40), nullable=False),  # exact decimal text
    sa.Column("token", sa.String(20), nullable=False),
    sa.Column("block_number", sa.BigInteger, nullable=False),
    sa.Column("credited_at", sa.String(40), nullable=False),
    sa.Column("credited_by", sa.String(250), nullable=True),  # the run, when one is named
)
OFFSETS = sa.Table(
    "deposit_catch_up", _META,  # how far the ledger has read the callback store
    sa.Column("consumer", sa.String(200), primary_key=True),
    sa.Column("last_id", sa.BigInteger, nullable=False),
)
CONSUMER = "deposits.catch_up"
"""The offset's row in ``deposit_catch_up``: the one offset of the ledger (the table's and the
row's names are those earlier ledgers were made with, so their offset stays valid)."""
SCHEMA = "deposit_ledger"


def add_credited_by(conn: Connection) -> None:
    """Version 2: the run that credited each row (a ledger of version 1 lacks the column;
    one an unversioned release already altered has it)."""
    if "credited_by" not in {c["name"] for c in sa.inspect(conn).get_columns(CREDITED.name)}:
        conn.execute(sa.text(
            "ALTER TABLE credited_deposits ADD COLUMN credited_by VARCHAR(250)"))


MIGRATIONS: dict[int, sqlstore.Step] = {2: add_credited_by}
"""``{n: step}`` moving the ledger from version ``n - 1`` to ``n``."""


class DepositLedger:
    """``DepositLedger(url=None).credit_from_store(addresses)``: credit each stored deposit once.

    :param url: a SQLAlchemy URL (SQLite or PostgreSQL); None resolves it as the
        module says. The tables are created (or migrated) on first use; the schema
        version sits in ``tronenergy_schema_version`` (the ledger's own tables keep
        their unprefixed names).
    """

    def __init__(self, url: str | None = None) -> None:
        self.url = sqlstore.parse_url(LOCATION.url(url))

    def __repr__(self) -> str:
        return f"DepositLedger({sqlstore.safe_url(self.url)})"

    def __enter__(self) -> DepositLedger:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @cached_property
    def db(self) -> sqlstore.Database:
        """The ledger's database, its tables created or migrated."""
        db = sqlstore.Database(self.url, LOCATION, lock_name=CREDITED.name)
        db.migrate(SCHEMA, (CREDITED, OFFSETS), MIGRATIONS)
        return db

    @property
    def engine(self) -> sa.engine.Engine:
        return self.db.engine

    def offset(self) -> int:
        """The last callback store id the ledger has read (0: never swept)."""
        with self.engine.connect() as conn:
            value = conn.execute(sa.select(OFFSETS.c.last_id).where(
                OFFSETS.c.consumer == CONSUMER)).scalar()
        return int(value or 0)

    def credit_from_store(self, addresses: Iterable[str], *, credited_by: str | None = None,
                          store: CallbackStore | None = None) -> list[StoredTransfer]:
        """Credit each transfer into ``addresses`` stored since the ledger's offset; return
        those this call credited, in store order.

        Reads the callback store (``store``, else the configured one; read access is
        enough) from the offset up to the newest id when the call began, page by page;
        each page's credits and the offset's advance commit in one transaction. Ids are
        committed in order in the store, so nothing below the offset can still appear.
        ``credited_by`` (the run id) is recorded on the rows this call inserts.
        """
        return self._sweep(addresses, None, credited_by, store)

    def credit_earlier(self, addresses: Iterable[str], *, after: int = 0,
                       credited_by: str | None = None,
                       store: CallbackStore | None = None) -> list[StoredTransfer]:
        """Credit the stored transfers into ``addresses`` with ids above ``after`` that the
        ledger lacks, leaving the offset where it is; return those credited.

        For an address made a deposit address after the sweeps had read its transfers:
        the offset passed them, so :meth:`credit_from_store` never will. Only what the
        store verified is credited, once per ``tx_hash`` as always.
        """
        return self._sweep(addresses, after, credited_by, store)

    def _sweep(self, addresses: Iterable[str], start: int | None, credited_by: str | None,
               store: CallbackStore | None) -> list[StoredTransfer]:
        """Read the store from ``start`` (None: the ledger's offset, which then moves)."""
        from airflow_provider_tronenergy.callbacks.access import open_store

        wanted = frozenset(addresses)
        if not wanted:  # no deposit addresses: read nothing, so the offset passes nothing
            return []
        store = store if store is not None else open_store(None)
        after = self.offset() if start is None else start
        upto = store.max_id()
        credited: list[StoredTransfer] = []
        passed = 0
        while after < upto:
            page = [t for t in store.list_transfers(after_id=after, limit=SWEEP_PAGE)
                    if t.id <= upto]
            after = page[-1].id if len(page) == SWEEP_PAGE else upto
            deposits = [t for t in page if t.to_address in wanted]
            passed += len(page) - len(deposits)
            credited += self._credit(deposits, credited_by, after if start is None else None)
        if passed:
            log.info("%d stored transfers up to id %d are into no deposit address: not "
                     "credited", passed, upto)
        return credited

    def _credit(self, transfers: Sequence[StoredTransfer], credited_by: str | None,
                offset: int | None) -> list[StoredTransfer]:
        """Insert each transfer (keyed by ``tx_hash``) and move the offset forward to
        ``offset`` (None: leave it), in one transaction; return those inserted now."""
        if not transfers and offset is None:
            return []
        credited = []
        now = datetime.now(timezone.utc).isoformat()
        with self.db.write() as conn:
            for t in transfers:
                inserted = conn.execute(self.db.insert(CREDITED).values(
                    tx_hash=t.tx_hash, to_address=t.to_address, from_address=t.from_address,
                    amount=t.amount_text, token=t.token, block_number=t.block_number,
                    credited_at=now, credited_by=credited_by,
                ).on_conflict_do_nothing(index_elements=["tx_hash"]))
                if inserted.rowcount:
                    credited.append(t)
            if offset is not None:
                upsert = self.db.insert(OFFSETS).values(consumer=CONSUMER, last_id=offset)
                new = upsert.excluded.last_id
                conn.execute(upsert.on_conflict_do_update(
                    index_elements=["consumer"],  # forward only: a slower sweep never rewinds
                    set_={"last_id": sa.case((new > OFFSETS.c.last_id, new),
                                             else_=OFFSETS.c.last_id)}))
        return credited

    def close(self) -> None:
        """Release the engine's connections."""
        if "db" in self.__dict__:
            self.__dict__.pop("db").close()
