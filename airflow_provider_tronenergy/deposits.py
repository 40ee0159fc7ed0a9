"""Crediting deposits exactly once: the ledger a deposit DAG writes, keyed by ``tx_hash``.

The transfer watcher (``TronEnergyTransferWatchTrigger``) turns each stored callback
into one Asset event, but an event can be redelivered
(the triggerer dies between Airflow persisting it and the watcher committing its
offset), and people replay transfers by hand. So crediting is an insert keyed by
the transaction hash: the key decides, not an earlier read, and a second worker
or a redelivery credits nothing twice. Each row names the run that credited it.

An Asset event can also reach its run late: Airflow 3.3's scheduler can leave the
last events of a burst in no run until a later event for the Asset arrives (see
docs/deployment.md). The callback store, not the event, is the record of what
arrived, so :func:`catch_up` credits from it whatever the ledger lacks; a credit run
that calls it credits every deposit stored before the run started, its own events'
or not.

Where the ledger lives: ``$TRONENERGY_DEPOSITS_DB``, else ``[tronenergy]
deposits_ledger``, else a SQLite file in ``$AIRFLOW_HOME``; read when the ledger
is opened in a task, never when a DAG file is parsed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from functools import cached_property
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from airflow_provider_tronenergy import sqlstore

if TYPE_CHECKING:
    from airflow_provider_tronenergy.callbacks.store import CallbackStore

ENV_LEDGER_URL = "TRONENERGY_DEPOSITS_DB"
CONF_KEY = "deposits_ledger"
DEFAULT_FILENAME = "credited_deposits.db"
SWEEP_PAGE = 1000
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
CAUGHT_UP = sa.Table(
    "deposit_catch_up", _META,  # how far catch_up has read the callback store, per name
    sa.Column("consumer", sa.String(200), primary_key=True),
    sa.Column("last_id", sa.BigInteger, nullable=False),
)
CATCH_UP_CONSUMER = "deposits.catch_up"
"""The name under which :func:`catch_up` keeps its offset in the ledger."""
SCHEMA = "deposit_ledger"


def add_credited_by(conn: Connection) -> None:
    """Version 2: the run that credited each row (a ledger of version 1 lacks the column;
    one an unversioned release already altered has it)."""
    if "credited_by" not in {c["name"] for c in sa.inspect(conn).get_columns(CREDITED.name)}:
        conn.execute(sa.text(
            "ALTER TABLE credited_deposits ADD COLUMN credited_by VARCHAR(250)"))


MIGRATIONS: dict[int, sqlstore.Step] = {2: add_credited_by}
"""``{n: step}`` moving the ledger from version ``n - 1`` to ``n``."""


def event_transfer(extra: Any) -> dict[str, Any] | None:
    """The transfer an Asset event carries, or None.

    Airflow stores a watcher's trigger event as ``{"from_trigger": true, "payload":
    <the trigger's payload>}``; a transfer given directly (an event posted through the
    REST API with the transfer as its extra) is accepted as it is.
    """
    if not isinstance(extra, Mapping):
        return None
    payload = extra.get("payload") if extra.get("from_trigger") else extra
    return dict(payload) if isinstance(payload, Mapping) and payload.get("tx_hash") else None


class DepositLedger:
    """``DepositLedger(url=None).credit(transfers)``: insert each transfer once.

    :param url: a SQLAlchemy URL (SQLite or PostgreSQL); None resolves it as the
        module says. The tables are created (or migrated) on first use; the schema
        version sits in ``tronenergy_schema_version`` (the ledger's own tables keep
        their unprefixed names).
    """

    def __init__(self, url: str | None = None) -> None:
        self.url = sqlstore.parse_url(LOCATION.url(url))

    def __repr__(self) -> str:
        return f"DepositLedger({sqlstore.safe_url(self.url)})"

    @cached_property
    def db(self) -> sqlstore.Database:
        """The ledger's database, its tables created or migrated."""
        db = sqlstore.Database(self.url, LOCATION, lock_name=CREDITED.name)
        db.migrate(SCHEMA, (CREDITED, CAUGHT_UP), MIGRATIONS)
        return db

    @property
    def engine(self) -> sa.engine.Engine:
        return self.db.engine

    def _insert(self) -> Any:
        from sqlalchemy.dialects import postgresql, sqlite

        return postgresql.insert if self.engine.dialect.name == "postgresql" else sqlite.insert

    def credit(self, transfers: Iterable[Mapping[str, Any]], credited_by: str | None = None,
               *, caught_up: tuple[str, int] | None = None) -> list[dict[str, Any]]:
        """Insert each transfer (keyed by ``tx_hash``); return those credited by this call.

        ``credited_by`` (a run id, say) is recorded on the rows this call inserts.
        ``caught_up`` ``(consumer, last_id)`` moves that catch-up offset forward in the
        same transaction, so a sweep's credits and its progress commit together.
        """
        insert = self._insert()
        credited = []
        now = datetime.now(timezone.utc).isoformat()
        with self.db.write() as conn:
            for t in transfers:
                inserted = conn.execute(insert(CREDITED).values(
                    tx_hash=t["tx_hash"], to_address=t["to"], from_address=t["from"],
                    amount=t["amount"], token=t["token"], block_number=t["block_number"],
                    credited_at=now, credited_by=credited_by,
                ).on_conflict_do_nothing(index_elements=["tx_hash"]))
                if inserted.rowcount:
                    credited.append(dict(t))
            if caught_up is not None:
                upsert = insert(CAUGHT_UP).values(consumer=caught_up[0], last_id=caught_up[1])
                new = upsert.excluded.last_id
                conn.execute(upsert.on_conflict_do_update(
                    index_elements=["consumer"],  # forward only: a slower sweep never rewinds
                    set_={"last_id": sa.case((new > CAUGHT_UP.c.last_id, new),
                                             else_=CAUGHT_UP.c.last_id)}))
        return credited

    def caught_up(self, consumer: str = CATCH_UP_CONSUMER) -> int:
        """The last callback store id ``consumer``'s catch-up has read (0: never swept)."""
        with self.engine.connect() as conn:
            value = conn.execute(sa.select(CAUGHT_UP.c.last_id).where(
                CAUGHT_UP.c.consumer == consumer)).scalar()
        return int(value or 0)

    def catch_up(self, addresses: Iterable[str], *, credited_by: str | None = None,
                 store: CallbackStore | None = None,
                 consumer: str = CATCH_UP_CONSUMER) -> list[dict[str, Any]]:
        """Credit every stored transfer into ``addresses`` that the ledger lacks; return those.

        Reads the callback store (``store``, else the configured one; read access is
        enough) from the offset ``consumer`` keeps in the ledger, and commits each page's
        credits with the offset's advance. The ledger's key makes a second sweep, or a run
        crediting the same deposit from its event, credit nothing twice; ids are committed
        in order in the store, so nothing below the offset can still appear. A consumer
        that never swept starts at the beginning: its first sweep credits every stored
        deposit the ledger lacks.
        """
        from airflow_provider_tronenergy.callbacks.access import open_store

        wanted = sorted(set(addresses))
        store = store if store is not None else open_store(None)
        credited: list[dict[str, Any]] = []
        after, upto = self.caught_up(consumer), store.max_id()
        while wanted and after < upto:
            page = [t for t in store.list_transfers(wanted, after, SWEEP_PAGE) if t.id <= upto]
            after = page[-1].id if len(page) == SWEEP_PAGE else upto
            credited += self.credit([t.to_payload() for t in page], credited_by,
                                    caught_up=(consumer, after))
        return credited

    def close(self) -> None:
        """Release the engine's connections."""
        if "db" in self.__dict__:
            self.__dict__.pop("db").close()


def credit(transfers: Sequence[Mapping[str, Any]], url: str | None = None,
           credited_by: str | None = None) -> list[dict[str, Any]]:
    """Credit ``transfers`` into the ledger at ``url`` (see :class:`DepositLedger`)."""
    ledger = DepositLedger(url)
    try:
        return ledger.credit(transfers, credited_by)
    finally:
        ledger.close()


def catch_up(addresses: Iterable[str], *, credited_by: str | None = None,
             store: CallbackStore | None = None, ledger_url: str | None = None,
             consumer: str = CATCH_UP_CONSUMER) -> list[dict[str, Any]]:
    """:meth:`DepositLedger.catch_up` on the ledger at ``ledger_url``."""
    ledger = DepositLedger(ledger_url)
    try:
        return ledger.catch_up(addresses, credited_by=credited_by, store=store,
                               consumer=consumer)
    finally:
        ledger.close()
