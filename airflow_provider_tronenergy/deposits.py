"""Crediting deposits exactly once: the ledger a deposit DAG writes, keyed by ``tx_hash``.

The transfer watcher (``TronEnergyTransferWatchTrigger``) turns each stored callback
into one Asset event, but an event can be redelivered
(the triggerer dies between Airflow persisting it and the watcher committing its
offset), and people replay transfers by hand. So crediting is an insert keyed by
the transaction hash: the key decides, not an earlier read, and a second worker
or a redelivery credits nothing twice.

Where the ledger lives: ``$TRONENERGY_DEPOSITS_DB``, else ``[tronenergy]
deposits_ledger``, else a SQLite file in ``$AIRFLOW_HOME``; read when the ledger
is opened in a task, never when a DAG file is parsed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from functools import cached_property
from typing import Any

import sqlalchemy as sa

from airflow_provider_tronenergy import sqlstore

ENV_LEDGER_URL = "TRONENERGY_DEPOSITS_DB"
CONF_KEY = "deposits_ledger"
DEFAULT_FILENAME = "credited_deposits.db"

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
)


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
        module says. The table is created on first use.
    """

    def __init__(self, url: str | None = None) -> None:
        self.url = sqlstore.parse_url(sqlstore.resolve_url(
            url, env=ENV_LEDGER_URL, conf_key=CONF_KEY, filename=DEFAULT_FILENAME))

    def __repr__(self) -> str:
        return f"DepositLedger({sqlstore.safe_url(self.url)})"

    @cached_property
    def engine(self) -> sa.engine.Engine:
        """The ledger's engine, its table created if missing."""
        engine = sqlstore.create_engine(self.url)
        _META.create_all(engine)
        return engine

    def credit(self, transfers: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Insert each transfer (keyed by ``tx_hash``); return those credited by this call."""
        from sqlalchemy.dialects import postgresql, sqlite

        insert = (postgresql.insert if self.engine.dialect.name == "postgresql"
                  else sqlite.insert)
        credited = []
        now = datetime.now(timezone.utc).isoformat()
        with self.engine.begin() as conn:
            for t in transfers:
                inserted = conn.execute(insert(CREDITED).values(
                    tx_hash=t["tx_hash"], to_address=t["to"], from_address=t["from"],
                    amount=t["amount"], token=t["token"], block_number=t["block_number"],
                    credited_at=now,
                ).on_conflict_do_nothing(index_elements=["tx_hash"]))
                if inserted.rowcount:
                    credited.append(dict(t))
        return credited

    def close(self) -> None:
        """Release the engine's connections."""
        if "engine" in self.__dict__:
            self.__dict__.pop("engine").dispose()


def credit(transfers: Sequence[Mapping[str, Any]], url: str | None = None) -> list[dict[str, Any]]:
    """Credit ``transfers`` into the ledger at ``url`` (see :class:`DepositLedger`)."""
    ledger = DepositLedger(url)
    try:
        return ledger.credit(transfers)
    finally:
        ledger.close()
