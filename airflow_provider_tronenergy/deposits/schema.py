"""The deposit ledger's tables, declared once, and how an earlier ledger is brought up to date.

Version 3 keys a credit by what the chain keys a transfer by, ``(tx_hash, log_index)``
(:class:`~airflow_provider_tronenergy.node.transfers.ChainTransfer`), and keeps the
chain's figures and where they were read (block, log), the token's contract and the
path that saw the deposit first (``callback`` or ``scan``). Version 2 keyed by
``tx_hash`` alone and credited on the callback's word: step 3 keeps those rows as they
are, with ``log_index`` -1 and source ``legacy`` (docs/decisions.md, "Deposits proven on
the chain"), and :class:`~.ledger.DepositLedger` never credits a transfer of such a
transaction into the same address again. Version 4 adds ``deposit_registrations``, when
each address was registered through the provider (:mod:`.registrations`).
"""

from __future__ import annotations

from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from airflow_provider_tronenergy import sqlstore

ENV_LEDGER_URL: Final = "TRONENERGY_DEPOSITS_DB"
CONF_KEY: Final = "deposits_ledger"
DEFAULT_FILENAME: Final = "credited_deposits.db"
LOCATION: Final = sqlstore.Location(ENV_LEDGER_URL, CONF_KEY, DEFAULT_FILENAME,
                                    "deposit ledger")
SCHEMA: Final = "deposit_ledger"
LEGACY_INDEX: Final = -1
"""``log_index`` of a row credited before version 3: the whole transaction, on the callback's
word (which log it was is unknown)."""
SOURCES: Final = ("callback", "scan")
"""Which path saw a deposit first; ``legacy`` marks a row of version 2."""

_META = sa.MetaData()
CREDITED: Final = sa.Table(
    "credited_deposits", _META,
    sa.Column("tx_hash", sa.String(64), primary_key=True),
    sa.Column("log_index", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("to_address", sa.String(34), nullable=False, index=True),
    sa.Column("from_address", sa.String(34), nullable=False),
    sa.Column("amount", sa.String(100), nullable=False),  # exact decimal text, the chain's
    sa.Column("token", sa.String(20), nullable=False),  # the symbol credited (USDT, TRX)
    sa.Column("block_number", sa.BigInteger, nullable=False),
    sa.Column("credited_at", sa.String(40), nullable=False),
    sa.Column("credited_by", sa.String(250), nullable=True),  # the run, when one is named
    sa.Column("units", sa.String(80), nullable=True),  # integer text (uint256); NULL: legacy
    sa.Column("contract", sa.String(34), nullable=True),  # the token's contract; NULL: TRX
    sa.Column("block_timestamp_ms", sa.BigInteger, nullable=True),
    sa.Column("source", sa.String(10), nullable=False, server_default="legacy"),
)
OFFSETS: Final = sa.Table(
    "deposit_catch_up", _META,  # how far the ledger has read the callback store
    sa.Column("consumer", sa.String(200), primary_key=True),
    sa.Column("last_id", sa.BigInteger, nullable=False),
)
CLAIMS: Final = sa.Table(
    "deposit_claims", _META,  # stored callbacks the chain has not proven (yet)
    sa.Column("tx_hash", sa.String(64), primary_key=True),
    sa.Column("store_id", sa.BigInteger, nullable=False),
    sa.Column("to_address", sa.String(34), nullable=False),
    sa.Column("token", sa.String(20), nullable=False),
    sa.Column("amount", sa.String(100), nullable=False),  # as the callback said it
    sa.Column("state", sa.String(10), nullable=False, index=True),
    sa.Column("reason", sa.String(40), nullable=False),
    sa.Column("detail", sa.String(500), nullable=False),
    sa.Column("said", sa.Text, nullable=False),  # JSON: the callback's view
    sa.Column("chain", sa.Text, nullable=False),  # JSON: the chain's view ({} when none)
    sa.Column("received_at_ms", sa.BigInteger, nullable=False),
    sa.Column("first_seen", sa.String(40), nullable=False),
    sa.Column("last_tried", sa.String(40), nullable=False),
    sa.Column("tries", sa.Integer, nullable=False),
    sa.Column("note", sa.String(1000), nullable=True),  # a person's, when resolved
    sa.Column("resolved_by", sa.String(250), nullable=True),
)
REGISTRATIONS: Final = sa.Table(
    "deposit_registrations", _META,  # when each address was registered through the provider
    sa.Column("address", sa.String(34), primary_key=True),
    sa.Column("block", sa.BigInteger, nullable=True),  # earliest solidified head read then
    sa.Column("at_ms", sa.BigInteger, nullable=True),  # earliest time, when no node was read
    sa.Column("at_block", sa.BigInteger, nullable=True),  # at_ms as the scan resolved it
    sa.Column("first_registered_at", sa.String(40), nullable=False),
    sa.Column("last_registered_at", sa.String(40), nullable=False),
    sa.Column("registered_by", sa.String(250), nullable=True),  # the first run, when named
)
TABLES: Final = (CREDITED, OFFSETS, CLAIMS, REGISTRATIONS)
CONSUMER: Final = "deposits.catch_up"
"""The offset's row in ``deposit_catch_up``: the one offset of the ledger (the table's and the
row's names are those earlier ledgers were made with, so their offset stays valid)."""


def _columns(conn: Connection, table: str) -> set[str]:
    return {c["name"] for c in sa.inspect(conn).get_columns(table)}


def add_credited_by(conn: Connection) -> None:
    """Version 2: the run that credited each row (a ledger of version 1 lacks the column;
    one an unversioned release already altered has it)."""
    if "credited_by" not in _columns(conn, CREDITED.name):
        conn.execute(sa.text(
            "ALTER TABLE credited_deposits ADD COLUMN credited_by VARCHAR(250)"))


def key_by_log(conn: Connection) -> None:
    """Version 3: credits keyed by ``(tx_hash, log_index)``, with the chain's proof.

    The table is rebuilt (neither backend changes a primary key in place the same way):
    renamed, its index and key renamed out of the way, the new table created, every
    row copied as ``legacy`` (log -1), the old table dropped; in the migration's one
    transaction, so a failure leaves version 2 as it was; the claims table is new.
    """
    CLAIMS.create(conn, checkfirst=True)
    if "log_index" in _columns(conn, CREDITED.name):
        return  # created at version 3 by an earlier try
    old = "credited_deposits_v2"
    conn.execute(sa.text(f"ALTER TABLE credited_deposits RENAME TO {old}"))
    conn.execute(sa.text("DROP INDEX IF EXISTS ix_credited_deposits_to_address"))
    if conn.dialect.name == "postgresql":  # its key's index keeps the table's old name
        for (name,) in conn.execute(sa.text(
                "SELECT conname FROM pg_constraint WHERE conrelid = CAST(:t AS regclass) "
                "AND contype = 'p'"), {"t": old}).all():
            conn.execute(sa.text(f'ALTER TABLE {old} RENAME CONSTRAINT "{name}" TO {old}_pkey'))
    CREDITED.create(conn)
    conn.execute(sa.text(
        "INSERT INTO credited_deposits (tx_hash, log_index, to_address, from_address, amount, "
        "token, block_number, credited_at, credited_by, source) SELECT tx_hash, "
        f"{LEGACY_INDEX}, to_address, from_address, amount, token, block_number, credited_at, "
        f"credited_by, 'legacy' FROM {old}"))
    conn.execute(sa.text(f"DROP TABLE {old}"))


def add_registrations(conn: Connection) -> None:
    """Version 4: when each deposit address was registered (``deposits.registrations``),
    where the scan starts and backfills from; a new table, no row changed."""
    REGISTRATIONS.create(conn, checkfirst=True)


MIGRATIONS: Final[dict[int, sqlstore.Step]] = {2: add_credited_by, 3: key_by_log,
                                                4: add_registrations}
"""``{n: step}`` moving the ledger from version ``n - 1`` to ``n``."""
